/* A work-sharing pool for the kernels' scans: the owner thread and up to KS_MAX_HELPERS helpers.
 *
 * The owner thread publishes a job of N chunks and works through them itself; the helper
 * threads, when they are running, claim chunks too. Nothing ever waits for a helper to start:
 * if the other cores are busy, the owner simply does every chunk, and only waits for chunks a
 * helper has already claimed. (A fork-join team, as OpenMP's, must wait for every member to
 * arrive, which on a loaded machine costs a scheduler time slice per job.)
 *
 * The job's ticket packs (generation 16 bits | number of chunks 24 | next chunk 24) in one
 * atomic word, so a claim (fetch_add) reads the chunk count of the very job it claims from.
 * A claimed chunk keeps its job alive: the owner returns only when every chunk is done, so the
 * job descriptor (fn, ctx) a claimer reads after a valid claim is that job's.
 */
#ifndef KSCHEDCORE_POOL_H
#define KSCHEDCORE_POOL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

typedef void (*ks_chunk_fn)(void *ctx, int64_t chunk);

#define KS_NEXT_BITS 24
#define KS_COUNT_BITS 24
#define KS_FIELD_MASK ((UINT64_C(1) << 24) - 1)
#define KS_MAX_CHUNKS ((int64_t)KS_FIELD_MASK - 2)
#define KS_SPIN 20000 /* polls before a helper sleeps (tens of microseconds) */
#define KS_MAX_HELPERS 63

typedef struct ks_pool {
    pthread_t threads[KS_MAX_HELPERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic uint64_t ticket;
    _Atomic int64_t done;
    _Atomic int sleeping;       /* helpers asleep on cv */
    _Atomic int stop;
    ks_chunk_fn fn;
    void *ctx;
    pid_t owner_pid;
    int started;                /* helpers running */
} ks_pool;

static inline void ks_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline int64_t ks_ticket_next(uint64_t t) { return (int64_t)(t & KS_FIELD_MASK); }
static inline int64_t ks_ticket_count(uint64_t t) { return (int64_t)((t >> KS_NEXT_BITS) & KS_FIELD_MASK); }
static inline int ks_has_work(uint64_t t) { return ks_ticket_next(t) < ks_ticket_count(t); }

/* Claims and runs chunks while the current job has any. */
static inline void ks_work(ks_pool *p) {
    for (;;) {
        uint64_t t = atomic_fetch_add(&p->ticket, 1);
        int64_t k = ks_ticket_next(t);
        if (k >= ks_ticket_count(t)) return;
        p->fn(p->ctx, k);
        atomic_fetch_add(&p->done, 1);
    }
}

static void *ks_helper_main(void *arg) {
    ks_pool *p = (ks_pool *)arg;
    for (;;) {
        int spins = 0;
        while (!ks_has_work(atomic_load(&p->ticket)) && !atomic_load(&p->stop)) {
            if (++spins < KS_SPIN) { ks_relax(); continue; }
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleeping, 1);
            while (!ks_has_work(atomic_load(&p->ticket)) && !atomic_load(&p->stop))
                pthread_cond_wait(&p->cv, &p->mu);
            atomic_fetch_sub(&p->sleeping, 1);
            pthread_mutex_unlock(&p->mu);
            spins = 0;
        }
        if (atomic_load(&p->stop)) return NULL;
        ks_work(p);
    }
}

/* Starts n_helpers helper threads (at most KS_MAX_HELPERS); returns how many run. With none,
 * the owner does all the work. */
static inline int ks_pool_start(ks_pool *p, int n_helpers) {
    atomic_store(&p->ticket, 0);
    atomic_store(&p->done, 0);
    atomic_store(&p->sleeping, 0);
    atomic_store(&p->stop, 0);
    p->started = 0;
    p->owner_pid = getpid();
    if (n_helpers > KS_MAX_HELPERS) n_helpers = KS_MAX_HELPERS;
    if (n_helpers <= 0) return 0;
    if (pthread_mutex_init(&p->mu, NULL) != 0) return 0;
    if (pthread_cond_init(&p->cv, NULL) != 0) return 0;
    while (p->started < n_helpers &&
           pthread_create(&p->threads[p->started], NULL, ks_helper_main, p) == 0)
        p->started++;
    return p->started;
}

static inline void ks_pool_stop(ks_pool *p) {
    int k, n = p->started;
    if (!n) return;
    p->started = 0;
    if (getpid() != p->owner_pid) return; /* a forked child has no helper threads */
    atomic_store(&p->stop, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (k = 0; k < n; k++) pthread_join(p->threads[k], NULL);
}

/* Runs fn(ctx, k) for k in [0, n_chunks), on this thread and the helpers; returns when all
 * are done. Owner thread only. */
static inline void ks_pool_run(ks_pool *p, ks_chunk_fn fn, void *ctx, int64_t n_chunks) {
    uint64_t gen;
    int spins = 0;
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->done, 0);
    gen = ((atomic_load(&p->ticket) >> (KS_NEXT_BITS + KS_COUNT_BITS)) + 1) & 0xFFFF;
    atomic_store(&p->ticket, (gen << (KS_NEXT_BITS + KS_COUNT_BITS)) |
                                 ((uint64_t)n_chunks << KS_NEXT_BITS));
    if (p->started && atomic_load(&p->sleeping)) {
        pthread_mutex_lock(&p->mu);
        if (n_chunks > 2) pthread_cond_broadcast(&p->cv);
        else pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    ks_work(p);
    while (atomic_load(&p->done) < n_chunks) {
        if (++spins < 1000) ks_relax();
        else sched_yield();
    }
}

#endif
