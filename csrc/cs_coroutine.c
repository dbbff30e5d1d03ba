/*
 * The coroutine.* replacements (ngx_http_lua_coroutine.c's idea).
 *
 * Inside a light thread, coroutine.resume does not call lua_resume: it
 * records CS_OP_CORO_RESUME and yields to the trampoline, which resumes the
 * user coroutine as the new innermost coroutine of the thread's chain; a
 * coroutine.yield records CS_OP_CORO_YIELD and the trampoline hands the
 * values back. So a socket operation or a sleep deep inside user
 * coroutines parks the whole light thread, and resumes exactly there.
 *
 * Outside a scheduled thread, or where the caller cannot yield (a
 * table.sort comparator, a string.gsub callback, __gc...), they behave like
 * Lua 5.4's own functions (a direct nested resume).
 */
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"
#include "cs_thread.h"

#define CS_CO_WRAP 2 /* in the continuation context: a wrap function */



/* Lua 5.4's auxresume: [-narg, +(n|1), -] returns n results or -1 */
static int
cs_co_stock_resume(lua_State *L, lua_State *co, int narg)
{
    int status, nres;

    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, narg);
    status = lua_resume(co, L, narg, &nres);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    lua_xmove(co, L, 1);
    return -1;
}


/* the error of a wrap function, as Lua 5.4's auxwrap raises it */
static int
cs_co_wrap_error(lua_State *L, lua_State *co)
{
    int stat = lua_status(co);

    if (stat != LUA_OK && stat != LUA_YIELD) { /* error in the coroutine */
        stat = cs_closethread(co, L); /* close its tbc variables */
        lua_pop(L, 1);
        lua_xmove(co, L, 1);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}


/* [-0, +k, e] the results of a resume or wrap call: ok, values... at base+1 */
static int
cs_co_results(lua_State *L, lua_State *co, int base, int wrap)
{
    if (!wrap)
        return lua_gettop(L) - base;
    if (!lua_toboolean(L, base + 1))
        return cs_co_wrap_error(L, co);
    lua_remove(L, base + 1);
    return lua_gettop(L) - base;
}


static int
cs_co_resume_k(lua_State *L, int status, lua_KContext ctx)
{
    int base = (int) (ctx & 1), wrap = (int) (ctx & CS_CO_WRAP);
    lua_State *co;

    (void) status;
    co = base ? lua_tothread(L, 1) : lua_tothread(L, lua_upvalueindex(2));
    return cs_co_results(L, co, base, wrap);
}


/* pushes false, err (resume) or raises it (wrap) */
static int
cs_co_fail(lua_State *L, lua_State *co, const char *err, int base, int wrap)
{
    lua_settop(L, base);
    lua_pushboolean(L, 0);
    lua_pushstring(L, err);
    return cs_co_results(L, co, base, wrap);
}


/* OpenResty's message (ngx_http_lua_coroutine_resume: "cannot resume %s
 * coroutine", its status) for the coroutine at coidx */
static const char *
cs_co_status_msg(cs_sched_t *S, lua_State *L, int coidx)
{
    const char *st = cs_thread_costatus(S, L, coidx);

    if (strcmp(st, "running") == 0)
        return "cannot resume running coroutine";
    if (strcmp(st, "normal") == 0)
        return "cannot resume normal coroutine";
    if (strcmp(st, "zombie") == 0)
        return "cannot resume zombie coroutine";
    return "cannot resume dead coroutine";
}


/* why a resume of co (at coidx; not a record in a chain) would fail, or
 * NULL */
static const char *
cs_co_cannot_resume(cs_sched_t *S, lua_State *L, lua_State *co, int coidx)
{
    lua_Debug ar;

    if (co == L)
        return cs_co_status_msg(S, L, coidx);
    switch (lua_status(co)) {
    case LUA_YIELD:
        return NULL;
    case LUA_OK:
        if (lua_getstack(co, 0, &ar) || lua_gettop(co) == 0)
            return cs_co_status_msg(S, L, coidx);
        return NULL;
    default:
        return "cannot resume dead coroutine";
    }
}


/* coroutine.resume (base 1, co at 1) and wrap functions (base 0) */
static int
cs_co_auxresume(lua_State *L, int base, int wrap)
{
    cs_sched_t *S = cs_sched_up(L);
    int coidx = base ? 1 : lua_upvalueindex(2);
    lua_State *co = lua_tothread(L, coidx);
    int nargs = lua_gettop(L) - base, r;
    const char *err = NULL;
    cs_thread_t *cur;
    cs_co_t *c = NULL;

    if (S->running) {
        c = cs_sched_find(S, L, coidx);
        if (c != NULL && (c->kind != CS_KIND_USER || c->th != NULL))
            err = cs_co_status_msg(S, L, coidx); /* a thread, or in one */
        if (err != NULL)
            return cs_co_fail(L, co, err, base, wrap);
    }
    if ((err = cs_co_cannot_resume(S, L, co, coidx)) != NULL)
        return cs_co_fail(L, co, err, base, wrap);

    cur = S->running ? cs_sched_try_current(S, L) : NULL;
    if (cur == NULL || !lua_isyieldable(L)) { /* a direct nested resume */
        r = cs_co_stock_resume(L, co, nargs);
        if (c != NULL && lua_status(co) != LUA_YIELD)
            cs_thread_co_ended(S, L, c); /* it ended here */
        if (r < 0) {
            if (wrap)
                return cs_co_wrap_error(L, co);
            lua_pushboolean(L, 0);
            lua_insert(L, -2);
            return 2;
        }
        if (wrap)
            return r;
        lua_pushboolean(L, 1);
        lua_insert(L, -(r + 1));
        return r + 1;
    }

    if (!lua_checkstack(co, nargs))
        return cs_co_fail(L, co, "too many arguments to resume", base, wrap);

    if (c == NULL) { /* first trampoline resume: give it a record */
        luaL_checkstack(L, 4, NULL);
        c = lua_newuserdatauv(L, sizeof(cs_co_t), 1);
        memset(c, 0, sizeof(*c));
        c->L = co;
        c->kind = CS_KIND_USER;
        c->pin = LUA_NOREF;
        lua_pushvalue(L, coidx);
        lua_setiuservalue(L, -2, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->map_ref);
        lua_pushvalue(L, coidx);
        lua_pushvalue(L, -3);
        lua_rawset(L, -3);
        lua_pop(L, 2);
    }
    c->wrap = (unsigned char) wrap;
    c->dead = 0;
    S->op = CS_OP_CORO_RESUME;
    S->op_target = c;
    return lua_yieldk(L, nargs, (lua_KContext) (base | wrap), cs_co_resume_k);
}


/* coroutine.resume(co, ...) */
static int
cs_co_resume(lua_State *L)
{
    luaL_argexpected(L, lua_type(L, 1) == LUA_TTHREAD, 1, "coroutine");
    return cs_co_auxresume(L, 1, 0);
}


static int
cs_co_auxwrap(lua_State *L)
{
    return cs_co_auxresume(L, 0, CS_CO_WRAP);
}


/* coroutine.wrap(f) */
static int
cs_co_wrap(lua_State *L)
{
    lua_State *co;

    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, lua_upvalueindex(1));
    co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, cs_co_auxwrap, 2);
    return 1;
}


/* coroutine.yield(...) */
static int
cs_co_yield(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *cur = cs_sched_try_current(S, L);

    if (cur == NULL || !lua_isyieldable(L))
        return lua_yield(L, lua_gettop(L)); /* Lua's own behaviour */
    if (cur->active == &cur->co) { /* top level of a light thread */
        lua_settop(L, 0);
        S->op = CS_OP_YIELD;
        return lua_yield(L, 0);
    }
    S->op = CS_OP_CORO_YIELD;
    return lua_yield(L, lua_gettop(L));
}


/* coroutine.close(co) */
static int
cs_co_close(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    lua_State *co = lua_tothread(L, 1);
    const char *st;

    luaL_argexpected(L, co, 1, "coroutine");
    st = cs_thread_costatus(S, L, 1);
    if (strcmp(st, "dead") != 0 && strcmp(st, "suspended") != 0)
        return luaL_error(L, "cannot close a %s coroutine", st);
    if (S->running) {
        cs_co_t *c = cs_sched_find(S, L, 1);
        if (c != NULL && c->kind == CS_KIND_USER && !c->dead)
            cs_thread_co_ended(S, L, c); /* ends it: its zombies go */
    }
    if (cs_closethread(co, L) == LUA_OK) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, 0);
    lua_xmove(co, L, 1);
    return 2;
}


static const luaL_Reg cs_co_funcs[] = {
    {"resume", cs_co_resume},
    {"wrap", cs_co_wrap},
    {"yield", cs_co_yield},
    {"close", cs_co_close},
    {NULL, NULL}
};


/* core.coroutine: resume, wrap, yield, close (status is thread.status) */
void
cs_coroutine_open(lua_State *L, cs_sched_t *S)
{
    lua_newtable(L);
    cs_setfuncs(L, S, cs_co_funcs);
    lua_setfield(L, -2, "coroutine");
}
