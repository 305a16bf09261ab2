/* Test harness for sysbench_rand_seed.rs: gives calls to srandom()/random() made from inside
   a LuaJIT library their own generator, so that the C library's global random() state is the
   one sysbench alone makes it, as with sysbench's bundled LuaJIT. (OpenResty's LuaJIT seeds
   and draws random() when it loads, which moves sysbench's unseeded streams from run to run.)
   LD_PRELOAD it into sysbench. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct random_data own;
static char own_state[128];

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
  return ((long (*)(void)) dlsym(RTLD_NEXT, "random"))();
}
