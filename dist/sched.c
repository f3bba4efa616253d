/* The chunk schedule of weft_dist_parallel_map (factoring; see
 * dist/internal.h): a pure function of n and the runner count. */
#include "dist/internal.h"

static uint64_t batch_len(uint64_t remaining, uint64_t runners)
{
    uint64_t per = 2 * runners;
    return remaining / per + (remaining % per != 0);
}

void weft__dist_cursor_init(weft__dist_cursor *c, const weft__dist_sched *s)
{
    c->first = 0;
    c->start = 0;
    c->len = batch_len(s->n, s->runners);
}

/* Moves c to the next batch. */
static void next_batch(const weft__dist_sched *s, weft__dist_cursor *c)
{
    c->start += s->runners * c->len;
    c->first += s->runners;
    c->len = batch_len(s->n - c->start, s->runners);
}

void weft__dist_sched_init(weft__dist_sched *s, uint64_t n, uint64_t runners)
{
    s->n = n;
    s->runners = runners ? runners : 1;
    s->total = 0;
    /* Every batch but the last is full (runners chunks); the last has as
     * many as its length leaves non-empty.  About log2(n) batches. */
    weft__dist_cursor c;
    weft__dist_cursor_init(&c, s);
    while (c.start < n) {
        uint64_t remaining = n - c.start;
        uint64_t chunks = remaining / c.len + (remaining % c.len != 0);
        if (chunks > s->runners)
            chunks = s->runners;
        s->total += chunks;
        next_batch(s, &c);
    }
}

void weft__dist_sched_chunk(const weft__dist_sched *s, weft__dist_cursor *c, uint64_t j,
                            uint64_t *begin, uint64_t *end)
{
    while (j >= c->first + s->runners)
        next_batch(s, c);
    uint64_t b = c->start + (j - c->first) * c->len;
    *begin = b;
    *end = s->n - b <= c->len ? s->n : b + c->len;
}
