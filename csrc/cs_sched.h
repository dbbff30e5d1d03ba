/*
 * The scheduler: the trampoline (the only lua_resume call site), the ready
 * queue, the timer heap and the loop around libevent.
 *
 * How an API function parks the current light thread (socket I/O, sleep,
 * semaphore...):
 *
 *     cs_thread_t *th = cs_sched_current(S, L, "receive");   raises if it
 *                                                            cannot park
 *     ... arm the event, remember th in the object ...
 *     return cs_sched_park(S, L, th, "socket read", cleanup, obj,
 *                          ctx, continuation_k);
 *
 * The continuation runs inside the resumed coroutine when it is posted
 * back with cs_sched_wake(S, th, wake) (from a libevent callback: that only
 * records and posts, never touches Lua). th->wake tells what happened.
 * `cleanup` is called instead if the thread is killed while parked; it must
 * disarm the event and forget th.
 */
#ifndef CS_SCHED_H
#define CS_SCHED_H

#include <event2/event.h>
#include "cs_common.h"
#include "cs_map.h"

#define CS_SCHED_ONS 64 /* slots for the names threads park on (a power
                         * of 2; cs.dump) */

/* S->exiting: why the loop is ending early */
#define CS_EXIT_TEARDOWN 1 /* the entry thread failed: threads killed */
#define CS_EXIT_SHUTDOWN 2 /* cs.shutdown(): threads run to their end */

struct cs_sched_s {
    lua_State *L;          /* the state that called cs.run */
    struct event_base *base;
    struct event *tev;     /* wakes the loop for the heap's earliest entry */
    double tev_when;       /* deadline tev is armed for, 0 if none */
    cs_thread_t *cur;      /* thread being resumed, NULL in the loop */
    int op;                /* CS_OP_* recorded by the yielding function */
    cs_co_t *op_target;    /* child for SPAWN / CORO_RESUME */
    cs_link_t posted;      /* spawned/yielded threads: run first, FIFO */
    cs_link_t ready;       /* threads woken by events, timers, semaphores,
                            * and cs.sleep(0): FIFO, after the posted */
    cs_link_t threads;     /* every live thread */
    cs_tnode_t **heap;     /* min-heap on `when` */
    int nheap, heapcap;
    unsigned heapseq;      /* the next insertion number (cs_tnode_t) */
    int nlazy;             /* lazy entries in it (socket read timeouts) */
    int nthreads;          /* live threads, zombies included */
    int nrunning;          /* live threads that are not zombies */
    int ntimers;           /* pending cs.timer objects */
    int npending;          /* parked on I/O or DNS (events armed) */
    int nsockets;          /* open sockets */
    int running;           /* inside cs.run */
    int exiting;           /* CS_EXIT_TEARDOWN or CS_EXIT_SHUTDOWN, or 0 */
    int shutdown_req;      /* cs.shutdown(): fire the timers at once */
    int entry_failed;      /* the entry thread raised */
    cs_thread_t *entry;
    double now_mono;       /* cached CLOCK_MONOTONIC */
    double now_real;       /* cached wall clock, for cs.now() */
    cs_map_t recs;         /* lua_State -> record of a live light thread */
    int map_ref;           /* weak table coroutine -> user co record */
    int anchor_ref;        /* luaL_ref anchors: timers, pinned records */
    int slots_ref;         /* array of live threads' coroutines */
    int *free_slots;       /* its free indices (a stack) */
    int nfree, freecap, maxslot;
    int gc_stress;         /* testing builds: a GC step after each resume */
    int onerror_ref;       /* error handler, or LUA_NOREF */
    int fastspawn;         /* spawns that ran their child at once, this
                            * batch (see cs_sched_run_child) */
    int nested;            /* inside cs_sched_run_child */
    cs_thread_t *spare;    /* freed thread records, for reuse */
    const char *ons[CS_SCHED_ONS]; /* what threads park on, by address
                            * (their `on` indexes it; [0] unused) */
    int nspare;
    struct evdns_base *dns; /* the resolver, created on first use */
    struct cs_poll_s *poll; /* the sockets' epoll set (cs_socket.c) */
    int pools_ref;         /* connection pools: key -> pool userdata */
    int npools;            /* entries in it (since the last sweep) */
    int pools_sweep;       /* sweep the unused ones at this many */
    char *dgram;           /* UDP receive buffer (64 KiB), on first use:
                            * a datagram is copied out at once */
};

/* [-0, +0, v] raises the error of cs_sched_current */
cs_thread_t *cs_sched_not_current(cs_sched_t *S, lua_State *L,
                                  const char *what);

/* [-0, +0, v] the running thread if L may park here, else raises an error
 * that names `what` and the reason (inline: every socket call starts with
 * it) */
static inline cs_thread_t *
cs_sched_current(cs_sched_t *S, lua_State *L, const char *what)
{
    cs_thread_t *th = S->cur;

    if (th != NULL && th->active->L == L && lua_isyieldable(L))
        return th;
    return cs_sched_not_current(S, L, what);
}

/* [-0, +0, -] the running thread if L is its active coroutine, else NULL */
cs_thread_t *cs_sched_try_current(cs_sched_t *S, lua_State *L);

/* parks th (state PARKED) and yields to the trampoline; `k` continues */
int cs_sched_park(cs_sched_t *S, lua_State *L, cs_thread_t *th,
                  const char *on, cs_cleanup_pt cleanup, void *data,
                  lua_KContext ctx, lua_KFunction k);

/* the same for a park on I/O or DNS (keeps the loop from reporting a
 * deadlock while it is pending) */
int cs_sched_park_io(cs_sched_t *S, lua_State *L, cs_thread_t *th,
                     const char *on, cs_cleanup_pt cleanup, void *data,
                     lua_KContext ctx, lua_KFunction k);

/* posts a parked thread back; safe from libevent callbacks */
void cs_sched_wake(cs_sched_t *S, cs_thread_t *th, int wake);

/* undoes the park (timeout entry, I/O count) without posting */
void cs_sched_unpark(cs_sched_t *S, cs_thread_t *th, int wake);

/* spawn's shortcut: runs the new child th now, from inside the parent's
 * spawn, when the parent would be resumed right after it anyway (nothing
 * else ready); returns 0 when it may not (the parent must yield) */
int cs_sched_run_child(cs_sched_t *S, cs_thread_t *th);

/* appends th to the posted queue (nargs values on its stack go to resume):
 * a spawning parent, a yield, a new thread */
void cs_sched_post(cs_sched_t *S, cs_thread_t *th, int nargs);

/* appends th to the ready queue: woken by an event, a timer, a semaphore */
void cs_sched_ready(cs_sched_t *S, cs_thread_t *th, int nargs);

/* timer heap: reserve (may raise) before add (never fails). add puts n
 * at n->when, moving it if it was in the heap already; add_lazy adds it
 * as lazy: such an entry stays when its thread is woken (the owner's fire
 * function tells a stale one), and does not count as a pending timeout
 * (socket read timeouts; the idle timeouts of pooled connections, which
 * no thread waits for). */
void cs_sched_heap_reserve(cs_sched_t *S, lua_State *L);
void cs_sched_heap_add(cs_sched_t *S, cs_tnode_t *n);
void cs_sched_heap_add_lazy(cs_sched_t *S, cs_tnode_t *n);
void cs_sched_heap_del(cs_sched_t *S, cs_tnode_t *n);

/* refresh the cached clocks: both (cs.update_time), or only the
 * monotonic one (not what cs.now() says) */
void cs_sched_update_time(cs_sched_t *S);
void cs_sched_update_mono(cs_sched_t *S);

/* [-0, +0, -] the scheduler from upvalue 1 of an API function */
#define cs_sched_up(L) ((cs_sched_t *) lua_touserdata((L), lua_upvalueindex(1)))

/* [-0, +0, -] the record of the coroutine at idx (a live light thread or
 * a user coroutine we resumed), or NULL */
cs_co_t *cs_sched_find(cs_sched_t *S, lua_State *L, int idx);

/* [-0, +0, m] the scheduler of L's state, created on first use */
cs_sched_t *cs_sched_get(lua_State *L);

/* registration, one per file */
void cs_sched_open(lua_State *L, cs_sched_t *S);
void cs_thread_open(lua_State *L, cs_sched_t *S);
void cs_coroutine_open(lua_State *L, cs_sched_t *S);
void cs_timer_open(lua_State *L, cs_sched_t *S);
void cs_sync_open(lua_State *L, cs_sched_t *S);
void cs_crypto_open(lua_State *L, cs_sched_t *S);
void cs_cdata_open(lua_State *L, cs_sched_t *S);

/* [-0, +0, -] sets functions of l with S as upvalue into the table at -1 */
void cs_setfuncs(lua_State *L, cs_sched_t *S, const luaL_Reg *l);

#endif
