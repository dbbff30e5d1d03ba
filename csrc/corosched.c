/*
 * The module entry: require "corosched.core". Creates the scheduler of this
 * Lua state and lets each file register its functions. The public module
 * is lua/corosched/init.lua.
 */
#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"
#include "cs_socket.h"

#define CS_VERSION "0.1.0"

typedef void (*cs_open_pt)(lua_State *L, cs_sched_t *S);

static const cs_open_pt cs_opens[] = {
    cs_sched_open,
    cs_thread_open,
    cs_coroutine_open,
    cs_timer_open,
    cs_sync_open,
    cs_socket_open,
    cs_crypto_open,
    cs_cdata_open,
    NULL
};


CS_EXPORT int luaopen_corosched_core(lua_State *L);

CS_EXPORT int
luaopen_corosched_core(lua_State *L)
{
    cs_sched_t *S = cs_sched_get(L);
    int i;

    lua_newtable(L);
    for (i = 0; cs_opens[i] != NULL; i++)
        cs_opens[i](L, S);
    lua_pushliteral(L, CS_VERSION);
    lua_setfield(L, -2, "_VERSION");
    /* ngx.null (and cjson.null): a light userdata NULL */
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    return 1;
}
