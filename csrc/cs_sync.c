/*
 * cs.semaphore (ngx.semaphore's semantics and return values) and cs.queue
 * (a FIFO channel between light threads).
 *
 * Waiters are parked threads linked through th->q in the object's wait
 * list, in arrival order; a timeout is a heap entry (th->tn). Wake-ups hand
 * the resource over directly (a semaphore unit, a queue item), so a thread
 * that arrives later cannot steal it. Until the woken thread runs, its
 * th->cleanup gives the resource back if it is killed (cs_thread_kill calls
 * the cleanup of a ready thread too); its continuation clears it.
 */
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"

typedef struct cs_sema_s {
    cs_link_t waiters;
    lua_Integer count;  /* resources available */
    int nwaiters;
    int ngranted;       /* waiters handed a unit that have not run yet */
} cs_sema_t;

typedef struct cs_queue_s {
    cs_link_t poppers;  /* parked in pop, queue empty */
    cs_link_t pushers;  /* parked in push, queue full */
    lua_Integer head;   /* index of the first item in the items table */
    lua_Integer count;
    lua_Integer cap;    /* 0: unbounded */
    lua_Integer reserved; /* items promised to woken poppers */
    lua_Integer slots;  /* room promised to woken pushers */
    int closed;
} cs_queue_t;


static cs_thread_t *
cs_sync_first(cs_link_t *list)
{
    cs_thread_t *th = cs_link_data(list->next, cs_thread_t, q);

    cs_link_remove(&th->q);
    return th;
}


/* a waiter's timeout: leave the list, wake with CS_WAKE_TIMEOUT */
static void
cs_sync_timeout_fire(cs_sched_t *S, cs_tnode_t *n)
{
    cs_thread_t *th = cs_link_data(n, cs_thread_t, tn);

    cs_link_remove(&th->q);
    cs_sched_wake(S, th, CS_WAKE_TIMEOUT);
}


/* parks th in list with an optional timeout (negative: none) */
static int
cs_sync_park(cs_sched_t *S, lua_State *L, cs_thread_t *th, cs_link_t *list,
             double timeout, const char *on, cs_cleanup_pt cleanup,
             cs_tnode_fire_pt fire, void *obj, lua_KFunction k)
{
    if (timeout >= 0) {
        cs_sched_heap_reserve(S, L);
        th->tn.when = S->now_mono + timeout;
        th->tn.fire = fire;
        cs_sched_heap_add(S, &th->tn);
    }
    cs_link_push(list, &th->q);
    return cs_sched_park(S, L, th, on, cleanup, obj, (lua_KContext) obj, k);
}


/* {====== semaphore ====== */

static void cs_sema_giveback(cs_sched_t *S, cs_thread_t *th);


/* hands units to waiters, in arrival order, while there are both */
static void
cs_sema_grant(cs_sched_t *S, cs_sema_t *sem)
{
    while (sem->count > 0 && !cs_link_empty(&sem->waiters)) {
        cs_thread_t *th = cs_sync_first(&sem->waiters);
        sem->nwaiters--;
        sem->count--;
        sem->ngranted++;
        cs_sched_wake(S, th, CS_WAKE_OK);
        th->cleanup = cs_sema_giveback; /* until it runs */
        th->data = sem;
    }
}


/* a thread that was granted a unit is killed before it ran */
static void
cs_sema_giveback(cs_sched_t *S, cs_thread_t *th)
{
    cs_sema_t *sem = th->data;

    sem->ngranted--;
    if (sem->count < LUA_MAXINTEGER) /* else the unit is lost: saturate */
        sem->count++;
    cs_sema_grant(S, sem);
}


static void
cs_sema_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_sema_t *sem = th->data;

    (void) S;
    cs_link_remove(&th->q);
    sem->nwaiters--;
}


static void
cs_sema_timeout_fire(cs_sched_t *S, cs_tnode_t *n)
{
    cs_thread_t *th = cs_link_data(n, cs_thread_t, tn);

    ((cs_sema_t *) th->data)->nwaiters--;
    cs_sync_timeout_fire(S, n);
}


/* cs.semaphore.new([n]) */
static int
cs_sema_new(lua_State *L)
{
    lua_Integer n = luaL_optinteger(L, 1, 0);
    cs_sema_t *sem;

    if (n < 0)
        return luaL_error(L, "no negative number");
    sem = lua_newuserdatauv(L, sizeof(cs_sema_t), 0);
    memset(sem, 0, sizeof(*sem));
    cs_link_init(&sem->waiters);
    sem->count = n;
    luaL_setmetatable(L, CS_SEMA_MT);
    return 1;
}


/* sema:post([n]) -> true */
static int
cs_sema_post(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_sema_t *sem = luaL_checkudata(L, 1, CS_SEMA_MT);
    lua_Integer n = luaL_optinteger(L, 2, 1);

    if (n < 1)
        return luaL_error(L, "no negative number");
    if (n > LUA_MAXINTEGER - sem->count)
        return luaL_error(L, "semaphore count overflow");
    sem->count += n;
    cs_sema_grant(S, sem);
    lua_pushboolean(L, 1);
    return 1;
}


static int
cs_sema_wait_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *th = S->cur;
    cs_sema_t *sem = lua_touserdata(L, 1);

    (void) status;
    (void) ctx;
    th->cleanup = NULL; /* the unit is ours now */
    if (th->wake == CS_WAKE_OK) {
        sem->ngranted--;
        cs_sema_grant(S, sem); /* those who queued behind while it ran */
        lua_pushboolean(L, 1);
        lua_pushnil(L); /* as OpenResty's semaphore handler resumes it */
        return 2;
    }
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "timeout");
    return 2;
}


/* sema:wait(seconds) -> true | nil, "timeout" | false, "timeout" */
static int
cs_sema_wait(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_sema_t *sem = luaL_checkudata(L, 1, CS_SEMA_MT);
    lua_Number sec = luaL_checknumber(L, 2);
    cs_thread_t *th;

    if (!(sec >= 0 && sec < 1e15))
        return luaL_error(L, "no negative number");
    /* as OpenResty: no unit while a waiter queues, or was handed one and
     * has not run yet (ngx.semaphore's handler wakes it later) */
    if (cs_link_empty(&sem->waiters) && sem->ngranted == 0
        && sem->count > 0) {
        sem->count--;
        lua_pushboolean(L, 1);
        return 1;
    }
    if (sec == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "timeout");
        return 2;
    }
    th = cs_sched_current(S, L, "wait on a semaphore");
    sem->nwaiters++;
    lua_settop(L, 1);
    return cs_sync_park(S, L, th, &sem->waiters, sec, "semaphore",
                        cs_sema_cleanup, cs_sema_timeout_fire, sem,
                        cs_sema_wait_k);
}


/* sema:count() -> resources minus waiters */
static int
cs_sema_count(lua_State *L)
{
    cs_sema_t *sem = luaL_checkudata(L, 1, CS_SEMA_MT);

    lua_pushinteger(L, sem->count - sem->nwaiters);
    return 1;
}

/* }====== */


/* {====== queue ====== */

/*
 * Items live in the queue's table from head to head + count - 1. A popper
 * woken for an item holds a reservation (q->reserved) and takes the item
 * itself when it runs; a pusher woken for room holds a slot (q->slots) and
 * appends its value when it runs. So nothing is moved between coroutines,
 * and a waiter killed after its wake-up gives the reservation back without
 * allocating (the cleanup of a killed thread must not raise).
 */

static void
cs_queue_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    (void) S;
    cs_link_remove(&th->q);
}


static void cs_queue_wake_popper(cs_sched_t *S, cs_queue_t *q);
static void cs_queue_wake_pusher(cs_sched_t *S, cs_queue_t *q);


/* a woken popper was killed before it ran: its item goes to the next */
static void
cs_queue_unreserve(cs_sched_t *S, cs_thread_t *th)
{
    cs_queue_t *q = th->data;

    q->reserved--;
    cs_queue_wake_popper(S, q);
}


/* a woken pusher was killed before it ran: its room goes to the next */
static void
cs_queue_unslot(cs_sched_t *S, cs_thread_t *th)
{
    cs_queue_t *q = th->data;

    q->slots--;
    cs_queue_wake_pusher(S, q);
}


/* wakes the first parked popper if an item is not promised yet */
static void
cs_queue_wake_popper(cs_sched_t *S, cs_queue_t *q)
{
    cs_thread_t *th;

    if (cs_link_empty(&q->poppers) || q->count - q->reserved <= 0)
        return;
    th = cs_sync_first(&q->poppers);
    q->reserved++;
    cs_sched_wake(S, th, CS_WAKE_OK);
    th->cleanup = cs_queue_unreserve; /* until it runs */
    th->data = q;
}


/* wakes the first parked pusher if there is room not promised yet */
static void
cs_queue_wake_pusher(cs_sched_t *S, cs_queue_t *q)
{
    cs_thread_t *th;

    if (cs_link_empty(&q->pushers)
        || (q->cap > 0 && q->count + q->slots >= q->cap))
        return;
    th = cs_sync_first(&q->pushers);
    q->slots++;
    cs_sched_wake(S, th, CS_WAKE_OK);
    th->cleanup = cs_queue_unslot; /* until it runs */
    th->data = q;
}


/* [-1, +0, m] appends the value at L's top to the items */
static void
cs_queue_append(lua_State *L, cs_queue_t *q, int qidx)
{
    lua_getiuservalue(L, qidx, 1);
    lua_insert(L, -2);
    lua_rawseti(L, -2, q->head + q->count); /* may raise: nothing changed */
    lua_pop(L, 1);
    q->count++;
}


/* [-0, +1, -] pushes the first item and removes it (never allocates) */
static void
cs_queue_take(lua_State *L, cs_queue_t *q, int qidx)
{
    lua_getiuservalue(L, qidx, 1);
    lua_rawgeti(L, -1, q->head);
    lua_pushnil(L);
    lua_rawseti(L, -3, q->head);
    lua_remove(L, -2);
    q->head++;
    q->count--;
}


/* cs.queue.new([capacity]) */
static int
cs_queue_new(lua_State *L)
{
    lua_Integer cap = luaL_optinteger(L, 1, 0);
    cs_queue_t *q;

    luaL_argcheck(L, cap >= 0, 1, "capacity must not be negative");
    q = lua_newuserdatauv(L, sizeof(cs_queue_t), 1);
    memset(q, 0, sizeof(*q));
    cs_link_init(&q->poppers);
    cs_link_init(&q->pushers);
    q->head = 1;
    q->cap = cap;
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    luaL_setmetatable(L, CS_QUEUE_MT);
    return 1;
}


static double
cs_queue_timeout(lua_State *L, int idx)
{
    lua_Number t;

    if (lua_isnoneornil(L, idx))
        return -1;
    t = luaL_checknumber(L, idx);
    luaL_argcheck(L, t >= 0 && t < 1e15, idx, "invalid timeout");
    return t;
}


static int
cs_queue_fail(lua_State *L, cs_thread_t *th)
{
    lua_pushnil(L);
    lua_pushstring(L, th == NULL || th->wake == CS_WAKE_CLOSED ? "closed"
                                                                : "timeout");
    return 2;
}


static int
cs_queue_push_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *th = S->cur;
    cs_queue_t *q = (cs_queue_t *) ctx;

    (void) status;
    th->cleanup = NULL;
    if (th->wake != CS_WAKE_OK)
        return cs_queue_fail(L, th);
    q->slots--; /* our room */
    lua_pushvalue(L, 2);
    cs_queue_append(L, q, 1);
    cs_queue_wake_popper(S, q);
    lua_pushinteger(L, 1);
    return 1;
}


/* q:push(v [, timeout]) -> 1 | nil, "timeout" | nil, "closed" */
static int
cs_queue_push(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_queue_t *q = luaL_checkudata(L, 1, CS_QUEUE_MT);
    double timeout = cs_queue_timeout(L, 3);
    cs_thread_t *th;

    luaL_argcheck(L, !lua_isnoneornil(L, 2), 2, "value expected");
    if (q->closed)
        return cs_queue_fail(L, NULL);
    if (q->cap == 0 || q->count + q->slots < q->cap) {
        lua_pushvalue(L, 2);
        cs_queue_append(L, q, 1);
        cs_queue_wake_popper(S, q);
        lua_pushinteger(L, 1);
        return 1;
    }
    if (timeout == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "timeout");
        return 2;
    }
    th = cs_sched_current(S, L, "push to a queue");
    lua_settop(L, 2);
    return cs_sync_park(S, L, th, &q->pushers, timeout, "queue push",
                        cs_queue_cleanup, cs_sync_timeout_fire, q,
                        cs_queue_push_k);
}


static int
cs_queue_pop_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *th = S->cur;
    cs_queue_t *q = (cs_queue_t *) ctx;

    (void) status;
    th->cleanup = NULL;
    if (th->wake != CS_WAKE_OK)
        return cs_queue_fail(L, th);
    q->reserved--; /* our item */
    cs_queue_take(L, q, 1);
    cs_queue_wake_pusher(S, q);
    return 1;
}


/* q:pop([timeout]) -> v | nil, "timeout" | nil, "closed" */
static int
cs_queue_pop(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_queue_t *q = luaL_checkudata(L, 1, CS_QUEUE_MT);
    double timeout = cs_queue_timeout(L, 2);
    cs_thread_t *th;

    if (q->count - q->reserved > 0) {
        cs_queue_take(L, q, 1);
        cs_queue_wake_pusher(S, q);
        return 1;
    }
    if (q->closed)
        return cs_queue_fail(L, NULL);
    if (timeout == 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "timeout");
        return 2;
    }
    th = cs_sched_current(S, L, "pop from a queue");
    lua_settop(L, 1);
    return cs_sync_park(S, L, th, &q->poppers, timeout, "queue pop",
                        cs_queue_cleanup, cs_sync_timeout_fire, q,
                        cs_queue_pop_k);
}


static void
cs_queue_wake_all(cs_sched_t *S, cs_link_t *list)
{
    while (!cs_link_empty(list))
        cs_sched_wake(S, cs_sync_first(list), CS_WAKE_CLOSED);
}


/* q:close() -> 1; every parked waiter gets nil, "closed" */
static int
cs_queue_close(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_queue_t *q = luaL_checkudata(L, 1, CS_QUEUE_MT);

    q->closed = 1;
    cs_queue_wake_all(S, &q->poppers);
    cs_queue_wake_all(S, &q->pushers);
    lua_pushinteger(L, 1);
    return 1;
}


/* q:count() -> items queued: not promised to a woken popper yet, plus
 * those of woken pushers, which are in as far as anyone can tell */
static int
cs_queue_count(lua_State *L)
{
    cs_queue_t *q = luaL_checkudata(L, 1, CS_QUEUE_MT);

    lua_pushinteger(L, q->count - q->reserved + q->slots);
    return 1;
}

/* }====== */


static const luaL_Reg cs_sema_methods[] = {
    {"post", cs_sema_post},
    {"wait", cs_sema_wait},
    {"count", cs_sema_count},
    {NULL, NULL}
};

static const luaL_Reg cs_queue_methods[] = {
    {"push", cs_queue_push},
    {"pop", cs_queue_pop},
    {"close", cs_queue_close},
    {"count", cs_queue_count},
    {NULL, NULL}
};


static void
cs_sync_class(lua_State *L, cs_sched_t *S, const char *mt,
              const luaL_Reg *methods, lua_CFunction ctor, const char *name)
{
    luaL_newmetatable(L, mt);
    lua_newtable(L);
    cs_setfuncs(L, S, methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    lua_newtable(L);
    lua_pushcfunction(L, ctor);
    lua_setfield(L, -2, "new");
    lua_setfield(L, -2, name);
}


void
cs_sync_open(lua_State *L, cs_sched_t *S)
{
    cs_sync_class(L, S, CS_SEMA_MT, cs_sema_methods, cs_sema_new,
                  "semaphore");
    cs_sync_class(L, S, CS_QUEUE_MT, cs_queue_methods, cs_queue_new, "queue");
}
