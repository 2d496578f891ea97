/* The run protocol. The caller publishes a job (a new generation) under the
 * mutex and opens it; workers join an open job they have not seen, counting
 * themselves in `active`. Every thread claims chunks from an atomic counter.
 * When the counter runs out, the caller closes the job (late wakers no longer
 * join, so none can touch the next job's counter with this job's function)
 * and waits for `active` to drop to zero. */
#include "runtime/cpu/thread_pool.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long a worker polls for the next job before it sleeps: back-to-back
 * kernels then start without a wake-up through the kernel. */
enum { SPIN_ITERATIONS = 4000 };

struct dmlc_thread_pool {
  uint32_t num_threads; /* the calling thread included */
  uint32_t num_started; /* workers running */
  bool start_failed;    /* do not retry pthread_create on every run */
  pthread_t *workers;
  pthread_mutex_t mutex;
  /* Held by the one run using the workers; a run that finds it held runs
   * on its calling thread alone (no waiting on another run, no more threads
   * than the pool has). */
  pthread_mutex_t run_lock;
  pthread_cond_t wake; /* workers wait for a job */
  pthread_cond_t idle; /* the caller waits for active == 0 */
  /* The job; written under the mutex. */
  uint64_t generation;
  _Atomic uint64_t published; /* == generation; read without the mutex to spin */
  bool open, quit;
  _Atomic uint32_t active;   /* changed under the mutex; read without it to spin */
  _Atomic uint32_t polling;  /* workers polling for the next job (dmlc_thread_pool_hot) */
  _Atomic uint64_t last_end; /* CLOCK_MONOTONIC ns at the last run's end (0: none) */
  dmlc_cpu_kernel_fn fn;
  void *const *buffers;
  uint64_t num_tasks, chunk;
  /* The first task not yet claimed: every thread hits it, so it gets a cache
   * line of its own. */
  alignas(64) _Atomic uint64_t next;
  char pad[64 - sizeof(_Atomic uint64_t)];
};

uint32_t dmlc_online_cores(void) {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 1024 ? 1024 : (uint32_t)n;
}

static void run_chunks(_Atomic uint64_t *next, uint64_t num_tasks, uint64_t chunk,
                       dmlc_cpu_kernel_fn fn, void *const *buffers) {
  for (;;) {
    const uint64_t begin = atomic_fetch_add_explicit(next, chunk, memory_order_relaxed);
    if (begin >= num_tasks)
      return;
    const uint64_t end = num_tasks - begin < chunk ? num_tasks : begin + chunk;
    fn(buffers, begin, end);
  }
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Called with the mutex held; returns with it held. */
static void wait_for_job(dmlc_thread_pool *p, uint64_t seen) {
  if (!p->quit && !(p->open && p->generation != seen)) {
    pthread_mutex_unlock(&p->mutex);
    atomic_fetch_add_explicit(&p->polling, 1, memory_order_relaxed);
    for (int i = 0; i < SPIN_ITERATIONS; i++) {
      if (atomic_load_explicit(&p->published, memory_order_relaxed) != seen)
        break;
      cpu_relax();
    }
    atomic_fetch_sub_explicit(&p->polling, 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mutex);
  }
  while (!p->quit && !(p->open && p->generation != seen))
    pthread_cond_wait(&p->wake, &p->mutex);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

bool dmlc_thread_pool_hot(dmlc_thread_pool *p) {
  if (atomic_load_explicit(&p->polling, memory_order_relaxed))
    return true;
  const uint64_t last = atomic_load_explicit(&p->last_end, memory_order_relaxed);
  return last && now_ns() - last < DMLC_THREAD_POOL_HOT_NS;
}

void dmlc_thread_pool_ran_alone(dmlc_thread_pool *p) {
  atomic_store_explicit(&p->last_end, now_ns(), memory_order_relaxed);
}

static void *worker_main(void *arg) {
  dmlc_thread_pool *p = arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mutex);
  for (;;) {
    wait_for_job(p, seen);
    if (p->quit)
      break;
    seen = p->generation;
    atomic_fetch_add_explicit(&p->active, 1, memory_order_relaxed);
    const dmlc_cpu_kernel_fn fn = p->fn;
    void *const *buffers = p->buffers;
    const uint64_t num_tasks = p->num_tasks, chunk = p->chunk;
    pthread_mutex_unlock(&p->mutex);
    run_chunks(&p->next, num_tasks, chunk, fn, buffers);
    pthread_mutex_lock(&p->mutex);
    if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_release) == 1)
      pthread_cond_signal(&p->idle);
  }
  pthread_mutex_unlock(&p->mutex);
  return NULL;
}

dmlc_status dmlc_thread_pool_create(uint32_t num_threads, dmlc_thread_pool **out) {
  *out = NULL;
  dmlc_thread_pool *p = aligned_alloc(alignof(dmlc_thread_pool), sizeof *p);
  if (!p)
    return DMLC_ERROR_OUT_OF_MEMORY;
  memset(p, 0, sizeof *p);
  p->num_threads = num_threads ? num_threads : dmlc_online_cores();
  p->workers = calloc(p->num_threads, sizeof *p->workers);
  if (!p->workers) {
    free(p);
    return DMLC_ERROR_OUT_OF_MEMORY;
  }
  pthread_mutex_init(&p->mutex, NULL);
  pthread_mutex_init(&p->run_lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->idle, NULL);
  *out = p;
  return DMLC_OK;
}

void dmlc_thread_pool_destroy(dmlc_thread_pool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->mutex);
  p->quit = true;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mutex);
  for (uint32_t i = 0; i < p->num_started; i++)
    pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->idle);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mutex);
  pthread_mutex_destroy(&p->run_lock);
  free(p->workers);
  free(p);
}

uint32_t dmlc_thread_pool_num_threads(const dmlc_thread_pool *p) { return p->num_threads; }

static void start_workers(dmlc_thread_pool *p) {
  while (!p->start_failed && p->num_started + 1 < p->num_threads) {
    if (pthread_create(&p->workers[p->num_started], NULL, worker_main, p) != 0)
      p->start_failed = true;
    else
      p->num_started++;
  }
}

void dmlc_thread_pool_run(dmlc_thread_pool *p, uint64_t num_tasks, uint64_t chunk,
                          dmlc_cpu_kernel_fn fn, void *const *buffers) {
  if (chunk == 0)
    chunk = 1;
  if (num_tasks <= chunk || p->num_threads == 1 || pthread_mutex_trylock(&p->run_lock) != 0) {
    if (num_tasks)
      fn(buffers, 0, num_tasks);
    return;
  }
  start_workers(p);
  pthread_mutex_lock(&p->mutex);
  p->fn = fn;
  p->buffers = buffers;
  p->num_tasks = num_tasks;
  p->chunk = chunk;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  p->generation++;
  p->open = true;
  atomic_store_explicit(&p->published, p->generation, memory_order_relaxed);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mutex);

  run_chunks(&p->next, num_tasks, chunk, fn, buffers);

  pthread_mutex_lock(&p->mutex);
  p->open = false;
  pthread_mutex_unlock(&p->mutex);
  /* The others are finishing their last chunks: usually a short wait. */
  bool done = false;
  for (int i = 0; !done && i < SPIN_ITERATIONS; i++) {
    done = atomic_load_explicit(&p->active, memory_order_acquire) == 0;
    if (!done)
      cpu_relax();
  }
  if (!done) {
    pthread_mutex_lock(&p->mutex);
    while (atomic_load_explicit(&p->active, memory_order_acquire) > 0)
      pthread_cond_wait(&p->idle, &p->mutex);
    pthread_mutex_unlock(&p->mutex);
  }
  atomic_store_explicit(&p->last_end, now_ns(), memory_order_relaxed);
  pthread_mutex_unlock(&p->run_lock);
}
