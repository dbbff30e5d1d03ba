/*
 * Light threads (ngx.thread semantics): spawn, wait, kill, status, self,
 * sleep; zombies; error reports; stats and dump; the end of cs.run.
 *
 * A thread record is malloc'd (cs_thread_t). While the thread lives, its
 * coroutine is anchored in a slot of S's slot table (th->ref), and S->recs
 * (a pointer hash map, cs_map.c) finds the record of the coroutine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"
#include "cs_thread.h"
#include "cs_timer.h"
#include "cs_alloc.h"

static const char cs_thread_stash_key = 'T';

static void cs_thread_discard(cs_sched_t *S, lua_State *L, cs_thread_t *th,
                              int report);



/* {====== records ====== */

/* [-0, +1, m] pushes the coroutine of a live thread */
static void
cs_thread_push_co(cs_sched_t *S, lua_State *L, cs_thread_t *th)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->slots_ref);
    lua_rawgeti(L, -1, th->ref);
    lua_remove(L, -2);
}


/* [-1, +0, m] anchors the coroutine at L's top in a slot (cheaper than
 * luaL_ref: one table write); returns the slot */
static int
cs_thread_anchor(cs_sched_t *S, lua_State *L)
{
    int slot = S->nfree > 0 ? S->free_slots[--S->nfree] : ++S->maxslot;

    lua_rawgeti(L, LUA_REGISTRYINDEX, S->slots_ref);
    lua_insert(L, -2);
    lua_rawseti(L, -2, slot);
    lua_pop(L, 1);
    return slot;
}


/* [-0, +0, -] frees a slot. It never fails (it runs in the middle of
 * tearing a thread down): when the free list cannot grow, the slot number
 * is not reused. */
static void
cs_thread_unanchor(cs_sched_t *S, lua_State *L, int slot)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->slots_ref);
    lua_pushnil(L);
    lua_rawseti(L, -2, slot);
    lua_pop(L, 1);
    if (S->nfree == S->freecap) {
        int cap = S->freecap ? S->freecap * 2 : 256;
        int *p = realloc(S->free_slots, (size_t) cap * sizeof(int));
        if (p == NULL)
            return;
        S->free_slots = p;
        S->freecap = cap;
    }
    S->free_slots[S->nfree++] = slot;
}


#define CS_THREAD_SPARE 256 /* freed records kept for reuse */

/* a zeroed record, recycled when possible */
static cs_thread_t *
cs_thread_alloc(cs_sched_t *S)
{
    cs_thread_t *th = S->spare;

    if (th == NULL)
        return calloc(1, sizeof(cs_thread_t));
    S->spare = (cs_thread_t *) th->data;
    S->nspare--;
    memset(th, 0, sizeof(*th));
    return th;
}


static void
cs_thread_free(cs_sched_t *S, cs_thread_t *th)
{
    if (S->nspare >= CS_THREAD_SPARE) {
        free(th);
        return;
    }
    th->data = S->spare;
    S->spare = th;
    S->nspare++;
}


/* [-0, +0, m] a thread now points at p as its parent */
static void
cs_thread_hold(cs_sched_t *S, lua_State *L, cs_co_t *p)
{
    if (p->nchildren++ > 0 || p->kind != CS_KIND_USER)
        return;
    /* a user coroutine's record (a userdata, and so its coroutine) must
     * outlive the pointer: pin it. p is L's own record. */
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->map_ref);
    lua_pushthread(L);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    p->pin = luaL_ref(L, -2);
    lua_pop(L, 1);
}


/* [-0, +0, -] a thread no longer points at p */
static void
cs_thread_release(cs_sched_t *S, lua_State *L, cs_co_t *p)
{
    if (p == NULL || --p->nchildren > 0)
        return;
    if (p->kind == CS_KIND_USER) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->anchor_ref);
        luaL_unref(L, -1, p->pin);
        lua_pop(L, 1);
        p->pin = LUA_NOREF;
    } else if (((cs_thread_t *) p)->state == CS_TH_DEAD) {
        cs_thread_free(S, (cs_thread_t *) p);
    }
}


cs_thread_t *
cs_thread_new(cs_sched_t *S, lua_State *L, int fidx, int nargs,
              cs_co_t *parent, int kind)
{
    lua_State *co;
    cs_thread_t *th;
    int i, ref;

    fidx = lua_absindex(L, fidx);
    luaL_checkstack(L, 8, NULL);
    co = lua_newthread(L);                                  /* co */
    if (!lua_checkstack(co, nargs + 1))
        luaL_error(L, "too many arguments to spawn");
    lua_pushvalue(L, -1);
    ref = cs_thread_anchor(S, L);
    th = cs_thread_alloc(S);
    if (th == NULL || cs_map_set(&S->recs, co, th) != 0) {
        free(th);
        cs_thread_unanchor(S, L, ref);
        luaL_error(L, "not enough memory");
    }
    th->ref = ref;
    th->co.L = co;
    th->co.th = th;
    th->co.kind = (unsigned char) kind;
    th->co.pin = LUA_NOREF;
    th->active = &th->co;
    th->tn.idx = -1;
    if (parent != NULL) {
        th->co.parent = parent;
        cs_thread_hold(S, L, parent);
    }

    for (i = 0; i <= nargs; i++)
        lua_pushvalue(L, fidx + i);
    lua_xmove(L, co, nargs + 1);

    cs_link_push(&S->threads, &th->all);
    S->nthreads++;
    S->nrunning++;
    th->state = CS_TH_READY;
    return th;
}


static int cs_thread_stock_status(lua_State *L, lua_State *co);

/* what cs_thread_check returns for a light thread that is gone */
static cs_thread_t cs_thread_gone = {
    .co = {.kind = CS_KIND_THREAD, .dead = 1, .pin = LUA_NOREF},
    .tn = {.idx = -1},
    .ref = LUA_NOREF,
    .state = CS_TH_DEAD
};


static cs_thread_t *
cs_thread_check(cs_sched_t *S, lua_State *L, int idx)
{
    cs_co_t *c;

    /* ngx.thread.kill's message */
    luaL_argcheck(L, lua_type(L, idx) == LUA_TTHREAD, idx,
                  "lua thread expected");
    c = cs_sched_find(S, L, idx);
    if (c == NULL) {
        /* a thread's record goes with it: a finished coroutine we do not
         * know is taken for a light thread already waited or killed */
        if (cs_thread_stock_status(L, lua_tothread(L, idx)) == 1)
            return &cs_thread_gone;
        return NULL;
    }
    if (c->kind == CS_KIND_USER)
        return NULL;
    return (cs_thread_t *) c;
}

/* }====== */


/* {====== errors ====== */

/* [-0, +1, m] the error at co's top with co's traceback, as one string */
static void
cs_thread_traceback(lua_State *L, lua_State *co)
{
    const char *msg = lua_tostring(co, -1);

    if (msg == NULL) {
        if (luaL_callmeta(co, -1, "__tostring")
            && lua_type(co, -1) == LUA_TSTRING) {
            msg = lua_pushfstring(L, "%s", lua_tostring(co, -1));
            lua_pop(co, 1);
        } else {
            msg = lua_pushfstring(L, "(error object is a %s value)",
                                  luaL_typename(co, -1));
        }
        luaL_traceback(L, co, msg, 0);
        lua_remove(L, -2);
        return;
    }
    luaL_traceback(L, co, msg, 0);
}


void
cs_thread_stash_traceback(cs_sched_t *S, cs_thread_t *th, lua_State *co)
{
    lua_State *L = S->L;

    lua_rawgetp(L, LUA_REGISTRYINDEX, &cs_thread_stash_key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &cs_thread_stash_key);
    }
    lua_createtable(L, 2, 0);             /* {traceback, error} */
    cs_thread_traceback(L, co);
    lua_rawseti(L, -2, 1);
    if (lua_checkstack(co, 1)) { /* the error stays on co for the resumer */
        lua_pushvalue(co, -1);
        lua_xmove(co, L, 1);
        lua_rawseti(L, -2, 2);
    }
    lua_rawsetp(L, -2, th);
    lua_pop(L, 1);
    th->stash = 1;
}


/*
 * [-0, +1, m] the stashed coroutine traceback of th if the error the
 * thread ended with (at co's top) is the one the coroutine raised, passed
 * on by coroutine.wrap (which may have prefixed a position to a string);
 * else nil. An error that a pcall caught in between is not that error.
 */
static int
cs_thread_stashed(lua_State *L, cs_thread_t *th, lua_State *co)
{
    size_t lf, ls;
    const char *f, *s;
    int same;

    lua_rawgetp(L, LUA_REGISTRYINDEX, &cs_thread_stash_key);
    lua_rawgetp(L, -1, th);                 /* stash entry */
    lua_remove(L, -2);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return 0;
    }
    lua_rawgeti(L, -1, 2);                  /* entry stashed_err */
    if (lua_checkstack(co, 1)) {
        lua_pushvalue(co, -1);
        lua_xmove(co, L, 1);                /* entry stashed_err err */
    } else {
        lua_pushnil(L);
    }
    same = !lua_isnil(L, -2) && lua_rawequal(L, -1, -2);
    if (!same && lua_type(L, -1) == LUA_TSTRING
        && lua_type(L, -2) == LUA_TSTRING) {
        f = lua_tolstring(L, -1, &lf);
        s = lua_tolstring(L, -2, &ls);
        same = lf >= ls && memcmp(f + lf - ls, s, ls) == 0;
    }
    lua_pop(L, 2);
    if (!same) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return 0;
    }
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
    return 1;
}


void
cs_thread_clear_stash(cs_sched_t *S, cs_thread_t *th)
{
    if (!th->stash)
        return;
    th->stash = 0;
    lua_rawgetp(S->L, LUA_REGISTRYINDEX, &cs_thread_stash_key);
    lua_pushnil(S->L);
    lua_rawsetp(S->L, -2, th);
    lua_pop(S->L, 1);
}


/* hands a failed thread's report to the error handler (or stderr) */
static void
cs_thread_report(cs_sched_t *S, lua_State *L, cs_thread_t *th)
{
    cs_thread_t *cur = S->cur;
    const char *msg;

    luaL_checkstack(L, 4, NULL);
    if (S->onerror_ref != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->onerror_ref);
        cs_thread_push_co(S, L, th);
        lua_pushvalue(th->co.L, 1);
        lua_xmove(th->co.L, L, 1);
        S->cur = NULL; /* the handler runs outside any thread */
        if (lua_pcall(L, 2, 0, 0) == LUA_OK) {
            S->cur = cur;
            return;
        }
        S->cur = cur;
        msg = lua_tostring(L, -1);
        fprintf(stderr, "corosched: error handler failed: %s\n",
                msg ? msg : "(not a string)");
        lua_pop(L, 1);
    }
    msg = lua_tostring(th->co.L, 1);
    fprintf(stderr, "corosched: light thread %p aborted: %s\n",
            (void *) th->co.L, msg ? msg : "?");
    fflush(stderr);
}

/* }====== */


/* {====== the end of a thread ====== */

/* th's own function ended: its zombie children are discarded */
static void
cs_thread_discard_zombies(cs_sched_t *S, lua_State *L, cs_co_t *c)
{
    if (c->zombies.next == NULL)
        return;
    while (!cs_link_empty(&c->zombies)) {
        cs_thread_t *z = cs_link_data(c->zombies.next, cs_thread_t, q);
        cs_thread_discard(S, L, z, 1);
    }
}


static void
cs_thread_discard(cs_sched_t *S, lua_State *L, cs_thread_t *th, int report)
{
    if (th->state == CS_TH_DEAD || th == &cs_thread_gone)
        return;
    if (report && th->failed)
        cs_thread_report(S, L, th);
    if (th->state == CS_TH_ZOMBIE)
        cs_link_remove(&th->q);
    else
        S->nrunning--;
    S->nthreads--;
    th->state = CS_TH_DEAD;
    th->co.dead = 1;
    cs_sched_heap_del(S, &th->tn);
    cs_link_remove(&th->all);
    lua_settop(th->co.L, 0);
    cs_thread_clear_stash(S, th);
    th->co.nchildren++; /* the last zombie must not free th under us */
    cs_thread_discard_zombies(S, L, &th->co);
    th->co.nchildren--;

    cs_map_del(&S->recs, th->co.L);
    cs_thread_unanchor(S, L, th->ref);
    th->ref = LUA_NOREF;
    cs_thread_release(S, L, th->co.parent);
    th->co.parent = NULL;
    if (th->co.nchildren == 0)
        cs_thread_free(S, th); /* else the last child frees it */
}


/*
 * The user coroutine c has ended: it returned, raised, was closed, or the
 * thread it ran in was killed. Its zombie children can never be waited on
 * now, so they are discarded (a failed one is reported); children that end
 * later are discarded by cs_thread_finish, which sees c->dead.
 */
void
cs_thread_co_ended(cs_sched_t *S, lua_State *L, cs_co_t *c)
{
    c->dead = 1;
    cs_thread_discard_zombies(S, L, c);
}


cs_thread_t *
cs_thread_finish(cs_sched_t *S, cs_thread_t *th, int status, int nres)
{
    lua_State *L = S->L, *co = th->co.L;
    cs_co_t *p = th->co.parent;
    cs_thread_t *pt;
    int n;

    th->co.dead = 1;
    cs_sched_heap_del(S, &th->tn); /* a lazy read timeout */
    if (status != LUA_OK) {
        /* co's stack becomes [report, false, err] */
        cs_thread_traceback(L, co);
        if (th->stash) {
            if (cs_thread_stashed(L, th, co)) {
                lua_pushliteral(L, "\ncoroutine traceback:\n");
                lua_insert(L, -2);
                lua_concat(L, 3);
            } else {
                lua_pop(L, 1);
            }
            cs_thread_clear_stash(S, th);
        }
        cs_closethread(co, L); /* closes pending to-be-closed variables */
        lua_settop(co, 1);
        lua_pushboolean(co, 0);
        lua_insert(co, 1);
        lua_xmove(L, co, 1);
        lua_insert(co, 1);
        th->failed = 1;
        th->nargs = 2; /* the values thread.wait will return */
    } else {
        if (!lua_checkstack(co, 1))
            luaL_error(L, "not enough memory");
        lua_pushboolean(co, 1);
        lua_insert(co, 1);
        th->nargs = nres + 1;
    }

    cs_thread_discard_zombies(S, L, &th->co);

    if (th->co.kind == CS_KIND_ENTRY) {
        th->state = CS_TH_ZOMBIE;
        S->nrunning--;
        cs_link_init(&th->q);
        if (th->failed)
            S->entry_failed = 1;
        return NULL;
    }

    if (th->co.kind != CS_KIND_THREAD || p == NULL || p->dead) {
        cs_thread_discard(S, L, th, 1);
        return NULL;
    }

    pt = p->th;
    if (th->waited && th->waited_gen == p->wait_gen && pt != NULL
        && pt->state == CS_TH_PARKED && pt->active == p) {
        /* the parent waits for it: resume the parent at once */
        n = th->nargs;
        if (!lua_checkstack(p->L, n))
            luaL_error(L, "not enough memory");
        lua_xmove(co, p->L, n);
        p->wait_gen++;
        cs_sched_unpark(S, pt, CS_WAKE_OK);
        cs_thread_discard(S, L, th, 0);
        pt->nargs = n;
        return pt;
    }

    th->state = CS_TH_ZOMBIE;
    S->nrunning--;
    if (p->zombies.next == NULL)
        cs_link_init(&p->zombies);
    cs_link_push(&p->zombies, &th->q);
    return NULL;
}


void
cs_thread_kill(cs_sched_t *S, lua_State *L, cs_thread_t *th)
{
    cs_co_t *c, *p;

    if (th->state == CS_TH_READY) {
        cs_link_remove(&th->q);
        /* woken but not resumed yet: a cleanup set now gives back what the
         * wake-up handed over (a semaphore unit, a queue item; cs_sync.c) */
        if (th->cleanup != NULL) {
            cs_cleanup_pt cleanup = th->cleanup;
            th->cleanup = NULL;
            cleanup(S, th);
        }
    } else if (th->state == CS_TH_PARKED) {
        if (th->cleanup != NULL)
            th->cleanup(S, th);
        cs_sched_unpark(S, th, CS_WAKE_CLOSED);
    }
    th->state = CS_TH_RUNNING; /* counted as running until discarded */

    for (c = th->active; c != &th->co; c = p) { /* innermost first */
        p = c->parent;
        c->th = NULL;
        c->parent = NULL;
        cs_closethread(c->L, L);
        lua_settop(c->L, 0);
        cs_thread_co_ended(S, L, c);
    }
    th->active = &th->co;
    cs_closethread(th->co.L, L);
    cs_thread_discard(S, L, th, 0);
}


/* kills every live thread but the entry; discards zombies */
static void
cs_thread_kill_all(cs_sched_t *S, lua_State *L, int entry_too)
{
    cs_link_t *l;

    for (l = S->threads.next; l != &S->threads;) {
        cs_thread_t *th = cs_link_data(l, cs_thread_t, all);
        if (th == S->entry && !entry_too) {
            l = l->next;
            continue;
        }
        if (th->state == CS_TH_ZOMBIE)
            cs_thread_discard(S, L, th, 1);
        else
            cs_thread_kill(S, L, th);
        l = S->threads.next; /* kill may have changed the list */
    }
}


void
cs_thread_teardown(cs_sched_t *S)
{
    S->exiting = CS_EXIT_TEARDOWN;
    cs_thread_kill_all(S, S->L, 0);
    cs_timer_fire_all(S); /* premature */
}


/* [-0, +1, m] the text of cs.dump() */
static void
cs_thread_dump(cs_sched_t *S, lua_State *L)
{
    static const char *const states[] = {
        "ready", "running", "parked", "zombie", "dead"
    };
    static const char *const kinds[] = {
        "coroutine", "thread", "entry thread", "detached thread"
    };
    luaL_Buffer b;
    cs_link_t *l;

    luaL_buffinit(L, &b);
    for (l = S->threads.next; l != &S->threads; l = l->next) {
        cs_thread_t *th = cs_link_data(l, cs_thread_t, all);
        lua_pushfstring(L, "%s %p: %s", kinds[th->co.kind], (void *) th->co.L,
                        states[th->state]);
        luaL_addvalue(&b);
        if (th->state == CS_TH_PARKED && th->on != 0) {
            lua_pushfstring(L, " on %s", S->ons[th->on]);
            luaL_addvalue(&b);
        }
        if (th->active != &th->co) {
            lua_pushfstring(L, " (in coroutine %p)", (void *) th->active->L);
            luaL_addvalue(&b);
        }
        luaL_addchar(&b, '\n');
        if (th->state != CS_TH_ZOMBIE) {
            luaL_traceback(L, th->active->L, NULL,
                           th->active->L == L ? 1 : 0);
            luaL_addvalue(&b);
            luaL_addchar(&b, '\n');
        }
    }
    luaL_pushresult(&b);
}


void
cs_thread_deadlock(cs_sched_t *S, lua_State *L)
{
    luaL_Buffer b;

    luaL_buffinit(L, &b);
    lua_pushfstring(L, "corosched: deadlock: %d light thread%s waiting and "
                       "nothing pending can wake %s\n", S->nrunning,
                    S->nrunning == 1 ? " is" : "s are",
                    S->nrunning == 1 ? "it" : "them");
    luaL_addvalue(&b);
    cs_thread_dump(S, L);
    luaL_addvalue(&b);
    luaL_pushresult(&b);
    cs_thread_kill_all(S, L, 1);
    lua_error(L);
}


int
cs_thread_run_done(cs_sched_t *S, lua_State *L, int status)
{
    cs_thread_t *entry = S->entry;
    lua_State *co;
    int n;

    if (status != LUA_OK) { /* deadlock or an error of the scheduler */
        cs_thread_kill_all(S, L, 1);
        cs_timer_cancel_all(S, L);
        S->entry = NULL;
        S->running = 0;
        S->exiting = 0;
        S->shutdown_req = 0;
        return lua_error(L);
    }

    cs_thread_kill_all(S, L, 0); /* zombies of ended parents */
    co = entry->co.L;
    S->entry = NULL;
    S->running = 0;
    S->exiting = 0;
    S->shutdown_req = 0;

    if (entry->failed) {
        /* [report, false, err]: raise err, with its traceback if a string */
        if (lua_type(co, 3) == LUA_TSTRING)
            lua_pushvalue(co, 1);
        else
            lua_pushvalue(co, 3);
        lua_xmove(co, L, 1);
        cs_thread_discard(S, L, entry, 0);
        return lua_error(L);
    }

    n = lua_gettop(co) - 1; /* [true, results...] */
    if (!lua_checkstack(L, n))
        return luaL_error(L, "too many results from cs.run");
    lua_xmove(co, L, n);
    cs_thread_discard(S, L, entry, 0);
    return n;
}

/* }====== */


/* {====== Lua API ====== */

/* cs.thread.spawn(fn, ...) */
static int
cs_thread_spawn(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *cur, *th;
    int n = lua_gettop(L);

    /* OpenResty's message (it also refuses C functions; we take them) */
    luaL_argcheck(L, lua_type(L, 1) == LUA_TFUNCTION, 1,
                  "Lua function expected");
    if (!S->running)
        return luaL_error(L, "corosched: spawn: no running loop (call it "
                             "inside cs.run)");
    cur = cs_sched_try_current(S, L);
    th = cs_thread_new(S, L, 1, n - 1, cur ? cur->active : NULL,
                       cur ? CS_KIND_THREAD : CS_KIND_DETACHED);
    th->nargs = n - 1;
    if (cur != NULL && lua_isyieldable(L)) {
        if (cs_sched_run_child(S, th))
            return 1;
        S->op = CS_OP_SPAWN;
        S->op_target = &th->co;
        return lua_yield(L, 1); /* spawn returns the coroutine */
    }
    cs_sched_post(S, th, n - 1);
    return 1;
}


static int
cs_thread_wait_k(lua_State *L, int status, lua_KContext ctx)
{
    (void) status;
    return lua_gettop(L) - (int) ctx;
}


static void
cs_thread_wait_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    (void) S;
    th->active->wait_gen++; /* the children it waited for stop waking it */
}


/* cs.thread.wait(t1, t2, ...) or cs.thread.wait({t1, t2, ...}) */
static int
cs_thread_wait(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *cur, *t;
    cs_co_t *me;
    int n = lua_gettop(L), i, found = 0;

    if (n == 0)
        return luaL_error(L, "at least one coroutine should be specified");
    if (n == 1 && lua_type(L, 1) == LUA_TTABLE) {
        n = (int) lua_rawlen(L, 1);
        luaL_checkstack(L, n + 4, "too many threads");
        for (i = 1; i <= n; i++)
            lua_rawgeti(L, 1, i);
        lua_remove(L, 1);
    }
    if (n == 0) /* an empty list */
        return luaL_argerror(L, 1, "lua thread expected");

    cur = cs_sched_current(S, L, "wait");
    me = cur->active;
    for (i = 1; i <= n; i++) {
        if (lua_type(L, i) != LUA_TTHREAD)
            return luaL_argerror(L, i, "lua thread expected");
        t = cs_thread_check(S, L, i);
        if (t == NULL || t->co.kind != CS_KIND_THREAD)
            return luaL_error(L, "attempt to wait on a coroutine that is "
                                 "not a user thread");
        if (t->co.parent != me && t != &cs_thread_gone)
            return luaL_error(L, "only the parent coroutine can wait on "
                                 "the thread");
        if (t->state == CS_TH_ZOMBIE) {
            int nret = t->nargs; /* a zombie's results */
            if (!lua_checkstack(L, nret))
                return luaL_error(L, "too many results to wait");
            lua_xmove(t->co.L, L, nret);
            cs_thread_discard(S, L, t, 0);
            return nret;
        }
        if (t->state == CS_TH_DEAD) {
            if (i < n)
                continue;
            lua_pushnil(L);
            lua_pushliteral(L, "already waited or killed");
            return 2;
        }
        found = 1;
    }
    if (!found) {
        lua_pushnil(L);
        lua_pushliteral(L, "already waited or killed");
        return 2;
    }

    for (i = 1; i <= n; i++) {
        t = cs_thread_check(S, L, i);
        if (t->state != CS_TH_DEAD) {
            t->waited = 1;
            t->waited_gen = me->wait_gen;
        }
    }
    return cs_sched_park(S, L, cur, "wait", cs_thread_wait_cleanup, NULL,
                         (lua_KContext) n, cs_thread_wait_k);
}


/* cs.thread.kill(t) */
static int
cs_thread_kill_l(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *cur, *t;

    t = cs_thread_check(S, L, 1);
    cur = cs_sched_try_current(S, L);
    if (t == NULL || t->co.kind != CS_KIND_THREAD) {
        lua_pushnil(L);
        lua_pushliteral(L, "not user thread");
        return 2;
    }
    if (t != &cs_thread_gone
        && (cur == NULL || t->co.parent != cur->active)) {
        lua_pushnil(L);
        lua_pushliteral(L, "killer not parent");
        return 2;
    }
    switch (t->state) {
    case CS_TH_ZOMBIE:
        cs_thread_discard(S, L, t, 0);
        lua_pushnil(L);
        lua_pushliteral(L, "already terminated");
        return 2;
    case CS_TH_DEAD:
        lua_pushnil(L);
        lua_pushliteral(L, "already waited or killed");
        return 2;
    default:
        if (cur == t)
            return luaL_error(L, "corosched: a thread cannot kill the "
                                 "thread it runs in");
        cs_thread_kill(S, L, t);
        lua_pushinteger(L, 1);
        return 1;
    }
}


static int
cs_thread_stock_status(lua_State *L, lua_State *co)
{
    lua_Debug ar;

    if (L == co)
        return 0;
    switch (lua_status(co)) {
    case LUA_YIELD:
        return 2;
    case LUA_OK:
        if (lua_getstack(co, 0, &ar))
            return 3;
        return lua_gettop(co) == 0 ? 1 : 2;
    default:
        return 1;
    }
}


const char *
cs_thread_costatus(cs_sched_t *S, lua_State *L, int idx)
{
    static const char *const names[] = {
        "running", "dead", "suspended", "normal"
    };
    lua_State *co = lua_tothread(L, idx);
    cs_co_t *c;
    cs_thread_t *th;

    if (L == co || !S->running)
        return names[cs_thread_stock_status(L, co)];
    c = cs_sched_find(S, L, idx);
    if (c == NULL)
        return names[cs_thread_stock_status(L, co)];
    if (c->kind != CS_KIND_USER) {
        th = (cs_thread_t *) c;
        if (th->state == CS_TH_ZOMBIE)
            return "zombie";
        if (th->state == CS_TH_DEAD)
            return "dead";
        return th->active != c ? "normal" : "running";
    }
    if (c->th != NULL)
        return c->th->active == c ? "running" : "normal";
    return names[cs_thread_stock_status(L, co)];
}


/* cs.thread.status(t), also coroutine.status(co) */
static int
cs_thread_status(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    lua_State *co = lua_tothread(L, 1);

    luaL_argexpected(L, co, 1, "coroutine");
    lua_pushstring(L, cs_thread_costatus(S, L, 1));
    return 1;
}


/* cs.thread.self() */
static int
cs_thread_self(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    cs_thread_t *th = S->cur;

    if (th == NULL) {
        lua_pushnil(L);
        return 1;
    }
    cs_thread_push_co(S, L, th);
    return 1;
}


static void
cs_thread_sleep_fire(cs_sched_t *S, cs_tnode_t *n)
{
    cs_sched_wake(S, cs_link_data(n, cs_thread_t, tn), CS_WAKE_OK);
}


static int
cs_thread_sleep_k(lua_State *L, int status, lua_KContext ctx)
{
    (void) L;
    (void) status;
    (void) ctx;
    return 0;
}


/* the argument of cs.sleep, with OpenResty's checks and messages (it
 * counts in whole ms): seconds, 0 or more */
static lua_Number
cs_thread_sleep_arg(lua_State *L)
{
    lua_Number sec;

    if (lua_gettop(L) != 1)
        luaL_error(L, "attempt to pass %d arguments, but accepted 1",
                   lua_gettop(L));
    sec = luaL_checknumber(L, 1);
    if (!(sec > -1e15 && sec < 1e15)) /* NaN too */
        luaL_error(L, "invalid sleep duration");
    if ((lua_Integer) (sec * 1000) < 0)
        luaL_error(L, "invalid sleep duration \"%I\"",
                   (LUAI_UACINT) (sec * 1000));
    return sec < 0 ? 0 : sec; /* less than a ms below 0: 0 ms there */
}


/* cs.sleep(sec) */
static int
cs_thread_sleep(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    lua_Number sec = cs_thread_sleep_arg(L);
    cs_thread_t *th;

    th = cs_sched_current(S, L, "sleep");
    if (sec == 0) {
        S->op = CS_OP_SLEEP0;
        return lua_yield(L, 0);
    }
    cs_sched_heap_reserve(S, L);
    th->tn.when = S->now_mono + sec;
    th->tn.fire = cs_thread_sleep_fire;
    cs_sched_heap_add(S, &th->tn);
    return cs_sched_park(S, L, th, "sleep", NULL, NULL, 0,
                         cs_thread_sleep_k);
}


/*
 * corosched.ngx's ngx.sleep(sec): cs.sleep, except where no loop runs
 * (code before cs.run, as OpenResty's init_by_lua*, where its ngx.sleep
 * blocks the worker): there it blocks the process.
 */
static int
cs_thread_ngx_sleep(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    lua_Number sec;
    struct timespec ts;

    if (S->running)
        return cs_thread_sleep(L);
    sec = cs_thread_sleep_arg(L);
    ts.tv_sec = (time_t) sec;
    ts.tv_nsec = (long) ((sec - (lua_Number) ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return 0;
}


/* cs.stats() */
static int
cs_thread_stats(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);

    lua_createtable(L, 0, 8);
    lua_pushinteger(L, S->nthreads);
    lua_setfield(L, -2, "threads");
    lua_pushinteger(L, S->nrunning);
    lua_setfield(L, -2, "running");
    lua_pushinteger(L, S->nthreads - S->nrunning);
    lua_setfield(L, -2, "zombies");
    lua_pushinteger(L, S->ntimers);
    lua_setfield(L, -2, "timers");
    lua_pushinteger(L, S->nsockets);
    lua_setfield(L, -2, "sockets");
    lua_pushinteger(L, S->npending);
    lua_setfield(L, -2, "pending_io");
    lua_pushinteger(L, S->nheap - S->nlazy);
    lua_setfield(L, -2, "timeouts");
    return 1;
}


/* cs.dump() */
static int
cs_thread_dump_l(lua_State *L)
{
    cs_thread_dump(cs_sched_up(L), L);
    return 1;
}


/* cs.on_error(fn | nil) */
static int
cs_thread_on_error(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);

    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_unref(L, LUA_REGISTRYINDEX, S->onerror_ref);
    S->onerror_ref = LUA_NOREF;
    if (!lua_isnoneornil(L, 1)) {
        lua_settop(L, 1);
        S->onerror_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    return 0;
}


static const luaL_Reg cs_thread_funcs[] = {
    {"spawn", cs_thread_spawn},
    {"wait", cs_thread_wait},
    {"kill", cs_thread_kill_l},
    {"status", cs_thread_status},
    {"self", cs_thread_self},
    {NULL, NULL}
};

static const luaL_Reg cs_thread_top_funcs[] = {
    {"sleep", cs_thread_sleep},
    {"ngx_sleep", cs_thread_ngx_sleep}, /* (corosched.ngx's, not public) */
    {"stats", cs_thread_stats},
    {"dump", cs_thread_dump_l},
    {"on_error", cs_thread_on_error},
    {NULL, NULL}
};


void
cs_thread_open(lua_State *L, cs_sched_t *S)
{
    cs_setfuncs(L, S, cs_thread_top_funcs);
    lua_newtable(L);
    cs_setfuncs(L, S, cs_thread_funcs);
    lua_setfield(L, -2, "thread");
}

/* }====== */
