/*
 * Optional helper of the soak (soak/run.sh builds it when a C compiler and
 * the Lua headers are there): glibc's view of the C heap, so that the soak
 * can tell a leak (memory in use grows) from fragmentation (in use is
 * flat, but the heap keeps freed memory and RSS grows).
 *   local mi = require "soak.mallinfo"
 *   mi.stats() -> in_use_bytes, system_bytes, free_bytes   (nothing if
 *                 the C library has no mallinfo2)
 *   mi.trim()  -> malloc_trim(0): gives free heap memory back to the OS
 * Lua's own heap is part of in_use (Lua allocates with realloc).
 */
#include <lua.h>
#include <lauxlib.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__GLIBC__) \
    && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define SOAK_MALLINFO2 1
#endif

static int
soak_stats(lua_State *L)
{
#ifdef SOAK_MALLINFO2
    struct mallinfo2 m = mallinfo2();

    lua_pushinteger(L, (lua_Integer) (m.uordblks + m.hblkhd));
    lua_pushinteger(L, (lua_Integer) (m.arena + m.hblkhd));
    lua_pushinteger(L, (lua_Integer) m.fordblks);
    return 3;
#else
    (void) L;
    return 0;
#endif
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
        {NULL, NULL}
    };

    luaL_newlib(L, funcs);
    return 1;
}
