/*
 * The UDP cosocket (ngx.socket.udp's object): setpeername, bind, send,
 * receive, settimeout, close, getsockname and getpeername; and sendto and
 * receivefrom, extensions for corosched.luasocket.
 *
 * A datagram is sent at once or not at all, so send never parks; receive
 * parks on EV_READ with the read timeout, and setpeername while a host name
 * is being resolved. As in OpenResty, no error of send or receive closes
 * the socket: after a "timeout" or a "connection refused" (an ICMP port
 * unreachable answered an earlier datagram) it stays connected and usable.
 *
 * User value 1 of a "corosched.udp" userdata: the coroutine whose
 * setpeername waits for the resolver (while u->resolving).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <lua.h>
#include <lauxlib.h>

#include "cs_socket.h"
#include "cs_alloc.h"

#define CS_UDP_DEFAULT_TIMEOUT 60000 /* ms: lua_socket_read_timeout */
#define CS_UDP_STACK_SIZE 8192       /* receives up to this need no heap */
#define CS_UDP_MAX_SIZE 65536        /* receive()'s default and maximum */
#define CS_UDP_MAX_DEPTH 100         /* nested tables given to send() */


typedef struct cs_udp_s {
    cs_sock_t s;
    int timeout;               /* read timeout, ms, 0 = the default */
    unsigned gen;              /* bumped by close: resolutions are stale */
    unsigned char connected;   /* s.fd has a peer */
    unsigned char bound;       /* s.fd was bound by bind() */
    unsigned char resolving;   /* a setpeername waits for the resolver */
    unsigned char unlink_path; /* remove the unix path `local` on close */
    cs_addr_t local;           /* what bind() bound, for a unix path */
} cs_udp_t;


/* {====== helpers ====== */

static cs_udp_t *
cs_udp_check(lua_State *L)
{
    return luaL_checkudata(L, 1, CS_UDP_MT);
}


static int
cs_udp_timeout(const cs_udp_t *u)
{
    return u->timeout > 0 ? u->timeout : CS_UDP_DEFAULT_TIMEOUT;
}


/* closes the fd (waking a parked receiver with "closed") and cancels a
 * resolution in progress */
static void
cs_udp_close_fd(cs_udp_t *u)
{
    struct sockaddr_un *su = (struct sockaddr_un *) (void *) &u->local.ss;

    u->gen++;
    u->connected = 0;
    u->bound = 0;
    if (u->s.fd >= 0) {
        cs_sock_close(&u->s);
        if (u->unlink_path) /* ours while the fd was */
            unlink(su->sun_path);
    }
    u->unlink_path = 0;
}


/* a thread parked in receive was killed: the socket is closed, as by
 * close() (a unix path bound is removed, the peer and the binding are
 * forgotten) */
static void
cs_udp_cleanup(cs_sched_t *S, cs_thread_t *th)
{
    cs_udp_t *u = th->data; /* (its cs_sock_t comes first) */

    (void) S;
    cs_sock_resumed(&u->s, th);
    cs_udp_close_fd(u);
}


/* [-0, +0, -] forgets the coroutine of a pending resolution (only its own
 * when co is not NULL) */
static void
cs_udp_forget_resolver(lua_State *L, cs_udp_t *u, lua_State *co)
{
    lua_getiuservalue(L, 1, 1);
    if (co == NULL || lua_tothread(L, -1) == co) {
        u->resolving = 0;
        lua_pushnil(L);
        lua_setiuservalue(L, 1, 1);
    }
    lua_pop(L, 1);
}


/*
 * [-0, +0, -] 1 while a setpeername (of another coroutine) waits for the
 * resolver. Its coroutine is kept in user value 1: parked, it is
 * suspended; if its thread was killed, it has been closed (the DNS query
 * is cancelled by the kill), and the socket is free again.
 */
static int
cs_udp_resolving(lua_State *L, cs_udp_t *u)
{
    lua_State *co;

    if (!u->resolving)
        return 0;
    lua_getiuservalue(L, 1, 1);
    co = lua_tothread(L, -1);
    lua_pop(L, 1);
    if (co != NULL && lua_status(co) == LUA_YIELD)
        return 1;
    cs_udp_forget_resolver(L, u, NULL);
    return 0;
}


/* [-0, +0, -] 1 when setpeername and bind must say "socket busy" */
static int
cs_udp_busy(lua_State *L, cs_udp_t *u)
{
    return u->s.reader != NULL || cs_udp_resolving(L, u);
}


/* [-0, +0, v] the port at idx: a number (a float truncated) or a string
 * of one, as luaL_checkinteger on OpenResty's LuaJIT, else raises; -1 if
 * out of range */
static lua_Integer
cs_udp_port(lua_State *L, int idx)
{
    lua_Integer port = cs_sock_check_int(L, idx);

    return (port < 0 || port > 65535) ? -1 : port;
}


/* [-0, +2, m] nil, "bad port number: <port>" */
static int
cs_udp_bad_port(lua_State *L, int idx)
{
    return cs_sock_fail(L, lua_pushfstring(L, "bad port number: %I",
                                           lua_tointeger(L, idx)));
}


/* }====== */


/* {====== setpeername and bind ====== */

/* before a name is resolved: as OpenResty, the old peer is forgotten; a
 * bound socket keeps its fd (connect() replaces the association later:
 * disconnecting with AF_UNSPEC would lose a port that bind() let the
 * kernel pick) */
static void
cs_udp_disconnect(cs_udp_t *u)
{
    if (u->s.fd < 0 || !u->bound)
        cs_udp_close_fd(u);
    u->connected = 0;
}


/* [-0, +1|2, m] sets the peer to a: 1, or nil, err */
static int
cs_udp_connect(lua_State *L, cs_udp_t *u, const cs_addr_t *a)
{
    cs_addr_t any;
    int fd, e;

    if (u->s.fd >= 0 && u->bound) {
        fd = u->s.fd; /* keep the address bind() gave it */
    } else {
        cs_udp_close_fd(u); /* as OpenResty: a new socket per peer */
        fd = cs_net_socket(a->ss.ss_family, SOCK_DGRAM);
        if (fd < 0)
            return cs_sock_fail(L, cs_net_strerror(errno));
        cs_sock_attach(&u->s, u->s.S, fd);
        if (a->ss.ss_family == AF_UNIX) { /* Linux autobind: the peer */
            memset(&any, 0, sizeof(any)); /* can answer */
            any.ss.ss_family = AF_UNIX;
            any.len = sizeof(sa_family_t);
            if (cs_net_bind(fd, &any) != CS_OK)
                goto failed;
        }
    }
    u->connected = 0;
    if (cs_net_connect(fd, a) != CS_OK) /* datagrams: never in progress */
        goto failed;
    /* a bound socket's fd may hold the old peer's error (an ICMP port
     * unreachable): not the new peer's, whose socket would be new in
     * OpenResty */
    if (u->bound)
        (void) cs_net_connect_result(fd);
    u->connected = 1;
    lua_pushinteger(L, 1);
    return 1;

failed:
    e = errno;
    if (!u->bound)
        cs_udp_close_fd(u);
    return cs_sock_fail(L, cs_net_strerror(e));
}


/* the resolved address to use: the family of the bound address, else the
 * first IPv4 one (OpenResty's resolver asks for A records), else the
 * first; NULL when a bound socket's family is missing */
static cs_addr_t *
cs_udp_pick(const cs_udp_t *u, cs_addr_t *addrs, int n)
{
    cs_addr_t b;
    int i, want = AF_INET, strict = 0;

    if (u->s.fd >= 0 && u->bound && cs_net_sockname(u->s.fd, &b) == CS_OK) {
        want = b.ss.ss_family;
        strict = 1;
    }
    for (i = 0; i < n; i++) {
        if (addrs[i].ss.ss_family == want)
            return &addrs[i];
    }
    return strict ? NULL : &addrs[0];
}


/* setpeername continues here with the resolver's answer (ctx: the query);
 * stack: sock, host, port, gen */
static int
cs_udp_setpeername_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_udp_t *u = lua_touserdata(L, 1);
    const char *host = lua_tostring(L, 2);
    cs_addr_t addrs[CS_DNS_MAX], *a;
    char err[320];
    int n;

    if (status == LUA_YIELD)
        cs_udp_forget_resolver(L, u, L);
    n = cs_dns_result((cs_dns_t *) ctx, host, addrs, CS_DNS_MAX, err,
                      sizeof(err));
    if (u->gen != (unsigned) lua_tointeger(L, 4))
        return cs_sock_fail(L, "closed"); /* closed while resolving */
    if (n == 0 && cs_net_is_localhost(host, strlen(host))
        && cs_net_addr_loopback(&addrs[0], AF_INET, 0) == CS_OK)
        n = 1; /* what "localhost" means when the hosts file is silent */
    if (n == 0)
        return cs_sock_fail(L, err);
    a = cs_udp_pick(u, addrs, n);
    if (a == NULL)
        return cs_sock_fail(L, cs_net_strerror(EAFNOSUPPORT));
    cs_net_addr_set_port(a, (int) lua_tointeger(L, 3));
    return cs_udp_connect(L, u, a);
}


/* sock:setpeername(host, port) or sock:setpeername("unix:/path") */
static int
cs_udp_setpeername(lua_State *L)
{
    cs_udp_t *u;
    int n = lua_gettop(L), is_unix;
    lua_Integer port = 0;
    const char *host;
    size_t hlen;
    cs_thread_t *th;
    cs_dns_t *q;
    cs_addr_t a;

    if (n != 2 && n != 3)
        return luaL_error(L, "ngx.socket.udp setpeername: expecting 2 or 3 "
                             "arguments (including the object), but seen %d",
                          n);
    u = cs_udp_check(L);
    host = luaL_checklstring(L, 2, &hlen);
    is_unix = cs_net_is_unix(host, hlen);
    if (!is_unix && n == 3) { /* no port is port 0, as in OpenResty */
        port = cs_udp_port(L, 3);
        if (port < 0)
            return cs_udp_bad_port(L, 3);
    }
    lua_settop(L, 3);
    if (cs_udp_busy(L, u))
        return cs_sock_fail(L, "socket busy");

    switch (cs_sock_parse_host(L, (int) port, &a)) {
    case 0:
        return cs_udp_connect(L, u, &a);
    case 2:
        return 2;
    default: /* a name */
        host = lua_tostring(L, 2);
        break;
    }

    /* a host name: as OpenResty, the old peer is gone while resolving */
    th = cs_sched_current(u->s.S, L, "setpeername");
    cs_udp_disconnect(u);
    lua_pushinteger(L, (lua_Integer) u->gen);
    if (cs_dns_start(u->s.S, L, host, AF_UNSPEC, &q) == CS_OK)
        return cs_udp_setpeername_k(L, LUA_OK, (lua_KContext) q);
    u->resolving = 1;
    lua_pushthread(L);
    lua_setiuservalue(L, 1, 1);
    return cs_dns_park(L, q, th, (lua_KContext) q, cs_udp_setpeername_k);
}


/* sock:bind(host [, port]) or sock:bind("unix:/path"): the local address
 * (host: an IP address, "localhost" or "*"; port 0 or none: any) */
static int
cs_udp_bind(lua_State *L)
{
    cs_udp_t *u;
    int n = lua_gettop(L), is_unix, fresh = 0, fd, e;
    lua_Integer port = 0;
    const char *host;
    size_t hlen;
    cs_addr_t a;

    if (n != 2 && n != 3)
        return luaL_error(L, "expecting 2 or 3 arguments (including the "
                             "object), but seen %d", n);
    u = cs_udp_check(L);
    host = luaL_checklstring(L, 2, &hlen);
    is_unix = cs_net_is_unix(host, hlen);
    if (!is_unix && !lua_isnoneornil(L, 3)) {
        port = cs_udp_port(L, 3);
        if (port < 0)
            return cs_udp_bad_port(L, 3);
    }
    if (cs_udp_busy(L, u))
        return cs_sock_fail(L, "socket busy");

    if (hlen == 1 && host[0] == '*')
        host = "0.0.0.0", hlen = 7;
    else if (cs_net_is_localhost(host, hlen))
        host = "127.0.0.1", hlen = 9;
    if (is_unix) {
        if (cs_sock_parse_host(L, 0, &a) != 0) /* (never a name) */
            return 2;
    } else if (cs_net_parse_addr(&a, host, hlen, (int) port) != CS_OK) {
        return cs_sock_fail(L, "bad address"); /* names are not resolved */
    }

    fd = u->s.fd;
    if (fd < 0) {
        fd = cs_net_socket(a.ss.ss_family, SOCK_DGRAM);
        if (fd < 0)
            return cs_sock_fail(L, cs_net_strerror(errno));
        cs_sock_attach(&u->s, u->s.S, fd);
        fresh = 1;
    }
    if (cs_net_bind(fd, &a) != CS_OK) {
        e = errno;
        if (fresh)
            cs_udp_close_fd(u);
        return cs_sock_fail(L, cs_net_strerror(e));
    }
    u->bound = 1;
    if (is_unix) {
        u->local = a;
        u->unlink_path = 1;
    }
    lua_pushinteger(L, 1);
    return 1;
}

/* }====== */


/* {====== send and receive ====== */

/* [-0, +0, v] checks that the array at idx holds only strings, numbers
 * and such arrays (as OpenResty's send), and adds up their lengths */
static void
cs_udp_measure(lua_State *L, int idx, size_t *len, int depth)
{
    lua_Integer max = 0, i;
    size_t l;

    if (depth > CS_UDP_MAX_DEPTH)
        luaL_argerror(L, 2, "table nested too deeply");
    luaL_checkstack(L, 4, "table nested too deeply");
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1)
            luaL_argerror(L, 2, "non-array table found");
        if (lua_tointeger(L, -2) > max)
            max = lua_tointeger(L, -2);
        lua_pop(L, 1);
    }
    for (i = 1; i <= max; i++) {
        switch (lua_rawgeti(L, idx, i)) {
        case LUA_TSTRING:
        case LUA_TNUMBER:
            cs_sock_tolstring(L, -1, 1, &l);
            *len += l;
            break;
        case LUA_TTABLE:
            cs_udp_measure(L, lua_gettop(L), len, depth + 1);
            break;
        default:
            luaL_argerror(L, 2, lua_pushfstring(L, "bad data type %s found",
                                                luaL_typename(L, -1)));
        }
        lua_pop(L, 1);
    }
}


/* copies what cs_udp_measure measured; returns the end */
static char *
cs_udp_copy(lua_State *L, int idx, char *p)
{
    lua_Integer n = (lua_Integer) lua_rawlen(L, idx), i;
    const char *s;
    size_t l;

    for (i = 1; i <= n; i++) {
        if (lua_rawgeti(L, idx, i) == LUA_TTABLE) {
            p = cs_udp_copy(L, lua_gettop(L), p);
        } else {
            s = cs_sock_tolstring(L, -1, 1, &l);
            memcpy(p, s, l);
            p += l;
        }
        lua_pop(L, 1);
    }
    return p;
}


/* [-0, +(0|1), v] the datagram at 2 (a string, a number, a boolean, nil,
 * or an array of strings, numbers and such arrays) and its length;
 * raises for anything else */
static const char *
cs_udp_data(lua_State *L, size_t *lenp)
{
    const char *p;
    size_t len = 0;
    char *buf;

    switch (lua_type(L, 2)) {
    case LUA_TSTRING:
    case LUA_TNUMBER:
        p = cs_sock_tolstring(L, 2, 1, &len);
        break;
    case LUA_TNIL:
        p = "nil";
        len = 3;
        break;
    case LUA_TBOOLEAN:
        p = lua_toboolean(L, 2) ? "true" : "false";
        len = strlen(p);
        break;
    case LUA_TTABLE:
        cs_udp_measure(L, 2, &len, 0);
        buf = lua_newuserdatauv(L, len > 0 ? len : 1, 0);
        cs_udp_copy(L, 2, buf);
        p = buf;
        break;
    default:
        luaL_argerror(L, 2, lua_pushfstring(L, "string, number, boolean, "
                                               "nil, or array table "
                                               "expected, got %s",
                                            luaL_typename(L, 2)));
        return NULL;
    }
    *lenp = len;
    return p;
}


/* [-0, +1|2, m] what send and sendto return for a datagram of len bytes
 * of which the system call took n (-1: errno) */
static int
cs_udp_sent(lua_State *L, ssize_t n, size_t len)
{
    if (n < 0)
        return cs_sock_fail(L, cs_net_strerror(errno));
    if ((size_t) n != len)
        return cs_sock_fail(L, "partial write");
    lua_pushinteger(L, 1);
    return 1;
}


/* sock:send(data): one datagram */
static int
cs_udp_send(lua_State *L)
{
    cs_udp_t *u;
    const char *p;
    size_t len;
    ssize_t n;

    if (lua_gettop(L) != 2)
        return cs_sock_argc(L, 2);
    u = cs_udp_check(L);
    p = cs_udp_data(L, &len);
    if (u->s.fd < 0 || !u->connected)
        return cs_sock_fail(L, "closed");
    n = cs_net_senddgram(u->s.fd, p, len);
    return cs_udp_sent(L, n, len);
}


/*
 * sock:sendto(data, ip, port): one datagram to that address, from a socket
 * with no peer (made on the first call, or by bind). An extension, for
 * LuaSocket's udp:sendto (corosched.luasocket): ip is an address literal
 * or "localhost", never a name to resolve.
 */
static int
cs_udp_sendto(lua_State *L)
{
    cs_udp_t *u;
    const char *p, *host;
    size_t len, hlen;
    lua_Integer port;
    cs_addr_t a;
    ssize_t n;
    int fd;

    if (lua_gettop(L) != 4)
        return cs_sock_argc(L, 4);
    u = cs_udp_check(L);
    p = cs_udp_data(L, &len);
    host = luaL_checklstring(L, 3, &hlen);
    port = cs_udp_port(L, 4);
    if (port <= 0)
        return cs_udp_bad_port(L, 4);
    if (cs_net_is_localhost(host, hlen))
        host = "127.0.0.1", hlen = 9;
    if (cs_net_parse_addr(&a, host, hlen, (int) port) != CS_OK)
        return cs_sock_fail(L, "bad address");
    /* a thread parked in receive does not stop a send, as for send() */
    if (u->connected || cs_udp_resolving(L, u))
        return cs_sock_fail(L, u->connected ? "socket is connected"
                                            : "socket busy");
    fd = u->s.fd;
    if (fd < 0) {
        fd = cs_net_socket(a.ss.ss_family, SOCK_DGRAM);
        if (fd < 0)
            return cs_sock_fail(L, cs_net_strerror(errno));
        cs_sock_attach(&u->s, u->s.S, fd);
    }
    n = cs_net_sendto(fd, p, len, &a);
    return cs_udp_sent(L, n, len);
}


/* receive continues here when the fd is readable; stack: sock, size,
 * true for receivefrom (the sender's address is returned too), and the
 * generation of the socket (bumped by a close) */
static int
cs_udp_receive_k(lua_State *L, int status, lua_KContext ctx)
{
    cs_udp_t *u = (cs_udp_t *) ctx;
    cs_thread_t *th = u->s.S->cur;
    size_t size = (size_t) lua_tointeger(L, 2);
    int from = lua_toboolean(L, 3), port;
    char stack[CS_UDP_STACK_SIZE], *buf = stack;
    char text[CS_NET_ADDRSTRLEN];
    cs_addr_t a;
    ssize_t n;

    if (status == LUA_YIELD) {
        cs_sock_resumed(&u->s, th);
        if (th->wake == CS_SOCK_TIMEOUT)
            return cs_sock_fail(L, "timeout"); /* the socket stays usable */
        /* closed, also when a sendto made a new socket since */
        if (th->wake == CS_SOCK_CLOSED || u->s.fd < 0
            || u->gen != (unsigned) lua_tointeger(L, 4))
            return cs_sock_fail(L, "closed");
    }
    if (size > sizeof(stack)) {
        cs_sched_t *S = u->s.S;

        if (S->dgram == NULL && (S->dgram = malloc(CS_UDP_MAX_SIZE)) == NULL)
            return luaL_error(L, "not enough memory");
        buf = S->dgram;
    }
    n = from ? cs_net_recvfrom(u->s.fd, buf, size, &a)
             : cs_net_recvdgram(u->s.fd, buf, size);
    if (n >= 0) {
        lua_pushlstring(L, buf, (size_t) n);
        if (!from)
            return 1;
        if (a.len == 0 || a.ss.ss_family == AF_UNSPEC) { /* unnamed unix */
            lua_pushliteral(L, "");
            return 2;
        }
        if (cs_net_format_addr(&a, text, sizeof(text), &port) < 0)
            return cs_sock_fail(L, cs_net_strerror(errno));
        lua_pushstring(L, text);
        if (a.ss.ss_family == AF_UNIX)
            return 2;
        lua_pushinteger(L, port);
        return 3;
    }
    if (n == CS_AGAIN)
        return cs_sock_park_with(L, &u->s, th, EV_READ, EV_READ,
                                 cs_udp_timeout(u), "udp receive",
                                 cs_udp_cleanup, ctx, cs_udp_receive_k);
    return cs_sock_fail(L, cs_net_strerror(errno)); /* still usable */
}


/* receive and receivefrom: one datagram, cut to size (default and most
 * 65536, as OpenResty's, which casts size to unsigned: a negative one is
 * the most too) */
static int
cs_udp_receive_any(lua_State *L, int from)
{
    cs_udp_t *u;
    int n = lua_gettop(L);
    lua_Number size;

    if (n != 1 && n != 2)
        return luaL_error(L, "expecting 1 or 2 arguments (including the "
                             "object), but got %d", n);
    u = cs_udp_check(L);
    size = luaL_optnumber(L, 2, CS_UDP_MAX_SIZE);
    if (!(size >= 0 && size <= CS_UDP_MAX_SIZE)) /* NaN too */
        size = CS_UDP_MAX_SIZE;
    lua_settop(L, 1);
    lua_pushinteger(L, (lua_Integer) size);
    lua_pushboolean(L, from);
    lua_pushinteger(L, (lua_Integer) u->gen); /* (the fd parked on) */

    cs_sched_current(u->s.S, L, "receive");
    if (u->s.fd < 0)
        return cs_sock_fail(L, "closed");
    if (u->s.reader != NULL || cs_udp_resolving(L, u))
        return cs_sock_fail(L, "socket busy");
    return cs_udp_receive_k(L, LUA_OK, (lua_KContext) u);
}


/* sock:receive([size]) */
static int
cs_udp_receive(lua_State *L)
{
    return cs_udp_receive_any(L, 0);
}


/* sock:receivefrom([size]) -> data, ip, port (a unix path alone): an
 * extension, for LuaSocket's udp:receivefrom (corosched.luasocket) */
static int
cs_udp_receivefrom(lua_State *L)
{
    return cs_udp_receive_any(L, 1);
}

/* }====== */


/* {====== the rest of the methods ====== */

/* sock:settimeout(ms): the read timeout; 0 means the default (60 s) */
static int
cs_udp_settimeout(lua_State *L)
{
    cs_udp_t *u;
    lua_Number t;

    /* OpenResty's: (ngx_int_t) lua_tonumber, and what is not above 0
     * (no number, negative, under 1 ms) means the default */
    if (lua_gettop(L) != 2)
        return luaL_error(L, "ngx.socket settimeout: expecting at least 2 "
                             "arguments (including the object) but seen %d",
                          lua_gettop(L));
    u = cs_udp_check(L);
    t = lua_tonumber(L, 2);
    u->timeout = !(t >= 1) ? 0 : t < 2147483647.0 ? (int) t : 2147483647;
    return 0;
}


/* sock:close(): 1, or nil, "closed"; wakes a parked receiver with
 * "closed" and makes a setpeername still resolving fail with "closed" */
static int
cs_udp_close(lua_State *L)
{
    cs_udp_t *u;
    int resolving;

    if (lua_gettop(L) != 1)
        return cs_sock_close_argc(L);
    u = cs_udp_check(L);
    resolving = cs_udp_resolving(L, u);
    if (u->s.fd < 0 && !resolving)
        return cs_sock_fail(L, "closed");
    if (resolving)
        cs_udp_forget_resolver(L, u, NULL);
    cs_udp_close_fd(u);
    lua_pushinteger(L, 1);
    return 1;
}


/* __gc and __close */
static int
cs_udp__gc(lua_State *L)
{
    cs_udp_t *u = lua_touserdata(L, 1);

    cs_udp_close_fd(u);
    return 0;
}


/* sock:getpeername() -> host, port | "unix:/path" | nil, err */
static int
cs_udp_getpeername(lua_State *L)
{
    return cs_sock_push_addr(L, cs_udp_check(L)->s.fd, 1);
}


/* sock:getsockname() -> host, port | "unix:/path" | nil, err */
static int
cs_udp_getsockname(lua_State *L)
{
    return cs_sock_push_addr(L, cs_udp_check(L)->s.fd, 0);
}


static int
cs_udp__tostring(lua_State *L)
{
    cs_udp_t *u = cs_udp_check(L);

    if (u->s.fd < 0)
        lua_pushfstring(L, "corosched.udp (closed): %p", (void *) u);
    else
        lua_pushfstring(L, "corosched.udp (fd %d): %p", u->s.fd, (void *) u);
    return 1;
}


/* cs.socket.udp() */
static int
cs_udp_new(lua_State *L)
{
    cs_udp_t *u;

    cs_sock_ctor_noargs(L);
    u = lua_newuserdatauv(L, sizeof(cs_udp_t), 1);
    memset(u, 0, sizeof(*u));
    u->s.S = cs_sched_up(L);
    u->s.fd = -1;
    luaL_setmetatable(L, CS_UDP_MT);
    return 1;
}

/* }====== */


static const luaL_Reg cs_udp_methods[] = {
    {"setpeername", cs_udp_setpeername},
    {"bind", cs_udp_bind},
    {"send", cs_udp_send},
    {"receive", cs_udp_receive},
    {"sendto", cs_udp_sendto},
    {"receivefrom", cs_udp_receivefrom},
    {"settimeout", cs_udp_settimeout},
    {"close", cs_udp_close},
    {"getpeername", cs_udp_getpeername},
    {"getsockname", cs_udp_getsockname},
    {NULL, NULL}
};


/* [-0, +0, m] adds udp to the cs.socket table at L's top */
void
cs_udp_open(lua_State *L, cs_sched_t *S)
{
    luaL_newmetatable(L, CS_UDP_MT);
    lua_newtable(L);
    cs_setfuncs(L, S, cs_udp_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, cs_udp__gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, cs_udp__gc);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, cs_udp__tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    lua_pushlightuserdata(L, S);
    lua_pushcclosure(L, cs_udp_new, 1);
    lua_setfield(L, -2, "udp");
}
