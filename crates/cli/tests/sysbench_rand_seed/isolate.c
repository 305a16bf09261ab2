/* Test harness for sysbench_rand_seed.rs, LD_PRELOADed into the oracle sysbench. Two things:
   1. calls to srandom()/random() made from inside a LuaJIT library get their own generator, so
      that the C library's global random() state is the one sysbench alone makes it, as with
      sysbench's bundled LuaJIT (OpenResty's LuaJIT seeds and draws random() when it loads,
      which moves sysbench's unseeded streams from run to run);
   2. threads take their seeds in the order sysbench creates them: every sysbench thread's
      first act is to draw its four seed values from random() (sb_rand_thread_init), and
      threads created together race for them, so on a loaded machine the oracle's thread 1
      could take thread 0's seed. pthread_create() here returns once the new thread has drawn
      its four values (or after 5 s, for a thread that draws none). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct random_data own;
static char own_state[128];
static unsigned long draws; /* random() values sysbench itself drew */

static int from_luajit(void *ret)
{
  Dl_info i;
  return dladdr(ret, &i) && i.dli_fname && strstr(i.dli_fname, "luajit") != NULL;
}

void srandom(unsigned seed)
{
  if (from_luajit(__builtin_return_address(0))) {
    initstate_r(seed, own_state, sizeof own_state, &own);
    return;
  }
  ((void (*)(unsigned)) dlsym(RTLD_NEXT, "srandom"))(seed);
}

long random(void)
{
  if (from_luajit(__builtin_return_address(0))) {
    int32_t r = 0;
    if (own.state)
      random_r(&own, &r);
    return r;
  }
  long r = ((long (*)(void)) dlsym(RTLD_NEXT, "random"))();
  __atomic_add_fetch(&draws, 1, __ATOMIC_SEQ_CST);
  return r;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                   void *(*start)(void *), void *arg)
{
  create_fn real = (create_fn) dlsym(RTLD_NEXT, "pthread_create");
  unsigned long before = __atomic_load_n(&draws, __ATOMIC_SEQ_CST);
  int rc = real(thread, attr, start, arg);
  if (rc != 0)
    return rc;
  struct timespec pause = {0, 100000}; /* 0.1 ms, up to 5 s */
  for (int i = 0; i < 50000 && __atomic_load_n(&draws, __ATOMIC_SEQ_CST) < before + 4; i++)
    nanosleep(&pause, NULL);
  return rc;
}
