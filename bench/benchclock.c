/*
 * benchclock: the clocks the benchmark scripts need and stock Lua lacks.
 *
 *   local clk = require "benchclock"
 *   clk.now()   -- CLOCK_MONOTONIC, seconds (float)
 *   clk.cpu()   -- CLOCK_PROCESS_CPUTIME_ID, seconds (float)
 *
 * Built by bench/run.sh into bench/build/benchclock.so. Only the benchmark
 * scripts load it.
 */
#include <time.h>
#include <lua.h>
#include <lauxlib.h>

static double
clock_sec(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int
l_now(lua_State *L)
{
    lua_pushnumber(L, clock_sec(CLOCK_MONOTONIC));
    return 1;
}

static int
l_cpu(lua_State *L)
{
    lua_pushnumber(L, clock_sec(CLOCK_PROCESS_CPUTIME_ID));
    return 1;
}

static const luaL_Reg funcs[] = {
    {"now", l_now},
    {"cpu", l_cpu},
    {NULL, NULL}
};

int luaopen_benchclock(lua_State *L);

int
luaopen_benchclock(lua_State *L)
{
    luaL_newlib(L, funcs);
    return 1;
}
