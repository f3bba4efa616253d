/* Events: futex-based sleeping and waking of idle workers and waiters. */
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/sched.h"

static void futex_wait(uint32_t *addr, uint32_t val, long timeout_ns)
{
    struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, timeout_ns > 0 ? &ts : NULL, NULL, 0);
}

void weft__event_wake(weft__event *ev, int n)
{
    __atomic_fetch_add(&ev->seq, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &ev->seq, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

void weft__deque_share_on_pop_owner(weft__deque *d, weft_task_slot *head)
{
    int64_t n = weft__deque_share_owner(d, head, (head - d->osplit + 1) / 2);
    if (n > 0 && d->wake_ev)
        weft__event_notify(d->wake_ev, n < INT_MAX ? (int)n : INT_MAX);
}

void weft__wake_all(weft__event *ev)
{
    weft__event_wake(ev, INT_MAX);
}

/* Sleeps on ev unless ready(ctx) holds after announcing.  Without
 * membarrier a wake-up may be missed, so the sleep is then bounded.
 * fenced: the wakers of ev publish with a seq_cst read-modify-write and
 * then read sleepers seq_cst (outside_ev), and ready() reads seq_cst: all
 * four accesses are in one total order, so either the waker sees this
 * sleeper or ready() sees the work, and the membarrier (an IPI to every
 * CPU running a worker) is not needed.
 * timeout_ns > 0 bounds the sleep (0: the default bound). */
void weft__event_sleep(weft_runtime *rt, weft__event *ev, bool (*ready)(void *), void *ctx,
                       bool fenced, long timeout_ns)
{
    __atomic_fetch_add(&ev->sleepers, 1, __ATOMIC_SEQ_CST);
    if (!fenced && rt->membarrier_ok)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    uint32_t seq = __atomic_load_n(&ev->seq, __ATOMIC_ACQUIRE);
    if (!ready(ctx))
        futex_wait(&ev->seq, seq, timeout_ns > 0 ? timeout_ns
                                  : fenced || rt->membarrier_ok ? 1000000000L : 10000000L);
    __atomic_fetch_sub(&ev->sleepers, 1, __ATOMIC_SEQ_CST);
}
