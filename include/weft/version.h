/* weft: the library's version.  Include <weft.h> rather than this file.
 *
 * The macros give the version a program was compiled against; weft_version()
 * the version of the library it runs with, so a program can detect a
 * mismatch between the two.  The numbers follow semantic versioning: a
 * change of MINOR adds to the API, one of MAJOR may break it.  meson.build
 * refuses to configure when these macros and the project's version differ. */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 2
#define WEFT_VERSION_PATCH 0

/* WEFT_VERSION_MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define WEFT_VERSION_NUMBER \
    (WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH)

/* The version of the linked library, "MAJOR.MINOR.PATCH" ("0.2.0").  A
 * static string; any thread. */
WEFT_API const char *weft_version(void);

#ifdef __cplusplus
}
#endif
#endif
