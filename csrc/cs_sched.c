/*
 * The trampoline, the ready queue, the timer heap and the loop.
 *
 * cs_sched_resume() is the only lua_resume call site of corosched. A light
 * thread runs until it yields; the function that yielded left an op in S
 * (CS_OP_*) that says what to do next: park, re-post, run a spawned child,
 * switch into a user coroutine or back to its resumer. libevent callbacks
 * only post threads; the loop resumes them outside event_base_loop.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"
#include "cs_socket.h"
#include "cs_thread.h"
#include "cs_timer.h"
#include "cs_alloc.h"

#define CS_BATCH 64 /* resumes between two non-blocking polls */
#define CS_FASTSPAWN 1024 /* spawns run at once between two polls */


static const char cs_sched_key = 'S';


/* {====== time ====== */

void
cs_sched_update_mono(cs_sched_t *S)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    S->now_mono = (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}


void
cs_sched_update_time(cs_sched_t *S)
{
    struct timespec ts;

    cs_sched_update_mono(S);
    clock_gettime(CLOCK_REALTIME, &ts);
    S->now_real = (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* }====== */


/* {====== timer heap (min-heap on tn->when, then insertion order) ====== */

/*
 * Entries with the same deadline leave the heap in the order they entered
 * it (timers created, or sleeps started, in the same loop iteration run in
 * that order, as in nginx's timer tree). A binary heap is not stable, so
 * every entry carries an insertion number, n->seq: 31 bits that wrap,
 * compared as a difference (right while the entries in the heap together
 * span fewer than 2^30 insertions; past that only the order of entries
 * with the very same deadline could change).
 */
#define CS_SEQ_MASK 0x7fffffffu

/* entry a goes before entry b */
static int
cs_sched_heap_before(const cs_tnode_t *a, const cs_tnode_t *b)
{
    return a->when < b->when
           || (a->when == b->when
               && ((a->seq - b->seq) & CS_SEQ_MASK) > CS_SEQ_MASK / 2);
}


static void
cs_sched_heap_set(cs_sched_t *S, int i, cs_tnode_t *n)
{
    S->heap[i] = n;
    n->idx = i;
}


static void
cs_sched_heap_up(cs_sched_t *S, int i)
{
    cs_tnode_t *n = S->heap[i];

    while (i > 0) {
        int p = (i - 1) / 2;
        if (!cs_sched_heap_before(n, S->heap[p]))
            break;
        cs_sched_heap_set(S, i, S->heap[p]);
        i = p;
    }
    cs_sched_heap_set(S, i, n);
}


static void
cs_sched_heap_down(cs_sched_t *S, int i)
{
    cs_tnode_t *n = S->heap[i];

    for (;;) {
        int c = 2 * i + 1;
        if (c >= S->nheap)
            break;
        if (c + 1 < S->nheap
            && cs_sched_heap_before(S->heap[c + 1], S->heap[c]))
            c++;
        if (!cs_sched_heap_before(S->heap[c], n))
            break;
        cs_sched_heap_set(S, i, S->heap[c]);
        i = c;
    }
    cs_sched_heap_set(S, i, n);
}


/* the caller checked that there is room (cs_sched_heap_reserve) */
void
cs_sched_heap_add(cs_sched_t *S, cs_tnode_t *n)
{
    if (n->idx >= 0) /* a lazy read timeout left in place */
        cs_sched_heap_del(S, n);
    n->seq = S->heapseq++ & CS_SEQ_MASK;
    cs_sched_heap_set(S, S->nheap++, n);
    cs_sched_heap_up(S, n->idx);
}


void
cs_sched_heap_add_lazy(cs_sched_t *S, cs_tnode_t *n)
{
    cs_sched_heap_add(S, n);
    n->lazy = 1;
    S->nlazy++;
}


void
cs_sched_heap_del(cs_sched_t *S, cs_tnode_t *n)
{
    int i = n->idx;
    cs_tnode_t *last;

    if (i < 0)
        return;
    n->idx = -1;
    if (n->lazy) {
        n->lazy = 0;
        S->nlazy--;
    }
    last = S->heap[--S->nheap];
    if (last == n)
        return;
    cs_sched_heap_set(S, i, last);
    if (i > 0 && cs_sched_heap_before(last, S->heap[(i - 1) / 2]))
        cs_sched_heap_up(S, i);
    else
        cs_sched_heap_down(S, i);
}


/* [-0, +0, m] makes room for one more heap entry; raises on ENOMEM */
void
cs_sched_heap_reserve(cs_sched_t *S, lua_State *L)
{
    cs_tnode_t **h;
    int cap;

    if (S->nheap < S->heapcap)
        return;
    cap = S->heapcap ? S->heapcap * 2 : 64;
    h = realloc(S->heap, (size_t) cap * sizeof(cs_tnode_t *));
    if (h == NULL)
        luaL_error(L, "not enough memory");
    S->heap = h;
    S->heapcap = cap;
}


static void
cs_sched_expire(cs_sched_t *S)
{
    while (S->nheap > 0 && S->heap[0]->when <= S->now_mono) {
        cs_tnode_t *n = S->heap[0];
        cs_sched_heap_del(S, n);
        n->fire(S, n);
    }
}

/* }====== */


/* {====== ready queue, park and wake ====== */

void
cs_sched_post(cs_sched_t *S, cs_thread_t *th, int nargs)
{
    th->nargs = nargs;
    th->state = CS_TH_READY;
    cs_link_push(&S->posted, &th->q);
}


void
cs_sched_ready(cs_sched_t *S, cs_thread_t *th, int nargs)
{
    th->nargs = nargs;
    th->state = CS_TH_READY;
    cs_link_push(&S->ready, &th->q);
}


/* undoes what cs_sched_park set up, without posting */
void
cs_sched_unpark(cs_sched_t *S, cs_thread_t *th, int wake)
{
    th->cleanup = NULL;
    th->on = 0;
    th->wake = (unsigned char) wake;
    th->iodl = 0;
    if (th->tn.idx >= 0 && !th->tn.lazy)
        cs_sched_heap_del(S, &th->tn);
    if (th->io) {
        th->io = 0;
        S->npending--;
    }
}


void
cs_sched_wake(cs_sched_t *S, cs_thread_t *th, int wake)
{
    cs_sched_unpark(S, th, wake);
    cs_sched_ready(S, th, 0);
}


/* the slot where the name on is looked for first */
#define cs_sched_on_hash(on) \
    ((unsigned) ((uintptr_t) (on) ^ ((uintptr_t) (on) >> 6)))

/* on's slot in S->ons, an open-addressing table keyed by the string's
 * address (the names are string constants, a dozen or so); added if new.
 * 0 when on is NULL or the table is full (cs.dump() then names nothing).
 * Apart from cs_sched_park, so that its first try stays small and inline. */
static unsigned char __attribute__((noinline))
cs_sched_on_slow(cs_sched_t *S, const char *on)
{
    unsigned h = cs_sched_on_hash(on), i, k;

    if (on == NULL)
        return 0;
    for (i = 0; i < CS_SCHED_ONS; i++) {
        k = (h + i) & (CS_SCHED_ONS - 1);
        if (k == 0) /* slot 0 means "nothing" */
            continue;
        if (S->ons[k] == on)
            return (unsigned char) k;
        if (S->ons[k] == NULL) {
            S->ons[k] = on;
            return (unsigned char) k;
        }
    }
    return 0;
}


int
cs_sched_park(cs_sched_t *S, lua_State *L, cs_thread_t *th, const char *on,
              cs_cleanup_pt cleanup, void *data, lua_KContext ctx,
              lua_KFunction k)
{
    unsigned slot = cs_sched_on_hash(on) & (CS_SCHED_ONS - 1);

    th->state = CS_TH_PARKED;
    th->on = on != NULL && S->ons[slot] == on ? (unsigned char) slot
                                              : cs_sched_on_slow(S, on);
    th->cleanup = cleanup;
    th->data = data;
    th->wake = CS_WAKE_OK;
    S->op = CS_OP_PARK;
    return lua_yieldk(L, 0, ctx, k);
}


int
cs_sched_park_io(cs_sched_t *S, lua_State *L, cs_thread_t *th, const char *on,
                 cs_cleanup_pt cleanup, void *data, lua_KContext ctx,
                 lua_KFunction k)
{
    th->io = 1;
    S->npending++;
    return cs_sched_park(S, L, th, on, cleanup, data, ctx, k);
}


cs_thread_t *
cs_sched_try_current(cs_sched_t *S, lua_State *L)
{
    cs_thread_t *th = S->cur;

    return (th != NULL && th->active->L == L) ? th : NULL;
}


cs_thread_t *
cs_sched_not_current(cs_sched_t *S, lua_State *L, const char *what)
{
    cs_thread_t *th = S->cur;

    if (th == NULL || th->active->L != L) {
        if (!S->running)
            luaL_error(L, "corosched: %s: no running loop (call it inside "
                          "cs.run)", what);
        if (th == NULL)
            luaL_error(L, "corosched: %s: not called from a light thread",
                       what);
        luaL_error(L, "corosched: cannot %s here: the coroutine was resumed "
                      "from a C function that cannot yield (a metamethod, "
                      "a table.sort comparator, a string.gsub callback, "
                      "a __gc or __close handler)", what);
    }
    if (!lua_isyieldable(L))
        luaL_error(L, "corosched: cannot %s here: attempt to yield across a "
                      "C-call boundary (a module's main chunk run by "
                      "require, a table.sort comparator, a string.gsub "
                      "callback, tostring, a __gc or __close handler)",
                      what);
    return th;
}

/* }====== */


/* {====== the trampoline ====== */

/*
 * A user coroutine of th's chain ended with `status`; hand true + results
 * or false + error to its resumer p. Returns the number of values for p.
 */
static int
cs_sched_co_done(cs_sched_t *S, cs_thread_t *th, cs_co_t *c, int status,
                 int nres)
{
    cs_co_t *p = c->parent;

    c->th = NULL;
    c->parent = NULL;
    th->active = p;
    cs_thread_co_ended(S, S->L, c); /* its zombie children go */

    if (status == LUA_OK) {
        if (!lua_checkstack(p->L, nres + 1)) {
            lua_pop(c->L, nres);
            lua_pushboolean(p->L, 0);
            lua_pushliteral(p->L, "too many results to resume");
            return 2;
        }
        lua_pushboolean(p->L, 1);
        lua_xmove(c->L, p->L, nres);
        return nres + 1;
    }

    if (c->wrap)
        cs_thread_stash_traceback(S, th, c->L);
    lua_pushboolean(p->L, 0);
    lua_xmove(c->L, p->L, 1);
    return 2;
}


static void
cs_sched_resume(cs_sched_t *S, cs_thread_t *th)
{
    int nargs = th->nargs, nres, status;
    cs_co_t *c, *p;

    for (;;) {
        c = th->active;
        th->state = CS_TH_RUNNING;
        S->cur = th;
        S->op = CS_OP_NONE;
        status = lua_resume(c->L, S->L, nargs, &nres);
        S->cur = NULL;
#ifdef CS_TESTING
        if (S->gc_stress) /* shakes out every missing anchor */
            lua_gc(S->L, LUA_GCSTEP, 0);
#endif

        if (status == LUA_YIELD) {
            switch (S->op) {
            case CS_OP_PARK:
                cs_thread_clear_stash(S, th);
                return;

            case CS_OP_NONE: /* a yield we did not ask for: like yield */
                lua_pop(c->L, nres);
                /* fallthrough */
            case CS_OP_YIELD:
                cs_thread_clear_stash(S, th);
                cs_sched_post(S, th, 0);
                return;

            case CS_OP_SLEEP0:
                cs_thread_clear_stash(S, th);
                cs_sched_ready(S, th, 0);
                return;

            case CS_OP_SPAWN: /* the caller waits behind; the child runs */
                cs_sched_post(S, th, nres);
                th = (cs_thread_t *) S->op_target;
                nargs = th->nargs;
                continue;

            case CS_OP_CORO_RESUME:
                p = c;
                c = S->op_target;
                lua_xmove(p->L, c->L, nres); /* room checked by resume */
                c->parent = p;
                c->th = th;
                th->active = c;
                nargs = nres;
                continue;

            case CS_OP_CORO_YIELD:
                p = c->parent;
                c->th = NULL;
                c->parent = NULL;
                th->active = p;
                if (!lua_checkstack(p->L, nres + 1)) {
                    lua_pop(c->L, nres);
                    lua_pushboolean(p->L, 0);
                    lua_pushliteral(p->L, "too many results to resume");
                    nargs = 2;
                    continue;
                }
                lua_pushboolean(p->L, 1);
                lua_xmove(c->L, p->L, nres);
                nargs = nres + 1;
                continue;
            }
        }

        if (c != &th->co) { /* a user coroutine ended */
            nargs = cs_sched_co_done(S, th, c, status, nres);
            continue;
        }

        /* the light thread itself ended: maybe its parent resumes now */
        th = cs_thread_finish(S, th, status, nres);
        if (th == NULL)
            return;
        nargs = th->nargs;
    }
}

/* }====== */


/* {====== the loop ====== */

static void
cs_sched_tev_cb(evutil_socket_t fd, short what, void *arg)
{
    cs_sched_t *S = arg;

    (void) fd;
    (void) what;
    S->tev_when = 0; /* the loop expires the heap after the poll */
}


static void
cs_sched_arm(cs_sched_t *S)
{
    struct timeval tv;
    double d, when = S->heap[0]->when;

    if (when == S->tev_when)
        return;
    d = when - S->now_mono;
    if (d < 0)
        d = 0;
    tv.tv_sec = (time_t) d;
    tv.tv_usec = (suseconds_t) ceil((d - (double) tv.tv_sec) * 1e6);
    if (tv.tv_usec >= 1000000) {
        tv.tv_sec++;
        tv.tv_usec -= 1000000;
    }
    event_add(S->tev, &tv);
    S->tev_when = when;
}


/* waits for I/O: when `block`, until the heap's first deadline (or for
 * good), else only for what is ready now; then expires the heap */
static void
cs_sched_poll(cs_sched_t *S, int block)
{
    int ms = block ? -1 : 0;

    if (block && S->nheap > 0) {
        /* from the cached clock, as libevent's timer (cs_sched_arm) and
         * nginx's: the wait counts from now what was left at the last
         * poll, so a deadline set during this batch from that clock (a
         * sleep, a timer) is never met early */
        double d = ceil((S->heap[0]->when - S->now_mono) * 1000.0);
        ms = d <= 0 ? 0 : d >= INT_MAX ? INT_MAX : (int) d;
    }
    if (!cs_poll_wait(S, ms)) {
        if (block && S->nheap > 0)
            cs_sched_arm(S);
        event_base_loop(S->base, block ? EVLOOP_ONCE : EVLOOP_NONBLOCK);
    }
    cs_sched_update_time(S);
    cs_sched_expire(S);
}


int
cs_sched_run_child(cs_sched_t *S, cs_thread_t *th)
{
    cs_thread_t *parent = S->cur;
    int op = S->op;

    /* With nothing else ready, the parent posted by a yield would be the
     * next thread resumed: running the child here and returning to the
     * parent directly keeps OpenResty's order and saves the round trip.
     * Once per spawn depth, and at most CS_FASTSPAWN times between two
     * polls of the loop, so I/O is never starved. */
    if (!cs_link_empty(&S->posted) || S->nested
        || S->fastspawn >= CS_FASTSPAWN)
        return 0;
    S->fastspawn++;
    S->nested = 1;
    cs_sched_resume(S, th);
    S->nested = 0;
    S->cur = parent;
    S->op = op;
    return 1;
}


/* [-0, +0, e] runs threads until every thread and timer has finished */
static int
cs_sched_loop(lua_State *L)
{
    cs_sched_t *S = lua_touserdata(L, 1);
    int n;

    for (;;) {
        S->fastspawn = 0;
        for (n = 0; n < CS_BATCH; n++) {
            cs_link_t *q = &S->posted;
            cs_thread_t *th;
            /* posted threads first (OpenResty's order), but the last turn
             * of a batch goes to the ready ones: endless yields cannot
             * starve threads woken by I/O */
            if (cs_link_empty(q) || (n == CS_BATCH - 1
                                     && !cs_link_empty(&S->ready)))
                q = &S->ready;
            if (cs_link_empty(q))
                break;
            th = cs_link_data(q->next, cs_thread_t, q);
            cs_link_remove(&th->q);
            cs_sched_resume(S, th);
            if (S->entry_failed && S->exiting != CS_EXIT_TEARDOWN) {
                cs_thread_teardown(S);
            } else if (S->shutdown_req) {
                S->shutdown_req = 0;
                cs_timer_fire_all(S); /* premature */
            }
        }

        if (S->nrunning == 0 && S->ntimers == 0)
            return 0;

        if (!cs_link_empty(&S->posted) || !cs_link_empty(&S->ready)) {
            cs_sched_poll(S, 0);
            continue;
        }

        if (S->nheap == S->nlazy && S->npending == 0) {
            cs_thread_deadlock(S, L); /* raises */
            return 0;
        }

        cs_sched_poll(S, 1);
    }
}


/* cs.run(fn, ...) */
static int
cs_sched_run(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *entry;
    int n = lua_gettop(L), status;

    luaL_checktype(L, 1, LUA_TFUNCTION);
    if (S->running)
        return luaL_error(L, "corosched: cs.run called from inside a "
                             "running loop");
    if (S->base == NULL) {
        S->base = event_base_new();
        if (S->base == NULL)
            return luaL_error(L, "corosched: cannot create the event base");
        S->tev = evtimer_new(S->base, cs_sched_tev_cb, S);
        if (S->tev == NULL)
            return luaL_error(L, "corosched: cannot create a timer event");
        cs_poll_open(S);
    }

    S->L = L;
    S->exiting = 0;
    S->shutdown_req = 0;
    S->entry_failed = 0;
    cs_sched_update_time(S);
    /* what happened while no loop ran, before any thread runs: idle pooled
     * connections whose peer closed or whose idle time ran out meanwhile
     * are closed (OpenResty's worker loop never stops, so a connect never
     * takes those) */
    if (S->nsockets > 0)
        cs_sched_poll(S, 0);

    entry = cs_thread_new(S, L, 1, n - 1, NULL, CS_KIND_ENTRY);
    S->running = 1;
    S->entry = entry;
    cs_sched_post(S, entry, n - 1);
    lua_settop(L, 0);

    lua_pushcfunction(L, cs_sched_loop);
    lua_pushlightuserdata(L, S);
    status = lua_pcall(L, 1, 0, 0);

    /* here on success, entry failure, deadlock, or a memory error */
    return cs_thread_run_done(S, L, status);
}


/* cs.now() */
static int
cs_sched_now(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);

    if (!S->running)
        cs_sched_update_time(S);
    /* milliseconds cut, not rounded, as nginx's ngx_time_update: never
     * ahead of the clock (x.9996 is x.999, not x+1) */
    lua_pushnumber(L, floor(S->now_real * 1000.0) / 1000.0);
    return 1;
}


/* cs.update_time() */
static int
cs_sched_update_time_l(lua_State *L)
{
    cs_sched_update_time(cs_sched_up(L));
    return 0;
}


static int
cs_sched__gc(lua_State *L)
{
    cs_sched_t *S = lua_touserdata(L, 1);

    if (S->tev != NULL)
        event_free(S->tev);
    if (S->base != NULL)
        event_base_free(S->base);
    free(S->heap);
    S->tev = NULL;
    S->base = NULL;
    S->heap = NULL;
    while (!cs_link_empty(&S->threads)) { /* lua_close inside cs.run */
        cs_thread_t *th = cs_link_data(S->threads.next, cs_thread_t, all);
        cs_link_remove(&th->all);
        free(th);
    }
    cs_map_free(&S->recs);
    free(S->free_slots);
    free(S->dgram);
    S->free_slots = NULL;
    while (S->spare != NULL) {
        cs_thread_t *th = S->spare;
        S->spare = (cs_thread_t *) th->data;
        free(th);
    }
    return 0;
}

/* }====== */


void
cs_setfuncs(lua_State *L, cs_sched_t *S, const luaL_Reg *l)
{
    for (; l->name != NULL; l++) {
        lua_pushlightuserdata(L, S);
        lua_pushcclosure(L, l->func, 1);
        lua_setfield(L, -2, l->name);
    }
}


cs_co_t *
cs_sched_find(cs_sched_t *S, lua_State *L, int idx)
{
    lua_State *co = lua_tothread(L, idx);
    cs_co_t *c;

    if (co == NULL)
        return NULL;
    c = cs_map_get(&S->recs, co);
    if (c != NULL)
        return c;
    idx = lua_absindex(L, idx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->map_ref);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    c = lua_touserdata(L, -1);
    lua_pop(L, 2);
    return c;
}


/* cs.shutdown(): nginx's graceful worker exit (nginx -s quit) */
static int
cs_sched_shutdown(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);

    if (!S->running)
        return luaL_error(L, "corosched: cs.shutdown: no running loop (call "
                             "it inside cs.run)");
    if (S->exiting == 0) {
        S->exiting = CS_EXIT_SHUTDOWN;
        S->shutdown_req = 1; /* the loop fires the timers between threads */
    }
    lua_pushinteger(L, 1);
    return 1;
}


/* cs.exiting() */
static int
cs_sched_exiting(lua_State *L)
{
    lua_pushboolean(L, cs_sched_up(L)->exiting != 0);
    return 1;
}


static const luaL_Reg cs_sched_funcs[] = {
    {"run", cs_sched_run},
    {"shutdown", cs_sched_shutdown},
    {"exiting", cs_sched_exiting},
    {"now", cs_sched_now},
    {"update_time", cs_sched_update_time_l},
    {NULL, NULL}
};


/* [-0, +0, m] creates S (kept in the registry) and registers cs.run... */
void
cs_sched_open(lua_State *L, cs_sched_t *S)
{
    cs_setfuncs(L, S, cs_sched_funcs);
}


/* [-0, +1, m] the scheduler of this Lua state, created on first use */
cs_sched_t *
cs_sched_get(lua_State *L)
{
    cs_sched_t *S;

    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &cs_sched_key) != LUA_TNIL) {
        S = lua_touserdata(L, -1);
        lua_pop(L, 1);
        return S;
    }
    lua_pop(L, 1);

    S = lua_newuserdatauv(L, sizeof(cs_sched_t), 0);
    memset(S, 0, sizeof(*S));
    cs_link_init(&S->posted);
    cs_link_init(&S->ready);
    cs_link_init(&S->threads);
    S->onerror_ref = LUA_NOREF;
    if (luaL_newmetatable(L, CS_SCHED_MT)) {
        lua_pushcfunction(L, cs_sched__gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &cs_sched_key);

    lua_newtable(L); /* coroutine -> record, weak keys */
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    S->map_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_newtable(L); /* anchors of live records */
    S->anchor_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L); /* the coroutines of live threads, by slot */
    S->slots_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    cs_sched_update_time(S);
    return S;
}
