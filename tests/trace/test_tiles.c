/* weft__ew_tile against a scalar reference: every operand pattern of a
 * binary, unary and where tile (a block, a value per row, a repeated row,
 * a scalar), for row widths on both sides of the specialised 4, 8 and 16,
 * including tiles whose operands continue from row to row (one flat run). */
#include <criterion/criterion.h>
#include <string.h>

#include "trace/kernels.h"

TestSuite(tiles, .timeout = 30);

#define MAXR 5
#define MAXC 20

/* Operand kinds: 0 block (row stride cols, step 1), 1 value per row (1, 0),
 * 2 repeated row (0, 1), 3 scalar (0, 0). */
static void pattern(int kind, size_t cols, int64_t *rs, unsigned char *step)
{
    *rs = kind == 0 ? (int64_t)cols : kind == 1 ? 1 : 0;
    *step = kind == 0 || kind == 2;
}

static double elem(const double *base, int kind, size_t cols, size_t r, size_t c)
{
    switch (kind) {
    case 0:  return base[r * cols + c];
    case 1:  return base[r];
    case 2:  return base[c];
    default: return base[0];
    }
}

Test(tiles, binary_every_pattern_and_width)
{
    double a[MAXR * MAXC], b[MAXR * MAXC], out[MAXR * MAXC];
    for (int i = 0; i < MAXR * MAXC; i++) {
        a[i] = 1.5 * i - 7.0;
        b[i] = 0.25 * i + 3.0;
    }
    for (size_t rows = 1; rows <= MAXR; rows += 2)
        for (size_t cols = 1; cols <= MAXC; cols++)
            for (int ka = 0; ka < 4; ka++)
                for (int kb = 0; kb < 4; kb++) {
                    int64_t rs[2];
                    unsigned char step[2];
                    pattern(ka, cols, &rs[0], &step[0]);
                    pattern(kb, cols, &rs[1], &step[1]);
                    const void *in[2] = { a, b };
                    memset(out, 0, sizeof out);
                    weft__ew_tile(WEFT__OP_SUB, WEFT_F64, WEFT_F64, in, rs, step, out, rows, cols);
                    for (size_t r = 0; r < rows; r++)
                        for (size_t c = 0; c < cols; c++)
                            cr_assert_eq(out[r * cols + c],
                                         elem(a, ka, cols, r, c) - elem(b, kb, cols, r, c),
                                         "%zux%zu, kinds %d/%d, [%zu,%zu]", rows, cols, ka, kb, r, c);
                }
}

Test(tiles, unary_and_where)
{
    float a[MAXR * MAXC], b[MAXR * MAXC], out[MAXR * MAXC];
    uint8_t cond[MAXR * MAXC];
    for (int i = 0; i < MAXR * MAXC; i++) {
        a[i] = (float)i - 30.0f;
        b[i] = (float)(i * 3);
        cond[i] = (uint8_t)(i % 3 == 0);
    }
    for (size_t rows = 1; rows <= MAXR; rows += 2)
        for (size_t cols = 1; cols <= MAXC; cols += 3)
            for (int k = 0; k < 4; k++) {
                int64_t rs[3];
                unsigned char step[3];
                pattern(k, cols, &rs[0], &step[0]);
                const void *in1[1] = { a };
                weft__ew_tile(WEFT__OP_NEG, WEFT_F32, WEFT_F32, in1, rs, step, out, rows, cols);
                for (size_t r = 0; r < rows; r++)
                    for (size_t c = 0; c < cols; c++) {
                        size_t i = k == 0 ? r * cols + c : k == 1 ? r : k == 2 ? c : 0;
                        cr_assert_eq(out[r * cols + c], -a[i], "neg %zux%zu kind %d", rows,
                                     cols, k);
                    }
                /* where: the condition in pattern k, the values as blocks. */
                pattern(0, cols, &rs[1], &step[1]);
                pattern(0, cols, &rs[2], &step[2]);
                const void *in3[3] = { cond, a, b };
                weft__ew_tile(WEFT__OP_WHERE, WEFT_F32, WEFT_F32, in3, rs, step, out, rows, cols);
                for (size_t r = 0; r < rows; r++)
                    for (size_t c = 0; c < cols; c++) {
                        size_t i = k == 0 ? r * cols + c : k == 1 ? r : k == 2 ? c : 0;
                        size_t j = r * cols + c;
                        cr_assert_eq(out[j], cond[i] ? a[j] : b[j], "where %zux%zu kind %d",
                                     rows, cols, k);
                    }
            }
}
