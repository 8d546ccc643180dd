/* fusejit profiling instrumentation: rendered into a program only when COptions.profile is
   set. The entry function reads a monotonic clock around each kernel (slot k) and around the
   whole call (slot FJ_PROF_SLOTS - 1); fj_prof_add accumulates time and call counts and
   appends the call to a bounded ring of (slot, start ns, end ns, thread id) events, which
   keeps the latest FJ_PROF_RING calls. Zero-initialised, so it costs no space in the file.
   Layout of fj_prof: [events recorded, ns[slots], calls[slots], ring[FJ_PROF_RING][4]]. */
#include <time.h>
#ifdef __linux__
#include <unistd.h>
#include <sys/syscall.h>
#endif
#define FJ_PROF_RING 8192 /* a power of two */
static int64_t fj_prof[1 + 2 * FJ_PROF_SLOTS + 4 * FJ_PROF_RING];
static __thread int64_t fj_prof_tid;

static inline int64_t fj_prof_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

static void fj_prof_add(int64_t slot, int64_t t0) {
    const int64_t t1 = fj_prof_now();
    __atomic_fetch_add(&fj_prof[1 + slot], t1 - t0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&fj_prof[1 + FJ_PROF_SLOTS + slot], 1, __ATOMIC_RELAXED);
    if (!fj_prof_tid) {
#ifdef __linux__
        fj_prof_tid = (int64_t)syscall(SYS_gettid);
#else
        fj_prof_tid = 1;
#endif
    }
    const int64_t n = __atomic_fetch_add(&fj_prof[0], 1, __ATOMIC_RELAXED);
    int64_t *e = &fj_prof[1 + 2 * FJ_PROF_SLOTS + 4 * (n & (FJ_PROF_RING - 1))];
    e[0] = slot;
    e[1] = t0;
    e[2] = t1;
    e[3] = fj_prof_tid;
}

/* The counters (read by fusejit's runtime/profiler.py); shape gets {slots, ring size}. */
__attribute__((visibility("default"))) int64_t *fj_profile(int64_t *shape) {
    shape[0] = FJ_PROF_SLOTS;
    shape[1] = FJ_PROF_RING;
    return fj_prof;
}
