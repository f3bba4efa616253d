/* Function pointers from libraries weft opens with dlopen. */
#include <dlfcn.h>
#include <string.h>

#include "base/base.h"

_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "function pointers fit a void *");

bool weft__dl_function(void *lib, const char *name, void *slot)
{
    void *sym = dlsym(lib, name);
    if (sym)
        memcpy(slot, &sym, sizeof sym);
    return sym != NULL;
}
