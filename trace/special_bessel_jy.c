/* The Bessel functions of the first and second kind of orders 0 and 1,
 * for the UNARY ops bessel_j0, bessel_j1, bessel_y0 and bessel_y1
 * (tf.math.special's): the C library's j0, j1, y0 and y1 in double (their
 * values past the domain as TensorFlow's: y0 and y1 are -inf at 0 and
 * NaN below).  The f32 forms round the double result once, rather than
 * call j0f and friends, whose float arithmetic loses digits near the
 * functions' zeros. */
#include <math.h>

#include "trace/kernels.h"

double weft__bessel_j0(double x) { return j0(x); }
double weft__bessel_j1(double x) { return j1(x); }
double weft__bessel_y0(double x) { return y0(x); }
double weft__bessel_y1(double x) { return y1(x); }
float weft__bessel_j0f(float x) { return (float)j0((double)x); }
float weft__bessel_j1f(float x) { return (float)j1((double)x); }
float weft__bessel_y0f(float x) { return (float)y0((double)x); }
float weft__bessel_y1f(float x) { return (float)y1((double)x); }
