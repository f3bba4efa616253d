/* Numbers in their shortest round-trip form: the fewest significant
 * digits that read back as the same value (0.09, not
 * 0.090000000000000011), for messages and the tensor printer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace/iface.h"

/* NaN and the infinities as C's printf writes them in every locale. */
static bool special(double v, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "%snan", signbit(v) ? "-" : "");
    else if (isinf(v))
        snprintf(buf, size, "%sinf", v < 0 ? "-" : "");
    else
        return false;
    return true;
}

int weft__fmt_f64(double v, char *buf, size_t size)
{
    if (special(v, buf, size))
        return 0;
    /* 17 significant digits always round-trip a double. */
    for (int p = 1; p < 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return 0;
    }
    snprintf(buf, size, "%.17g", v);
    return 0;
}

int weft__fmt_f32(float v, char *buf, size_t size)
{
    if (special(v, buf, size))
        return 0;
    /* 9 significant digits always round-trip a float. */
    for (int p = 1; p < 9; p++) {
        snprintf(buf, size, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            return 0;
    }
    snprintf(buf, size, "%.9g", (double)v);
    return 0;
}
