/*
 * The TCP cosocket (ngx.socket.tcp's object), the listener of
 * cs.socket.listen, and the per-host connection pool.
 *
 * Every operation that would block parks the light thread with a
 * continuation (cs_sock_park); the continuation retries the I/O when the
 * fd is ready. Receive patterns run over cs_buffer (Lua-free); every
 * syscall goes through cs_net.
 *
 * The user value of a "corosched.tcp" userdata is the pool key (a
 * string); when it is "host:port", its host is sslhandshake's default
 * server name (else u->x->host is).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <lua.h>
#include <lauxlib.h>

#include "cs_buffer.h"
#include "cs_socket.h"
#include "cs_tls.h"
#include "cs_alloc.h"

#define CS_TCP_DEFAULT_TIMEOUT 60000   /* ms: OpenResty's lua_socket_*  */
#define CS_TCP_DEFAULT_MAXLINE (1024 * 1024)
#define CS_TCP_DEFAULT_POOL 30         /* lua_socket_pool_size */
#define CS_TCP_DEFAULT_IDLE 60000      /* lua_socket_keepalive_timeout */
#define CS_TCP_RECV_CHUNK 16384
#define CS_TCP_NGX_BUFFER 4096     /* lua_socket_buffer_size */
#define CS_TCP_RESERVE (1024 * 1024)    /* most a count reserves at once */
#define CS_UNTIL_MT "corosched.until"
#define CS_TCP_CLOSE_ONCE 0x80         /* in ended; not an EV_* bit */

enum { CS_RX_LINE, CS_RX_ALL, CS_RX_COUNT, CS_RX_UNTIL, CS_RX_ANY };


/*
 * What few connections use, kept out of the object so that a connection
 * that uses none of it stays small: made on first use (cs_tcp_more), freed
 * with the object.
 */
typedef struct cs_tcp_more_s {
    cs_buf_t out;       /* the result of a receive that read more than once */
    cs_until_t *ru;     /* the receiveuntil iterator in progress */
    cs_until_t *hold;   /* the last iterator that read: it may hold bytes */
    size_t rusize;
    size_t maxline;     /* 0: CS_TCP_DEFAULT_MAXLINE */
    void *tpio;         /* the transport's state (TLS) */
    struct cs_pool_s *slot; /* the pool counting this connection (backlog) */
    cs_dns_t *dns;      /* the name being resolved by connect, or NULL */
    cs_addr_t *local;   /* bind()'s address for the next connects, or NULL */
    cs_tls_conf_t *tls; /* client certificate, CA file; or NULL */
    char *host;         /* the host given to connect, when the pool key is
                         * not "host:port" (sslhandshake's server name) */
} cs_tcp_more_t;

typedef struct cs_tcp_s {
    cs_sock_t s;
    const cs_transport_t *tp; /* plain, or TLS once handshaken */
    cs_tcp_more_t *x;   /* or NULL */
    cs_buf_t in;        /* received, not yet returned */
    size_t spos;        /* bytes of the send in progress already sent */
    size_t rwant;       /* byte count, or receiveany's max */
    struct cs_pool_s *member; /* the pool it was taken from */
    int timeouts[3];    /* connect, send, read: ms, 0 = the default */
    int reused;         /* getreusedtimes() */
    int pool_size;      /* from connect's options, 0 = unset */
    short rwait, swait; /* readiness the last recv / send asked for */
    unsigned char rmode;      /* CS_RX_* of the receive in progress */
    unsigned char pooled;     /* has a pool key (connected by connect) */
    unsigned char keyhost;    /* the pool key is "host:port" */
    unsigned char wconnect;   /* s.writer is parked in connect, not send */
    unsigned char ended;      /* EV_WRITE: a send error ended the write
                               * half; CS_TCP_CLOSE_ONCE: a read error
                               * closed it, close() still says 1 */
    unsigned char aborted;    /* close() while the name was resolving */
    unsigned char eof;        /* "*a" read the peer's FIN (it stays) */
    unsigned char created;    /* connect was called, or accept made it */
} cs_tcp_t;

/* a field of u->x, or dflt while there is none */
#define CS_TCP_X(u, field, dflt) ((u)->x != NULL ? (u)->x->field : (dflt))

/* what receive has gathered (empty while there is no u->x) */
#define CS_TCP_OUT(u) ((u)->x != NULL ? &(u)->x->out : &cs_tcp_no_out)

static const cs_buf_t cs_tcp_no_out;

typedef struct cs_server_s {
    cs_sock_t s;
    int timeout;        /* accept timeout, ms, 0 = none */
    int unix_path;      /* unlink the path on close */
    char path[108];
} cs_server_t;

/*
 * The connection pool: one per key, idle connections newest first. With
 * connect's `backlog` option the pool also counts every connection opened
 * through it (`total`: connected ones and idle ones) and keeps it at most
 * `size`: further connects wait in `waiters` (at most `backlog` of them)
 * until a connection closes, as OpenResty's backlog queue.
 */
typedef struct cs_pool_s {
    cs_sched_t *S;
    cs_link_t idle;
    int nidle;
    int size;
    int total;          /* counted connections (backlog mode) */
    int nwaiting;
    cs_link_t waiters;  /* threads parked in connect for a slot */
    int nhanded;        /* idle connections handed to a waiting connect */
    int nmember;        /* connections taken from it, still open */
} cs_pool_t;

typedef struct cs_pitem_s {
    cs_link_t link;
    cs_pool_t *pool;
    cs_watch_t w;       /* EOF or unexpected data: through the epoll set, */
    struct event *ev;   /* or else a libevent event */
    cs_tnode_t tn;      /* the idle timeout */
    const cs_transport_t *tp; /* and its state: TLS stays TLS */
    void *tpio;
    int fd;
    int reused;
    int counted;        /* holds one of the pool's counted slots */
    int watched;        /* w is in the epoll set */
} cs_pitem_t;

static void cs_pool_release(cs_pool_t *p);
static void cs_tcp_kill_cleanup(cs_sched_t *S, cs_thread_t *th);

#define CS_POOL_MT "corosched.pool"



/* {====== helpers ====== */

/*
 * self, or raises. The fast path knows a TCP object by its size and its
 * transport, which points at one of two static structs of this library:
 * no other userdata holds such a pointer there (Lua code cannot write a
 * userdata's bytes), and this costs a quarter of the metatable check,
 * which was measurable per round trip. Anything else goes through
 * luaL_checkudata, for its error message.
 */
static cs_tcp_t *
cs_tcp_check(lua_State *L)
{
    cs_tcp_t *u = lua_touserdata(L, 1);

    if (u != NULL && lua_rawlen(L, 1) == sizeof(cs_tcp_t)
        && (u->tp == &cs_transport_plain || u->tp == &cs_transport_tls))
        return u; /* (a light userdata's rawlen is 0) */
    return luaL_checkudata(L, 1, CS_TCP_MT);
}


/* u->x, made if need be; NULL when memory is short */
static cs_tcp_more_t *
cs_tcp_more(cs_tcp_t *u)
{
    if (u->x == NULL && (u->x = calloc(1, sizeof(cs_tcp_more_t))) != NULL)
        cs_buf_init(&u->x->out);
    return u->x;
}


/* u->x, made if need be; raises when memory is short */
static cs_tcp_more_t *
cs_tcp_more_l(lua_State *L, cs_tcp_t *u)
{
    cs_tcp_more_t *x = cs_tcp_more(u);

    if (x == NULL)
        luaL_error(L, "not enough memory");
    return x;
}


static size_t
cs_tcp_maxline(const cs_tcp_t *u)
{
    size_t m = CS_TCP_X(u, maxline, 0);

    return m > 0 ? m : CS_TCP_DEFAULT_MAXLINE;
}


/* a number as LuaJIT's lua_tointeger makes it an int: truncated (NaN 0),
 * here clamped to the int range */
static int
cs_tcp_toint(lua_Number d)
{
    if (!(d == d))
        return 0;
    if (d >= 2147483647.0)
        return 2147483647;
    if (d <= -2147483648.0)
        return -2147483647 - 1;
    return (int) d;
}


static int
cs_tcp_timeout(const cs_tcp_t *u, int which)
{
    int t = u->timeouts[which];

    return t > 0 ? t : CS_TCP_DEFAULT_TIMEOUT;
}


/* connect is in progress: resolving the name or waiting for the peer */
static int
cs_tcp_connecting(const cs_tcp_t *u)
{
    return CS_TCP_X(u, dns, NULL) != NULL
           || (u->s.writer != NULL && u->wconnect);
}


/*
 * OpenResty's state checks, in its order, before an operation that reads
 * (what & EV_READ), writes (EV_WRITE) or both: "closed", then "socket
 * busy connecting/reading/writing". 0, or 2 with nil, err pushed. Unlike
 * OpenResty, the callers check their arguments first: a wrong argument
 * raises even on a closed socket (API.md: programmer errors raise).
 */
static int
cs_tcp_check_state(lua_State *L, const cs_tcp_t *u, short what)
{
    if (u->s.fd < 0 /* resolving the name counts as closed, as there */
        || (what & u->ended) != 0)
        return cs_sock_fail(L, "closed");
    if (cs_tcp_connecting(u))
        return cs_sock_fail(L, "socket busy connecting");
    if ((what & EV_READ) && u->s.reader != NULL)
        return cs_sock_fail(L, "socket busy reading");
    if ((what & EV_WRITE) && u->s.writer != NULL)
        return cs_sock_fail(L, "socket busy writing");
    return 0;
}


/* the connection ends (closed or pooled): no reader of the next one takes
 * back the bytes of a partial match the last iterator holds. The iterator
 * keeps them, and goes on with them if it is called on the next
 * connection, as in lua-nginx-module (its compiled pattern outlives the
 * upstream; recorded in spec/59) */
static void
cs_tcp_drop_hold(cs_tcp_t *u)
{
    if (u->x != NULL)
        u->x->hold = NULL;
}


/* a connection taken from a pool keeps it alive until it closes or goes
 * back (OpenResty counts it in the pool's connections) */
static void
cs_tcp_leave_pool(cs_tcp_t *u)
{
    if (u->member != NULL)
        u->member->nmember--;
    u->member = NULL;
}


static void
cs_tcp_close_conn(cs_tcp_t *u)
{
    cs_tcp_more_t *x = u->x;

    if (x != NULL && x->slot != NULL) {
        cs_pool_t *slot = x->slot;
        x->slot = NULL;
        cs_pool_release(slot);
    }
    cs_tcp_leave_pool(u);
    /* a close_notify goes out first */
    u->tp->free(CS_TCP_X(u, tpio, NULL), u->s.fd);
    u->tp = &cs_transport_plain;
    if (x != NULL) {
        x->tpio = NULL;
        cs_buf_free(&x->out);
    }
    cs_sock_close(&u->s);
    cs_buf_free(&u->in);
    cs_tcp_drop_hold(u);
    u->reused = 0;
    u->ended = 0;
}


/*
 * A send error or a send timeout ends the write half, as OpenResty's
 * finalize_write_part: receives go on, sends say "closed", setkeepalive
 * refuses the connection, close() closes it and says 1.
 */
static void
cs_tcp_write_failed(cs_tcp_t *u)
{
    u->ended |= EV_WRITE;
}


/*
 * A read error other than a timeout closes the connection, as
 * lua-nginx-module's README says receive does ("for other connection
 * errors, this method always automatically closes the connection"), so a
 * send after it says "closed" (API.md; OpenResty 0.10.x ends only the read
 * half and lets a send go out). close() then still says 1, once, as
 * OpenResty's does there -- unless a send error had ended the write half
 * already: with both halves gone it says "closed".
 */
static void
cs_tcp_read_failed(cs_tcp_t *u)
{
    int wended = (u->ended & EV_WRITE) != 0;

    cs_tcp_close_conn(u);
    if (!wended)
        u->ended = CS_TCP_CLOSE_ONCE;
}


/* [-0, +1, m] a new closed TCP object */
static cs_tcp_t *
cs_tcp_new(lua_State *L, cs_sched_t *S)
{
    cs_tcp_t *u = lua_newuserdatauv(L, sizeof(cs_tcp_t), 1);

    memset(u, 0, sizeof(*u));
    u->s.S = S;
    u->s.fd = -1;
    u->tp = &cs_transport_plain;
    luaL_setmetatable(L, CS_TCP_MT);
    return u;
}


/* a receive ended: no buffer is kept that holds nothing */
static void
cs_tcp_rx_clear(cs_tcp_t *u)
{
    if (u->x != NULL) {
        cs_buf_free(&u->x->out);
        u->x->ru = NULL;
    }
    if (cs_buf_len(&u->in) == 0)
        cs_buf_free(&u->in);
}


/* [-0, +3, m] nil, err, partial (always a string, "" for receiveany, as
 * OpenResty's receive_retval_handler pushes it) */
static int
cs_tcp_rx_fail(lua_State *L, cs_tcp_t *u, const char *err, int close)
{
    const cs_buf_t *out = CS_TCP_OUT(u);

    lua_pushnil(L);
    lua_pushstring(L, err);
    /* after a timeout the iterator keeps its partial match (u->x->hold):
     * called again, it goes on with it; another reader first takes those
     * bytes back (cs_tcp_rx_start), as lua-nginx-module 0.10.25 and later
     * do (0.10.23, recorded in spec/59, leaves them with the iterator).
     * Other errors end the stream: its pending data goes to partial, the
     * bytes of a partial match are dropped (OpenResty) */
    if (u->rmode == CS_RX_UNTIL && CS_TCP_X(u, ru, NULL) != NULL
        && strcmp(err, "timeout") != 0) {
        cs_until_drop_match(u->x->ru);
        cs_until_flush(u->x->ru, &u->x->out);
    }
    lua_pushlstring(L, cs_buf_len(out) ? cs_buf_ptr(out) : "",
                    cs_buf_len(out));
    cs_tcp_rx_clear(u);
    if (close)
        cs_tcp_read_failed(u);
    return 3;
}


/*
 * Reads what the kernel has: > 0, CS_AGAIN, CS_CLOSED, CS_ERROR (errno).
 * With bytes buffered, into u->in. With none, into stack (CS_TCP_RECV_CHUNK
 * bytes of the caller's), described by *view: the caller takes the result
 * from there when it is whole (cs_tcp_rx_direct) and keeps the rest in
 * u->in, so a socket between two receives holds no buffer, and a reply
 * read in one piece is copied once, into its Lua string.
 */
static ssize_t
cs_tcp_fill(cs_tcp_t *u, char *stack, cs_buf_t *view)
{
    size_t room = CS_TCP_RECV_CHUNK;
    ssize_t n;
    char *p;

    cs_buf_init(view);
    if (!u->s.rready && u->tp->kernel_buffered) {
        u->rwait = EV_READ;
        return CS_AGAIN; /* drained, and no edge since: park */
    }
    if (u->rmode == CS_RX_COUNT && cs_buf_len(&u->in) == 0
        && u->rwant - cs_buf_len(CS_TCP_OUT(u)) >= CS_TCP_RECV_CHUNK) {
        /* a large count: straight into the result, allocated once at its
         * size (up to CS_TCP_RESERVE) rather than doubled step by step */
        room = u->rwant - cs_buf_len(CS_TCP_OUT(u));
        if (room > CS_TCP_RESERVE)
            room = CS_TCP_RESERVE;
        if (cs_tcp_more(u) == NULL
            || (p = cs_buf_prepare(&u->x->out, room)) == NULL) {
            errno = ENOMEM;
            return CS_ERROR;
        }
        n = u->tp->recv(u->x->tpio, u->s.fd, p, room, &u->rwait);
        if (n > 0)
            cs_buf_commit(&u->x->out, (size_t) n);
    } else if (cs_buf_len(&u->in) > 0) {
        /* small reads while little is buffered: no 16 KiB buffers
         * allocated and freed for every partial line (fragmentation) */
        room = cs_buf_len(&u->in) < 4096 ? 4096 : CS_TCP_RECV_CHUNK;
        p = cs_buf_prepare(&u->in, room);
        if (p == NULL) {
            errno = ENOMEM;
            return CS_ERROR;
        }
        n = u->tp->recv(CS_TCP_X(u, tpio, NULL), u->s.fd, p, room,
                        &u->rwait);
        if (n > 0)
            cs_buf_commit(&u->in, (size_t) n);
    } else {
        /* one read of OpenResty's buffer size at most (its
         * lua_socket_buffer_size, one page by default): what a receive
         * leaves buffered, and so what a receiveany returns next, is what
         * it would be there; the rest stays in the kernel. "*a" keeps
         * nothing: it reads more at once. */
        if (u->rmode != CS_RX_ALL)
            room = CS_TCP_NGX_BUFFER;
        n = u->tp->recv(CS_TCP_X(u, tpio, NULL), u->s.fd, stack, room,
                        &u->rwait);
        if (n > 0) {
            view->data = stack;
            view->end = (size_t) n;
            view->cap = room;
        }
    }
    /* drained: the next edge sets rready again. A short read drained the
     * kernel's buffer too, unless the FIN, a reset or an error came under
     * the same edge (s.rdhup): then the next read must still run to see
     * it. Only our epoll set reports those with the data; libevent's
     * events do not always (a reset is EV_READ alone, and kqueue has no
     * EV_CLOSED), so there a short read proves nothing. */
    if (n == CS_AGAIN
        || (n > 0 && (size_t) n < room && u->s.polled && !u->s.rdhup))
        u->s.rready = 0;
    if (n > 0 && u->s.cross) /* a TLS send waiting for this read's data */
        cs_sock_moved(&u->s, EV_READ);
    return n;
}

/* }====== */


/* {====== receive ====== */

/* one step of the pattern over what is buffered (CS_ERROR: no memory) */
static int
cs_tcp_rx_step(cs_tcp_t *u)
{
    cs_tcp_more_t *x = cs_tcp_more(u); /* the result goes to x->out */
    size_t n;

    if (x == NULL)
        return CS_ERROR;
    switch (u->rmode) {
    case CS_RX_LINE:
        return cs_pat_line(&u->in, &x->out, cs_tcp_maxline(u));
    case CS_RX_COUNT:
        return cs_pat_count(&u->in, &x->out, u->rwant);
    case CS_RX_UNTIL:
        return cs_until_run(x->ru, &u->in, &x->out, x->rusize,
                            x->rusize ? 0 : cs_tcp_maxline(u));
    case CS_RX_ANY:
        n = cs_buf_len(&u->in);
        if (n == 0)
            return CS_AGAIN;
        return cs_pat_count(&u->in, &x->out, n < u->rwant ? n : u->rwant);
    default: /* CS_RX_ALL */
        n = cs_buf_len(&u->in);
        if (n > 0) {
            if (cs_buf_append(&x->out, cs_buf_ptr(&u->in), n) != CS_OK)
                return CS_ERROR;
            cs_buf_consume(&u->in, n);
        }
        return CS_AGAIN;
    }
}


static int
cs_tcp_rx_done(lua_State *L, cs_tcp_t *u)
{
    const cs_buf_t *out = CS_TCP_OUT(u);

    lua_pushlstring(L, cs_buf_len(out) ? cs_buf_ptr(out) : "",
                    cs_buf_len(out));
    cs_tcp_rx_clear(u);
    return 1;
}


/*
 * The common case, without u->x->out: nothing of the result is gathered yet
 * and all of it is at the front of b (u->in, or what was just read): it is
 * pushed from there and consumed. 1, or 0 for the general path (the
 * receiveuntil and "*a" modes, a line with a CR before its end or longer
 * than maxline, not enough bytes).
 */
static int
cs_tcp_rx_direct(lua_State *L, cs_tcp_t *u, cs_buf_t *b)
{
    size_t n = cs_buf_len(b), k, len;
    const char *p = cs_buf_ptr(b), *lf, *cr;

    if (n == 0 || cs_buf_len(CS_TCP_OUT(u)) > 0)
        return 0;
    switch (u->rmode) {
    case CS_RX_COUNT:
        if (n < u->rwant)
            return 0;
        k = len = u->rwant;
        break;
    case CS_RX_ANY:
        k = len = n < u->rwant ? n : u->rwant;
        break;
    case CS_RX_LINE:
        if ((lf = memchr(p, '\n', n)) == NULL)
            return 0;
        k = (size_t) (lf - p) + 1;
        len = k - 1;
        cr = memchr(p, '\r', len);
        if (cr != NULL) { /* only a CR right before the LF */
            if (cr != lf - 1)
                return 0;
            len--;
        }
        if (len > cs_tcp_maxline(u))
            return 0;
        break;
    default:
        return 0;
    }
    lua_pushlstring(L, p, len);
    cs_buf_consume(b, k);
    return 1;
}


static int
cs_tcp_receive_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = (cs_tcp_t *) ctx;
    cs_thread_t *th = u->s.S->cur;
    char stack[CS_TCP_RECV_CHUNK];
    cs_buf_t view;
    ssize_t n;
    int rc;

    if (status == LUA_YIELD) {
        cs_sock_resumed(&u->s, th);
        if (th->wake == CS_SOCK_TIMEOUT)
            return cs_tcp_rx_fail(L, u, "timeout", 0);
        if (th->wake == CS_SOCK_CLOSED || u->s.fd < 0)
            return cs_tcp_rx_fail(L, u, "closed", 0);
    }

    for (;;) {
        /* nothing buffered and nothing gathered: the patterns would only
         * say CS_AGAIN, except an iterator (it may hold bytes) */
        if (cs_buf_len(&u->in) == 0 && cs_buf_len(CS_TCP_OUT(u)) == 0
            && u->rmode != CS_RX_UNTIL)
            goto fill;
        if (cs_tcp_rx_direct(L, u, &u->in)) {
            cs_tcp_rx_clear(u);
            return 1;
        }
        rc = cs_tcp_rx_step(u);
        switch (rc) {
        case CS_OK:
            return cs_tcp_rx_done(L, u);
        case CS_CLOSED: /* a sized receiveuntil reached the pattern */
            u->x->ru = NULL;
            lua_pushnil(L);
            lua_pushnil(L);
            lua_pushnil(L);
            return 3;
        case CS_LIMIT:
            return cs_tcp_rx_fail(L, u, "line too long", 1);
        case CS_ERROR:
            return cs_tcp_rx_fail(L, u, "no memory", 1);
        default:
            break;
        }

    fill:
        n = cs_tcp_fill(u, stack, &view);
        if (n > 0) {
            int whole = cs_tcp_rx_direct(L, u, &view);
            /* what the result did not take stays for the next receive */
            if (cs_buf_len(&view) > 0
                && cs_buf_append(&u->in, cs_buf_ptr(&view),
                                 cs_buf_len(&view)) != CS_OK) {
                if (whole)
                    lua_pop(L, 1);
                return cs_tcp_rx_fail(L, u, "no memory", 1);
            }
            if (whole) {
                cs_tcp_rx_clear(u);
                return 1;
            }
            continue;
        }
        if (n == CS_AGAIN)
            return cs_sock_park_with(L, &u->s, th, EV_READ, u->rwait,
                                     cs_tcp_timeout(u, 2), "socket read",
                                     cs_tcp_kill_cleanup, ctx,
                                     cs_tcp_receive_k);
        if (n == CS_CLOSED) {
            if (u->rmode == CS_RX_ALL) { /* "*a" ends at the FIN; as in
                                          * OpenResty the socket stays
                                          * (the peer may only have shut
                                          * its sending half) */
                u->eof = 1;
                return cs_tcp_rx_done(L, u);
            }
            return cs_tcp_rx_fail(L, u, "closed", 1);
        }
        /* ENOMEM: a buffer of ours could not grow (or the kernel had no
         * memory for the read) */
        return cs_tcp_rx_fail(L, u,
                              errno == ENOMEM ? "no memory"
                                              : cs_net_strerror(errno),
                              1);
    }
}


/* starts a receive of mode (the checks are done): parks or returns */
static int
cs_tcp_rx_start(lua_State *L, cs_tcp_t *u, int mode)
{
    cs_tcp_more_t *x = u->x;
    /* (an iterator made u->x) */
    cs_until_t *reader = mode == CS_RX_UNTIL && x != NULL ? x->ru : NULL;

    u->rmode = mode;
    if (x != NULL) {
        cs_buf_reset(&x->out);
        /* another reader: the bytes the last iterator held, after a call
         * with a size or a timeout, are its input (lua-nginx-module's
         * read_prepare, 0.10.25 and later) */
        if (x->hold != NULL && x->hold != reader
            && cs_until_unread(x->hold, &u->in) != CS_OK)
            return cs_tcp_rx_fail(L, u, "no memory", 1);
        x->hold = reader;
    }
    return cs_tcp_receive_k(L, LUA_OK, (lua_KContext) u);
}


/* sock:receive([pattern]) */
static int
cs_tcp_receive(lua_State *L)
{
    cs_tcp_t *u;
    int nret, mode = CS_RX_LINE;
    lua_Integer want = 0;
    const char *p;
    size_t len;

    /* as in OpenResty, the count is checked before the object */
    if (lua_gettop(L) < 1 || lua_gettop(L) > 2)
        return luaL_error(L, "expecting 1 or 2 arguments (including the "
                             "object), but got %d", lua_gettop(L));
    u = cs_tcp_check(L);
    /* wrong arguments raise whatever the state of the socket (OpenResty
     * says "closed" first: API.md, programmer errors raise) */
    switch (lua_type(L, 2)) {
    case LUA_TNONE:
    case LUA_TNIL:
        break;
    case LUA_TNUMBER: /* a float is truncated, as in OpenResty */
        want = cs_sock_int_arg(L, 2);
        mode = CS_RX_COUNT;
        break;
    case LUA_TSTRING: /* OpenResty's checks and messages (spec/59) */
        p = lua_tolstring(L, 2, &len);
        if ((len == 2 && p[0] == '*' && p[1] == 'l')
            || (len == 1 && p[0] == 'l')) { /* "l", "a": API.md */
            mode = CS_RX_LINE;
        } else if ((len == 2 && p[0] == '*' && p[1] == 'a')
                   || (len == 1 && p[0] == 'a')) {
            mode = CS_RX_ALL;
        } else if (len == 2 && p[0] == '*') { /* another "*x" */
            return luaL_argerror(L, 2, "bad pattern argument");
        } else if (lua_stringtonumber(L, p) == len + 1) { /* all of it */
            want = cs_sock_int_arg(L, -1);
            mode = CS_RX_COUNT;
        } else {
            return luaL_argerror(L, 2, lua_pushfstring(L, "bad pattern "
                                                          "argument: %s", p));
        }
        break;
    default:
        return luaL_argerror(L, 2, "bad pattern argument");
    }
    if (mode == CS_RX_COUNT && want < 0)
        return luaL_argerror(L, 2, "bad pattern argument");
    /* (the results go on top of the arguments: no lua_settop, measurable
     * per round trip) */
    cs_sched_current(u->s.S, L, "receive"); /* raises outside a thread */
    if ((nret = cs_tcp_check_state(L, u, EV_READ)) != 0)
        return nret;

    if (mode == CS_RX_COUNT && want == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    u->rwant = (size_t) want;
    return cs_tcp_rx_start(L, u, mode);
}


/* sock:receiveany(max) */
static int
cs_tcp_receiveany(lua_State *L)
{
    cs_tcp_t *u;
    lua_Number max;
    int nret;

    /* OpenResty's checks and messages (a float max is truncated) */
    if (lua_gettop(L) != 2)
        return cs_sock_argc(L, 2);
    u = cs_tcp_check(L);
    max = lua_tonumber(L, 2);
    luaL_argcheck(L, lua_isnumber(L, 2) && max >= 1, 2, "bad max argument");
    if (max > CS_TCP_RESERVE)
        max = CS_TCP_RESERVE; /* no more is ever buffered by one read */
    cs_sched_current(u->s.S, L, "receive");
    if ((nret = cs_tcp_check_state(L, u, EV_READ)) != 0)
        return nret;
    u->rwant = (size_t) max;
    return cs_tcp_rx_start(L, u, CS_RX_ANY);
}


/* the userdata of a receiveuntil iterator's matcher */
typedef struct cs_tcp_until_s {
    cs_until_t m;       /* first */
    cs_tcp_t *sock;     /* the iterator's socket (its upvalue too) */
} cs_tcp_until_t;


static int
cs_until__gc(lua_State *L)
{
    cs_tcp_until_t *w = lua_touserdata(L, 1);

    /* the socket's memory outlives this: it is an upvalue of the same
     * iterator, freed after this finalizer at the earliest. The bytes of a
     * partial match the iterator held go with it, as in lua-nginx-module
     * (they live in its compiled pattern; recorded in spec/59) */
    if (w->sock != NULL && CS_TCP_X(w->sock, hold, NULL) == &w->m)
        w->sock->x->hold = NULL;
    cs_until_free(&w->m);
    return 0;
}


/* the iterator of receiveuntil: upvalues S, sock, matcher */
static int
cs_tcp_until_iter(lua_State *L)
{
    cs_tcp_t *u = lua_touserdata(L, lua_upvalueindex(2));
    cs_until_t *m = &((cs_tcp_until_t *) lua_touserdata(L,
                                               lua_upvalueindex(3)))->m;
    lua_Integer size = 0;
    int nret, n = lua_gettop(L);

    /* OpenResty's checks: one size at most, a number (nil raises too), a
     * float truncated, what is not above 0 meaning no size */
    if (n > 1)
        return luaL_error(L, "expecting 0 or 1 arguments, but seen %d", n);
    if (n == 1)
        size = cs_sock_check_int(L, 1);
    lua_settop(L, 0);
    cs_sched_current(u->s.S, L, "receive");
    if ((nret = cs_tcp_check_state(L, u, EV_READ)) != 0)
        return nret;
    cs_tcp_more_l(L, u)->ru = m;
    u->x->rusize = size > 0 ? (size_t) size : 0;
    return cs_tcp_rx_start(L, u, CS_RX_UNTIL);
}


/* sock:receiveuntil(pattern [, {inclusive = bool}]) */
static int
cs_tcp_receiveuntil(lua_State *L)
{
    size_t len;
    const char *pat;
    int inclusive = 0;
    cs_tcp_until_t *w;
    cs_tcp_t *u;

    if (lua_gettop(L) != 2 && lua_gettop(L) != 3)
        return luaL_error(L, "expecting 2 or 3 arguments (including the "
                             "object), but got %d", lua_gettop(L));
    u = cs_tcp_check(L);
    pat = luaL_checklstring(L, 2, &len);
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        lua_getfield(L, 3, "inclusive");
        if (!lua_isnil(L, -1)) {
            if (!lua_isboolean(L, -1))
                return luaL_error(L, "bad \"inclusive\" option value type: "
                                     "%s", luaL_typename(L, -1));
            inclusive = lua_toboolean(L, -1);
        }
        lua_pop(L, 1);
    }
    if (len == 0)
        return cs_sock_fail(L, "pattern is empty");

    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    w = lua_newuserdatauv(L, sizeof(cs_tcp_until_t), 0);
    memset(w, 0, sizeof(*w));
    if (cs_until_init(&w->m, pat, len, inclusive) != CS_OK)
        return luaL_error(L, "not enough memory");
    w->sock = u;
    luaL_setmetatable(L, CS_UNTIL_MT);
    lua_pushcclosure(L, cs_tcp_until_iter, 3);
    return 1;
}

/* }====== */


/* {====== send ====== */

/*
 * send(table): OpenResty's ngx_http_lua_calc_strlen_in_table (strict) and
 * ngx_http_lua_copy_str_in_table. Two passes over the same table (no Lua
 * code runs in between: raw access, no metamethods): the length, then the
 * copy straight into a buffer of that size, so no luaL_Buffer operation
 * meets the values pushed while walking the nested tables.
 */

/* the largest key of the array table at idx; raises for any other key */
static lua_Integer
cs_tcp_array_max(lua_State *L, int idx)
{
    lua_Integer max = 0, k;
    int isint;

    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        isint = 0;
        k = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint)
                                            : 0;
        if (!isint || k < 1) {
            lua_pop(L, 1);
            luaL_argerror(L, 2, "non-array table found");
        }
        if (k > max)
            max = k;
    }
    return max;
}


/* [-0, +0, v] the length of the data at idx: a string, a number or an
 * array of them (nested); raises for anything else */
static size_t
cs_tcp_data_len(lua_State *L, int idx, int depth)
{
    lua_Integer i, n;
    size_t len, total = 0;

    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
    case LUA_TNUMBER: /* an element: idx is a copy (lua_rawgeti) */
        cs_sock_tolstring(L, idx, 1, &len);
        return len;
    case LUA_TTABLE:
        if (depth > 100)
            luaL_argerror(L, 2, "tables nested too deeply");
        luaL_checkstack(L, 4, "tables nested too deeply");
        n = cs_tcp_array_max(L, idx);
        for (i = 1; i <= n; i++) {
            lua_rawgeti(L, idx, i);
            len = cs_tcp_data_len(L, lua_gettop(L), depth + 1);
            if (len > (size_t) -1 - total)
                luaL_argerror(L, 2, "data too large");
            total += len;
            lua_pop(L, 1);
        }
        return total;
    default:
        luaL_argerror(L, 2, lua_pushfstring(L, "bad data type %s found",
                                            luaL_typename(L, idx)));
        return 0;
    }
}


/* copies what cs_tcp_data_len measured to p; returns its end */
static char *
cs_tcp_data_copy(lua_State *L, int idx, char *p)
{
    lua_Integer i, n;
    const char *s;
    size_t len;

    if (lua_type(L, idx) != LUA_TTABLE) {
        s = cs_sock_tolstring(L, idx, 1, &len);
        memcpy(p, s, len);
        return p + len;
    }
    n = cs_tcp_array_max(L, idx);
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        p = cs_tcp_data_copy(L, lua_gettop(L), p);
        lua_pop(L, 1);
    }
    return p;
}


static int
cs_tcp_send_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = (cs_tcp_t *) ctx;
    cs_thread_t *th = u->s.S->cur;
    size_t len;
    const char *p = lua_tolstring(L, 2, &len);
    ssize_t n;

    if (status == LUA_YIELD) {
        cs_sock_resumed(&u->s, th);
        if (th->wake == CS_SOCK_TIMEOUT) {
            cs_tcp_write_failed(u);
            return cs_sock_fail(L, "timeout");
        }
        if (th->wake == CS_SOCK_CLOSED || u->s.fd < 0)
            return cs_sock_fail(L, "closed");
    }
    while (u->spos < len) {
        n = u->tp->send(CS_TCP_X(u, tpio, NULL), u->s.fd, p + u->spos,
                        len - u->spos, &u->swait);
        if (n > 0) {
            u->spos += (size_t) n;
            if (u->s.cross) /* a TLS receive waiting to write */
                cs_sock_moved(&u->s, EV_WRITE);
            continue;
        }
        if (n == CS_AGAIN)
            return cs_sock_park_with(L, &u->s, th, EV_WRITE, u->swait,
                                     cs_tcp_timeout(u, 1), "socket write",
                                     cs_tcp_kill_cleanup, ctx,
                                     cs_tcp_send_k);
        n = errno;
        cs_tcp_write_failed(u);
        return cs_sock_fail(L, cs_net_strerror((int) n));
    }
    lua_pushinteger(L, (lua_Integer) len);
    return 1;
}


/* sock:send(data) -> bytes sent | nil, err */
static int
cs_tcp_send(lua_State *L)
{
    cs_tcp_t *u;
    luaL_Buffer b;
    size_t len;
    int nret;

    if (lua_gettop(L) != 2)
        return cs_sock_argc(L, 2);
    u = cs_tcp_check(L);
    switch (lua_type(L, 2)) { /* wrong data raises, whatever the state */
    case LUA_TSTRING:
        break;
    case LUA_TNUMBER:
        (void) cs_sock_tolstring(L, 2, 1, NULL);
        break;
    case LUA_TNIL: /* OpenResty sends the words */
    case LUA_TBOOLEAN:
        (void) luaL_tolstring(L, 2, NULL);
        lua_replace(L, 2);
        break;
    case LUA_TTABLE: /* flattened now: the caller may change it at once */
        lua_settop(L, 2);
        len = cs_tcp_data_len(L, 2, 0);
        cs_tcp_data_copy(L, 2, luaL_buffinitsize(L, &b, len));
        luaL_pushresultsize(&b, len);
        lua_replace(L, 2);
        break;
    default:
        return luaL_typeerror(L, 2, "string, number, boolean, nil, or array "
                                    "table");
    }
    /* (each case leaves the data at 2, the top) */
    cs_sched_current(u->s.S, L, "send"); /* raises outside a thread */
    if ((nret = cs_tcp_check_state(L, u, EV_WRITE)) != 0)
        return nret;
    u->spos = 0;
    u->wconnect = 0;
    return cs_tcp_send_k(L, LUA_OK, (lua_KContext) u);
}

/* }====== */


/* {====== the connection pool ====== */

/* the wake code of a waiting connect handed an idle connection (in
 * th->data) by cs_pool_hand */
#define CS_POOL_HANDED (CS_WAKE_CLOSED + 1)

/* takes an idle connection out of its pool's list; its timeout and its
 * libevent watch end (an epoll watch goes with the fd: cs_pool_adopt, or
 * cs_pool_item_drop) */
static void
cs_pool_item_unlink(cs_pitem_t *it)
{
    cs_link_remove(&it->link);
    it->pool->nidle--;
    cs_sched_heap_del(it->pool->S, &it->tn);
    if (it->ev != NULL) {
        event_free(it->ev);
        it->ev = NULL;
    }
}


/* frees an unlinked item; close_fd: closes the connection too, and gives
 * its slot back */
static void
cs_pool_item_drop(cs_pitem_t *it, int close_fd)
{
    cs_pool_t *p = it->pool;

    if (close_fd) {
        if (it->watched)
            cs_poll_unwatch(p->S, it->fd);
        it->tp->free(it->tpio, it->fd);
        cs_net_close(it->fd);
        p->S->nsockets--;
        if (it->counted)
            cs_pool_release(p);
    }
    free(it);
}


static void
cs_pool_item_free(cs_pitem_t *it, int close_fd)
{
    cs_pool_item_unlink(it);
    cs_pool_item_drop(it, close_fd);
}


static void cs_pool_unreserve(cs_sched_t *S, cs_thread_t *th);

/* gives free slots to waiting connects, in arrival order */
static void
cs_pool_grant(cs_pool_t *p)
{
    while (p->total < p->size && !cs_link_empty(&p->waiters)) {
        cs_thread_t *th = cs_link_data(p->waiters.next, cs_thread_t, q);
        cs_link_remove(&th->q);
        p->nwaiting--;
        p->total++; /* reserved for th */
        cs_sched_wake(p->S, th, CS_WAKE_OK);
        th->cleanup = cs_pool_unreserve; /* until it runs */
        th->data = p;
    }
}


/* a counted connection is gone */
static void
cs_pool_release(cs_pool_t *p)
{
    p->total--;
    cs_pool_grant(p);
}


/* a connect handed an idle connection was killed before it ran */
static void
cs_pool_unhand(cs_sched_t *S, cs_thread_t *th)
{
    cs_pitem_t *it = th->data;

    (void) S;
    it->pool->nhanded--;
    cs_pool_item_drop(it, 1);
}


/* gives idle connections to waiting connects, in arrival order (as
 * OpenResty's setkeepalive resumes the first waiting connect, which then
 * takes the connection from the pool) */
static void
cs_pool_hand(cs_pool_t *p)
{
    while (!cs_link_empty(&p->idle) && !cs_link_empty(&p->waiters)) {
        cs_thread_t *th = cs_link_data(p->waiters.next, cs_thread_t, q);
        cs_pitem_t *it = cs_link_data(p->idle.next, cs_pitem_t, link);

        cs_link_remove(&th->q);
        p->nwaiting--;
        cs_pool_item_unlink(it);
        if (it->watched) { /* nothing may reach it until adopted */
            cs_poll_unwatch(p->S, it->fd);
            it->watched = 0;
        }
        p->nhanded++;
        cs_sched_wake(p->S, th, CS_POOL_HANDED);
        th->cleanup = cs_pool_unhand; /* until it runs */
        th->data = it;
    }
}


/* a connect woken for a slot was killed before it ran */
static void
cs_pool_unreserve(cs_sched_t *S, cs_thread_t *th)
{
    (void) S;
    cs_pool_release(th->data);
}


/* a waiting connect was killed */
static void
cs_pool_waiter_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    (void) S;
    cs_link_remove(&th->q);
    ((cs_pool_t *) th->data)->nwaiting--;
}


/* a waiting connect timed out */
static void
cs_pool_waiter_timeout(cs_sched_t *S, cs_tnode_t *n)
{
    cs_thread_t *th = cs_link_data(n, cs_thread_t, tn);

    cs_pool_waiter_cleanup(S, th);
    cs_sched_wake(S, th, CS_WAKE_TIMEOUT);
}


/* an idle connection saw EOF or data nobody asked for: it goes; or a TLS
 * session ticket (consumed: it stays) */
static void
cs_pool_item_ready(cs_pitem_t *it)
{
    if (it->tp->idle(it->tpio, it->fd) == CS_OK) {
        if (it->ev != NULL) /* one-shot */
            event_add(it->ev, NULL);
        return;
    }
    cs_pool_item_free(it, 1);
}


static void
cs_pool_item_cb(evutil_socket_t fd, short what, void *arg)
{
    (void) fd;
    (void) what;
    cs_pool_item_ready(arg);
}


static void
cs_pool_item_watch_cb(cs_watch_t *w)
{
    cs_pool_item_ready(cs_link_data(w, cs_pitem_t, w));
}


/* the idle timeout */
static void
cs_pool_item_timeout(cs_sched_t *S, cs_tnode_t *n)
{
    (void) S;
    cs_pool_item_free(cs_link_data(n, cs_pitem_t, tn), 1);
}


static int
cs_pool__gc(lua_State *L)
{
    cs_pool_t *p = lua_touserdata(L, 1);

    while (!cs_link_empty(&p->idle))
        cs_pool_item_free(cs_link_data(p->idle.next, cs_pitem_t, link), 1);
    return 0;
}


/*
 * Nothing refers to p: no idle, counted, waiting or handed connection.
 * OpenResty frees a pool when its last connection goes; such a pool is as
 * good as gone here: the next one to use its key gives it its size, and
 * the sweep drops it.
 */
static int
cs_pool_unused(const cs_pool_t *p)
{
    return p->nidle == 0 && p->total == 0 && p->nwaiting == 0
           && p->nhanded == 0 && p->nmember == 0;
}


/* [-0, +0, -] drops the unused pools from the pools table at t */
static void
cs_pool_sweep(lua_State *L, cs_sched_t *S, int t)
{
    int live = 0;

    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        const cs_pool_t *p = lua_touserdata(L, -1);

        lua_pop(L, 1);
        if (cs_pool_unused(p)) { /* clearing a field is allowed here */
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, t);
        } else {
            live++;
        }
    }
    S->npools = live;
    S->pools_sweep = live > 32 ? 2 * live : 64;
}


/* [-0, +0, m] the pool of key at idx, created with size if missing (or
 * given size if unused); size 0: only looks it up */
static cs_pool_t *
cs_pool_get(lua_State *L, cs_sched_t *S, int key, int size)
{
    cs_pool_t *p;

    key = lua_absindex(L, key);
    lua_rawgeti(L, LUA_REGISTRYINDEX, S->pools_ref);
    lua_pushvalue(L, key);
    if (lua_rawget(L, -2) != LUA_TNIL) {
        p = lua_touserdata(L, -1);
        lua_pop(L, 2);
        if (size > 0 && cs_pool_unused(p))
            p->size = size;
        return p;
    }
    lua_pop(L, 1);
    if (size <= 0) {
        lua_pop(L, 1);
        return NULL;
    }
    if (S->npools >= S->pools_sweep) /* their number doubled */
        cs_pool_sweep(L, S, lua_gettop(L));
    S->npools++;
    p = lua_newuserdatauv(L, sizeof(cs_pool_t), 0);
    memset(p, 0, sizeof(*p));
    p->S = S;
    cs_link_init(&p->idle);
    cs_link_init(&p->waiters);
    p->size = size;
    luaL_setmetatable(L, CS_POOL_MT);
    lua_pushvalue(L, key);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_pop(L, 2);
    return p;
}


/* u adopts the unlinked idle connection it of pool p; u->x is there if it
 * holds a slot or a transport state (cs_tcp_more_l, before the unlink) */
static void
cs_pool_adopt(cs_tcp_t *u, cs_pool_t *p, cs_pitem_t *it)
{
    int fd = it->fd, reused = it->reused, watched = it->watched;

    if (it->counted && u->x->slot == NULL)
        u->x->slot = p; /* its slot comes along */
    else if (it->counted)
        cs_pool_release(p); /* u already holds one */
    u->tp = it->tp;
    if (it->tpio != NULL)
        u->x->tpio = it->tpio;
    cs_pool_item_drop(it, 0);
    u->s.S->nsockets--; /* cs_sock_attach counts it again */
    cs_sock_attach(&u->s, u->s.S, fd);
    if (watched)
        cs_poll_rewatch(&u->s); /* the registration comes back */
    u->reused = reused;
    u->member = p;
    p->nmember++;
}


/* an idle connection of the pool keyed at idx, adopted by u: 1 or 0 */
static int
cs_pool_take(lua_State *L, cs_tcp_t *u, int key)
{
    cs_pool_t *p = cs_pool_get(L, u->s.S, key, 0);
    cs_pitem_t *it;

    if (p == NULL || cs_link_empty(&p->idle))
        return 0;
    it = cs_link_data(p->idle.next, cs_pitem_t, link);
    if (it->counted || it->tpio != NULL)
        (void) cs_tcp_more_l(L, u);
    cs_pool_item_unlink(it);
    cs_pool_adopt(u, p, it);
    return 1;
}

/* }====== */


/* {====== connect ====== */

/*
 * An operation killed while it waits (a connect for the peer, a
 * handshake, a receive, a send): as any kill, the operation is cancelled
 * and the socket closed as close() closes it, so the pool slot it holds
 * (backlog mode) goes to the next waiting connect at once, and its pool
 * counts it no longer (OpenResty: ngx_http_lua_coctx_cleanup, then
 * ngx_http_lua_socket_tcp_finalize).
 */
static void
cs_tcp_kill_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_tcp_t *u = th->data; /* &u->s, its first member */

    cs_sock_cleanup(S, th);
    cs_tcp_close_conn(u);
}


static void
cs_tcp_dns_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_tcp_t *u = th->data;

    th->data = u->x->dns;
    cs_dns_cleanup(S, th);
    cs_tcp_close_conn(u);
}

static int cs_tcp_connect_k(lua_State *L, int status, lua_KContext ctx);
static int cs_tcp_connect_dns_k(lua_State *L, int status, lua_KContext ctx);


/* starts the connection to a */
static int
cs_tcp_connect_start(lua_State *L, cs_tcp_t *u, cs_thread_t *th,
                     const cs_addr_t *a)
{
    int fd = cs_net_socket(a->ss.ss_family, SOCK_STREAM), rc, e;

    if (fd < 0)
        return cs_sock_fail(L, cs_net_strerror(errno));
    cs_sock_attach(&u->s, u->s.S, fd);
    if (CS_TCP_X(u, local, NULL) != NULL
        && cs_net_bind_local(fd, u->x->local) != CS_OK)
        rc = CS_ERROR; /* e.g. "cannot assign requested address" */
    else
        rc = cs_net_connect(fd, a);
    if (rc == CS_OK) {
        lua_pushinteger(L, 1);
        return 1;
    }
    if (rc == CS_AGAIN) {
        u->wconnect = 1;
        return cs_sock_park_with(L, &u->s, th, EV_WRITE, EV_WRITE,
                                 cs_tcp_timeout(u, 0), "socket connect",
                                 cs_tcp_kill_cleanup, 0,
                                 cs_tcp_connect_k);
    }
    e = errno;
    cs_tcp_close_conn(u);
    return cs_sock_fail(L, cs_net_strerror(e));
}


/* the name was resolved (ctx: the query), or close() gave the query up */
static int
cs_tcp_connect_dns_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = lua_touserdata(L, 1);
    cs_addr_t addrs[CS_DNS_MAX];
    char err[320];
    int n;

    if (status == LUA_YIELD && u->s.S->cur->wake == CS_WAKE_CLOSED) {
        u->aborted = 0; /* cs_dns_cancel freed the query */
        return cs_sock_fail(L, "closed");
    }
    n = cs_dns_result((cs_dns_t *) ctx, lua_tostring(L, 2), addrs,
                      CS_DNS_MAX, err, sizeof(err));
    if (u->aborted) { /* closed after the answer came in */
        u->aborted = 0;
        return cs_sock_fail(L, "closed");
    }
    if (n == 0) {
        cs_tcp_close_conn(u); /* gives a pool slot back */
        return cs_sock_fail(L, err);
    }
    cs_net_addr_set_port(&addrs[0], (int) lua_tointeger(L, 3));
    return cs_tcp_connect_start(L, u, u->s.S->cur, &addrs[0]);
}


/* the connection in progress is done, failed or timed out */
static int
cs_tcp_connect_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = lua_touserdata(L, 1);
    cs_thread_t *th = u->s.S->cur;
    int e;

    (void) status; /* (always LUA_YIELD: it only follows a park) */
    (void) ctx;
    cs_sock_resumed(&u->s, th);
    if (th->wake == CS_SOCK_TIMEOUT) {
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, "timeout");
    }
    if (th->wake == CS_SOCK_CLOSED || u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (cs_net_connect_result(u->s.fd) != CS_OK) {
        e = errno;
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, cs_net_strerror(e));
    }
    cs_sock_drop_write_event(&u->s); /* no event kept idle */
    lua_pushinteger(L, 1);
    return 1;
}


static int cs_tcp_connect_wait_k(lua_State *L, int status, lua_KContext ctx);
static int cs_tcp_connect_go(lua_State *L, cs_tcp_t *u, cs_thread_t *th);


/* sock:connect(host, port [, opts]) or sock:connect("unix:/path" [, opts]) */
static int
cs_tcp_connect(lua_State *L)
{
    cs_tcp_t *u;
    size_t hlen;
    const char *host;
    int n = lua_gettop(L), is_unix, opts = 0;
    int pool_size = 0, backlog = -1;
    lua_Integer port = 0;
    cs_thread_t *th;

    if (n < 2 || n > 4)
        return luaL_error(L, "ngx.socket connect: expecting 2, 3, or 4 "
                             "arguments (including the object), but seen %d",
                          n);
    u = cs_tcp_check(L);
    host = luaL_checklstring(L, 2, &hlen);
    is_unix = cs_net_is_unix(host, hlen);
    if (n >= 3 && lua_type(L, n) == LUA_TTABLE) {
        opts = n;
        n--;
    }
    if (n == 4) /* a fourth argument that is no table is ignored */
        n = 3;
    if (!is_unix) {
        /* OpenResty's: a port that is no number (nor a string of one) is
         * missing, a float is truncated */
        if (n != 3 || !lua_isnumber(L, 3))
            return cs_sock_fail(L, "missing the port number");
        port = cs_sock_int_arg(L, 3);
        if (port < 0 || port > 65535)
            return cs_sock_fail(L, lua_pushfstring(L, "bad port number: %d",
                                                   (int) port));
        lua_pushinteger(L, port);
        lua_replace(L, 3);
    }

    if (opts) { /* OpenResty's checks and messages */
        lua_getfield(L, opts, "pool_size");
        if (lua_isnumber(L, -1)) {
            int ps = cs_tcp_toint(lua_tonumber(L, -1));
            if (ps <= 0)
                return luaL_argerror(L, opts, lua_pushfstring(L,
                    "bad \"pool_size\" option value: %d", ps));
            pool_size = ps > 1000000 ? 1000000 : ps;
        } else if (!lua_isnil(L, -1)) {
            return luaL_argerror(L, opts, lua_pushfstring(L,
                "bad \"pool_size\" option type: %s", luaL_typename(L, -1)));
        }
        lua_pop(L, 1);
        lua_getfield(L, opts, "backlog"); /* not a number: ignored */
        if (lua_isnumber(L, -1)) {
            int b = cs_tcp_toint(lua_tonumber(L, -1));
            if (b < 0)
                return luaL_argerror(L, opts, lua_pushfstring(L,
                    "bad \"backlog\" option value: %d", b));
            backlog = b > 1000000 ? 1000000 : b;
        }
        lua_pop(L, 1);
        lua_getfield(L, opts, "pool");
        if (lua_type(L, -1) == LUA_TNUMBER) /* as OpenResty: its text */
            (void) cs_sock_tolstring(L, -1, 0, NULL);
        else if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
            return luaL_argerror(L, opts, lua_pushfstring(L,
                "bad \"pool\" option type: %s", luaL_typename(L, -1)));
    } else {
        lua_pushnil(L);
    }
    /* OpenResty's order: "busy" before anything changes */
    if (cs_tcp_connecting(u))
        return cs_sock_fail(L, "socket busy connecting");
    if (u->s.reader != NULL)
        return cs_sock_fail(L, "socket busy reading");
    if (u->s.writer != NULL)
        return cs_sock_fail(L, "socket busy writing");
    /* sslhandshake's default name: the host part of the default key
     * "host:port", or a copy kept apart when the key is the caller's */
    if (u->x != NULL) {
        free(u->x->host);
        u->x->host = NULL;
    }
    u->keyhost = !is_unix && lua_isnil(L, -1);
    if (!is_unix && !u->keyhost) {
        if (cs_tcp_more(u) == NULL
            || (u->x->host = malloc(hlen + 1)) == NULL)
            return cs_sock_fail(L, "no memory");
        memcpy(u->x->host, host, hlen + 1);
    }
    u->pool_size = pool_size;
    if (lua_isnil(L, -1)) { /* the default key: host:port or the path */
        lua_pop(L, 1);
        if (is_unix)
            lua_pushvalue(L, 2);
        else
            lua_pushfstring(L, "%s:%d", host, (int) port);
    }
    lua_setiuservalue(L, 1, 1);
    lua_settop(L, 3);
    if (is_unix) {
        lua_pushinteger(L, 0);
        lua_replace(L, 3);
    }

    th = cs_sched_current(u->s.S, L, "connect");
    /* as OpenResty: close, then connect; and nothing of an earlier
     * connection (buffered input of one closed by a kill) carries over */
    cs_tcp_close_conn(u);
    u->pooled = 1;
    u->created = 1;
    u->eof = 0;
    u->aborted = 0;

    lua_getiuservalue(L, 1, 1);
    if (cs_pool_take(L, u, -1)) {
        lua_pushinteger(L, 1);
        return 1;
    }
    if (backlog >= 0) { /* the pool limits its connections */
        cs_pool_t *p = cs_pool_get(L, u->s.S, -1, pool_size ? pool_size
                                                  : CS_TCP_DEFAULT_POOL);
        lua_pop(L, 1);
        if (p->total >= p->size) {
            if (p->nwaiting >= backlog)
                return cs_sock_fail(L, "too many waiting connect "
                                       "operations");
            (void) cs_tcp_more_l(L, u); /* for the slot, or a handed
                                         * connection's TLS state */
            cs_sched_heap_reserve(u->s.S, L);
            th->tn.when = u->s.S->now_mono + cs_tcp_timeout(u, 0) / 1000.0;
            th->tn.fire = cs_pool_waiter_timeout;
            cs_sched_heap_add(u->s.S, &th->tn);
            cs_link_push(&p->waiters, &th->q);
            p->nwaiting++;
            return cs_sched_park(u->s.S, L, th, "connect backlog",
                                 cs_pool_waiter_cleanup, p,
                                 (lua_KContext) p, cs_tcp_connect_wait_k);
        }
        cs_tcp_more_l(L, u)->slot = p;
        p->total++;
    } else {
        lua_pop(L, 1);
    }
    return cs_tcp_connect_go(L, u, th);
}


/* a slot of the pool, or an idle connection of it, was given to this
 * waiting connect (ctx: the pool) */
static int
cs_tcp_connect_wait_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = lua_touserdata(L, 1);
    cs_thread_t *th = u->s.S->cur;

    (void) status;
    th->cleanup = NULL;
    if (th->wake == CS_WAKE_TIMEOUT)
        return cs_sock_fail(L, "timeout");
    if (th->wake == CS_POOL_HANDED) {
        ((cs_pool_t *) ctx)->nhanded--;
        cs_pool_adopt(u, (cs_pool_t *) ctx, th->data);
        lua_pushinteger(L, 1);
        return 1;
    }
    if (th->wake != CS_WAKE_OK)
        return cs_sock_fail(L, "closed");
    u->x->slot = (cs_pool_t *) ctx; /* reserved for us by cs_pool_grant */
    return cs_tcp_connect_go(L, u, th);
}


/* connects to host (2) and port (3), resolving the name if need be */
static int
cs_tcp_connect_go(lua_State *L, cs_tcp_t *u, cs_thread_t *th)
{
    cs_addr_t addr;
    cs_dns_t *q;
    int rc;

    u->reused = 0;
    rc = cs_sock_parse_host(L, (int) lua_tointeger(L, 3), &addr);
    if (rc == 0)
        return cs_tcp_connect_start(L, u, th, &addr);
    if (rc == 2) {
        cs_tcp_close_conn(u); /* gives a pool slot back */
        return 2;
    }
    if (cs_tcp_more(u) == NULL) { /* for x->dns */
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, "no memory");
    }
    if (cs_dns_start(u->s.S, L, lua_tostring(L, 2), AF_UNSPEC, &q) == CS_OK)
        return cs_tcp_connect_dns_k(L, LUA_OK, (lua_KContext) q);
    cs_dns_set_owner(q, &u->x->dns); /* connecting while x->dns != NULL */
    return cs_dns_park_with(L, q, th, cs_tcp_dns_cleanup, u, (lua_KContext) q,
                            cs_tcp_connect_dns_k);
}

/* }====== */


/* {====== TLS ====== */

/* the handshake in progress made a step, or its park ended */
static int
cs_tcp_handshake_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_tcp_t *u = (cs_tcp_t *) ctx;
    cs_thread_t *th = u->s.S->cur;
    char err[256];
    short want = EV_READ;
    int rc;

    if (status == LUA_YIELD) {
        cs_sock_resumed(&u->s, th);
        if (th->wake == CS_SOCK_TIMEOUT) {
            cs_tcp_close_conn(u);
            return cs_sock_fail(L, "timeout");
        }
        if (th->wake == CS_SOCK_CLOSED || u->s.fd < 0)
            return cs_sock_fail(L, "closed");
    }
    rc = cs_tls_handshake(u->x->tpio, &want, err, sizeof(err));
    if (rc == CS_AGAIN) /* bounded by the connect timeout (API.md) */
        return cs_sock_park_with(L, &u->s, th, want, want,
                                 cs_tcp_timeout(u, 0),
                                 "socket sslhandshake",
                                 cs_tcp_kill_cleanup, ctx,
                                 cs_tcp_handshake_k);
    if (rc != CS_OK) {
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, lua_pushfstring(L, "handshake failed: %s",
                                               err));
    }
    if (!lua_toboolean(L, 2)) { /* reused_session was false */
        lua_pushboolean(L, 1);
        return 1;
    }
    cs_tls_push_session(L, u->x->tpio);
    return 1;
}


/* [-0, +0, m] the host given to connect, at 3, becomes the name it
 * names: "[::1]" is "::1", and "host:port" is "host" (as connect read it,
 * cs_net_split_host) */
static void
cs_tcp_host_name(lua_State *L)
{
    size_t len, litlen;
    const char *host = lua_tolstring(L, 3, &len), *lit, *why;
    int port = 0;

    if (cs_net_split_host(host, len, &port, &lit, &litlen, &why) != CS_OK)
        return;
    if (litlen >= 2 && lit[0] == '[' && lit[litlen - 1] == ']') {
        lit++;
        litlen -= 2;
    }
    if (litlen != len) {
        lua_pushlstring(L, lit, litlen);
        lua_replace(L, 3);
    }
}


/* sock:sslhandshake([reused_session [, server_name [, ssl_verify
 * [, send_status_req]]]]) -> session | true | nil, err */
static int
cs_tcp_sslhandshake(lua_State *L)
{
    cs_tcp_t *u;
    cs_tls_opts_t o;
    char err[256];
    cs_tls_t *t;
    int nret, want_session;

    if (lua_gettop(L) < 1 || lua_gettop(L) > 5) /* lua-resty-core's */
        return luaL_error(L, "ngx.socket sslhandshake: expecting 1 ~ 5 "
                             "arguments (including the object), but seen "
                             "%d", lua_gettop(L));
    u = cs_tcp_check(L);
    lua_settop(L, 5);
    memset(&o, 0, sizeof(o));
    /* as lua-resty-core: a session object is resumed, anything else is
     * not; the session is returned unless reused_session is false */
    want_session = lua_type(L, 2) != LUA_TBOOLEAN || lua_toboolean(L, 2);
    o.session = cs_tls_to_session(L, 2);
    if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TSTRING) /* its FFI's */
        return luaL_error(L, "cannot convert '%s' to 'const unsigned char *'",
                          luaL_typename(L, 3));
    if (lua_isnil(L, 4))
        o.verify = 1;
    else {
        luaL_checktype(L, 4, LUA_TBOOLEAN);
        o.verify = lua_toboolean(L, 4);
    }
    o.ocsp = lua_toboolean(L, 5);
    if (!u->created) /* lua-resty-core's check (spec/59) */
        return luaL_error(L, "socket is never created nor connected");
    cs_sched_current(u->s.S, L, "sslhandshake"); /* raises outside */
    if ((nret = cs_tcp_check_state(L, u, EV_READ | EV_WRITE)) != 0)
        return nret;
    if (u->tp == &cs_transport_tls && o.session != NULL) {
        lua_settop(L, 2); /* speaks TLS already: the session given back */
        return 1;
    }
    lua_pushboolean(L, want_session);
    lua_replace(L, 2);
    if (u->tp == &cs_transport_tls) /* speaks TLS already (from a pool) */
        return cs_tcp_handshake_k(L, LUA_OK, (lua_KContext) u);

    /* bytes that came in clear before it would be read as if they came
     * over TLS (STARTTLS injection, as CVE-2021-23222): refused */
    if (cs_tcp_more(u) == NULL /* for its transport state */
        || (u->x->hold != NULL
            && cs_until_unread(u->x->hold, &u->in) != CS_OK)) {
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, "no memory");
    }
    u->x->hold = NULL;
    if (cs_buf_len(&u->in) > 0) {
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, "handshake failed: data received in clear "
                               "before it");
    }

    if (lua_isnil(L, 3) && u->x->host != NULL) { /* connect's host */
        lua_pushstring(L, u->x->host);
        lua_replace(L, 3);
        cs_tcp_host_name(L);
    } else if (lua_isnil(L, 3) && u->keyhost) { /* the key's host */
        size_t len;
        const char *key;
        lua_getiuservalue(L, 1, 1);
        key = lua_tolstring(L, -1, &len);
        while (len > 0 && key[len - 1] != ':')
            len--;
        if (len > 0) {
            lua_pushlstring(L, key, len - 1);
            lua_replace(L, 3);
            cs_tcp_host_name(L);
        }
        lua_pop(L, 1);
    }
    o.name = lua_tostring(L, 3);
    o.conf = u->x->tls;
    if ((t = cs_tls_new(u->s.fd, &o, err, sizeof(err))) == NULL) {
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, lua_pushfstring(L, "handshake failed: %s",
                                               err));
    }
    u->tp = &cs_transport_tls;
    u->x->tpio = t;
    return cs_tcp_handshake_k(L, LUA_OK, (lua_KContext) u);
}


/* sock:setclientcert(cert_pem, key_pem) -> true | nil, err: the
 * certificate (and its chain) the next handshakes present; (nil, nil):
 * none any more */
static int
cs_tcp_setclientcert(lua_State *L)
{
    cs_tcp_t *u = cs_tcp_check(L);
    size_t clen = 0, klen = 0;
    const char *cert = luaL_optlstring(L, 2, NULL, &clen);
    const char *key = luaL_optlstring(L, 3, NULL, &klen);
    char err[256];

    if ((cert == NULL) != (key == NULL)) /* lua-resty-core's message */
        return cs_sock_fail(L, "client certificate must be supplied with "
                               "corresponding private key");
    if (cs_tls_conf_set_cert(&cs_tcp_more_l(L, u)->tls, cert, clen, key,
                             klen, err, sizeof(err)) != CS_OK)
        return cs_sock_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}


/* sock:getpeercert() -> pem, signature algorithm | nil, err: the
 * certificate the TLS peer presented */
static int
cs_tcp_getpeercert(lua_State *L)
{
    cs_tcp_t *u = cs_tcp_check(L);

    if (u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (u->tp != &cs_transport_tls)
        return cs_sock_fail(L, "no TLS");
    return cs_tls_push_peer_cert(L, u->x->tpio);
}


/* sock:setcafile(path) -> true | nil, err: CA certificates this socket's
 * handshakes trust, besides the system's */
static int
cs_tcp_setcafile(lua_State *L)
{
    cs_tcp_t *u = cs_tcp_check(L);
    const char *path = luaL_checkstring(L, 2);
    char err[512];

    if (cs_tls_conf_set_cafile(&cs_tcp_more_l(L, u)->tls, path, err,
                               sizeof(err)) != CS_OK)
        return cs_sock_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* }====== */


/* {====== the rest of the methods ====== */

/* sock:close() */
static int
cs_tcp_close(lua_State *L)
{
    cs_tcp_t *u;

    if (lua_gettop(L) != 1)
        return cs_sock_close_argc(L);
    u = cs_tcp_check(L);
    if (CS_TCP_X(u, dns, NULL) != NULL) {
        /* connect is resolving the name: give it up, unless its answer
         * is in */
        if (!cs_dns_cancel(u->x->dns))
            u->aborted = 1;
        lua_pushinteger(L, 1);
        return 1;
    }
    if (u->s.fd < 0) {
        if (u->ended != CS_TCP_CLOSE_ONCE)
            return cs_sock_fail(L, "closed");
        u->ended = 0;
    }
    cs_tcp_close_conn(u); /* wakes a thread parked on it with "closed" */
    lua_pushinteger(L, 1);
    return 1;
}


static int
cs_tcp__gc(lua_State *L)
{
    cs_tcp_t *u = lua_touserdata(L, 1);

    cs_tcp_close_conn(u);
    if (u->x != NULL) { /* after the close, which reads it */
        free(u->x->local);
        cs_tls_conf_free(u->x->tls);
        free(u->x->host);
        free(u->x);
        u->x = NULL; /* an iterator's finalizer may still look */
    }
    return 0;
}


/* "ip:port" or "[ipv6]:port" (port 1..65535) into a; CS_OK or CS_ERROR */
static int
cs_tcp_parse_ip_port(cs_addr_t *a, const char *s, size_t len)
{
    const char *colon = NULL, *p;
    int port = 0;

    if (len > 0 && s[0] == '[') {
        p = memchr(s, ']', len);
        if (p != NULL && p + 1 < s + len && p[1] == ':')
            colon = p + 1;
    } else {
        colon = memchr(s, ':', len);
        if (colon != NULL && memchr(colon + 1, ':', len - (size_t) (colon
                                                         - s) - 1) != NULL)
            colon = NULL; /* a bare IPv6 address: no port */
    }
    if (colon == NULL || colon + 1 == s + len)
        return CS_ERROR;
    for (p = colon + 1; p < s + len; p++) {
        if (*p < '0' || *p > '9' || port > 65535)
            return CS_ERROR;
        port = port * 10 + (*p - '0');
    }
    if (port < 1 || port > 65535)
        return CS_ERROR;
    return cs_net_parse_addr(a, s, (size_t) (colon - s), port);
}


/* sock:bind(address) -> true | nil, "bad address": the local IP address
 * (optionally with ":port") the next connects bind to, as OpenResty's
 * tcpsock:bind; a failing bind makes connect fail with its error */
static int
cs_tcp_bind(lua_State *L)
{
    cs_tcp_t *u;
    const char *s;
    size_t len;
    cs_addr_t a;

    if (lua_gettop(L) != 2)
        return luaL_error(L, "expecting 2 arguments, but got %d",
                          lua_gettop(L));
    u = cs_tcp_check(L);
    s = luaL_checklstring(L, 2, &len);
    if (cs_net_is_unix(s, len)
        || (cs_net_parse_addr(&a, s, len, 0) != CS_OK
            && cs_tcp_parse_ip_port(&a, s, len) != CS_OK))
        return cs_sock_fail(L, "bad address");
    if (cs_tcp_more_l(L, u)->local == NULL
        && (u->x->local = malloc(sizeof(a))) == NULL)
        return luaL_error(L, "not enough memory");
    *u->x->local = a;
    lua_pushboolean(L, 1);
    return 1;
}


/* sock:setkeepalive([timeout_ms [, size]]) */
static int
cs_tcp_setkeepalive(lua_State *L)
{
    cs_tcp_t *u;
    lua_Integer timeout, size;
    cs_sched_t *S;
    cs_pool_t *p;
    cs_pitem_t *it;
    int nret, unread = 0, state = CS_OK, n = lua_gettop(L);

    if (n < 1 || n > 3)
        return luaL_error(L, "expecting 1 to 3 arguments (including the "
                             "object), but got %d", n);
    u = cs_tcp_check(L);
    S = u->s.S;
    timeout = luaL_optinteger(L, 2, CS_TCP_DEFAULT_IDLE);
    size = luaL_optinteger(L, 3, CS_TCP_DEFAULT_POOL);
    /* OpenResty casts the timeout to an unsigned count of ms: a negative
     * one expires at once, a huge one never */
    if (timeout < 0)
        timeout = 1;
    else if (timeout > 0x7fffffff)
        timeout = 0;
    /* the peer has closed (or reset): "closed" before anything else, and
     * the socket stays as it is (OpenResty, lua-nginx-module 0.10.21+:
     * read eof or pending_eof, which epoll sets as soon as the FIN is in,
     * even behind unread data) */
    if (u->s.fd >= 0 && !cs_tcp_connecting(u)) {
        /* (before a TLS idle check reads records) */
        unread = cs_buf_len(&u->in) > 0
                 || u->tp->pending(CS_TCP_X(u, tpio, NULL)) > 0;
        state = u->eof ? CS_CLOSED
                       : u->tp->idle(CS_TCP_X(u, tpio, NULL), u->s.fd);
        if (state == CS_CLOSED)
            return cs_sock_fail(L, "closed");
    }
    if ((nret = cs_tcp_check_state(L, u, EV_READ | EV_WRITE)) != 0)
        return nret;
    if (unread)
        return cs_sock_fail(L, "unread data in buffer"); /* it stays */
    if (state != CS_OK) {
        /* data nobody asked for, or an error: as OpenResty's keepalive
         * close handler, close it */
        cs_tcp_close_conn(u);
        return cs_sock_fail(L, "connection in dubious state");
    }
    if (!u->pooled) { /* an accepted socket: no pool to go to */
        cs_tcp_close_conn(u);
        lua_pushinteger(L, 1);
        return 1;
    }

    lua_getiuservalue(L, 1, 1);
    p = cs_pool_get(L, S, -1, 0);
    if (p == NULL || cs_pool_unused(p)) { /* a new pool: its size is
                                           * checked (OpenResty) */
        if (u->pool_size > 0)
            size = u->pool_size;
        if (size <= 0)
            return luaL_argerror(L, n, lua_pushfstring(L,
                "bad \"pool_size\" option value: %d", (int) size));
        p = cs_pool_get(L, S, -1, size > 1000000 ? 1000000 : (int) size);
    }
    lua_pop(L, 1);
    if (timeout > 0)
        cs_sched_heap_reserve(S, L); /* may raise */
    it = calloc(1, sizeof(*it));
    if (it == NULL)
        return luaL_error(L, "not enough memory");
    if (p->nidle >= p->size) /* evict the least recently used */
        cs_pool_item_free(cs_link_data(p->idle.prev, cs_pitem_t, link), 1);

    it->pool = p;
    it->reused = u->reused + 1;
    it->tp = u->tp;
    it->tpio = NULL;
    if (u->x != NULL) {
        /* an idle connection keeps its slot */
        it->counted = u->x->slot == p;
        if (u->x->slot != NULL && u->x->slot != p)
            cs_pool_release(u->x->slot);
        u->x->slot = NULL;
        it->tpio = u->x->tpio;
        u->x->tpio = NULL;
    }
    u->tp = &cs_transport_plain;
    it->tn.idx = -1;
    it->w.ready = cs_pool_item_watch_cb;
    it->watched = cs_poll_watch(&u->s, &it->w); /* keeps the registration */
    it->fd = cs_sock_detach(&u->s);
    if (!it->watched) {
        it->ev = event_new(S->base, it->fd, EV_READ, cs_pool_item_cb, it);
        if (it->ev == NULL) {
            it->tp->free(it->tpio, it->fd);
            cs_net_close(it->fd);
            S->nsockets--;
            free(it);
            return luaL_error(L, "not enough memory");
        }
        event_add(it->ev, NULL);
    }
    if (timeout > 0) { /* counted from now, as the socket timeouts */
        cs_sched_update_mono(S);
        it->tn.when = S->now_mono + (double) timeout / 1000.0;
        it->tn.fire = cs_pool_item_timeout;
        /* lazy: no thread waits for it (no deadlock is hidden by it, and
         * cs.stats() does not count it) */
        cs_sched_heap_add_lazy(S, &it->tn);
    }
    /* newest first: connect takes the most recently used one */
    it->link.next = p->idle.next;
    it->link.prev = &p->idle;
    p->idle.next->prev = &it->link;
    p->idle.next = &it->link;
    p->nidle++;
    cs_pool_hand(p); /* a connect waiting in the backlog takes it */

    cs_buf_free(&u->in);
    if (u->x != NULL)
        cs_buf_free(&u->x->out);
    cs_tcp_drop_hold(u);
    cs_tcp_leave_pool(u); /* after its pool was chosen: it kept it alive */
    u->reused = 0;
    lua_pushinteger(L, 1);
    return 1;
}


/* sock:getreusedtimes() */
static int
cs_tcp_getreusedtimes(lua_State *L)
{
    cs_tcp_t *u;

    if (lua_gettop(L) != 1)
        return cs_sock_argc(L, 1);
    u = cs_tcp_check(L);
    if (u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    lua_pushinteger(L, u->reused);
    return 1;
}


/* a timeout argument as OpenResty's lua_tonumber takes it: what is not a
 * number (nil, "x") is 0, the default */
static int
cs_tcp_parse_timeout(lua_State *L, int idx)
{
    lua_Number t = lua_tonumber(L, idx);

    /* OpenResty truncates, then refuses what is not in 0..2^31-1: -0.5
     * is 0 (recorded in spec/59) */
    if (!(t > -1 && t < 2147483648.0))
        return luaL_error(L, "bad timeout value");
    return (int) t;
}


/* sock:settimeout(ms) */
static int
cs_tcp_settimeout(lua_State *L)
{
    cs_tcp_t *u;
    int t;

    if (lua_gettop(L) != 2) /* OpenResty's message */
        return luaL_error(L, "ngx.socket settimeout: expecting 2 arguments "
                             "(including the object) but seen %d",
                          lua_gettop(L));
    u = cs_tcp_check(L);
    t = cs_tcp_parse_timeout(L, 2);
    u->timeouts[0] = u->timeouts[1] = u->timeouts[2] = t;
    return 0;
}


/* sock:settimeouts(connect_ms, send_ms, read_ms) */
static int
cs_tcp_settimeouts(lua_State *L)
{
    cs_tcp_t *u;
    int i;

    if (lua_gettop(L) != 4) /* OpenResty's message, "settimeout" too */
        return luaL_error(L, "ngx.socket settimeout: expecting 4 arguments "
                             "(including the object) but seen %d",
                          lua_gettop(L));
    u = cs_tcp_check(L);
    for (i = 0; i < 3; i++)
        u->timeouts[i] = cs_tcp_parse_timeout(L, i + 2);
    return 0;
}


/* the option name at 2 (as text), or pushes nil, err: NULL. Raises, as
 * lua-resty-core does before anything else, on a socket connect was never
 * called on (our own "maxline" excepted) */
static const char *
cs_tcp_option_name(lua_State *L, const cs_tcp_t *u)
{
    if (!u->created && !(lua_type(L, 2) == LUA_TSTRING
                         && strcmp(lua_tostring(L, 2), "maxline") == 0))
        luaL_error(L, "socket is never created nor connected");
    if (lua_isnoneornil(L, 2)) {
        cs_sock_fail(L, "missing the \"option\" argument");
        return NULL;
    }
    return luaL_tolstring(L, 2, NULL); /* pushed above the arguments */
}


/* sock:setoption(name, value) -> true | nil, err (lua-resty-core's
 * setoption: bad names and missing arguments are returned errors) */
static int
cs_tcp_setoption(lua_State *L)
{
    cs_tcp_t *u = cs_tcp_check(L);
    const char *name;
    lua_Integer m;
    int v, rc;

    lua_settop(L, 3);
    if ((name = cs_tcp_option_name(L, u)) == NULL)
        return 2;
    if (lua_isnil(L, 3))
        return cs_sock_fail(L, "missing the \"value\" argument");
    if (strcmp(name, "maxline") == 0) { /* corosched's own */
        m = luaL_checkinteger(L, 3);
        luaL_argcheck(L, m > 0, 3, "maxline must be positive");
        cs_tcp_more_l(L, u)->maxline = (size_t) m;
        lua_pushboolean(L, 1);
        return 1;
    }
    if (lua_isboolean(L, 3)) {
        v = lua_toboolean(L, 3);
    } else { /* an FFI int in lua-resty-core: a float is truncated, what
              * is no number (a numeric string too) raises, as there */
        lua_Number d;

        if (lua_type(L, 3) != LUA_TNUMBER)
            return luaL_argerror(L, 3, lua_pushfstring(L, "cannot convert "
                                                          "'%s' to 'int'",
                                                       luaL_typename(L,
                                                                     3)));
        d = lua_tonumber(L, 3);
        luaL_argcheck(L, d > -2147483648.0 && d < 2147483648.0, 3,
                      "value out of range");
        v = (int) d;
    }
    rc = cs_net_setoption(u->s.fd, name, v); /* checks the name first */
    if (rc == CS_LIMIT)
        return cs_sock_fail(L, lua_pushfstring(L, "unsupported option %s",
                                               name));
    if (u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (rc != CS_OK) /* the system's text as it is (ngx_strerror) */
        return cs_sock_fail(L, strerror(errno));
    lua_pushboolean(L, 1);
    return 1;
}


/* sock:getoption(name) -> value | nil, err (lua-resty-core's getoption) */
static int
cs_tcp_getoption(lua_State *L)
{
    cs_tcp_t *u = cs_tcp_check(L);
    const char *name;
    int v = 0, rc;

    lua_settop(L, 2);
    if ((name = cs_tcp_option_name(L, u)) == NULL)
        return 2;
    if (strcmp(name, "maxline") == 0) {
        lua_pushinteger(L, (lua_Integer) cs_tcp_maxline(u));
        return 1;
    }
    rc = cs_net_getoption(u->s.fd, name, &v);
    if (rc == CS_LIMIT)
        return cs_sock_fail(L, lua_pushfstring(L, "unsupported option %s",
                                               name));
    if (u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (rc != CS_OK)
        return cs_sock_fail(L, strerror(errno));
    lua_pushinteger(L, v);
    return 1;
}


/* sock:getpeername() */
static int
cs_tcp_getpeername(lua_State *L)
{
    return cs_sock_push_addr(L, cs_tcp_check(L)->s.fd, 1);
}


/* sock:getsockname() */
static int
cs_tcp_getsockname(lua_State *L)
{
    return cs_sock_push_addr(L, cs_tcp_check(L)->s.fd, 0);
}


/*
 * sock:shutdown("send"): ends the write half (the peer reads its end)
 * while receives go on; later sends say "closed", setkeepalive refuses
 * the connection, close() closes it. An extension (stream-lua's request
 * socket has the same method); other directions raise. A TLS connection
 * answers nil, err: a close_notify would have to go first.
 */
static int
cs_tcp_shutdown(lua_State *L)
{
    cs_tcp_t *u;

    if (lua_gettop(L) != 2)
        return cs_sock_argc(L, 2);
    u = cs_tcp_check(L);
    if (strcmp(luaL_checkstring(L, 2), "send") != 0)
        return luaL_argerror(L, 2, "only \"send\" is supported");
    if (cs_tcp_check_state(L, u, EV_WRITE) != 0)
        return 2;
    if (u->tp != &cs_transport_plain)
        return cs_sock_fail(L, "shutdown of a TLS connection is not "
                               "supported");
    if (shutdown(u->s.fd, SHUT_WR) == -1)
        return cs_sock_fail(L, cs_net_strerror(errno));
    cs_tcp_write_failed(u);
    lua_pushinteger(L, 1);
    return 1;
}


/* sock:getfd() (debugging) */
static int
cs_tcp_getfd(lua_State *L)
{
    lua_pushinteger(L, cs_tcp_check(L)->s.fd);
    return 1;
}


static int
cs_tcp__tostring(lua_State *L)
{
    cs_tcp_t *u = luaL_checkudata(L, 1, CS_TCP_MT); /* no upvalue */

    if (u->s.fd < 0)
        lua_pushfstring(L, "corosched.tcp (closed): %p", (void *) u);
    else
        lua_pushfstring(L, "corosched.tcp (fd %d): %p", u->s.fd, (void *) u);
    return 1;
}


/* cs.socket.tcp() */
static int
cs_tcp_ctor(lua_State *L)
{
    cs_sock_ctor_noargs(L);
    cs_tcp_new(L, cs_sched_up(L));
    return 1;
}

/* }====== */


/* {====== the listener ====== */

static cs_server_t *
cs_server_check(lua_State *L)
{
    return luaL_checkudata(L, 1, CS_SERVER_MT);
}


/* closes the listener and removes its unix socket file */
static void
cs_server_close_fd(cs_server_t *sv)
{
    cs_sock_close(&sv->s);
    if (sv->unix_path)
        unlink(sv->path);
    sv->unix_path = 0;
}


/* a thread parked in accept was killed: the listener is closed as by
 * close(), its file removed at once (left for a later close(), it was
 * another listener's once the program had removed it and listened on the
 * path again) */
static void
cs_server_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_server_t *sv = th->data; /* (its cs_sock_t comes first) */

    (void) S;
    cs_sock_resumed(&sv->s, th);
    cs_server_close_fd(sv);
}


/* cs.socket.listen(host, port [, opts]) / ("unix:/path" [, opts]) */
static int
cs_server_listen(lua_State *L)
{
    cs_sched_t *S = cs_sched_up(L);
    size_t hlen;
    const char *host = luaL_checklstring(L, 1, &hlen);
    int is_unix = cs_net_is_unix(host, hlen), opts = 0, fd;
    int backlog = 0, reuseaddr = 1, reuseport = 0, n = lua_gettop(L);
    lua_Integer port = 0;
    cs_server_t *sv;
    cs_addr_t a;

    if (n >= 2 && lua_type(L, n) == LUA_TTABLE)
        opts = n;
    if (!is_unix) {
        port = luaL_checkinteger(L, 2);
        luaL_argcheck(L, port >= 0 && port <= 65535, 2, "bad port number");
    }
    if (opts) {
        lua_getfield(L, opts, "backlog");
        backlog = (int) luaL_optinteger(L, -1, 0);
        lua_getfield(L, opts, "reuseaddr");
        if (!lua_isnil(L, -1))
            reuseaddr = lua_toboolean(L, -1);
        lua_getfield(L, opts, "reuseport");
        reuseport = lua_toboolean(L, -1);
        lua_pop(L, 3);
    }
    if (hlen == 1 && host[0] == '*')
        host = "0.0.0.0", hlen = 7;
    if (cs_net_is_localhost(host, hlen))
        host = "127.0.0.1", hlen = 9;
    if (cs_net_parse_addr(&a, host, hlen, (int) port) != CS_OK)
        return cs_sock_fail(L, errno == ENOENT
                                   ? "listen needs a numeric address"
                                   : cs_net_strerror(errno));
    sv = lua_newuserdatauv(L, sizeof(cs_server_t), 0); /* before the fd */
    memset(sv, 0, sizeof(*sv));
    sv->s.S = S;
    sv->s.fd = -1;
    luaL_setmetatable(L, CS_SERVER_MT);
    fd = cs_net_listen(&a, backlog, reuseaddr, reuseport);
    if (fd < 0)
        return cs_sock_fail(L, cs_net_strerror(errno));
    cs_sock_attach(&sv->s, S, fd);
    if (is_unix && hlen - 5 < sizeof(sv->path)) {
        memcpy(sv->path, host + 5, hlen - 5);
        sv->unix_path = 1;
    }
    return 1;
}


static int
cs_server_accept_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_server_t *sv = (cs_server_t *) ctx;
    cs_thread_t *th = sv->s.S->cur;
    cs_tcp_t *u;
    int fd;

    if (status == LUA_YIELD) {
        cs_sock_resumed(&sv->s, th);
        if (th->wake == CS_SOCK_TIMEOUT)
            return cs_sock_fail(L, "timeout");
        if (th->wake == CS_SOCK_CLOSED || sv->s.fd < 0)
            return cs_sock_fail(L, "closed");
    }
    /* the object first: if that fails for memory, no fd is lost */
    u = lua_gettop(L) >= 2 ? lua_touserdata(L, 2) : cs_tcp_new(L, sv->s.S);
    fd = cs_net_accept(sv->s.fd, NULL);
    if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return cs_sock_park_with(L, &sv->s, th, EV_READ, EV_READ,
                                     sv->timeout, "accept",
                                     cs_server_cleanup, ctx,
                                     cs_server_accept_k);
        return cs_sock_fail(L, cs_net_strerror(errno));
    }
    cs_sock_attach(&u->s, sv->s.S, fd);
    u->created = 1;
    lua_settop(L, 2);
    return 1;
}


/* server:accept() -> sock | nil, err */
static int
cs_server_accept(lua_State *L)
{
    cs_server_t *sv = cs_server_check(L);

    lua_settop(L, 1);
    cs_sched_current(sv->s.S, L, "accept");
    if (sv->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (sv->s.reader != NULL)
        return cs_sock_fail(L, "socket busy accepting");
    return cs_server_accept_k(L, LUA_OK, (lua_KContext) sv);
}


/* server:settimeout(ms): accept timeout, 0 = none */
static int
cs_server_settimeout(lua_State *L)
{
    cs_server_t *sv = cs_server_check(L);

    sv->timeout = cs_tcp_parse_timeout(L, 2);
    return 0;
}


/* server:getsockname() */
static int
cs_server_getsockname(lua_State *L)
{
    return cs_sock_push_addr(L, cs_server_check(L)->s.fd, 0);
}


/* server:close() */
static int
cs_server_close(lua_State *L)
{
    cs_server_t *sv = cs_server_check(L);

    if (sv->s.fd < 0)
        return cs_sock_fail(L, "closed");
    cs_server_close_fd(sv);
    lua_pushinteger(L, 1);
    return 1;
}


static int
cs_server__gc(lua_State *L)
{
    cs_server_close_fd(lua_touserdata(L, 1));
    return 0;
}

/* }====== */


static const luaL_Reg cs_tcp_methods[] = {
    {"bind", cs_tcp_bind},
    {"connect", cs_tcp_connect},
    {"send", cs_tcp_send},
    {"receive", cs_tcp_receive},
    {"receiveany", cs_tcp_receiveany},
    {"receiveuntil", cs_tcp_receiveuntil},
    {"close", cs_tcp_close},
    {"setkeepalive", cs_tcp_setkeepalive},
    {"getreusedtimes", cs_tcp_getreusedtimes},
    {"settimeout", cs_tcp_settimeout},
    {"settimeouts", cs_tcp_settimeouts},
    {"setoption", cs_tcp_setoption},
    {"getoption", cs_tcp_getoption},
    {"getpeername", cs_tcp_getpeername},
    {"getsockname", cs_tcp_getsockname},
    {"getfd", cs_tcp_getfd},
    {"shutdown", cs_tcp_shutdown},
    {"sslhandshake", cs_tcp_sslhandshake},
    {"setclientcert", cs_tcp_setclientcert},
    {"setcafile", cs_tcp_setcafile},
    {"getpeercert", cs_tcp_getpeercert},
    {NULL, NULL}
};

static const luaL_Reg cs_server_methods[] = {
    {"accept", cs_server_accept},
    {"settimeout", cs_server_settimeout},
    {"getsockname", cs_server_getsockname},
    {"close", cs_server_close},
    {NULL, NULL}
};


static void
cs_tcp_class(lua_State *L, cs_sched_t *S, const char *name,
             const luaL_Reg *methods, lua_CFunction gc)
{
    luaL_newmetatable(L, name);
    lua_newtable(L);
    cs_setfuncs(L, S, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__close");
    lua_pop(L, 1);
}


void
cs_tcp_open(lua_State *L, cs_sched_t *S)
{
    cs_tcp_class(L, S, CS_TCP_MT, cs_tcp_methods, cs_tcp__gc);
    luaL_getmetatable(L, CS_TCP_MT);
    lua_pushcfunction(L, cs_tcp__tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    cs_tcp_class(L, S, CS_SERVER_MT, cs_server_methods, cs_server__gc);

    luaL_newmetatable(L, CS_UNTIL_MT);
    lua_pushcfunction(L, cs_until__gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, CS_POOL_MT);
    lua_pushcfunction(L, cs_pool__gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);

    lua_newtable(L);
    S->pools_ref = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_pushlightuserdata(L, S);
    lua_pushcclosure(L, cs_tcp_ctor, 1);
    lua_setfield(L, -2, "tcp");
    lua_pushlightuserdata(L, S);
    lua_pushcclosure(L, cs_server_listen, 1);
    lua_setfield(L, -2, "listen");
    cs_tls_open(L, S);
}
