/*
 * Optional helper of the soak (soak/run.sh builds it when a C compiler and
 * the Lua headers are there): the allocator's view of the C heap, so that
 * the soak can tell a leak (memory in use grows) from fragmentation (in
 * use is flat, but the heap keeps freed memory and RSS grows).
 *   local mi = require "soak.mallinfo"
 *   mi.stats() -> in_use_bytes, system_bytes, free_bytes   (nothing if
 *                 the allocator tells nothing)
 *   mi.trim()  -> malloc_trim(0): gives free heap memory back to the OS
 *   mi.allocator() -> "jemalloc", "glibc" or "unknown"
 * Under jemalloc (LD_PRELOAD, soak/run.sh's default) the figures are its
 * stats.allocated and stats.mapped, else glibc's mallinfo2. Lua's own heap
 * is part of in_use (Lua allocates with realloc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__GLIBC__) \
    && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define SOAK_MALLINFO2 1
#endif

typedef int (*soak_mallctl_pt)(const char *name, void *oldp,
                               size_t *oldlenp, void *newp, size_t newlen);

/* jemalloc's mallctl when jemalloc is the process's malloc, else NULL */
static soak_mallctl_pt
soak_mallctl(void)
{
    static int looked;
    static soak_mallctl_pt f;

    if (!looked) {
        looked = 1;
        *(void **) &f = dlsym(RTLD_DEFAULT, "mallctl");
    }
    return f;
}

static int
soak_je_stats(lua_State *L, soak_mallctl_pt f)
{
    uint64_t epoch = 1;
    size_t allocated = 0, mapped = 0, len = sizeof(epoch);

    /* the stats are a snapshot, refreshed by writing the epoch */
    (void) f("epoch", &epoch, &len, &epoch, sizeof(epoch));
    len = sizeof(size_t);
    if (f("stats.allocated", &allocated, &len, NULL, 0) != 0
        || f("stats.mapped", &mapped, &len, NULL, 0) != 0)
        return 0;
    lua_pushinteger(L, (lua_Integer) allocated);
    lua_pushinteger(L, (lua_Integer) mapped);
    lua_pushinteger(L, (lua_Integer) (mapped - allocated));
    return 3;
}

static int
soak_allocator(lua_State *L)
{
    if (soak_mallctl() != NULL)
        lua_pushliteral(L, "jemalloc");
#if defined(__GLIBC__)
    else
        lua_pushliteral(L, "glibc");
#else
    else
        lua_pushliteral(L, "unknown");
#endif
    return 1;
}

static int
soak_stats(lua_State *L)
{
    soak_mallctl_pt je = soak_mallctl();

    if (je != NULL)
        return soak_je_stats(L, je);
    {
#ifdef SOAK_MALLINFO2
    struct mallinfo2 m = mallinfo2();

    lua_pushinteger(L, (lua_Integer) (m.uordblks + m.hblkhd));
    lua_pushinteger(L, (lua_Integer) (m.arena + m.hblkhd));
    lua_pushinteger(L, (lua_Integer) m.fordblks);
    return 3;
#else
    return 0;
#endif
    }
}

static int
soak_trim(lua_State *L)
{
#if defined(__GLIBC__)
    lua_pushinteger(L, malloc_trim(0));
#else
    lua_pushinteger(L, 0);
#endif
    return 1;
}

int luaopen_soak_mallinfo(lua_State *L);

int
luaopen_soak_mallinfo(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"stats", soak_stats},
        {"trim", soak_trim},
        {"allocator", soak_allocator},
        {NULL, NULL}
    };

    luaL_newlib(L, funcs);
    return 1;
}
