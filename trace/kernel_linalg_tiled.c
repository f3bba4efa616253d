/* LU, Cholesky and QR of one large matrix in column tiles over the
 * workers, and solves whose right-hand sides are cut into tiles.
 *
 * LAPACK's dgetrf, dpotrf and dgeqrf run a matrix on the calling thread
 * (weft holds OpenBLAS's own threads at 1 while its workers call it), so
 * a lone large matrix used one CPU.  Here the factorization is
 * right-looking and blocked: a panel of WEFT__LINALG_PANEL columns is
 * factored by LAPACK on one thread, and the trailing matrix's update (LU:
 * row swaps, a triangular solve, a product; QR: the panel's block
 * reflector) is cut into column tiles, one task each.  The tile
 * holding the next panel factors that panel as soon as it is updated
 * (look-ahead), so the other tiles' updates overlap the one step that
 * cannot be shared.
 *
 * Tiles are fixed by the matrix's size alone, never by the worker count,
 * and each tile's arithmetic is the same whichever worker runs it: the
 * bits do not depend on how many workers there are.  While a timeline is
 * recorded, each tile is a span ("lu_tile", "cholesky_tile", "qr_tile",
 * "qr_q_tile", "solve_tile", "inverse_tile") naming its step and
 * columns. */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "runtime/iface.h"
#include "trace/blas.h"
#include "trace/linalg.h"
#include "trace/shape.h"

#if WEFT_HAVE_BLAS

#include "trace/blas_api.h"

/* Columns of the trailing matrix per tile.  At 1024 rows on one thread,
 * 128 and 256 both cost what LAPACK's own dgetrf does; 128 leaves twice
 * the tasks for more workers. */
#define TILE_COLS 128

bool weft__linalg_tiled(int n)
{
    return weft__blas_available() && n >= WEFT__LINALG_TILED_MIN;
}

static int run_tiles(weft_runtime *rt, size_t tiles, weft_range_fn fn, void *ctx)
{
    if (!rt || tiles <= 1 || weft__intra_op_threads(rt) <= 1)
        return fn(0, tiles, ctx);
    return weft_parallel_for(rt, tiles, 1, fn, ctx);
}

/* The timeline span of a tile that started at t0: its step's panel's
 * first column (step; -1 for the tiles of the solves, the inverse and
 * q, which have no steps) and the tile's columns. */
static void tile_span(weft_runtime *rt, const char *name, int step, int c0, int w, uint64_t t0)
{
    char detail[64];
    if (step >= 0)
        snprintf(detail, sizeof detail, "step %d cols %d-%d", step, c0, c0 + w - 1);
    else
        snprintf(detail, sizeof detail, "cols %d-%d", c0, c0 + w - 1);
    weft__profile_span(rt, "op", name, t0, weft__now_ns(), detail);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* The columns of tile t of the step whose panel starts at column k and is
 * nb wide: tile 0 is the next panel (up to nb columns), the others
 * TILE_COLS each. */
static void tile_cols(int n, int k, int nb, size_t t, int *c0, int *w)
{
    int next = k + nb, next_nb = min_int(nb, n - next);
    if (t == 0) {
        *c0 = next;
        *w = next_nb;
        return;
    }
    *c0 = next + next_nb + (int)(t - 1) * TILE_COLS;
    *w = min_int(TILE_COLS, n - *c0);
}

static size_t tile_count(int n, int k, int nb)
{
    int rest = n - k - nb;
    if (rest <= 0)
        return 0;
    int after = rest - min_int(nb, rest);
    return 1 + (size_t)((after + TILE_COLS - 1) / TILE_COLS);
}

/* ---- One step of a factorization ------------------------------------------ */

typedef struct factor_step factor_step;

/* What LU, Cholesky and QR do in a step: factor a panel (the first
 * before the steps, the next in tile 0) and update a tile of the trailing
 * columns; t is the tile's index in its step (QR's workspace). */
typedef struct factor_kind {
    const char *span;
    /* Factors the panel of columns [k, k + nb); returns LAPACK's info. */
    int (*panel)(const factor_step *s, size_t t, int k, int nb);
    /* Brings columns [c0, c0 + w) up to date with the panel at s->k. */
    void (*update)(const factor_step *s, size_t t, int c0, int w);
} factor_kind;

struct factor_step {
    const factor_kind *kind;
    weft_runtime *rt;
    bool profiling;
    int m, n;              /* the matrix's rows and columns (its leading dim is m) */
    int panels_end;        /* columns that have panels: n, or QR's min(m, n) */
    int k, nb;             /* the step's panel's columns */
    double *a;
    int *ipiv;             /* LU's, counted from 1 as LAPACK's; NULL otherwise */
    double *tau, *tfac;    /* QR's: the reflectors' factors, each panel's T */
    double *work;          /* QR's: a workspace per tile of a step */
    int next_info;         /* the next panel's info (tile 0 only) */
};

static int factor_tiles(size_t begin, size_t end, void *ctx)
{
    factor_step *s = ctx;
    weft__blas_thread_enter();
    for (size_t t = begin; t < end; t++) {
        uint64_t t0 = s->profiling ? weft__now_ns() : 0;
        int c0, w;
        tile_cols(s->n, s->k, s->nb, t, &c0, &w);
        s->kind->update(s, t, c0, w);
        if (t == 0)
            s->next_info = s->kind->panel(s, 0, c0, w);
        if (s->profiling)
            tile_span(s->rt, s->kind->span, s->k, c0, w, t0);
    }
    return 0;
}

/* The step whose panel starts at column k, its panel already factored:
 * the trailing columns' tiles, the next panel factored in tile 0.
 * Returns 0 or a negative weft error. */
static int factor_step_run(factor_step *s, int k)
{
    s->k = k;
    s->nb = min_int(WEFT__LINALG_PANEL, s->panels_end - k);
    s->next_info = 0;
    return run_tiles(s->rt, tile_count(s->n, k, s->nb), factor_tiles, s);
}

static factor_step factor_start(const factor_kind *kind, weft_runtime *rt, int m, int n,
                                double *a)
{
    return (factor_step){ .kind = kind, .rt = rt, .profiling = weft__profiling(rt), .m = m,
                          .n = n, .panels_end = n, .a = a };
}

/* ---- LU ------------------------------------------------------------------ */

/* Factors the panel below row k; its pivots go to ipiv[k..k + nb) as rows
 * of the whole matrix.  Returns dgetrf's info. */
static int lu_panel(const factor_step *s, size_t t, int k, int nb)
{
    (void)t;
    int n = s->n, m = n - k, info = 0;
    dgetrf_(&m, &nb, s->a + k + (size_t)k * n, &n, s->ipiv + k, &info);
    for (int j = k; j < k + nb; j++)
        s->ipiv[j] += k;
    return info;
}

/* The panel's row swaps, U's rows (a unit lower solve) and the product
 * below them. */
static void lu_update(const factor_step *s, size_t t, int c0, int w)
{
    (void)t;
    int n = s->n, k = s->k, nb = s->nb, k1 = k + 1, k2 = k + nb, one = 1, below = n - k - nb;
    double *col = s->a + (size_t)c0 * n;
    const double *panel = s->a + k + (size_t)k * n;
    dlaswp_(&w, col, &n, &k1, &k2, s->ipiv, &one);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, nb, w, 1.0,
                panel, n, col + k, n);
    if (below > 0)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, below, w, nb, -1.0, panel + nb,
                    n, col + k, n, 1.0, col + k + nb, n);
}

static const factor_kind lu_kind = { "lu_tile", lu_panel, lu_update };

int weft__linalg_lu_tiled(weft_runtime *rt, int n, double *a, int *ipiv)
{
    factor_step s = factor_start(&lu_kind, rt, n, n, a);
    s.ipiv = ipiv;
    int first_zero = 0;   /* the first zero pivot, counted from 1, or 0 */
    int info = lu_panel(&s, 0, 0, min_int(WEFT__LINALG_PANEL, n));
    for (int k = 0; k < n; k += WEFT__LINALG_PANEL) {
        if (info && !first_zero)
            first_zero = k + info;
        int rc = factor_step_run(&s, k);
        if (rc)
            return rc;
        info = s.next_info;
        /* The columns left of the panel take its swaps too (L's rows). */
        int k1 = k + 1, k2 = k + s.nb, one = 1;
        if (k > 0)
            dlaswp_(&k, a, &n, &k1, &k2, ipiv, &one);
    }
    for (int j = 0; j < n; j++)
        ipiv[j]--;
    return first_zero;
}

/* ---- Cholesky ------------------------------------------------------------ */

/* The panel's diagonal block by dpotrf (the row-major lower triangle is
 * the column-major upper one), the rows below by a triangular solve.
 * Returns dpotrf's info. */
static int chol_panel(const factor_step *s, size_t t, int k, int nb)
{
    (void)t;
    int n = s->n, info = 0;
    double *diag = s->a + (size_t)k * n + k;
    dpotrf_("U", &nb, diag, &n, &info, 1);
    if (info == 0 && n - k - nb > 0)
        cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                    n - k - nb, nb, 1.0, diag, n, diag + (size_t)nb * n, n);
    return info;
}

/* The panel's part subtracted from the columns on and below the
 * diagonal. */
static void chol_update(const factor_step *s, size_t t, int c0, int w)
{
    (void)t;
    int n = s->n, below = n - c0 - w;
    double *a = s->a;
    const double *rows = a + (size_t)c0 * n + s->k;   /* L's rows c0.. of the panel */
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, w, s->nb, -1.0, rows, n, 1.0,
                a + (size_t)c0 * n + c0, n);
    if (below > 0)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, below, w, s->nb, -1.0,
                    rows + (size_t)w * n, n, rows, n, 1.0, a + (size_t)(c0 + w) * n + c0, n);
}

static const factor_kind chol_kind = { "cholesky_tile", chol_panel, chol_update };

int weft__linalg_cholesky_tiled(weft_runtime *rt, int n, double *a)
{
    factor_step s = factor_start(&chol_kind, rt, n, n, a);
    int info = chol_panel(&s, 0, 0, min_int(WEFT__LINALG_PANEL, n));
    for (int k = 0; k < n && info == 0; k += WEFT__LINALG_PANEL) {
        int rc = factor_step_run(&s, k);
        if (rc)
            return rc;
        if (s.next_info)
            return k + s.nb + s.next_info;
    }
    return info;
}

/* ---- QR ------------------------------------------------------------------ */

/* Doubles of one tile's workspace: dlarfb's w x nb, and dgeqrf's for a
 * panel. */
#define TILE_WORK ((size_t)TILE_COLS * WEFT__LINALG_PANEL)

static size_t qr_panels(int m, int n)
{
    int kk = min_int(m, n);
    return (size_t)((kk + WEFT__LINALG_PANEL - 1) / WEFT__LINALG_PANEL);
}

/* The most tiles at once: a step's (its next panel and the columns after
 * it) or q's. */
static size_t qr_tiles_max(int n, int qc)
{
    size_t step = 2 + (size_t)(n / TILE_COLS), q = (size_t)((qc + TILE_COLS - 1) / TILE_COLS);
    return step > q ? step : q;
}

/* Doubles of the panels' T factors, at the start of the scratch; the
 * tiles' workspaces follow them. */
static size_t qr_t_doubles(int m, int n)
{
    return qr_panels(m, n) * WEFT__LINALG_PANEL * WEFT__LINALG_PANEL;
}

size_t weft__linalg_qr_tiled_scratch(int m, int n, int qc)
{
    return qr_t_doubles(m, n) + qr_tiles_max(n, qc) * TILE_WORK;
}

static double *panel_t(double *tfac, int k)
{
    return tfac + (size_t)(k / WEFT__LINALG_PANEL) * WEFT__LINALG_PANEL * WEFT__LINALG_PANEL;
}

/* The panel's reflectors (dgeqrf) and their block's T (dlarft); no panel
 * from min(m, n) columns on. */
static int qr_panel(const factor_step *s, size_t t, int k, int nb)
{
    if (k >= s->panels_end)
        return 0;
    nb = min_int(nb, s->panels_end - k);
    int m = s->m, rows = m - k, lwork = (int)TILE_WORK, ldt = WEFT__LINALG_PANEL, info = 0;
    double *v = s->a + k + (size_t)k * m;
    dgeqrf_(&rows, &nb, v, &m, s->tau + k, s->work + t * TILE_WORK, &lwork, &info);
    dlarft_("F", "C", &rows, &nb, v, &m, s->tau + k, panel_t(s->tfac, k), &ldt, 1, 1);
    return info;
}

/* The panel's block reflector, transposed, applied to the columns from
 * row k down. */
static void qr_update(const factor_step *s, size_t t, int c0, int w)
{
    int m = s->m, k = s->k, nb = s->nb, rows = m - k, ldt = WEFT__LINALG_PANEL, ldw = w;
    dlarfb_("L", "T", "F", "C", &rows, &w, &nb, s->a + k + (size_t)k * m, &m,
            panel_t(s->tfac, k), &ldt, s->a + k + (size_t)c0 * m, &m, s->work + t * TILE_WORK,
            &ldw, 1, 1, 1, 1);
}

static const factor_kind qr_kind = { "qr_tile", qr_panel, qr_update };

int weft__linalg_qr_tiled(weft_runtime *rt, int m, int n, double *a, double *tau,
                          double *work)
{
    factor_step s = factor_start(&qr_kind, rt, m, n, a);
    s.panels_end = min_int(m, n);
    s.tau = tau;
    s.tfac = work;
    s.work = work + qr_t_doubles(m, n);
    qr_panel(&s, 0, 0, WEFT__LINALG_PANEL);
    for (int k = 0; k < s.panels_end; k += WEFT__LINALG_PANEL) {
        int rc = factor_step_run(&s, k);
        if (rc)
            return rc;
    }
    return 0;
}

typedef struct qr_q_job {
    weft_runtime *rt;
    bool profiling;
    int m, kk, qc;
    const double *a;
    double *tfac, *work, *q;
} qr_q_job;

/* Columns [c0, c0 + w) of q: the identity's, with the panels' block
 * reflectors applied last first; a panel from column c0 + w on leaves
 * them as they are (they are 0 from its first row down). */
static int qr_q_tiles(size_t begin, size_t end, void *ctx)
{
    const qr_q_job *j = ctx;
    int m = j->m, ldt = WEFT__LINALG_PANEL;
    weft__blas_thread_enter();
    for (size_t t = begin; t < end; t++) {
        uint64_t t0 = j->profiling ? weft__now_ns() : 0;
        int c0 = (int)t * TILE_COLS, w = min_int(TILE_COLS, j->qc - c0);
        double *x = j->q + (size_t)c0 * m;
        memset(x, 0, sizeof *x * (size_t)m * (size_t)w);
        for (int c = 0; c < w; c++)
            x[(size_t)c * m + c0 + c] = 1;
        int last = (j->kk - 1) / WEFT__LINALG_PANEL * WEFT__LINALG_PANEL;
        for (int k = last; k >= 0; k -= WEFT__LINALG_PANEL) {
            if (k >= c0 + w)
                continue;
            int nb = min_int(WEFT__LINALG_PANEL, j->kk - k), rows = m - k, ldw = w;
            dlarfb_("L", "N", "F", "C", &rows, &w, &nb, j->a + k + (size_t)k * m, &m,
                    panel_t(j->tfac, k), &ldt, x + k, &m, j->work + t * TILE_WORK,
                    &ldw, 1, 1, 1, 1);
        }
        if (j->profiling)
            tile_span(j->rt, "qr_q_tile", -1, c0, w, t0);
    }
    return 0;
}

int weft__linalg_qr_q_tiled(weft_runtime *rt, int m, int n, int qc, const double *a,
                            double *work, double *q)
{
    qr_q_job job = { .rt = rt, .profiling = weft__profiling(rt), .m = m, .kk = min_int(m, n),
                     .qc = qc, .a = a, .tfac = work, .work = work + qr_t_doubles(m, n),
                     .q = q };
    return run_tiles(rt, (size_t)((qc + TILE_COLS - 1) / TILE_COLS), qr_q_tiles, &job);
}

/* ---- Solves by tiles of right-hand sides ---------------------------------- */

typedef struct rhs_job {
    weft_runtime *rt;
    bool profiling;
    int n, k;
    const double *a;
    const int *ipiv;       /* LU's, counted from 1; NULL for a triangle */
    unsigned flags;        /* WEFT__LINALG_LOWER, WEFT__LINALG_ADJOINT */
    double *b;
} rhs_job;

static int rhs_tiles(size_t begin, size_t end, void *ctx)
{
    const rhs_job *j = ctx;
    int n = j->n;
    weft__blas_thread_enter();
    for (size_t t = begin; t < end; t++) {
        uint64_t t0 = j->profiling ? weft__now_ns() : 0;
        int c0 = (int)t * TILE_COLS, w = min_int(TILE_COLS, j->k - c0), info = 0;
        double *b = j->b + (size_t)c0 * n;
        if (j->ipiv)
            dgetrs_(j->flags & WEFT__LINALG_ADJOINT ? "T" : "N", &n, &w, j->a, &n, j->ipiv, b, &n,
                    &info, 1);
        else
            cblas_dtrsm(CblasColMajor, CblasLeft,
                        j->flags & WEFT__LINALG_LOWER ? CblasLower : CblasUpper,
                        j->flags & WEFT__LINALG_ADJOINT ? CblasTrans : CblasNoTrans, CblasNonUnit,
                        n, w, 1.0, j->a, n, b, n);
        if (j->profiling)
            tile_span(j->rt, "solve_tile", -1, c0, w, t0);
    }
    return 0;
}

static size_t rhs_tile_count(int k)
{
    return (size_t)((k + TILE_COLS - 1) / TILE_COLS);
}

int weft__linalg_lu_solve_tiled(weft_runtime *rt, int n, int k, const double *lu, int *ipiv,
                                bool trans, double *b)
{
    for (int j = 0; j < n; j++)
        ipiv[j]++;
    rhs_job job = { .rt = rt, .profiling = weft__profiling(rt), .n = n, .k = k, .a = lu,
                    .ipiv = ipiv, .flags = trans ? WEFT__LINALG_ADJOINT : 0, .b = b };
    int rc = run_tiles(rt, rhs_tile_count(k), rhs_tiles, &job);
    for (int j = 0; j < n; j++)
        ipiv[j]--;
    return rc;
}

/* ---- The inverse from LU's factors ---------------------------------------- */

typedef struct inverse_job {
    weft_runtime *rt;
    bool profiling;
    int n;
    const double *lu;
    double *x;
} inverse_job;

/* Columns [c0, c0 + w) of u^-1 l^-1: the identity's columns, l's solve
 * from row c0 down (the rows above stay 0), u's solve of every row. */
static int inverse_tiles(size_t begin, size_t end, void *ctx)
{
    const inverse_job *j = ctx;
    int n = j->n;
    weft__blas_thread_enter();
    for (size_t t = begin; t < end; t++) {
        uint64_t t0 = j->profiling ? weft__now_ns() : 0;
        int c0 = (int)t * TILE_COLS, w = min_int(TILE_COLS, n - c0);
        double *x = j->x + (size_t)c0 * n;
        memset(x, 0, sizeof *x * (size_t)n * (size_t)w);
        for (int c = 0; c < w; c++)
            x[(size_t)c * n + c0 + c] = 1;
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n - c0, w,
                    1.0, j->lu + c0 + (size_t)c0 * n, n, x + c0, n);
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, w, 1.0,
                    j->lu, n, x, n);
        if (j->profiling)
            tile_span(j->rt, "inverse_tile", -1, c0, w, t0);
    }
    return 0;
}

int weft__linalg_lu_inverse_tiled(weft_runtime *rt, int n, const double *lu, const int *ipiv,
                                  double *x)
{
    inverse_job job = { .rt = rt, .profiling = weft__profiling(rt), .n = n, .lu = lu, .x = x };
    int rc = run_tiles(rt, rhs_tile_count(n), inverse_tiles, &job);
    if (rc)
        return rc;
    /* a^-1 = u^-1 l^-1 p^T: the swaps undone on the columns, last first
     * (LAPACK's dgetri). */
    for (int c = n - 1; c >= 0; c--)
        if (ipiv[c] != c)
            cblas_dswap(n, x + (size_t)c * n, 1, x + (size_t)ipiv[c] * n, 1);
    return 0;
}

/* ---- Products ------------------------------------------------------------- */

/* Columns of a product's tile: each tile packs all of x again, so they
 * are wider than the factorizations' (expm of a [1024,1024] on one
 * worker took 1.11x of the one-dgemm peer's time with 128 columns, 1.07x
 * with 256, 1.04x with one tile). */
#define PRODUCT_COLS 256

typedef struct product_job {
    weft_runtime *rt;
    bool profiling;
    int n;
    const double *x, *y;
    double *z;
} product_job;

/* Columns [c0, c0 + w) of z = x y: x times y's columns. */
static int product_tiles(size_t begin, size_t end, void *ctx)
{
    const product_job *j = ctx;
    int n = j->n;
    weft__blas_thread_enter();
    for (size_t t = begin; t < end; t++) {
        uint64_t t0 = j->profiling ? weft__now_ns() : 0;
        int c0 = (int)t * PRODUCT_COLS, w = min_int(PRODUCT_COLS, n - c0);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, w, n, 1.0, j->x, n,
                    j->y + (size_t)c0 * n, n, 0.0, j->z + (size_t)c0 * n, n);
        if (j->profiling)
            tile_span(j->rt, "matmul_tile", -1, c0, w, t0);
    }
    return 0;
}

int weft__linalg_mat_mul_tiled(weft_runtime *rt, int n, const double *x, const double *y,
                               double *z)
{
    product_job job = { .rt = rt, .profiling = weft__profiling(rt), .n = n, .x = x, .y = y,
                        .z = z };
    return run_tiles(rt, (size_t)((n + PRODUCT_COLS - 1) / PRODUCT_COLS), product_tiles, &job);
}

int weft__linalg_tri_solve_tiled(weft_runtime *rt, int n, int k, const double *a,
                                 unsigned flags, double *b)
{
    rhs_job job = { .rt = rt, .profiling = weft__profiling(rt), .n = n, .k = k, .a = a,
                    .flags = flags, .b = b };
    return run_tiles(rt, rhs_tile_count(k), rhs_tiles, &job);
}

#else

bool weft__linalg_tiled(int n)
{
    (void)n;
    return false;
}

#endif
