/*
 * Lua-free POSIX socket plumbing; see cs_net.h for the contract and the
 * errno -> string table. Every socket system call of corosched is made
 * here, which is what lets a -DCS_TESTING build shorten I/O and inject
 * failures without LD_PRELOAD. The testing build's allocation-failure hook
 * (cs_alloc.h) lives here too, with the other test hooks.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <poll.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cs_net.h"
#include "cs_alloc.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* the BSDs and macOS: SO_NOSIGPIPE per socket */
#endif

/* longest IP literal we parse: an IPv6 address with an embedded IPv4 one
 * (45), '%', a scope (an interface name or a 32-bit number) and the NUL */
#define CS_NET_LITERAL_MAX (INET6_ADDRSTRLEN + 1 + IF_NAMESIZE + 16)

/* what cs_net_inject() can make fail */
enum {
    CS_NET_OP_SOCKET,
    CS_NET_OP_CONNECT,
    CS_NET_OP_ACCEPT,
    CS_NET_OP_RECV,
    CS_NET_OP_SEND,
    CS_NET_OP_MAX
};

/* short-I/O alternation is kept per fd and direction */
enum {
    CS_NET_DIR_RECV,
    CS_NET_DIR_SEND
};


/* ---------------------------------------------------------------------- */
/* test hooks                                                              */
/* ---------------------------------------------------------------------- */

#ifdef CS_TESTING

#define CS_NET_SHORT_FDS 4096 /* fds past this get 1-byte I/O only */

typedef struct cs_net_fault_s {
    const char *name; /* op name given to cs_net_inject() */
    int err;          /* errno to fail with */
    int count;        /* calls left to fail */
} cs_net_fault_t;

static cs_net_fault_t cs_net_faults[CS_NET_OP_MAX] = {
    {"socket", 0, 0},
    {"connect", 0, 0},
    {"accept", 0, 0},
    {"recv", 0, 0},
    {"send", 0, 0},
};

static int cs_net_short_on;
/* per fd and direction: 1 when the next call does real (1-byte) I/O, 0
 * when it returns CS_AGAIN; starts at 0 */
static unsigned char cs_net_short_turn[CS_NET_SHORT_FDS][2];


/* 1 with errno set when an injected failure of op is due, else 0 */
static int
cs_net_fault(int op)
{
    cs_net_fault_t *f;

    f = &cs_net_faults[op];
    if (f->count <= 0) {
        return 0;
    }
    f->count--;
    errno = f->err;
    return 1;
}


/* starts the alternation of a new (or closed) fd again */
static void
cs_net_short_reset(int fd)
{
    if (fd >= 0 && fd < CS_NET_SHORT_FDS) {
        cs_net_short_turn[fd][CS_NET_DIR_RECV] = 0;
        cs_net_short_turn[fd][CS_NET_DIR_SEND] = 0;
    }
}


/*
 * In short-I/O mode, decides this call: 1 when it must return CS_AGAIN
 * without touching fd; else 0, with *len cut to one byte when cut is set.
 */
static int
cs_net_short(int fd, int dir, size_t *len, int cut)
{
    unsigned char *turn;

    if (!cs_net_short_on) {
        return 0;
    }
    if (cut) {
        *len = 1;
    }
    if (fd < 0 || fd >= CS_NET_SHORT_FDS) {
        return 0;
    }
    turn = &cs_net_short_turn[fd][dir];
    *turn = (unsigned char) !*turn;
    return *turn; /* was 0: this one is the CS_AGAIN turn */
}


void
cs_net_set_short_io(int on)
{
    cs_net_short_on = on != 0;
    memset(cs_net_short_turn, 0, sizeof(cs_net_short_turn));
}


/* allocation failures (cs_alloc.h) */
static unsigned long cs_alloc_n;  /* allocations seen */
static long cs_alloc_skip;         /* to let through before failing */
static int cs_alloc_left;          /* failures still to make */


int
cs_alloc_hook(void)
{
    if (cs_alloc_n++ == 0) { /* the first one: CS_ALLOC_FAIL=k arms it */
        const char *k = getenv("CS_ALLOC_FAIL");
        if (k != NULL && *k != '\0')
            cs_alloc_fail(strtol(k, NULL, 10), 1);
    }
    if (cs_alloc_left <= 0)
        return 0;
    if (cs_alloc_skip > 0) {
        cs_alloc_skip--;
        return 0;
    }
    cs_alloc_left--;
    return 1;
}


void
cs_alloc_fail(long after, int count)
{
    cs_alloc_skip = after > 0 ? after : 0;
    cs_alloc_left = count > 0 ? count : 0;
}


unsigned long
cs_alloc_count(void)
{
    return cs_alloc_n;
}


int
cs_alloc_pending(void)
{
    return cs_alloc_left;
}


int
cs_net_inject(const char *op, int err, int count)
{
    int i;

    for (i = 0; i < CS_NET_OP_MAX; i++) {
        if (op == NULL) {
            cs_net_faults[i].count = 0;
        } else if (strcmp(op, cs_net_faults[i].name) == 0) {
            cs_net_faults[i].err = err;
            cs_net_faults[i].count = count > 0 ? count : 0;
            return CS_OK;
        }
    }
    if (op == NULL) {
        return CS_OK;
    }
    errno = EINVAL;
    return CS_LIMIT;
}

#else /* !CS_TESTING */

static int
cs_net_fault(int op)
{
    (void) op;
    return 0;
}


static void
cs_net_short_reset(int fd)
{
    (void) fd;
}


static int
cs_net_short(int fd, int dir, size_t *len, int cut)
{
    (void) fd;
    (void) dir;
    (void) len;
    (void) cut;
    return 0;
}


void
cs_net_set_short_io(int on)
{
    (void) on;
}


int
cs_net_inject(const char *op, int err, int count)
{
    (void) op;
    (void) err;
    (void) count;
    errno = ENOSYS;
    return CS_ERROR;
}

#endif /* CS_TESTING */


/* ---------------------------------------------------------------------- */
/* addresses                                                               */
/* ---------------------------------------------------------------------- */

static int
cs_net_fail(int err)
{
    errno = err;
    return CS_ERROR;
}


static int
cs_net_has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n;

    n = strlen(prefix);
    return len >= n && strncasecmp(s, prefix, n) == 0;
}


int
cs_net_is_localhost(const char *host, size_t hostlen)
{
    return hostlen == sizeof("localhost") - 1
           && cs_net_has_prefix(host, hostlen, "localhost");
}


int
cs_net_is_unix(const char *host, size_t hostlen)
{
    return cs_net_has_prefix(host, hostlen, "unix:");
}


static int
cs_net_parse_unix(cs_addr_t *a, const char *path, size_t len)
{
    struct sockaddr_un *su;

    su = (struct sockaddr_un *) (void *) &a->ss;
    if (len == 0) {
        return cs_net_fail(EINVAL);
    }
    if (len >= sizeof(su->sun_path)) { /* room for the NUL, portably */
        return cs_net_fail(ENAMETOOLONG);
    }
    su->sun_family = AF_UNIX;
    memcpy(su->sun_path, path, len);
    su->sun_path[len] = '\0';
    a->len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len + 1);
    return CS_OK;
}


/* an IPv6 scope: a 32-bit decimal number, or an interface name */
static int
cs_net_parse_scope(const char *s, uint32_t *scope)
{
    unsigned int idx;

    if (*s == '\0') {
        return CS_ERROR;
    }
    if (isdigit((unsigned char) *s)) {
        const char *p;
        uint32_t v = 0;

        for (p = s; *p != '\0'; p++) {
            if (!isdigit((unsigned char) *p)
                || v > (UINT32_MAX - (uint32_t) (*p - '0')) / 10)
            {
                return CS_ERROR;
            }
            v = v * 10 + (uint32_t) (*p - '0');
        }
        *scope = v;
        return CS_OK;
    }
    idx = if_nametoindex(s); /* an ioctl on a local socket: no waiting */
    if (idx == 0) {
        return CS_ERROR;
    }
    *scope = idx;
    return CS_OK;
}


/* lit is a NUL-terminated copy we may cut */
static int
cs_net_parse_ip6(cs_addr_t *a, char *lit, int port)
{
    struct sockaddr_in6 *s6;
    char *pct;
    uint32_t scope;

    s6 = (struct sockaddr_in6 *) (void *) &a->ss;
    scope = 0;
    pct = strchr(lit, '%');
    if (pct != NULL) {
        *pct = '\0';
        if (cs_net_parse_scope(pct + 1, &scope) != CS_OK) {
            return cs_net_fail(EINVAL);
        }
    }
    if (inet_pton(AF_INET6, lit, &s6->sin6_addr) != 1) {
        return cs_net_fail(EINVAL);
    }
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t) port);
    s6->sin6_scope_id = scope;
    a->len = sizeof(struct sockaddr_in6);
    return CS_OK;
}


int
cs_net_parse_addr(cs_addr_t *a, const char *host, size_t hostlen, int port)
{
    char lit[CS_NET_LITERAL_MAX];
    struct sockaddr_in *s4;

    memset(a, 0, sizeof(*a));
    if (host == NULL || hostlen == 0 || memchr(host, '\0', hostlen) != NULL) {
        return cs_net_fail(EINVAL);
    }
    if (cs_net_is_unix(host, hostlen)) {
        return cs_net_parse_unix(a, host + 5, hostlen - 5);
    }
    if (port < 0 || port > 65535) {
        return cs_net_fail(EINVAL);
    }

    if (host[0] == '[') { /* "[v6]": only an IPv6 literal may be inside */
        if (hostlen < 3 || host[hostlen - 1] != ']'
            || hostlen - 2 >= sizeof(lit))
        {
            return cs_net_fail(EINVAL);
        }
        memcpy(lit, host + 1, hostlen - 2);
        lit[hostlen - 2] = '\0';
        return cs_net_parse_ip6(a, lit, port);
    }

    if (memchr(host, ':', hostlen) != NULL) { /* no host name has one */
        if (hostlen >= sizeof(lit)) {
            return cs_net_fail(EINVAL);
        }
        memcpy(lit, host, hostlen);
        lit[hostlen] = '\0';
        return cs_net_parse_ip6(a, lit, port);
    }

    if (hostlen >= sizeof(lit)) {
        return cs_net_fail(ENOENT); /* too long for a literal: a name */
    }
    memcpy(lit, host, hostlen);
    lit[hostlen] = '\0';
    s4 = (struct sockaddr_in *) (void *) &a->ss;
    /* inet_pton, not inet_aton: dotted quads only, as nginx's
     * ngx_inet_addr(); "127.1" or "0x7f.1" go to the resolver */
    if (inet_pton(AF_INET, lit, &s4->sin_addr) != 1) {
        return cs_net_fail(ENOENT);
    }
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t) port);
    a->len = sizeof(struct sockaddr_in);
    return CS_OK;
}


/* nginx's ngx_atoi for a port: digits only, 1..65535; else -1 */
static int
cs_net_port_text(const char *p, size_t len)
{
    int n = 0;
    size_t i;

    if (len == 0 || len > 5) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return -1;
        }
        n = n * 10 + (p[i] - '0');
    }
    return (n >= 1 && n <= 65535) ? n : -1;
}


int
cs_net_split_host(const char *host, size_t hostlen, int *port,
                  const char **lit, size_t *litlen, const char **why)
{
    const char *last = host + hostlen, *end, *colon;
    int p = *port;

    *lit = host;
    *litlen = hostlen;
    *why = NULL;
    if (cs_net_is_unix(host, hostlen)) {
        if (hostlen == 5) {
            *why = "no path in the unix domain socket";
            return CS_ERROR;
        }
        return CS_OK;
    }
    if (hostlen > 0 && host[0] == '[') { /* ngx_parse_inet6_url */
        end = memchr(host, ']', hostlen);
        if (end == NULL || memchr(end, '/', (size_t) (last - end)) != NULL) {
            *why = "invalid host";
            return CS_ERROR;
        }
        if (end + 1 < last) {
            if (end[1] != ':') {
                *why = "invalid host";
                return CS_ERROR;
            }
            if ((p = cs_net_port_text(end + 2,
                                      (size_t) (last - end - 2))) < 0) {
                *why = "invalid port";
                return CS_ERROR;
            }
        }
        if (end == host + 1) {
            *why = "no host";
            return CS_ERROR;
        }
        *litlen = (size_t) (end + 1 - host);
        *port = p;
        return CS_OK;
    }
    /* ngx_parse_inet_url */
    if (memchr(host, '/', hostlen) != NULL
        || memchr(host, '?', hostlen) != NULL) {
        *why = "invalid host";
        return CS_ERROR;
    }
    colon = memchr(host, ':', hostlen);
    if (colon != NULL) {
        if ((p = cs_net_port_text(colon + 1,
                                  (size_t) (last - colon - 1))) < 0) {
            *why = "invalid port";
            return CS_ERROR;
        }
        *litlen = (size_t) (colon - host);
    }
    if (*litlen == 0) {
        *why = "no host";
        return CS_ERROR;
    }
    *port = p;
    return CS_OK;
}


int
cs_net_addr_from_ip(cs_addr_t *a, int family, const void *ip, int port)
{
    struct sockaddr_in *s4;
    struct sockaddr_in6 *s6;

    memset(a, 0, sizeof(*a));
    if (port < 0 || port > 65535) {
        return cs_net_fail(EINVAL);
    }
    if (family == AF_INET) {
        s4 = (struct sockaddr_in *) (void *) &a->ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t) port);
        memcpy(&s4->sin_addr, ip, sizeof(s4->sin_addr));
        a->len = sizeof(struct sockaddr_in);
        return CS_OK;
    }
    if (family == AF_INET6) {
        s6 = (struct sockaddr_in6 *) (void *) &a->ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t) port);
        memcpy(&s6->sin6_addr, ip, sizeof(s6->sin6_addr));
        a->len = sizeof(struct sockaddr_in6);
        return CS_OK;
    }
    return cs_net_fail(EAFNOSUPPORT);
}


int
cs_net_addr_loopback(cs_addr_t *a, int family, int port)
{
    struct in_addr in4;

    if (family == AF_INET) {
        in4.s_addr = htonl(INADDR_LOOPBACK);
        return cs_net_addr_from_ip(a, AF_INET, &in4, port);
    }
    return cs_net_addr_from_ip(a, family, &in6addr_loopback, port);
}


int
cs_net_addr_port(const cs_addr_t *a)
{
    const struct sockaddr_in *s4;
    const struct sockaddr_in6 *s6;

    switch (a->ss.ss_family) {
    case AF_INET:
        s4 = (const struct sockaddr_in *) (const void *) &a->ss;
        return ntohs(s4->sin_port);
    case AF_INET6:
        s6 = (const struct sockaddr_in6 *) (const void *) &a->ss;
        return ntohs(s6->sin6_port);
    default:
        return 0;
    }
}


int
cs_net_addr_set_port(cs_addr_t *a, int port)
{
    struct sockaddr_in *s4;
    struct sockaddr_in6 *s6;

    if (port < 0 || port > 65535) {
        return cs_net_fail(EINVAL);
    }
    switch (a->ss.ss_family) {
    case AF_INET:
        s4 = (struct sockaddr_in *) (void *) &a->ss;
        s4->sin_port = htons((uint16_t) port);
        return CS_OK;
    case AF_INET6:
        s6 = (struct sockaddr_in6 *) (void *) &a->ss;
        s6->sin6_port = htons((uint16_t) port);
        return CS_OK;
    default:
        return cs_net_fail(EINVAL);
    }
}


/* the bytes of a unix address's path in use (0 for an unnamed socket) */
static size_t
cs_net_unix_pathlen(const cs_addr_t *a)
{
    const struct sockaddr_un *su;
    size_t off, n;

    su = (const struct sockaddr_un *) (const void *) &a->ss;
    off = offsetof(struct sockaddr_un, sun_path);
    if (a->len <= off) {
        return 0;
    }
    n = a->len - off;
    if (n > sizeof(su->sun_path)) {
        n = sizeof(su->sun_path);
    }
    if (su->sun_path[0] != '\0') { /* a file: up to the NUL, if any */
        const char *nul = memchr(su->sun_path, '\0', n);
        if (nul != NULL) {
            n = (size_t) (nul - su->sun_path);
        }
    }
    return n;
}


int
cs_net_addr_equal(const cs_addr_t *a, const cs_addr_t *b)
{
    const struct sockaddr_in *a4, *b4;
    const struct sockaddr_in6 *a6, *b6;
    const struct sockaddr_un *au, *bu;
    size_t n;

    if (a->ss.ss_family != b->ss.ss_family) {
        return 0;
    }
    switch (a->ss.ss_family) {
    case AF_INET:
        a4 = (const struct sockaddr_in *) (const void *) &a->ss;
        b4 = (const struct sockaddr_in *) (const void *) &b->ss;
        return a4->sin_port == b4->sin_port
               && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
    case AF_INET6:
        a6 = (const struct sockaddr_in6 *) (const void *) &a->ss;
        b6 = (const struct sockaddr_in6 *) (const void *) &b->ss;
        return a6->sin6_port == b6->sin6_port
               && a6->sin6_scope_id == b6->sin6_scope_id
               && memcmp(&a6->sin6_addr, &b6->sin6_addr,
                      sizeof(a6->sin6_addr))
                      == 0;
    case AF_UNIX:
        au = (const struct sockaddr_un *) (const void *) &a->ss;
        bu = (const struct sockaddr_un *) (const void *) &b->ss;
        n = cs_net_unix_pathlen(a);
        return n == cs_net_unix_pathlen(b)
               && memcmp(au->sun_path, bu->sun_path, n) == 0;
    default:
        return a->len == b->len && memcmp(&a->ss, &b->ss, a->len) == 0;
    }
}


/* "unix:/path", "unix:@abstract" or "unix:" into tmp (CS_NET_ADDRSTRLEN) */
static void
cs_net_format_unix(const cs_addr_t *a, char *tmp)
{
    const struct sockaddr_un *su;
    size_t n, o;

    su = (const struct sockaddr_un *) (const void *) &a->ss;
    n = cs_net_unix_pathlen(a);
    memcpy(tmp, "unix:", 5);
    o = 5;
    if (n > 0 && su->sun_path[0] == '\0') {
        /* Linux's abstract namespace: shown the way ss(8) shows it, for
         * reading only (cs_net_parse_addr takes '@' as a file name) */
        size_t i;

        tmp[o++] = '@';
        for (i = 1; i < n && su->sun_path[i] != '\0'; i++) {
            tmp[o++] = su->sun_path[i];
        }
    } else {
        memcpy(tmp + o, su->sun_path, n);
        o += n;
    }
    tmp[o] = '\0';
}


int
cs_net_format_addr(const cs_addr_t *a, char *buf, size_t buflen, int *port)
{
    char tmp[CS_NET_ADDRSTRLEN];
    const struct sockaddr_in *s4;
    const struct sockaddr_in6 *s6;
    size_t n;
    int p;

    if (buflen > 0) {
        buf[0] = '\0';
    }
    p = 0;
    switch (a->ss.ss_family) {
    case AF_INET:
        s4 = (const struct sockaddr_in *) (const void *) &a->ss;
        if (a->len < sizeof(*s4)
            || inet_ntop(AF_INET, &s4->sin_addr, tmp, sizeof(tmp)) == NULL)
        {
            return cs_net_fail(EAFNOSUPPORT);
        }
        p = ntohs(s4->sin_port);
        break;
    case AF_INET6:
        s6 = (const struct sockaddr_in6 *) (const void *) &a->ss;
        if (a->len < sizeof(*s6)
            || inet_ntop(AF_INET6, &s6->sin6_addr, tmp, INET6_ADDRSTRLEN)
                   == NULL)
        {
            return cs_net_fail(EAFNOSUPPORT);
        }
        if (s6->sin6_scope_id != 0) { /* numeric: parses back the same */
            n = strlen(tmp);
            snprintf(tmp + n, sizeof(tmp) - n, "%%%lu",
                (unsigned long) s6->sin6_scope_id);
        }
        p = ntohs(s6->sin6_port);
        break;
    case AF_UNIX:
        cs_net_format_unix(a, tmp);
        break;
    default:
        return cs_net_fail(EAFNOSUPPORT);
    }

    n = strlen(tmp);
    if (n >= buflen) {
        return cs_net_fail(ENOSPC);
    }
    memcpy(buf, tmp, n + 1);
    if (port != NULL) {
        *port = p;
    }
    return p;
}


/* ---------------------------------------------------------------------- */
/* sockets                                                                 */
/* ---------------------------------------------------------------------- */

/* closes fd keeping errno; for the error paths */
static void
cs_net_close_keep_errno(int fd)
{
    int saved;

    saved = errno;
    cs_net_short_reset(fd);
    (void) close(fd);
    errno = saved;
}


/* O_NONBLOCK, FD_CLOEXEC and no SIGPIPE where the socket call could not
 * set them at once (systems without SOCK_NONBLOCK / accept4, macOS) */
#if !defined(SOCK_NONBLOCK) || defined(SO_NOSIGPIPE)
#define CS_NET_SETUP_FD 1

static int
cs_net_setup_fd(int fd)
{
#ifdef SO_NOSIGPIPE
    int on = 1;
#endif
#ifndef SOCK_NONBLOCK
    int fl;
#endif

#ifdef SO_NOSIGPIPE
    if (setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof(on)) == -1) {
        return -1;
    }
#endif
#ifndef SOCK_NONBLOCK
    fl = fcntl(fd, F_GETFL);
    if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1
        || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
    {
        return -1;
    }
#endif
    return 0;
}
#endif


/* a new fd from socket() or accept(): nonblocking and close-on-exec where
 * the flags could not say so, and a fresh short-I/O alternation; the fd,
 * or -1 with errno (the fd is closed then) */
static int
cs_net_adopt_fd(int fd)
{
#ifdef CS_NET_SETUP_FD
    if (cs_net_setup_fd(fd) == -1) {
        cs_net_close_keep_errno(fd);
        return -1;
    }
#endif
    cs_net_short_reset(fd);
    return fd;
}


int
cs_net_socket(int family, int type)
{
    int fd;

    while (cs_net_fault(CS_NET_OP_SOCKET)) {
        if (errno != EINTR) {
            return -1;
        }
    }
#ifdef SOCK_NONBLOCK
    fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    fd = socket(family, type, 0);
#endif
    if (fd == -1) {
        return -1;
    }
    return cs_net_adopt_fd(fd);
}




/* what a failed connect(2) means for the caller */
static int
cs_net_connect_rc(void)
{
    switch (errno) {
    case EINPROGRESS: /* the usual answer of a nonblocking TCP connect */
    case EALREADY:    /* asked again while still in progress */
    case EINTR:       /* POSIX: the connection goes on asynchronously */
        return CS_AGAIN;
    case EISCONN: /* asked again after it completed */
        return CS_OK;
    default: /* EAGAIN from a unix socket means a full backlog: failed */
        return CS_ERROR;
    }
}


int
cs_net_connect(int fd, const cs_addr_t *a)
{
    while (cs_net_fault(CS_NET_OP_CONNECT)) {
        if (errno != EINTR) { /* an injected EINTR: nothing was started */
            return cs_net_connect_rc();
        }
    }
    if (connect(fd, (const struct sockaddr *) (const void *) &a->ss, a->len)
        == 0)
    {
        return CS_OK;
    }
    return cs_net_connect_rc();
}


int
cs_net_connect_result(int fd)
{
    int err;
    socklen_t len;

    err = 0;
    len = sizeof(err);
    /* Linux and the BSDs report the failure in err; Solaris in errno */
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) {
        return CS_ERROR;
    }
    if (err != 0) {
        return cs_net_fail(err);
    }
    return CS_OK;
}


int
cs_net_idle_state(int fd)
{
#ifdef POLLRDHUP
    struct pollfd p;
#endif
    int n;
    char c;

#ifdef POLLRDHUP
    p.fd = fd;
    p.events = POLLIN | POLLRDHUP;
    p.revents = 0;
    do {
        n = poll(&p, 1, 0);
    } while (n == -1 && errno == EINTR);
    if (n == -1)
        return CS_ERROR;
    if (p.revents & (POLLRDHUP | POLLHUP))
        return CS_CLOSED;
    if (p.revents == 0)
        return CS_OK;
    if (!(p.revents & POLLERR))
        return CS_ERROR; /* data */
#endif
    /* an error, or no POLLRDHUP here: a peek says which */
    n = (int) recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return CS_CLOSED;
    if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return CS_OK;
    return CS_ERROR;
}


int
cs_net_bind(int fd, const cs_addr_t *a)
{
    if (bind(fd, (const struct sockaddr *) (const void *) &a->ss, a->len)
        == -1)
    {
        return CS_ERROR;
    }
    return CS_OK;
}


int
cs_net_bind_local(int fd, const cs_addr_t *a)
{
#ifdef IP_BIND_ADDRESS_NO_PORT
    int on = 1;

    /* no port: let connect() choose it, as nginx does (the 4-tuple then
     * only has to be unique, not the local port) */
    if (cs_net_addr_port(a) == 0 && a->ss.ss_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on,
                          sizeof(on));
    }
#endif
    return cs_net_bind(fd, a);
}


int
cs_net_listen(const cs_addr_t *a, int backlog, int reuseaddr, int reuseport)
{
    int fd, on;

    fd = cs_net_socket(a->ss.ss_family, SOCK_STREAM);
    if (fd == -1) {
        return -1;
    }
    on = 1;
    if (reuseaddr
        && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1)
    {
        goto failed;
    }
    if (reuseport) {
#ifdef SO_REUSEPORT
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) == -1) {
            goto failed;
        }
#else
        errno = ENOPROTOOPT;
        goto failed;
#endif
    }
    if (cs_net_bind(fd, a) != CS_OK
        || listen(fd, backlog > 0 ? backlog : SOMAXCONN) == -1)
    {
        goto failed;
    }
    return fd;

failed:
    cs_net_close_keep_errno(fd);
    return -1;
}


/* accept(2) errors that concern one dead connection, not the listener:
 * take the next one (Linux passes on the new socket's network errors) */
static int
cs_net_accept_retry(int err)
{
    switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
#ifdef __linux__
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
#ifdef ENONET
    case ENONET:
#endif
    case EHOSTUNREACH:
    case ENETUNREACH:
#endif
        return 1;
    default:
        return 0;
    }
}


int
cs_net_accept(int lfd, cs_addr_t *peer)
{
    cs_addr_t dummy;
    int fd;

    if (peer == NULL) {
        peer = &dummy;
    }
    for (;;) {
        peer->len = sizeof(peer->ss);
        if (cs_net_fault(CS_NET_OP_ACCEPT)) {
            fd = -1;
        } else {
#ifdef SOCK_NONBLOCK
            fd = accept4(lfd, (struct sockaddr *) (void *) &peer->ss,
                &peer->len, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
            fd = accept(lfd, (struct sockaddr *) (void *) &peer->ss,
                &peer->len);
#endif
        }
        if (fd != -1) {
            break;
        }
        if (!cs_net_accept_retry(errno)) {
            return -1;
        }
    }
    return cs_net_adopt_fd(fd);
}


/* what a failed recv/send means for the caller (EINTR is retried before) */
static ssize_t
cs_net_io_rc(void)
{
#if EWOULDBLOCK != EAGAIN
    if (errno == EWOULDBLOCK) {
        errno = EAGAIN;
    }
#endif
    return errno == EAGAIN ? CS_AGAIN : CS_ERROR;
}


static ssize_t
cs_net_recv_flags(int fd, char *buf, size_t len, int dgram)
{
    ssize_t n;

    if (len == 0 && !dgram) {
        return 0;
    }
    if (cs_net_short(fd, CS_NET_DIR_RECV, &len, !dgram)) {
        errno = EAGAIN;
        return CS_AGAIN;
    }
    do {
        n = cs_net_fault(CS_NET_OP_RECV) ? -1 : recv(fd, buf, len, 0);
    } while (n == -1 && errno == EINTR);

    if (n > 0 || (n == 0 && dgram)) {
        return n;
    }
    if (n == 0) {
        return CS_CLOSED;
    }
    return cs_net_io_rc();
}


ssize_t
cs_net_recv(int fd, char *buf, size_t len)
{
    return cs_net_recv_flags(fd, buf, len, 0);
}


ssize_t
cs_net_recvdgram(int fd, char *buf, size_t len)
{
    return cs_net_recv_flags(fd, buf, len, 1);
}


/* one send(2) with MSG_NOSIGNAL, EINTR retried */
static ssize_t
cs_net_send_once(int fd, const char *buf, size_t len)
{
    ssize_t n;

    do {
        n = cs_net_fault(CS_NET_OP_SEND) ? -1
                                          : send(fd, buf, len, MSG_NOSIGNAL);
    } while (n == -1 && errno == EINTR);

    if (n >= 0) {
        return n;
    }
    return cs_net_io_rc();
}


ssize_t
cs_net_send(int fd, const char *buf, size_t len)
{
    if (len == 0) {
        return 0;
    }
    if (cs_net_short(fd, CS_NET_DIR_SEND, &len, 1)) {
        errno = EAGAIN;
        return CS_AGAIN;
    }
    return cs_net_send_once(fd, buf, len);
}


ssize_t
cs_net_senddgram(int fd, const char *buf, size_t len)
{
    return cs_net_send_once(fd, buf, len);
}


ssize_t
cs_net_recvfrom(int fd, char *buf, size_t len, cs_addr_t *from)
{
    ssize_t n;

    memset(from, 0, sizeof(*from));
    if (cs_net_short(fd, CS_NET_DIR_RECV, &len, 0)) {
        errno = EAGAIN;
        return CS_AGAIN;
    }
    do {
        from->len = sizeof(from->ss);
        n = cs_net_fault(CS_NET_OP_RECV)
                ? -1
                : recvfrom(fd, buf, len, 0,
                           (struct sockaddr *) (void *) &from->ss,
                           &from->len);
    } while (n == -1 && errno == EINTR);
    if (n >= 0) {
        return n;
    }
    return cs_net_io_rc();
}


ssize_t
cs_net_sendto(int fd, const char *buf, size_t len, const cs_addr_t *to)
{
    ssize_t n;

    do {
        n = cs_net_fault(CS_NET_OP_SEND)
                ? -1
                : sendto(fd, buf, len, MSG_NOSIGNAL,
                         (const struct sockaddr *) (const void *) &to->ss,
                         to->len);
    } while (n == -1 && errno == EINTR);
    if (n >= 0) {
        return n;
    }
    return cs_net_io_rc();
}


int
cs_net_peername(int fd, cs_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    a->len = sizeof(a->ss);
    if (getpeername(fd, (struct sockaddr *) (void *) &a->ss, &a->len) == -1) {
        a->len = 0;
        return CS_ERROR;
    }
    return CS_OK;
}


int
cs_net_sockname(int fd, cs_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    a->len = sizeof(a->ss);
    if (getsockname(fd, (struct sockaddr *) (void *) &a->ss, &a->len) == -1) {
        a->len = 0;
        return CS_ERROR;
    }
    return CS_OK;
}


/* an option name -> level and optname; 0 when unknown. bool: the value is
 * a switch (stored as 0/1) rather than a size */
static int
cs_net_option(const char *name, int *level, int *opt, int *bool_)
{
    if (name == NULL) {
        return 0;
    }
    *level = SOL_SOCKET;
    *bool_ = 1;
    if (strcmp(name, "keepalive") == 0) {
        *opt = SO_KEEPALIVE;
    } else if (strcmp(name, "reuseaddr") == 0) {
        *opt = SO_REUSEADDR;
    } else if (strcmp(name, "tcp-nodelay") == 0) {
        *level = IPPROTO_TCP;
        *opt = TCP_NODELAY;
    } else if (strcmp(name, "sndbuf") == 0) {
        *opt = SO_SNDBUF;
        *bool_ = 0;
    } else if (strcmp(name, "rcvbuf") == 0) {
        *opt = SO_RCVBUF;
        *bool_ = 0;
    } else {
        return 0;
    }
    return 1;
}


int
cs_net_setoption(int fd, const char *name, int value)
{
    int level, opt, bool_;

    if (!cs_net_option(name, &level, &opt, &bool_)) {
        errno = ENOPROTOOPT;
        return CS_LIMIT;
    }
    if (bool_) {
        value = value != 0;
    } else if (value < 0) {
        return cs_net_fail(EINVAL);
    }
    if (setsockopt(fd, level, opt, &value, sizeof(value)) == -1) {
        return CS_ERROR;
    }
    return CS_OK;
}


int
cs_net_getoption(int fd, const char *name, int *value)
{
    int level, opt, bool_, v;
    socklen_t len;

    if (!cs_net_option(name, &level, &opt, &bool_)) {
        errno = ENOPROTOOPT;
        return CS_LIMIT;
    }
    v = 0;
    len = sizeof(v);
    if (getsockopt(fd, level, opt, &v, &len) == -1) {
        return CS_ERROR;
    }
    *value = bool_ ? v != 0 : v;
    return CS_OK;
}


int
cs_net_shutdown(int fd, int how)
{
    if (shutdown(fd, how) == -1) {
        return CS_ERROR;
    }
    return CS_OK;
}


int
cs_net_close(int fd)
{
    cs_net_short_reset(fd);
    if (close(fd) == -1 && errno != EINTR && errno != EINPROGRESS) {
        return CS_ERROR; /* EINTR: Linux has released fd all the same */
    }
    return CS_OK;
}


/* ---------------------------------------------------------------------- */
/* error strings                                                           */
/* ---------------------------------------------------------------------- */

/* glibc's strerror() text, lowercased: what OpenResty pushes (cs_net.h) */
static const char *
cs_net_errstr(int err)
{
    switch (err) {
    case 0:
        return "error";
    case ECONNREFUSED:
        return "connection refused";
    case ECONNRESET:
        return "connection reset by peer";
    case EPIPE:
        return "broken pipe";
    case ETIMEDOUT:
        return "connection timed out";
    case EHOSTUNREACH:
        return "no route to host";
    case ENETUNREACH:
        return "network is unreachable";
    case ENETDOWN:
        return "network is down";
    case EHOSTDOWN:
        return "host is down";
#ifdef ENONET
    case ENONET:
        return "machine is not on the network";
#endif
    case ECONNABORTED:
        return "software caused connection abort";
    case EADDRINUSE:
        return "address already in use";
    case EADDRNOTAVAIL:
        return "cannot assign requested address";
    case EAFNOSUPPORT:
        return "address family not supported by protocol";
    case EPFNOSUPPORT:
        return "protocol family not supported";
    case EPROTONOSUPPORT:
        return "protocol not supported";
    case EPROTOTYPE:
        return "protocol wrong type for socket";
    case ESOCKTNOSUPPORT:
        return "socket type not supported";
    case ENOPROTOOPT:
        return "protocol not available";
    case EPROTO:
        return "protocol error";
    case EOPNOTSUPP:
        return "operation not supported";
    case ENOTCONN:
        return "transport endpoint is not connected";
    case EISCONN:
        return "transport endpoint is already connected";
    case ESHUTDOWN:
        return "cannot send after transport endpoint shutdown";
    case EDESTADDRREQ:
        return "destination address required";
    case EMSGSIZE:
        return "message too long";
    case ENOTSOCK:
        return "socket operation on non-socket";
    case EBADF:
        return "bad file descriptor";
    case EINVAL:
        return "invalid argument";
    case EFAULT:
        return "bad address";
    case EAGAIN:
        return "resource temporarily unavailable";
    case EINPROGRESS:
        return "operation now in progress";
    case EALREADY:
        return "operation already in progress";
    case EINTR:
        return "interrupted system call";
    case ENOBUFS:
        return "no buffer space available";
    case ENOMEM:
        return "cannot allocate memory";
    case EMFILE:
        return "too many open files";
    case ENFILE:
        return "too many open files in system";
    case EACCES:
        return "permission denied";
    case EPERM:
        return "operation not permitted";
    case ENOENT:
        return "no such file or directory";
    case ENOTDIR:
        return "not a directory";
    case ENAMETOOLONG:
        return "file name too long";
    case ELOOP:
        return "too many levels of symbolic links";
    case EROFS:
        return "read-only file system";
    case EIO:
        return "input/output error";
    case ENOSYS:
        return "function not implemented";
    default:
        return NULL;
    }
}


const char *
cs_net_strerror(int err)
{
    static __thread char buf[128];
    const char *s;
    size_t i;

#if EWOULDBLOCK != EAGAIN
    if (err == EWOULDBLOCK) {
        err = EAGAIN;
    }
#endif
    s = cs_net_errstr(err);
    if (s != NULL) {
        return s;
    }
    s = strerror(err);
    for (i = 0; i < sizeof(buf) - 1 && s[i] != '\0'; i++) {
        buf[i] = (char) tolower((unsigned char) s[i]);
    }
    buf[i] = '\0';
    return buf;
}
