/*
 * cs.timer.at(delay, fn, ...) and cs.timer.every(interval, fn, ...).
 *
 * A timer is a userdata with a heap entry; user value 1 holds
 * {fn, arg1, ..., n = #args}. While pending it is anchored in S's anchor
 * table, so pending timers run even when the handle is dropped, and they
 * keep cs.run alive. Each expiry runs fn(premature, ...) in a new detached
 * light thread.
 */
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"
#include "cs_thread.h"
#include "cs_timer.h"

typedef struct cs_timer_s {
    cs_tnode_t tn;
    double interval; /* 0 for timer.at */
    int ref;         /* anchor while pending, else LUA_NOREF */
} cs_timer_t;


static int cs_timer_is(const cs_tnode_t *n);


/* [-0, +0, m] stops a pending timer: out of the heap, unanchored */
static void
cs_timer_stop(cs_sched_t *S, lua_State *L, cs_timer_t *t)
{
    cs_sched_heap_del(S, &t->tn);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
    luaL_unref(L, -1, t->ref);
    lua_pop(L, 1);
    t->ref = LUA_NOREF;
    S->ntimers--;
}


/* the heap says it is time: spawn fn(premature, ...) detached */
static void
cs_timer_fire(cs_sched_t *S, cs_tnode_t *n)
{
    cs_timer_t *t = (cs_timer_t *) (void *) n;
    lua_State *L = S->L;
    int nargs, i, top = lua_gettop(L);

    luaL_checkstack(L, 4, NULL);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
    lua_rawgeti(L, -1, t->ref);                 /* anchors timer */
    lua_getiuservalue(L, -1, 1);                /* anchors timer data */
    lua_getfield(L, -1, "n");
    nargs = (int) lua_tointeger(L, -1);
    lua_pop(L, 1);
    luaL_checkstack(L, nargs + 4, "too many timer arguments");
    lua_rawgeti(L, -1, 1);                      /* fn */
    lua_pushboolean(L, S->exiting);             /* premature */
    for (i = 1; i <= nargs; i++)
        lua_rawgeti(L, top + 3, i + 1);

    if (t->interval > 0 && !S->exiting) {
        t->tn.when = S->now_mono + t->interval;
        cs_sched_heap_add(S, &t->tn); /* the slot it just left */
    } else {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
        luaL_unref(L, -1, t->ref);
        lua_pop(L, 1);
        t->ref = LUA_NOREF;
        S->ntimers--;
    }

    cs_sched_ready(S, cs_thread_new(S, L, top + 4, nargs + 1, NULL,
                                   CS_KIND_DETACHED), nargs + 1);
    lua_settop(L, top);
}


static int
cs_timer_is(const cs_tnode_t *n)
{
    return n->fire == cs_timer_fire;
}


/* deadline order (insertion order for equal deadlines) */
static int
cs_timer_cmp(const void *a, const void *b)
{
    const cs_tnode_t *x = *(cs_tnode_t *const *) a;
    const cs_tnode_t *y = *(cs_tnode_t *const *) b;

    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}


void
cs_timer_fire_all(cs_sched_t *S)
{
    lua_State *L = S->L;
    cs_tnode_t **v;
    int i, n = 0;

    if (S->ntimers == 0)
        return;
    /* the heap also holds sleeps and socket timeouts (cs.shutdown leaves
     * the threads running): take the timers out, then fire them in
     * deadline order */
    v = lua_newuserdatauv(L, (size_t) S->ntimers * sizeof(cs_tnode_t *), 0);
    for (i = 0; i < S->nheap && n < S->ntimers; i++) {
        if (cs_timer_is(S->heap[i]))
            v[n++] = S->heap[i];
    }
    for (i = 0; i < n; i++)
        cs_sched_heap_del(S, v[i]);
    qsort(v, (size_t) n, sizeof(cs_tnode_t *), cs_timer_cmp);
    for (i = 0; i < n; i++)
        v[i]->fire(S, v[i]);
    lua_pop(L, 1);
}


void
cs_timer_cancel_all(cs_sched_t *S, lua_State *L)
{
    int i;

    for (i = S->nheap - 1; i >= 0; i--) {
        if (i < S->nheap && cs_timer_is(S->heap[i]))
            cs_timer_stop(S, L, (cs_timer_t *) (void *) S->heap[i]);
    }
}


static int
cs_timer_new(lua_State *L, int every)
{
    cs_sched_t *S = cs_sched_up(L);
    lua_Number d = luaL_checknumber(L, 1);
    int n = lua_gettop(L), i;
    cs_timer_t *t;

    luaL_argcheck(L, d >= 0 && d < 1e15, 1,
                  every ? "invalid interval" : "invalid delay");
    luaL_argcheck(L, !every || d > 0, 1, "interval must be positive");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    if (!S->running)
        return luaL_error(L, "corosched: timer: no running loop (call it "
                             "inside cs.run)");
    /* as nginx's exiting worker, which still takes zero-delay timers */
    if (S->exiting == CS_EXIT_TEARDOWN || (S->exiting && d > 0)) {
        lua_pushnil(L);
        lua_pushliteral(L, "process exiting");
        return 2;
    }
    cs_sched_heap_reserve(S, L);

    t = lua_newuserdatauv(L, sizeof(cs_timer_t), 1);
    memset(t, 0, sizeof(*t));
    t->tn.idx = -1;
    t->tn.fire = cs_timer_fire;
    t->ref = LUA_NOREF;
    luaL_setmetatable(L, CS_TIMER_MT);
    lua_createtable(L, n - 1, 1);
    for (i = 2; i <= n; i++) {
        lua_pushvalue(L, i);
        lua_rawseti(L, -2, i - 1);
    }
    lua_pushinteger(L, n - 2);
    lua_setfield(L, -2, "n");
    lua_setiuservalue(L, -2, 1);

    lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
    lua_pushvalue(L, -2);
    t->ref = luaL_ref(L, -2);
    lua_pop(L, 1);

    t->interval = every ? d : 0;
    t->tn.when = S->now_mono + d;
    cs_sched_heap_add(S, &t->tn);
    S->ntimers++;
    return 1;
}


/* cs.timer.at(delay, fn, ...) */
static int
cs_timer_at(lua_State *L)
{
    return cs_timer_new(L, 0);
}


/* cs.timer.every(interval, fn, ...) */
static int
cs_timer_every(lua_State *L)
{
    return cs_timer_new(L, 1);
}


/* timer:cancel() -> 1, or nil, "not pending" */
static int
cs_timer_cancel(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_timer_t *t = luaL_checkudata(L, 1, CS_TIMER_MT);

    if (t->ref == LUA_NOREF) {
        lua_pushnil(L);
        lua_pushliteral(L, "not pending");
        return 2;
    }
    cs_timer_stop(S, L, t);
    lua_pushinteger(L, 1);
    return 1;
}


/* timer:pending() -> boolean */
static int
cs_timer_pending(lua_State *L)
{
    cs_timer_t *t = luaL_checkudata(L, 1, CS_TIMER_MT);

    lua_pushboolean(L, t->ref != LUA_NOREF);
    return 1;
}


static int
cs_timer__tostring(lua_State *L)
{
    cs_timer_t *t = luaL_checkudata(L, 1, CS_TIMER_MT);

    lua_pushfstring(L, "corosched.timer (%s): %p",
                    t->ref != LUA_NOREF ? "pending" : "done", (void *) t);
    return 1;
}


static const luaL_Reg cs_timer_methods[] = {
    {"cancel", cs_timer_cancel},
    {"pending", cs_timer_pending},
    {NULL, NULL}
};

static const luaL_Reg cs_timer_funcs[] = {
    {"at", cs_timer_at},
    {"every", cs_timer_every},
    {NULL, NULL}
};


void
cs_timer_open(lua_State *L, cs_sched_t *S)
{
    luaL_newmetatable(L, CS_TIMER_MT);
    lua_newtable(L);
    cs_setfuncs(L, S, cs_timer_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, cs_timer__tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    lua_newtable(L);
    cs_setfuncs(L, S, cs_timer_funcs);
    lua_setfield(L, -2, "timer");
}
