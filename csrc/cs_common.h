/*
 * Shared types of corosched: the scheduler, light threads, coroutine
 * records, the timer heap, and the small helpers every file uses.
 *
 * Only cs_sched.c resumes Lua coroutines. Everything else records what it
 * wants in the scheduler (an "op") and yields to it, or parks the current
 * light thread with cs_sched_park() and is posted back by cs_sched_wake().
 */
#ifndef CS_COMMON_H
#define CS_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <lua.h>
#include <lauxlib.h>

#define CS_EXPORT __attribute__((visibility("default")))

#ifdef __clang_analyzer__
/* tell the static analyzer (make tidy) what lua.h does not: these longjmp */
LUA_API int(lua_error)(lua_State *L) __attribute__((noreturn));
LUALIB_API int(luaL_error)(lua_State *L, const char *fmt, ...)
    __attribute__((noreturn));
LUALIB_API int(luaL_argerror)(lua_State *L, int arg, const char *extramsg)
    __attribute__((noreturn));
LUALIB_API int(luaL_typeerror)(lua_State *L, int arg, const char *tname)
    __attribute__((noreturn));
#endif

#if LUA_VERSION_RELEASE_NUM >= 50406
#define cs_closethread(co, from) lua_closethread((co), (from))
#else
#define cs_closethread(co, from) lua_resetthread(co)
#endif

/* metatable names (they become __name in error messages) */
#define CS_SCHED_MT  "corosched.sched"
#define CS_CO_MT     "corosched.co"
#define CS_TIMER_MT  "corosched.timer"
#define CS_SEMA_MT   "corosched.semaphore"
#define CS_QUEUE_MT  "corosched.queue"
#define CS_TCP_MT    "corosched.tcp"
#define CS_SERVER_MT "corosched.server"
#define CS_UDP_MT    "corosched.udp"

#include "cs_rc.h"

/* a float as OpenResty writes it: "%.14g", as LuaJIT's tostring (3.0 as
 * "3"); as_data: a whole one in the int32 range as that int (-0.0 as
 * "0"), as ngx_http_lua_write_num does for the data of send. The length
 * written to buf (64 bytes are enough). */
static inline size_t
cs_numfmt(char *buf, size_t size, double d, int as_data)
{
    int n;

    if (as_data && d >= -2147483648.0 && d <= 2147483647.0
        && d == (double) (int) d)
        n = snprintf(buf, size, "%d", (int) d);
    else
        n = snprintf(buf, size, "%.14g", d);
    return n > 0 ? (size_t) n : 0;
}

typedef struct cs_sched_s cs_sched_t;
typedef struct cs_co_s cs_co_t;
typedef struct cs_thread_s cs_thread_t;
typedef struct cs_tnode_s cs_tnode_t;

/* intrusive circular doubly linked list (nginx's ngx_queue) */
typedef struct cs_link_s cs_link_t;
struct cs_link_s {
    cs_link_t *prev, *next;
};

#define cs_link_init(h) ((h)->prev = (h), (h)->next = (h))
#define cs_link_empty(h) ((h)->next == (h))
#define cs_link_linked(l) ((l)->next != NULL)
#define cs_link_data(l, type, field) \
    ((type *) (void *) ((char *) (l) - offsetof(type, field)))

static inline void
cs_link_push(cs_link_t *h, cs_link_t *l)
{
    l->prev = h->prev;
    l->next = h;
    h->prev->next = l;
    h->prev = l;
}

static inline void
cs_link_remove(cs_link_t *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}

/* a timer heap entry: sleeping threads, parked waits with a timeout,
 * cs.timer objects */
typedef void (*cs_tnode_fire_pt)(cs_sched_t *S, cs_tnode_t *n);
struct cs_tnode_s {
    double when;            /* monotonic deadline, seconds */
    int idx;                /* position in the heap, -1 when not in it */
    unsigned seq : 31;      /* insertion number: ties go in that order */
    unsigned lazy : 1;      /* a socket read timeout that may come early
                             * and stays across wake-ups (cs_socket.c) */
    cs_tnode_fire_pt fire;  /* called from the loop, never from libevent */
};

/* what the trampoline does after a yield */
enum {
    CS_OP_NONE = 0,    /* foreign yield: treated as a cooperative yield */
    CS_OP_PARK,        /* an API parked the thread; wait for its wake-up */
    CS_OP_YIELD,       /* coroutine.yield at the top: post at the tail */
    CS_OP_SLEEP0,      /* cs.sleep(0): behind every ready thread */
    CS_OP_SPAWN,       /* run the new child first, post the caller */
    CS_OP_CORO_RESUME, /* resume a user coroutine in this light thread */
    CS_OP_CORO_YIELD   /* hand values back to the user coroutine's resumer */
};

/* kinds of coroutine records */
enum {
    CS_KIND_USER = 0, /* a user coroutine (coroutine.create/wrap) */
    CS_KIND_THREAD,   /* a light thread from thread.spawn */
    CS_KIND_ENTRY,    /* the entry thread of cs.run */
    CS_KIND_DETACHED  /* a timer handler or a thread spawned with no parent */
};

/* states of a light thread */
enum {
    CS_TH_READY = 0, /* in the ready queue */
    CS_TH_RUNNING,   /* being resumed right now */
    CS_TH_PARKED,    /* parked on sleep, wait, semaphore, queue, socket... */
    CS_TH_ZOMBIE,    /* ended, results kept on its stack until waited */
    CS_TH_DEAD       /* waited, killed or discarded */
};

/*
 * A coroutine the scheduler knows about. A light thread's record is
 * malloc'd (cs_thread_t), found through S->recs, freed when the thread is
 * gone and no child thread points at it any more (nchildren). A user
 * coroutine's record is a userdata (user value 1: the coroutine) in S's
 * weak map, pinned in the anchor table while it has child threads.
 */
struct cs_co_s {
    lua_State *L;
    cs_co_t *parent;      /* thread: spawner; user co: its resumer */
    cs_thread_t *th;      /* light thread whose chain holds it, or NULL */
    cs_link_t zombies;    /* zombie child threads (lazily initialised) */
    unsigned char kind;   /* CS_KIND_* */
    unsigned char dead;   /* its function has ended (or was killed) */
    unsigned char wrap;   /* resumed by a coroutine.wrap function */
    unsigned wait_gen;    /* bumped each time it returns from thread.wait */
    int nchildren;        /* threads whose parent pointer is this record */
    int pin;              /* user co: anchor ref while nchildren > 0 */
};

typedef void (*cs_cleanup_pt)(cs_sched_t *S, cs_thread_t *th);

struct cs_thread_s {
    cs_co_t co;           /* its own record; co.th == this thread */
    cs_co_t *active;      /* innermost coroutine of the chain */
    cs_link_t q;          /* ready queue / a wait queue / parent's zombies */
    cs_link_t all;        /* S->threads: every live thread */
    cs_tnode_t tn;        /* sleep and wait timeouts */
    double iodl;          /* parked in a socket read: its deadline
                           * (HUGE_VAL: none); else 0 */
    cs_cleanup_pt cleanup; /* undoes the pending operation (kill) */
    void *data;           /* for cleanup and the continuation */
    int ref;              /* anchors the coroutine while live */
    int nargs;            /* values to pass at the next resume; a zombie:
                           * the values thread.wait returns (it is never
                           * resumed again) */
    unsigned waited_gen;  /* parent's wait_gen when it started waiting */
    unsigned char wake;   /* what woke it: CS_WAKE_* or API-specific */
    unsigned char state;  /* CS_TH_* */
    unsigned char waited; /* the parent is waiting for it */
    unsigned char failed; /* ended with an error (zombie holds it) */
    unsigned char io;     /* parked on I/O or DNS: counted in npending */
    unsigned char stash;  /* a coroutine traceback is stashed for it */
    unsigned char on;     /* what it is parked on, for cs.dump(): an
                           * index into S->ons (0: nothing named) */
};

enum { CS_WAKE_OK = 0, CS_WAKE_TIMEOUT, CS_WAKE_CLOSED };

#endif
