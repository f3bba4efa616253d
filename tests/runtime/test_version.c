/* weft_version and the version macros agree (meson.build checks the macros
 * against the project's version). */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

Test(version, the_library_reports_the_version_of_its_header, .timeout = 10)
{
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    cr_assert_str_eq(weft_version(), expected);
    cr_assert_eq(WEFT_VERSION_NUMBER,
                 WEFT_VERSION_MAJOR * 10000 + WEFT_VERSION_MINOR * 100 + WEFT_VERSION_PATCH);
}
