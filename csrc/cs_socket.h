/*
 * What the TCP, UDP and server objects share: an fd watched for readiness
 * (in the scheduler's epoll set on Linux, else with a read and a write
 * libevent event), one parked thread per direction, parking with an
 * inactivity timeout, close (waking whoever is parked with "closed"), and
 * name resolution without blocking the loop (evdns, /etc/hosts first).
 *
 * The readiness callbacks only record what happened and post the thread;
 * the continuation of the parked API function finishes the I/O.
 */
#ifndef CS_SOCKET_H
#define CS_SOCKET_H

#include "cs_sched.h"
#include "cs_net.h"

typedef struct cs_sock_s {
    cs_sched_t *S;
    struct cs_sock_ev_s *ev;    /* without the epoll set: its libevent
                                 * events, made on the first park */
    cs_thread_t *reader;        /* parked in a read (or accept) */
    cs_thread_t *writer;        /* parked in a write (or connect) */
    int fd;                     /* -1 when closed */
    unsigned char rready;       /* readable since the last short read */
    unsigned char rdhup;        /* a FIN, reset or error seen (epoll) */
    unsigned char polled;       /* in the scheduler's epoll set */
    unsigned char cross;        /* CS_SOCK_R_ON_W | CS_SOCK_W_ON_R */
} cs_sock_t;

/* s->cross: the reader waits for writability (a TLS read that must write
 * first), the writer for readability (a TLS write that must read first,
 * in a renegotiation). The thread keeps its role: a read stays the
 * socket's reader whatever it waits for, as in OpenResty, where such a
 * wait is nginx's business (ngx_ssl_handle_recv) and the other direction
 * stays free. */
#define CS_SOCK_R_ON_W 1
#define CS_SOCK_W_ON_R 2

/*
 * The byte transport under a TCP cosocket: plain (cs_net) today, TLS next.
 * The receive patterns (cs_buffer) and the parking code only see this.
 * recv/send return > 0 bytes, CS_AGAIN, CS_CLOSED (recv: the peer closed)
 * or CS_ERROR (errno set). On CS_AGAIN, *want says which readiness to wait
 * for: EV_READ or EV_WRITE (a TLS read may have to write first).
 * `kernel_buffered`: all its buffering is the kernel's, so a short read
 * means drained (the edge-triggered shortcut of cs_tcp_fill applies).
 */
typedef struct cs_transport_s {
    const char *name;
    ssize_t (*recv)(void *io, int fd, char *buf, size_t len, short *want);
    ssize_t (*send)(void *io, int fd, const char *buf, size_t len,
                    short *want);
    /* the connection is being closed; fd is still open (a TLS close_notify
     * may go out), or -1 when it was closed already */
    void (*free)(void *io, int fd);
    /* what an idle connection holds: CS_OK (nothing; a TLS session
     * ticket is consumed), CS_CLOSED (the peer closed) or CS_ERROR (data
     * nobody asked for, or an error) */
    int (*idle)(void *io, int fd);
    /* bytes received and decoded but not read yet (TLS records) */
    size_t (*pending)(void *io);
    int kernel_buffered;
} cs_transport_t;

extern const cs_transport_t cs_transport_plain;

/* how a parked socket operation was woken: th->wake */
enum { CS_SOCK_READY = CS_WAKE_OK, CS_SOCK_TIMEOUT = CS_WAKE_TIMEOUT,
       CS_SOCK_CLOSED = CS_WAKE_CLOSED };

/* an fd became one of ours (nonblocking already): counted in stats */
void cs_sock_attach(cs_sock_t *s, cs_sched_t *S, int fd);

/* [-0, +0, v] parks th, as s's reader (role EV_READ: its read timeout
 * applies) or writer (EV_WRITE), until s->fd is readable (what EV_READ)
 * or writable (EV_WRITE), or timeout_ms pass without it (0: no timeout).
 * Raises if the event cannot be created. Continues in k. */
int cs_sock_park(lua_State *L, cs_sock_t *s, cs_thread_t *th, short role,
                 short what, int timeout_ms, const char *on,
                 lua_KContext ctx, lua_KFunction k);

/* the same, but a kill of th runs cleanup (with th->data == s), which
 * must call cs_sock_cleanup, the default: the operation is cancelled and
 * the socket closed */
int cs_sock_park_with(lua_State *L, cs_sock_t *s, cs_thread_t *th,
                      short role, short what, int timeout_ms, const char *on,
                      cs_cleanup_pt cleanup, lua_KContext ctx,
                      lua_KFunction k);
void cs_sock_cleanup(cs_sched_t *S, cs_thread_t *th);
/* the continuation of a parked operation calls this first when it resumes
 * (status LUA_YIELD): th stops being s's reader or writer (the socket
 * stays busy with th from the park until then, the wake-up included) */
void cs_sock_resumed(cs_sock_t *s, cs_thread_t *th);

/* a read (dir EV_READ) or a write (EV_WRITE) of s went through: the
 * thread of the other direction that waits for dir's readiness is woken
 * to try again (the record layer may have moved for it), as nginx posts
 * the other event after a TLS read or write */
void cs_sock_moved(cs_sock_t *s, short dir);

/* frees the libevent write event, if any (sends rarely wait) */
void cs_sock_drop_write_event(cs_sock_t *s);

/* wakes parked threads with "closed", frees the events, closes the fd */
void cs_sock_close(cs_sock_t *s);

/* detaches the fd (for the connection pool): frees the events, keeps it */
int cs_sock_detach(cs_sock_t *s);

/* [-0, +2, -] nil, err */
int cs_sock_fail(lua_State *L, const char *err);
/* [-0, +0|+3, m] the host at 2 (a string) and the port of a cosocket's
 * connect or setpeername, as OpenResty parses them (cs_net_split_host):
 * 0 with *a filled (an IP literal, a unix path); 1 for a name to resolve,
 * with 2 replaced by the name alone and 3 by the port (one given in the
 * host string wins); or 2 with nil, OpenResty's "failed to parse host
 * name" message pushed (and the message under them) */
int cs_sock_parse_host(lua_State *L, int port, cs_addr_t *a);
/* [-0, +0, -] the number (or numeric string) at idx as OpenResty's
 * lua_tointeger on LuaJIT takes it: an integral value as it is, a float
 * truncated toward zero; NaN, infinity and other floats below -1 are -1,
 * whatever does not fit is LUA_MAXINTEGER */
lua_Integer cs_sock_int_arg(lua_State *L, int idx);
/* [-0, +0, v] the same, raising for what is no number (luaL_checkinteger
 * on LuaJIT) */
lua_Integer cs_sock_check_int(lua_State *L, int idx);
/* raises OpenResty's message for close() given arguments (tcp and udp) */
/* [-0, +0, v] raises OpenResty's "expecting n arguments (including the
 * object), but got N" (for a call that has not exactly n) */
int cs_sock_argc(lua_State *L, int n);
int cs_sock_close_argc(lua_State *L);
/* [-0, +0, v] raises OpenResty's message when a constructor (tcp(),
 * udp()) was given arguments */
void cs_sock_ctor_noargs(lua_State *L);

/* [-0, +0, m] lua_tolstring, but a float is written as OpenResty writes
 * it: "%.14g" as LuaJIT's tostring (3.0 as "3"), and as data to send
 * (as_data: a number given to send, or one inside its table) one that is
 * a whole int32 as that int (-0.0 as "0"), as ngx_http_lua_write_num
 * (recorded in spec/59). Integers stay exact. */
const char *cs_sock_tolstring(lua_State *L, int idx, int as_data,
                              size_t *len);

/* [-0, +1|2, m] the peer's (peer) or the local address of fd: host, port,
 * or "unix:/path"; nil, err when closed or on error */
int cs_sock_push_addr(lua_State *L, int fd, int peer);

/* {====== asynchronous name resolution ====== */

#define CS_DNS_MAX 16

typedef struct cs_dns_s cs_dns_t; /* one query; owned by the callback */

/*
 * Resolves host (a name: the caller handles literals) for family
 * (AF_UNSPEC, AF_INET, AF_INET6). Returns CS_OK when the answer is already
 * there (hosts file), CS_AGAIN when the caller must park with
 * cs_dns_park(), CS_ERROR with a message at L's top... see cs_socket.c.
 */
int cs_dns_start(cs_sched_t *S, lua_State *L, const char *host, int family,
                 cs_dns_t **out);
int cs_dns_park(lua_State *L, cs_dns_t *q, cs_thread_t *th, lua_KContext ctx,
                lua_KFunction k);
/* the same, but a kill of th runs cleanup (with th->data == data), which
 * must set th->data = q and call cs_dns_cleanup, the default */
int cs_dns_park_with(lua_State *L, cs_dns_t *q, cs_thread_t *th,
                     cs_cleanup_pt cleanup, void *data, lua_KContext ctx,
                     lua_KFunction k);
void cs_dns_cleanup(cs_sched_t *S, cs_thread_t *th);
/* after CS_OK or the wake-up: the addresses (port 0) or an error message;
 * frees q. Returns the number of addresses, 0 with *err set on failure. */
int cs_dns_result(cs_dns_t *q, const char *host, cs_addr_t *addrs, int max,
                  char *err, size_t errlen);

/* *slot = q until q is consumed (cs_dns_result), or given up because its
 * thread was killed or cs_dns_cancel: then *slot = NULL. Lets a socket
 * know it is resolving. */
void cs_dns_set_owner(cs_dns_t *q, cs_dns_t **slot);

/* close() from another thread: the thread parked for q's answer is woken
 * with CS_WAKE_CLOSED and q is given up (its continuation must not touch
 * it): 1. When the answer is already in and the thread posted, nothing
 * changes: 0 (the continuation still consumes q). */
int cs_dns_cancel(cs_dns_t *q);

/* frees S's resolver (from the scheduler's __gc) */
void cs_dns_free(cs_sched_t *S);

/* makes the sockets' epoll set (Linux; with the event base, so that its
 * fd is there from the first cs.run on); without it, or if it cannot be
 * made, each socket gets libevent events. Frees it (the sockets are
 * gone). */
void cs_poll_open(cs_sched_t *S);
void cs_poll_free(cs_sched_t *S);

/*
 * Something other than a cosocket watching an fd for reading through the
 * epoll set: an idle pooled connection. Its fd's registration passes from
 * the cosocket to the watcher and back with one epoll_ctl each way.
 * `ready` is called from the loop (it may close the fd: cs_poll_unwatch
 * first).
 */
typedef struct cs_watch_s cs_watch_t;
struct cs_watch_s {
    void (*ready)(cs_watch_t *w);
};

/* s's fd, about to be detached from s, is watched by w instead: 1; 0
 * when the epoll set is not in use (the caller watches with libevent) */
int cs_poll_watch(cs_sock_t *s, cs_watch_t *w);

/* the fd a watcher had goes back to cosocket s, attached to it since */
void cs_poll_rewatch(cs_sock_t *s);

/* a watcher's fd leaves the epoll set */
void cs_poll_unwatch(cs_sched_t *S, int fd);

/* the loop's wait for I/O, up to timeout_ms (-1: no limit), on the epoll
 * set alone when libevent has nothing else to watch: 1; else 0 (the
 * caller runs libevent's loop) */
int cs_poll_wait(cs_sched_t *S, int timeout_ms);

/* }====== */

/* cs.resolve and cs.socket */
void cs_socket_open(lua_State *L, cs_sched_t *S);
/* add their functions to the cs.socket table at L's top */
void cs_tcp_open(lua_State *L, cs_sched_t *S);
void cs_udp_open(lua_State *L, cs_sched_t *S);

#endif
