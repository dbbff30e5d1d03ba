/*
 * The parts of a cosocket that TCP, UDP and servers share: parking on fd
 * readiness (the epoll set, or libevent events) with an inactivity
 * timeout, close, and name resolution with libevent's evdns (it reads
 * /etc/resolv.conf and /etc/hosts itself).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/dns.h>
#include <event2/util.h>
#include <lua.h>
#include <lauxlib.h>

#include "cs_socket.h"

#ifdef __linux__
#include <sys/epoll.h>
#include <unistd.h>
#define CS_EPOLL 1
#endif
#include "cs_alloc.h"

#define CS_NETSTATE_MT "corosched.netstate"

/*
 * Readiness is edge-triggered: a socket is registered once, at its first
 * park, not once per receive. That is safe because a thread parks only
 * after its I/O came back with EAGAIN, and a read edge seen while nobody
 * is parked is remembered in s->rready.
 *
 * On Linux the sockets are in an epoll set of the scheduler's own, for
 * both directions, with the cs_sock_t as the event's data; libevent
 * watches that set as one fd (cs_poll_cb). A socket then costs no struct
 * event and no libevent bookkeeping (176 B per connection), and a wake-up
 * is a few instructions. Timeouts are the parked thread's heap entry.
 *
 * Elsewhere (and with core._testing.no_epoll) each socket has a
 * persistent libevent read event, added once, and a one-shot write event
 * added per park (only when the send buffer is full). The short-I/O
 * testing mode fakes EAGAIN on a ready fd, which needs level-triggered
 * events: it uses libevent's.
 */
static int cs_sock_level_triggered;
static int cs_sock_no_epoll;

/* sockets may go to the epoll set (when there is one) */
#define cs_sock_epoll_ok() (!cs_sock_level_triggered && !cs_sock_no_epoll)

/* a socket's libevent events, when it is not in the epoll set */
struct cs_sock_ev_s {
    struct event *rev;  /* persistent (level-triggered mode: per park) */
    struct event *wev;  /* one-shot, added per park */
};

/* a read's timeout entry that comes at most this early (s) ends the read:
 * not worth another heap entry (cs_sock_read_timeout) */
#define CS_SOCK_SLACK 0.005


/* {====== fd + events ====== */

void
cs_sock_attach(cs_sock_t *s, cs_sched_t *S, int fd)
{
    s->S = S;
    s->fd = fd;
    s->ev = NULL;
    s->reader = s->writer = NULL;
    s->rready = 1;
    s->rdhup = 0;
    s->polled = 0;
    s->cross = 0;
    S->nsockets++;
}


/*
 * Wakes th, parked on s. It stays s->reader (or writer) until its
 * continuation runs (cs_sock_resumed): as in OpenResty, whose handler
 * resumes the thread at once, the socket is busy until the call returns,
 * so a thread that runs in between gets "socket busy ..." and cannot take
 * the data or the buffers of the operation in progress. A kill before that
 * cancels the operation as while it was parked (the park's cleanup).
 */
static void
cs_sock_wake(cs_sock_t *s, cs_thread_t *th, int wake)
{
    cs_cleanup_pt cleanup = th->cleanup;

    cs_sched_wake(s->S, th, wake);
    th->cleanup = cleanup; /* until it runs */
}


void
cs_sock_resumed(cs_sock_t *s, cs_thread_t *th)
{
    th->cleanup = NULL;
    if (s->reader == th) {
        s->reader = NULL;
        s->cross &= ~CS_SOCK_R_ON_W;
    }
    if (s->writer == th) {
        s->writer = NULL;
        s->cross &= ~CS_SOCK_W_ON_R;
    }
}


static void
cs_sock_wake_ready(cs_sock_t *s, cs_thread_t *th)
{
    if (th != NULL && th->state == CS_TH_PARKED)
        cs_sock_wake(s, th, CS_SOCK_READY);
}


/* s became readable (rdhup: the peer's FIN, a reset or an error came) */
static void
cs_sock_readable(cs_sock_t *s, int rdhup)
{
    s->rready = 1;
    if (rdhup)
        s->rdhup = 1;
    if (!(s->cross & CS_SOCK_R_ON_W))
        cs_sock_wake_ready(s, s->reader);
    if (s->cross & CS_SOCK_W_ON_R)
        cs_sock_wake_ready(s, s->writer);
}


void
cs_sock_moved(cs_sock_t *s, short dir)
{
    if (dir == EV_READ && (s->cross & CS_SOCK_W_ON_R))
        cs_sock_wake_ready(s, s->writer);
    if (dir == EV_WRITE && (s->cross & CS_SOCK_R_ON_W))
        cs_sock_wake_ready(s, s->reader);
}


static void
cs_sock_read_cb(evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    cs_sock_readable(arg, what & EV_CLOSED);
}


/*
 * The timeout of a parked read is the reader thread's lazy heap entry
 * (th->tn), not a libevent timeout: a timeout on the persistent read event
 * would be re-armed by libevent each time the event fires, a heap or queue
 * operation per receive. The entry stays in the heap when the thread is
 * woken, and a later read moves it only when its deadline comes before the
 * entry's. So the entry may come early, or when the thread is no longer
 * reading (th->iodl == 0): it then waits for the deadline of the read in
 * progress, or goes.
 */
static void
cs_sock_read_timeout(cs_sched_t *S, cs_tnode_t *n)
{
    cs_thread_t *th = cs_link_data(n, cs_thread_t, tn);

    if (th->iodl == 0)
        return;
    if (th->iodl - S->now_mono > CS_SOCK_SLACK) {
        if (th->iodl < HUGE_VAL) {
            n->when = th->iodl;
            cs_sched_heap_add_lazy(S, n); /* the slot it just left */
        }
        return;
    }
    cs_sock_wake(th->data, th, CS_SOCK_TIMEOUT); /* cs_sock_park_with's */
}


/* s became writable */
static void
cs_sock_writable(cs_sock_t *s)
{
    if (!(s->cross & CS_SOCK_W_ON_R))
        cs_sock_wake_ready(s, s->writer);
    if (s->cross & CS_SOCK_R_ON_W)
        cs_sock_wake_ready(s, s->reader);
}


static void
cs_sock_write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    cs_sock_writable(arg);
}


/* the timeout of a parked write (th->tn) */
static void
cs_sock_write_timeout(cs_sched_t *S, cs_tnode_t *n)
{
    cs_thread_t *th = cs_link_data(n, cs_thread_t, tn);
    cs_sock_t *s = th->data; /* cs_sock_park_with's */

    (void) S;
    if (s->writer != NULL && s->writer->state == CS_TH_PARKED)
        cs_sock_wake(s, s->writer, CS_SOCK_TIMEOUT);
}


#ifdef CS_EPOLL
#define CS_POLL_BATCH 256

struct cs_poll_s {
    int fd;
    struct event *ev;
};


/* waits up to timeout_ms (-1: no limit) for events of the epoll set fd
 * and hands them out. Nothing here runs Lua or frees a socket (a wake-up
 * only posts the thread), so every pointer in the batch stays valid; a
 * socket leaves the set before it is freed. */
static void
cs_poll_run(int fd, int timeout_ms)
{
    struct epoll_event evs[CS_POLL_BATCH];
    int i, n;

    n = epoll_wait(fd, evs, CS_POLL_BATCH, timeout_ms);
    for (i = 0; i < n; i++) {
        unsigned e = evs[i].events;
        cs_sock_t *s;
        if (evs[i].data.u64 & 1) { /* a cs_watch_t (cs_poll_watch) */
            cs_watch_t *w = (cs_watch_t *) (uintptr_t) (evs[i].data.u64 - 1);
            w->ready(w);
            continue;
        }
        s = evs[i].data.ptr;
        /* an error or a hang-up wakes both directions, as libevent does;
         * like the peer's FIN, they may come with the last data (rdhup:
         * a read must follow the one that drains it) */
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            cs_sock_readable(s, (e & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                                    != 0);
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            cs_sock_writable(s);
    }
}


/* libevent says the epoll set has events */
static void
cs_poll_cb(evutil_socket_t fd, short what, void *arg)
{
    (void) what;
    (void) arg;
    cs_poll_run(fd, 0);
}


/*
 * The loop waits on the epoll set directly when libevent holds nothing
 * else (the set's own event aside, and the loop's timer event, whose
 * deadline the caller turned into timeout_ms): one epoll_wait instead of
 * libevent's and then the set's. Name lookups in flight and sockets on
 * libevent events go through libevent.
 */
int
cs_poll_wait(cs_sched_t *S, int timeout_ms)
{
    int mine = 1 + (S->tev_when != 0); /* tev is added until it fires */

    if (S->poll == NULL
        || event_base_get_num_events(S->base, EVENT_BASE_COUNT_ADDED
                                              | EVENT_BASE_COUNT_ACTIVE
                                              | EVENT_BASE_COUNT_VIRTUAL)
               != mine)
        return 0;
    cs_poll_run(S->poll->fd, timeout_ms);
    return 1;
}


void
cs_poll_open(cs_sched_t *S)
{
    struct cs_poll_s *P;

    if (S->poll != NULL || (P = malloc(sizeof(*P))) == NULL)
        return;
    P->fd = epoll_create1(EPOLL_CLOEXEC);
    P->ev = P->fd < 0 ? NULL
                      : event_new(S->base, P->fd, EV_READ | EV_PERSIST,
                                  cs_poll_cb, P);
    if (P->ev == NULL || event_add(P->ev, NULL) < 0) {
        if (P->ev != NULL)
            event_free(P->ev);
        if (P->fd >= 0)
            close(P->fd);
        free(P);
        return;
    }
    S->poll = P;
}


#define CS_POLL_SOCK (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)
#define CS_POLL_WATCH (EPOLLIN | EPOLLRDHUP | EPOLLET)

/* registers fd in the set (op ADD or MOD) with events and data */
static int
cs_poll_ctl(cs_sched_t *S, int op, int fd, unsigned events, uint64_t data)
{
    struct epoll_event e;

    memset(&e, 0, sizeof(e));
    e.events = events;
    e.data.u64 = data;
    return epoll_ctl(S->poll->fd, op, fd, &e);
}


/* adds s to the epoll set (s->polled), unless there is none: it could
 * not be made, and s stays on libevent events; raises if the set refuses
 * it */
static void
cs_poll_add(lua_State *L, cs_sock_t *s)
{
    cs_sched_t *S = s->S;

    cs_poll_open(S); /* in case it failed with cs.run's */
    if (S->poll == NULL)
        return;
    if (cs_poll_ctl(S, EPOLL_CTL_ADD, s->fd, CS_POLL_SOCK,
                    (uint64_t) (uintptr_t) s) < 0)
        luaL_error(L, "corosched: cannot watch the socket: %s",
                   strerror(errno));
    s->polled = 1;
}


int
cs_poll_watch(cs_sock_t *s, cs_watch_t *w)
{
    uint64_t data = (uint64_t) (uintptr_t) w + 1; /* w is aligned */

    if (s->S->poll == NULL || !cs_sock_epoll_ok())
        return 0;
    if (s->polled
        && cs_poll_ctl(s->S, EPOLL_CTL_MOD, s->fd, CS_POLL_WATCH, data) == 0) {
        s->polled = 0; /* the detach leaves the registration alone */
        return 1;
    }
    return !s->polled
           && cs_poll_ctl(s->S, EPOLL_CTL_ADD, s->fd, CS_POLL_WATCH, data)
                  == 0;
}


void
cs_poll_rewatch(cs_sock_t *s)
{
    if (cs_poll_ctl(s->S, EPOLL_CTL_MOD, s->fd, CS_POLL_SOCK,
                    (uint64_t) (uintptr_t) s) == 0)
        s->polled = 1;
    else /* it cannot be: then no event may name the watcher */
        cs_poll_unwatch(s->S, s->fd);
}


void
cs_poll_unwatch(cs_sched_t *S, int fd)
{
    struct epoll_event e; /* not NULL: kernels before 2.6.9 */

    memset(&e, 0, sizeof(e));
    if (S->poll != NULL)
        epoll_ctl(S->poll->fd, EPOLL_CTL_DEL, fd, &e);
}


static void
cs_poll_del(cs_sock_t *s)
{
    if (s->polled)
        cs_poll_unwatch(s->S, s->fd);
    s->polled = 0;
}


void
cs_poll_free(cs_sched_t *S)
{
    struct cs_poll_s *P = S->poll;

    if (P != NULL) {
        S->poll = NULL;
        event_free(P->ev);
        close(P->fd);
        free(P);
    }
}

#else

void
cs_poll_open(cs_sched_t *S)
{
    (void) S;
}


int
cs_poll_wait(cs_sched_t *S, int timeout_ms)
{
    (void) S;
    (void) timeout_ms;
    return 0;
}


int
cs_poll_watch(cs_sock_t *s, cs_watch_t *w)
{
    (void) s;
    (void) w;
    return 0;
}


void
cs_poll_rewatch(cs_sock_t *s)
{
    (void) s;
}


void
cs_poll_unwatch(cs_sched_t *S, int fd)
{
    (void) S;
    (void) fd;
}


static void
cs_poll_add(lua_State *L, cs_sock_t *s)
{
    (void) L;
    (void) s;
}

#define cs_poll_del(s) ((void) 0)

void
cs_poll_free(cs_sched_t *S)
{
    (void) S;
}

#endif


/* the parked thread was killed: the operation is cancelled and, as the
 * contract says, the socket closed */
void
cs_sock_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_sock_t *s = th->data;

    (void) S;
    cs_sock_resumed(s, th);
    cs_sock_close(s);
}


/* th parks in a read with this timeout (0: none): see
 * cs_sock_read_timeout */
static void
cs_sock_read_deadline(cs_sched_t *S, cs_thread_t *th, int timeout_ms)
{
    double dl = timeout_ms > 0 ? S->now_mono + timeout_ms / 1000.0
                               : HUGE_VAL;

    if (dl < HUGE_VAL && (th->tn.idx < 0 || th->tn.when > dl)) {
        th->tn.when = dl;
        th->tn.fire = cs_sock_read_timeout;
        cs_sched_heap_add_lazy(S, &th->tn);
    }
    th->iodl = dl;
}


int
cs_sock_park(lua_State *L, cs_sock_t *s, cs_thread_t *th, short role,
             short what, int timeout_ms, const char *on, lua_KContext ctx,
             lua_KFunction k)
{
    return cs_sock_park_with(L, s, th, role, what, timeout_ms, on,
                             cs_sock_cleanup, ctx, k);
}


/* without the epoll set: arms s's libevent event for `what` (made on the
 * first park; raises if it cannot be) */
static void
cs_sock_arm_event(lua_State *L, cs_sock_t *s, short what)
{
    struct event **ev;
    short flags = what;

    if (s->ev == NULL && (s->ev = calloc(1, sizeof(*s->ev))) == NULL)
        luaL_error(L, "not enough memory");
    ev = what == EV_READ ? &s->ev->rev : &s->ev->wev;
    if (*ev == NULL) {
        /*
         * The write event is edge-triggered too (one-shot: it is added
         * only after a send or connect came back short, so an edge
         * follows): libevent keeps one epoll registration per fd and
         * takes EPOLLET from the event being added or deleted, so a
         * level-triggered write event would turn the persistent read
         * event level-triggered for good, and the loop would spin while
         * unread data waits (spec/regress/tcp_et_write_event_spin_spec.lua).
         */
        if (!cs_sock_level_triggered)
            flags |= what == EV_READ ? EV_PERSIST | EV_ET | EV_CLOSED
                                     : EV_ET;
        *ev = event_new(s->S->base, s->fd, flags,
                        what == EV_READ ? cs_sock_read_cb : cs_sock_write_cb,
                        s);
        if (*ev == NULL)
            luaL_error(L, "not enough memory");
        /* the persistent read event is added once */
        if (what == EV_READ && !cs_sock_level_triggered)
            event_add(*ev, NULL);
    }
    if (what == EV_WRITE || cs_sock_level_triggered)
        event_add(*ev, NULL);
}


int
cs_sock_park_with(lua_State *L, cs_sock_t *s, cs_thread_t *th, short role,
                  short what, int timeout_ms, const char *on,
                  cs_cleanup_pt cleanup, lua_KContext ctx, lua_KFunction k)
{
    cs_sched_t *S = s->S;

    if (timeout_ms > 0) {
        cs_sched_heap_reserve(S, L); /* before anything changes: may raise */
        /* the timeout counts from now, not from the loop's last poll
         * (the thread may have computed for a while) */
        cs_sched_update_mono(S);
    }
    if (!s->polled && s->ev == NULL && cs_sock_epoll_ok()) /* first park */
        cs_poll_add(L, s);
    if (!s->polled)
        cs_sock_arm_event(L, s, what);
    if (role == EV_READ) {
        cs_sock_read_deadline(S, th, timeout_ms);
        s->reader = th;
        if (what == EV_WRITE)
            s->cross |= CS_SOCK_R_ON_W;
    } else {
        if (timeout_ms > 0) {
            th->tn.when = S->now_mono + timeout_ms / 1000.0;
            th->tn.fire = cs_sock_write_timeout;
            cs_sched_heap_add(S, &th->tn);
        }
        s->writer = th;
        if (what == EV_READ)
            s->cross |= CS_SOCK_W_ON_R;
    }
    return cs_sched_park_io(S, L, th, on, cleanup, s, ctx, k);
}


void
cs_sock_drop_write_event(cs_sock_t *s)
{
    if (s->ev != NULL && s->ev->wev != NULL) {
        event_free(s->ev->wev);
        s->ev->wev = NULL;
    }
}


static void
cs_sock_free_events(cs_sock_t *s)
{
    cs_poll_del(s);
    if (s->ev != NULL) {
        if (s->ev->rev != NULL)
            event_free(s->ev->rev);
        if (s->ev->wev != NULL)
            event_free(s->ev->wev);
        free(s->ev);
        s->ev = NULL;
    }
}


/* wakes both parked threads (another thread closed the socket) */
static void
cs_sock_wake_all(cs_sock_t *s)
{
    cs_thread_t *th;

    /* (a thread woken already finds the socket closed when it runs) */
    if ((th = s->reader) != NULL && th->state == CS_TH_PARKED)
        cs_sock_wake(s, th, CS_SOCK_CLOSED);
    if ((th = s->writer) != NULL && th->state == CS_TH_PARKED)
        cs_sock_wake(s, th, CS_SOCK_CLOSED);
}


void
cs_sock_close(cs_sock_t *s)
{
    if (s->fd < 0)
        return;
    cs_sock_wake_all(s);
    cs_sock_free_events(s);
    cs_net_close(s->fd);
    s->fd = -1;
    s->S->nsockets--;
}


int
cs_sock_detach(cs_sock_t *s)
{
    int fd = s->fd;

    cs_sock_wake_all(s);
    cs_sock_free_events(s);
    s->fd = -1;
    return fd;
}


int
cs_sock_push_addr(lua_State *L, int fd, int peer)
{
    cs_addr_t a;
    char buf[CS_NET_ADDRSTRLEN];
    int port;

    if (fd < 0)
        return cs_sock_fail(L, "closed");
    if ((peer ? cs_net_peername(fd, &a) : cs_net_sockname(fd, &a)) != CS_OK
        || cs_net_format_addr(&a, buf, sizeof(buf), &port) < 0)
        return cs_sock_fail(L, cs_net_strerror(errno));
    lua_pushstring(L, buf);
    if (a.ss.ss_family == AF_UNIX)
        return 1;
    lua_pushinteger(L, port);
    return 2;
}


int
cs_sock_fail(lua_State *L, const char *err)
{
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
}


int
cs_sock_parse_host(lua_State *L, int port, cs_addr_t *a)
{
    size_t hlen, litlen;
    const char *host = lua_tolstring(L, 2, &hlen), *lit, *why;
    int e;

    if (strlen(host) != hlen) { /* a NUL byte: no name has one */
        why = NULL;
        goto fail;
    }
    if (cs_net_split_host(host, hlen, &port, &lit, &litlen, &why) != CS_OK)
        goto fail;
    if (cs_net_parse_addr(a, lit, litlen, port) == CS_OK)
        return 0;
    e = errno;
    if (e == ENOENT) { /* a name: resolved with the port it goes with */
        lua_pushlstring(L, lit, litlen);
        lua_replace(L, 2);
        lua_pushinteger(L, port);
        lua_replace(L, 3);
        return 1;
    }
    if (cs_net_is_unix(lit, litlen))
        why = e == ENAMETOOLONG ? "too long path in the unix domain socket"
                                : NULL;
    else
        why = lit[0] == '[' ? "invalid IPv6 address" : NULL;
fail:
    if (why != NULL)
        lua_pushfstring(L, "failed to parse host name \"%s\": %s", host, why);
    else
        lua_pushfstring(L, "failed to parse host name \"%s\"", host);
    return cs_sock_fail(L, lua_tostring(L, -1));
}


lua_Integer
cs_sock_int_arg(lua_State *L, int idx)
{
    int exact;
    lua_Integer i = lua_tointegerx(L, idx, &exact);
    lua_Number d;

    if (exact) /* an integer, or a float or string with an integral value */
        return i;
    d = lua_tonumber(L, idx);
    if (!(d > -1) || d == (lua_Number) HUGE_VAL)
        return -1;
    return d < (lua_Number) LUA_MAXINTEGER ? (lua_Integer) d : LUA_MAXINTEGER;
}


lua_Integer
cs_sock_check_int(lua_State *L, int idx)
{
    if (!lua_isnumber(L, idx))
        luaL_typeerror(L, idx, "number");
    return cs_sock_int_arg(L, idx);
}


int
cs_sock_argc(lua_State *L, int n)
{
    return luaL_error(L, "expecting %d argument%s (including the object), "
                         "but got %d", n, n == 1 ? "" : "s", lua_gettop(L));
}


int
cs_sock_close_argc(lua_State *L)
{
    return luaL_error(L, "expecting 1 argument (including the object) but "
                         "seen %d", lua_gettop(L));
}


void
cs_sock_ctor_noargs(lua_State *L)
{
    if (lua_gettop(L) != 0)
        luaL_error(L, "expecting zero arguments, but got %d", lua_gettop(L));
}


const char *
cs_sock_tolstring(lua_State *L, int idx, int as_data, size_t *len)
{
    char buf[64];

    if (lua_type(L, idx) == LUA_TNUMBER && !lua_isinteger(L, idx)) {
        size_t n = cs_numfmt(buf, sizeof(buf), (double) lua_tonumber(L, idx),
                             as_data);
        idx = lua_absindex(L, idx);
        lua_pushlstring(L, buf, n);
        lua_replace(L, idx);
    }
    return lua_tolstring(L, idx, len);
}

/* }====== */


/* {====== the plain transport ====== */

static ssize_t
cs_plain_recv(void *io, int fd, char *buf, size_t len, short *want)
{
    (void) io;
    *want = EV_READ;
    return cs_net_recv(fd, buf, len);
}


static ssize_t
cs_plain_send(void *io, int fd, const char *buf, size_t len, short *want)
{
    (void) io;
    *want = EV_WRITE;
    return cs_net_send(fd, buf, len);
}


static void
cs_plain_free(void *io, int fd)
{
    (void) io;
    (void) fd;
}


static int
cs_plain_idle(void *io, int fd)
{
    (void) io;
    return cs_net_idle_state(fd);
}


static size_t
cs_plain_pending(void *io)
{
    (void) io;
    return 0;
}


const cs_transport_t cs_transport_plain = {
    "plain", cs_plain_recv, cs_plain_send, cs_plain_free, cs_plain_idle,
    cs_plain_pending, 1
};

/* }====== */


/* {====== name resolution ====== */

struct cs_dns_s {
    cs_sched_t *S;
    cs_thread_t *th;            /* parked for the answer, or NULL */
    struct evdns_getaddrinfo_request *req;
    struct evutil_addrinfo *ai;
    int err;                    /* EVUTIL_EAI_* */
    int done;
    int abandoned;              /* the owner is gone: the callback frees */
    cs_dns_t **owner;           /* cleared when q is consumed or given up */
};


/* the owner forgets q (never from the callback: at lua_close the owner
 * may be freed before the resolver fails the pending requests) */
static void
cs_dns_disown(cs_dns_t *q)
{
    if (q->owner != NULL) {
        *q->owner = NULL;
        q->owner = NULL;
    }
}


static void
cs_dns_cb(int err, struct evutil_addrinfo *ai, void *arg)
{
    cs_dns_t *q = arg;
    cs_thread_t *th;

    q->req = NULL;
    if (q->abandoned || q->S->dns == NULL) { /* gone, or lua_close */
        if (ai != NULL)
            evutil_freeaddrinfo(ai);
        free(q);
        return;
    }
    q->ai = ai;
    q->err = err;
    q->done = 1;
    if ((th = q->th) != NULL) {
        cs_cleanup_pt cleanup = th->cleanup;
        q->th = NULL;
        cs_sched_wake(q->S, th, CS_WAKE_OK);
        /* until it runs (cs_dns_result): a kill before that frees the
         * answer and gives the socket up, as a kill while it waited */
        th->cleanup = cleanup;
    }
}


static struct evdns_base *
cs_dns_base(cs_sched_t *S)
{
    if (S->dns == NULL && S->base != NULL) {
        S->dns = evdns_base_new(S->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
        if (S->dns == NULL) { /* no resolv.conf: the hosts file at least */
            S->dns = evdns_base_new(S->base, 0);
            if (S->dns != NULL)
                evdns_base_load_hosts(S->dns, NULL);
        }
    }
    return S->dns;
}


int
cs_dns_start(cs_sched_t *S, lua_State *L, const char *host, int family,
             cs_dns_t **out)
{
    struct evutil_addrinfo hints;
    struct evdns_base *dns = cs_dns_base(S);
    cs_dns_t *q;

    *out = NULL;
    if (dns == NULL)
        return luaL_error(L, "corosched: cannot start the resolver");
    q = calloc(1, sizeof(*q));
    if (q == NULL)
        return luaL_error(L, "not enough memory");
    q->S = S;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = EVUTIL_AI_ADDRCONFIG;
    *out = q;
    q->req = evdns_getaddrinfo(dns, host, NULL, &hints, cs_dns_cb, q);
    return q->done ? CS_OK : CS_AGAIN;
}


/* killed while waiting for the answer, or woken by it and not yet run */
void
cs_dns_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_dns_t *q = th->data;

    (void) S;
    q->th = NULL;
    q->abandoned = 1;
    cs_dns_disown(q);
    if (q->req != NULL) {
        evdns_getaddrinfo_cancel(q->req); /* the callback frees q */
    } else {
        if (q->ai != NULL)
            evutil_freeaddrinfo(q->ai);
        free(q);
    }
}


void
cs_dns_set_owner(cs_dns_t *q, cs_dns_t **slot)
{
    q->owner = slot;
    *slot = q;
}


int
cs_dns_cancel(cs_dns_t *q)
{
    cs_thread_t *th = q->th;
    cs_sched_t *S = q->S;

    if (th == NULL) /* answered: the posted thread consumes q */
        return 0;
    q->th = NULL;
    q->abandoned = 1;
    cs_dns_disown(q);
    if (q->req != NULL)
        evdns_getaddrinfo_cancel(q->req); /* the callback frees q */
    else
        free(q);
    cs_sched_wake(S, th, CS_WAKE_CLOSED);
    return 1;
}


int
cs_dns_park(lua_State *L, cs_dns_t *q, cs_thread_t *th, lua_KContext ctx,
            lua_KFunction k)
{
    return cs_dns_park_with(L, q, th, cs_dns_cleanup, q, ctx, k);
}


int
cs_dns_park_with(lua_State *L, cs_dns_t *q, cs_thread_t *th,
                 cs_cleanup_pt cleanup, void *data, lua_KContext ctx,
                 lua_KFunction k)
{
    q->th = th;
    return cs_sched_park_io(q->S, L, th, "dns", cleanup, data, ctx, k);
}


int
cs_dns_result(cs_dns_t *q, const char *host, cs_addr_t *addrs, int max,
              char *err, size_t errlen)
{
    struct evutil_addrinfo *ai;
    int n = 0;

    cs_dns_disown(q);
    if (q->S->cur != NULL)
        q->S->cur->cleanup = NULL; /* the answer is its own now */
    if (q->err != 0 || q->ai == NULL) {
        int code = 3;
        const char *why = "Host not found";
        if (q->err == EVUTIL_EAI_AGAIN || q->err == EVUTIL_EAI_FAIL) {
            code = 2;
            why = "Server failure";
        } else if (q->err == EVUTIL_EAI_MEMORY) {
            code = 12;
            why = "Out of memory";
        }
        snprintf(err, errlen, "%s could not be resolved (%d: %s)", host,
                 code, why);
    } else {
        for (ai = q->ai; ai != NULL && n < max; ai = ai->ai_next) {
            if (ai->ai_addrlen > sizeof(addrs[n].ss))
                continue;
            memcpy(&addrs[n].ss, ai->ai_addr, ai->ai_addrlen);
            addrs[n].len = (socklen_t) ai->ai_addrlen;
            n++;
        }
        if (n == 0)
            snprintf(err, errlen, "%s could not be resolved (3: Host not "
                                  "found)", host);
    }
    if (q->ai != NULL)
        evutil_freeaddrinfo(q->ai);
    free(q);
    return n;
}


void
cs_dns_free(cs_sched_t *S)
{
    struct evdns_base *dns = S->dns;

    if (dns != NULL) {
        S->dns = NULL;           /* the callbacks now just free */
        evdns_base_free(dns, 1); /* fails pending requests */
    }
}


static int
cs_resolve_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_addr_t addrs[CS_DNS_MAX];
    char err[300], buf[CS_NET_ADDRSTRLEN];
    const char *host = lua_tostring(L, 1);
    int n, i;

    (void) status;
    n = cs_dns_result((cs_dns_t *) ctx, host, addrs, CS_DNS_MAX, err,
                      sizeof(err));
    if (n == 0)
        return cs_sock_fail(L, err);
    lua_createtable(L, n, 0);
    for (i = 0; i < n; i++) {
        cs_net_format_addr(&addrs[i], buf, sizeof(buf), NULL);
        lua_pushstring(L, buf);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}


/* cs.resolve(host) -> { "addr", ... } | nil, err */
static int
cs_resolve(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    size_t len;
    const char *host = luaL_checklstring(L, 1, &len);
    cs_thread_t *th;
    cs_addr_t a;
    cs_dns_t *q;
    char buf[CS_NET_ADDRSTRLEN];

    lua_settop(L, 1);
    if (cs_net_parse_addr(&a, host, len, 0) == CS_OK) { /* a literal */
        cs_net_format_addr(&a, buf, sizeof(buf), NULL);
        lua_createtable(L, 1, 0);
        lua_pushstring(L, buf);
        lua_rawseti(L, -2, 1);
        return 1;
    }
    if (errno != ENOENT || strlen(host) != len)
        return cs_sock_fail(L, lua_pushfstring(L, "%s could not be resolved "
                                                  "(3: Host not found)",
                                               host));
    th = cs_sched_current(S, L, "resolve");
    if (cs_dns_start(S, L, host, AF_UNSPEC, &q) == CS_OK)
        return cs_resolve_k(L, LUA_OK, (lua_KContext) q);
    return cs_dns_park(L, q, th, (lua_KContext) q, cs_resolve_k);
}

/* }====== */


#ifdef CS_TESTING
/* {====== test hooks (testing builds only) ====== */

/* core._testing.short_io(on): every recv/send moves one byte at most and
 * every other call says EAGAIN (OpenResty's mockeagain) */
static int
cs_testing_short_io(lua_State *L)
{
    cs_sock_level_triggered = lua_toboolean(L, 1);
    cs_net_set_short_io(cs_sock_level_triggered);
    return 0;
}


/* core._testing.inject(op, errno_number, count) */
static int
cs_testing_inject(lua_State *L)
{
    const char *op = luaL_optstring(L, 1, NULL);
    int err = (int) luaL_optinteger(L, 2, 0);
    int count = (int) luaL_optinteger(L, 3, 1);

    lua_pushboolean(L, cs_net_inject(op, err, count) == CS_OK);
    return 1;
}


/* core._testing.alloc_count() -> allocations made so far, failures armed
 * and not reached yet */
static int
cs_testing_alloc_count(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer) cs_alloc_count());
    lua_pushinteger(L, cs_alloc_pending());
    return 2;
}


/* core._testing.alloc_fail(after, count): corosched's next `after` C
 * allocations succeed and the `count` (default 1) after them fail
 * (cs_alloc.h); alloc_fail() clears. Returns what alloc_count does. */
static int
cs_testing_alloc_fail(lua_State *L)
{
    if (!lua_isnoneornil(L, 1))
        cs_alloc_fail((long) luaL_checkinteger(L, 1),
                      (int) luaL_optinteger(L, 2, 1));
    else
        cs_alloc_fail(0, 0);
    return cs_testing_alloc_count(L);
}


/* core._testing.gc_stress(on): a GC step after every resume */
static int
cs_testing_gc_stress(lua_State *L)
{
    cs_sched_up(L)->gc_stress = lua_toboolean(L, 1);
    return 0;
}


/* core._testing.heapseq(n): the timer heap's next insertion number (its
 * wrap-around is checked) */
static int
cs_testing_heapseq(lua_State *L)
{
    cs_sched_up(L)->heapseq = (unsigned) luaL_checkinteger(L, 1);
    return 0;
}


/* core._testing.no_epoll(on) -> the setting before: sockets
 * registered from now on use libevent events, the path of systems
 * without epoll */
static int
cs_testing_no_epoll(lua_State *L)
{
    lua_pushboolean(L, cs_sock_no_epoll);
    cs_sock_no_epoll = lua_toboolean(L, 1);
    return 1;
}


static const luaL_Reg cs_testing_funcs[] = {
    {"short_io", cs_testing_short_io},
    {"no_epoll", cs_testing_no_epoll},
    {"heapseq", cs_testing_heapseq},
    {"inject", cs_testing_inject},
    {"alloc_fail", cs_testing_alloc_fail},
    {"alloc_count", cs_testing_alloc_count},
    {"gc_stress", cs_testing_gc_stress},
    {NULL, NULL}
};

/* }====== */
#endif


/* frees the resolver and the epoll set before the event base goes
 * (created after S, so it is finalized before S) */
static int
cs_netstate__gc(lua_State *L)
{
    cs_sched_t *S = *(cs_sched_t **) lua_touserdata(L, 1);

    cs_dns_free(S);
    cs_poll_free(S);
    return 0;
}


void
cs_socket_open(lua_State *L, cs_sched_t *S)
{
    cs_sched_t **p;

    p = lua_newuserdatauv(L, sizeof(cs_sched_t *), 0);
    *p = S;
    luaL_newmetatable(L, CS_NETSTATE_MT);
    lua_pushcfunction(L, cs_netstate__gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    luaL_ref(L, LUA_REGISTRYINDEX);

    lua_pushlightuserdata(L, S);
    lua_pushcclosure(L, cs_resolve, 1);
    lua_setfield(L, -2, "resolve");
#ifdef CS_TESTING
    lua_newtable(L);
    cs_setfuncs(L, S, cs_testing_funcs);
    lua_setfield(L, -2, "_testing");
#endif
    lua_newtable(L); /* cs.socket: tcp, listen, udp */
    cs_tcp_open(L, S);
    cs_udp_open(L, S);
    lua_setfield(L, -2, "socket");
}
