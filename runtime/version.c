/* weft_version: the version the library was built as. */
#include <weft.h>

#define WEFT_STR_(x) #x
#define WEFT_STR(x) WEFT_STR_(x)

const char *weft_version(void)
{
    return WEFT_STR(WEFT_VERSION_MAJOR) "." WEFT_STR(WEFT_VERSION_MINOR) "." WEFT_STR(
        WEFT_VERSION_PATCH);
}
