/*
 * Lua-free POSIX socket plumbing (Redis anet style). Every socket system
 * call of corosched goes through this layer: nonblocking + close-on-exec
 * sockets, connect in progress, accept4, send with MSG_NOSIGNAL, numeric
 * address parsing and formatting, and errno -> the error strings that
 * OpenResty's cosockets return. It knows nothing of Lua or libevent: it
 * never waits, it only says CS_AGAIN and lets the caller park.
 *
 * Return conventions (cs_rc.h):
 *   int functions     CS_OK, or CS_ERROR with errno set; a few return an fd
 *                     or -1 with errno, as POSIX does (said per function).
 *   stream I/O        > 0 bytes moved, CS_AGAIN (EAGAIN/EWOULDBLOCK),
 *                     CS_CLOSED (the peer closed: recv returned 0), or
 *                     CS_ERROR (errno). EINTR is retried inside.
 *   datagram I/O      the same, except that a 0-byte datagram is 0.
 *
 * Error strings: cs_net_strerror(err) is what an OpenResty user sees for an
 * I/O failure with that errno. lua-nginx-module
 * (ngx_http_lua_socket_prepare_error_retvals, the NGX_HTTP_LUA_SOCKET_FT_ERROR
 * branch) pushes ngx_strerror(errno) lowercased "for compatibility with
 * LuaSocket", and ngx_strerror is the C library's strerror() text (glibc's
 * wording on the Linux builds everybody runs). Its own conditions have their
 * own strings, which the callers push themselves, not from an errno: an
 * expired timer is "timeout", a peer's EOF is "closed" (FT_CLOSED), a failed
 * allocation "no memory". So a kernel ETIMEDOUT (TCP retransmissions or
 * keepalive probes exhausted) reads "connection timed out", not "timeout",
 * exactly as in OpenResty. The table pins glibc's wording, so a musl build
 * says the same thing:
 *
 *   0                "error"          (OpenResty: FT_ERROR with no errno)
 *   ECONNREFUSED     "connection refused"
 *   ECONNRESET       "connection reset by peer"
 *   EPIPE            "broken pipe"
 *   ETIMEDOUT        "connection timed out"
 *   EHOSTUNREACH     "no route to host"
 *   ENETUNREACH      "network is unreachable"
 *   ENETDOWN         "network is down"
 *   EHOSTDOWN        "host is down"
 *   ENONET           "machine is not on the network"
 *   ECONNABORTED     "software caused connection abort"
 *   EADDRINUSE       "address already in use"
 *   EADDRNOTAVAIL    "cannot assign requested address"
 *   EAFNOSUPPORT     "address family not supported by protocol"
 *   EPFNOSUPPORT     "protocol family not supported"
 *   EPROTONOSUPPORT  "protocol not supported"
 *   EPROTOTYPE       "protocol wrong type for socket"
 *   ESOCKTNOSUPPORT  "socket type not supported"
 *   ENOPROTOOPT      "protocol not available"
 *   EPROTO           "protocol error"
 *   EOPNOTSUPP       "operation not supported"
 *   ENOTCONN         "transport endpoint is not connected"
 *   EISCONN          "transport endpoint is already connected"
 *   ESHUTDOWN        "cannot send after transport endpoint shutdown"
 *   EDESTADDRREQ     "destination address required"
 *   EMSGSIZE         "message too long"
 *   ENOTSOCK         "socket operation on non-socket"
 *   EBADF            "bad file descriptor"
 *   EINVAL           "invalid argument"
 *   EFAULT           "bad address"
 *   EAGAIN           "resource temporarily unavailable"
 *   EINPROGRESS      "operation now in progress"
 *   EALREADY         "operation already in progress"
 *   EINTR            "interrupted system call"
 *   ENOBUFS          "no buffer space available"
 *   ENOMEM           "cannot allocate memory"
 *   EMFILE           "too many open files"
 *   ENFILE           "too many open files in system"
 *   EACCES           "permission denied"
 *   EPERM            "operation not permitted"
 *   ENOENT           "no such file or directory"      (unix: paths)
 *   ENOTDIR          "not a directory"
 *   ENAMETOOLONG     "file name too long"
 *   ELOOP            "too many levels of symbolic links"
 *   EROFS            "read-only file system"
 *   EIO              "input/output error"
 *   ENOSYS           "function not implemented"
 *   anything else    strerror(err) lowercased (as OpenResty would)
 */
#ifndef CS_NET_H
#define CS_NET_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "cs_rc.h"

/* any address corosched connects to, binds or reports */
typedef struct cs_addr_s {
    struct sockaddr_storage ss; /* sockaddr_in, sockaddr_in6 or sockaddr_un */
    socklen_t len;              /* the part of ss in use */
} cs_addr_t;

/* room for any cs_net_format_addr() text: "unix:" + a path + NUL, or an
 * IPv6 literal with a "%scope" */
#define CS_NET_ADDRSTRLEN 128

/*
 * Fills a from a numeric host and a port: "127.0.0.1", "::1", "[::1]",
 * "fe80::1%2" or "fe80::1%eth0" (IPv6 scope, numeric or an interface name),
 * or "unix:/path" (the prefix in any case; the port is ignored). host need
 * not be NUL-terminated. Never blocks and never resolves a name.
 * Returns CS_OK, or CS_ERROR with errno:
 *   ENOENT        host is not a literal: resolve it (asynchronously), then
 *                 use cs_net_addr_from_ip();
 *   EINVAL        invalid: port outside 0..65535 (for IP), empty host or
 *                 unix path, a NUL byte in host, a bad "[...]" or a bad
 *                 IPv6 literal or scope (no resolver can fix these);
 *   ENAMETOOLONG  the unix path does not fit sun_path.
 * A unix path starting with '@' is an ordinary file name, not Linux's
 * abstract namespace.
 */
int cs_net_parse_addr(cs_addr_t *a, const char *host, size_t hostlen,
    int port);

/*
 * The host of a cosocket's connect or setpeername as nginx's ngx_parse_url
 * reads it there (lua-nginx-module gives it the host, the port as its
 * default, and no_resolve): "unix:path" (any case) as it is; "[v6]" with
 * an optional ":port" after the bracket; anything else up to its first
 * ':', with the port after it. A port in the string replaces *port.
 * Returns CS_OK with the address or name part in *lit / *litlen (the
 * brackets kept, for cs_net_parse_addr), or CS_ERROR (*port unchanged)
 * with nginx's reason in *why: "no host", "invalid host" (a '/' or '?',
 * or a bad "[...]"), "invalid port" (not 1..65535), "no path in the unix
 * domain socket".
 * An IPv6 address goes in brackets: "::1" alone is host "" and port ":1".
 */
int cs_net_split_host(const char *host, size_t hostlen, int *port,
    const char **lit, size_t *litlen, const char **why);

/*
 * Writes a's host as text into buf ("127.0.0.1", "::1", "fe80::1%2",
 * "unix:/path"; an unnamed unix socket is "unix:", an abstract one
 * "unix:@name") and stores its port in *port (when port is not NULL; 0 for
 * unix). Returns the port (>= 0) on success, so test for < 0: CS_ERROR with
 * errno ENOSPC (buf too small; CS_NET_ADDRSTRLEN always fits) or
 * EAFNOSUPPORT (not an IPv4, IPv6 or unix address). buf is NUL-terminated
 * whenever buflen > 0.
 */
int cs_net_format_addr(const cs_addr_t *a, char *buf, size_t buflen,
    int *port);

/* 1 when host is "localhost" in any case, else 0 */
int cs_net_is_localhost(const char *host, size_t hostlen);

/* 1 when host starts with "unix:" in any case, else 0 */
int cs_net_is_unix(const char *host, size_t hostlen);

/* Fills a from a raw address (struct in_addr for AF_INET, struct in6_addr
 * for AF_INET6: what a resolver hands back) and a port. CS_OK, or CS_ERROR
 * with errno EAFNOSUPPORT or EINVAL (port outside 0..65535). */
int cs_net_addr_from_ip(cs_addr_t *a, int family, const void *ip, int port);

/* 127.0.0.1 (AF_INET) or ::1 (AF_INET6) with port: what "localhost" means
 * when the hosts file says nothing. CS_OK or CS_ERROR as above. */
int cs_net_addr_loopback(cs_addr_t *a, int family, int port);

/* the port of an IP address, 0 for anything else */
int cs_net_addr_port(const cs_addr_t *a);

/* sets the port of an IP address; CS_ERROR (EINVAL) for a bad port or a
 * non-IP address */
int cs_net_addr_set_port(cs_addr_t *a, int port);

/* 1 when a and b are the same address (family, address, port, scope; path
 * for unix), else 0 */
int cs_net_addr_equal(const cs_addr_t *a, const cs_addr_t *b);

/* A nonblocking, close-on-exec socket of family (AF_INET, AF_INET6,
 * AF_UNIX) and type (SOCK_STREAM, SOCK_DGRAM). The fd, or -1 with errno. */
int cs_net_socket(int family, int type);

/*
 * Starts a nonblocking connect (for a datagram socket: sets the peer).
 * CS_OK connected; CS_AGAIN in progress: wait until writable, then call
 * cs_net_connect_result(); CS_ERROR with errno (ECONNREFUSED, ENOENT, ...;
 * EAGAIN from a unix socket whose listener's backlog is full: not in
 * progress, the attempt failed).
 */
int cs_net_connect(int fd, const cs_addr_t *a);

/* After a connect in progress turned writable: CS_OK, or CS_ERROR with
 * errno set from SO_ERROR. */
int cs_net_connect_result(int fd);

/*
 * The state of a connected stream socket that should be idle (before it
 * goes to a connection pool), without reading: CS_OK nothing waits;
 * CS_CLOSED the peer has closed or reset it (a FIN seen, even behind
 * unread data); CS_ERROR data waits, or an error (errno set when known).
 */
int cs_net_idle_state(int fd);

/*
 * A nonblocking, close-on-exec listening stream socket bound to a, with
 * SO_REUSEADDR and SO_REUSEPORT when asked (ENOPROTOOPT where the system
 * has no SO_REUSEPORT); backlog <= 0 means SOMAXCONN. Unlinks nothing: a
 * stale unix socket file gives EADDRINUSE. The fd, or -1 with errno.
 */
int cs_net_listen(const cs_addr_t *a, int backlog, int reuseaddr,
    int reuseport);

/*
 * Accepts one connection as a nonblocking, close-on-exec fd and stores the
 * peer's address in peer (when not NULL). The fd, or -1 with errno (EAGAIN:
 * nothing pending, the caller's CS_AGAIN; EMFILE/ENFILE: out of fds, the
 * connection stays queued). EINTR, ECONNABORTED and the network errors
 * Linux passes on from the new connection (see accept(2)) are retried.
 */
int cs_net_accept(int lfd, cs_addr_t *peer);

/* Stream I/O: > 0 bytes moved, CS_AGAIN, CS_CLOSED (recv only: EOF) or
 * CS_ERROR (errno). len 0 moves nothing and returns 0. send never raises
 * SIGPIPE (MSG_NOSIGNAL; SO_NOSIGPIPE where that is the way). */
ssize_t cs_net_recv(int fd, char *buf, size_t len);
ssize_t cs_net_send(int fd, const char *buf, size_t len);

/* Datagram I/O on a connected datagram socket: the size of the datagram
 * (0 for an empty one; a longer one is cut to len, as recv does), CS_AGAIN
 * or CS_ERROR (errno; ECONNREFUSED after an ICMP port unreachable). */
ssize_t cs_net_recvdgram(int fd, char *buf, size_t len);
ssize_t cs_net_senddgram(int fd, const char *buf, size_t len);

/* the same on an unconnected one: recvfrom fills *from with the sender's
 * address, sendto sends to *to */
ssize_t cs_net_recvfrom(int fd, char *buf, size_t len, cs_addr_t *from);
ssize_t cs_net_sendto(int fd, const char *buf, size_t len,
                      const cs_addr_t *to);

/* bind(2): CS_OK or CS_ERROR (errno) */
int cs_net_bind(int fd, const cs_addr_t *a);

/* the same for the local address of a client socket: with port 0 the port
 * is chosen at connect (IP_BIND_ADDRESS_NO_PORT where there is one) */
int cs_net_bind_local(int fd, const cs_addr_t *a);

/* the peer's / the local address: CS_OK or CS_ERROR (errno) */
int cs_net_peername(int fd, cs_addr_t *a);
int cs_net_sockname(int fd, cs_addr_t *a);

/*
 * Socket options by their OpenResty names: "keepalive" (SO_KEEPALIVE),
 * "tcp-nodelay" (TCP_NODELAY), "reuseaddr" (SO_REUSEADDR): value is a
 * boolean (non-zero = on); "sndbuf" (SO_SNDBUF), "rcvbuf" (SO_RCVBUF): a
 * size in bytes (< 0 gives EINVAL). CS_OK, CS_ERROR (errno), or CS_LIMIT
 * (errno ENOPROTOOPT) for a name not in the list. getoption reads the same
 * options (the kernel doubles the buffer sizes it was given).
 */
int cs_net_setoption(int fd, const char *name, int value);
int cs_net_getoption(int fd, const char *name, int *value);

/* shutdown(2) with SHUT_RD, SHUT_WR or SHUT_RDWR: CS_OK or CS_ERROR */
int cs_net_shutdown(int fd, int how);

/* Closes fd (never retried: on EINTR the fd is gone on Linux). CS_OK, or
 * CS_ERROR (errno EBADF, EIO). */
int cs_net_close(int fd);

/* The error string for errno err (see the table above). Never NULL. The
 * table's strings are constants; other errors are written to a per-thread
 * buffer that the next such call overwrites. */
const char *cs_net_strerror(int err);

/*
 * Test hooks, live only in a -DCS_TESTING build (elsewhere they change
 * nothing: set_short_io is a no-op and inject returns CS_ERROR, errno
 * ENOSYS).
 *
 * Short-I/O mode (OpenResty's mockeagain, without LD_PRELOAD): per fd and
 * direction, calls alternate between CS_AGAIN (errno EAGAIN, the fd is not
 * touched) and a real call; a real cs_net_recv/cs_net_send moves at most
 * one byte. cs_net_recvdgram alternates too but reads the whole datagram (a
 * datagram cut to one byte would be a different message), and
 * cs_net_senddgram is left alone (UDP senders do not wait to write). The
 * first call on a new fd is the CS_AGAIN one. The fd stays ready, so a
 * level-triggered loop wakes the caller again at once: that is intended.
 * Switching the mode on or off restarts every fd's alternation.
 *
 * cs_net_inject(op, err, count): the next count calls of op fail with errno
 * err before reaching the system (EINTR is retried like a real one, so it
 * is invisible except that it uses up a count). op is "socket" (also the
 * socket of cs_net_listen), "connect", "accept", "recv" (stream and
 * datagram) or "send" (stream and datagram). count <= 0 clears op; op NULL
 * clears all. Returns CS_OK, or CS_LIMIT (errno EINVAL) for an unknown op.
 */
void cs_net_set_short_io(int on);
int cs_net_inject(const char *op, int err, int count);

#endif
