/*
 * Unit test of csrc/cs_net.c on real loopback sockets: 127.0.0.1, ::1 (when
 * the machine has it) and a Unix socket in a temporary directory.
 *
 *   gcc -std=c99 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -DCS_TESTING \
 *       -Icsrc fuzz/test_net.c csrc/cs_net.c -o build/test_net
 *   ./build/test_net
 *
 * Also under -fsanitize=address,undefined, and without -DCS_TESTING (the
 * short-I/O and injection tests then check that the hooks are inert).
 * Prints "N passed, M failed" last; exits non-zero on any failure.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_net.h"

static int test_passed, test_failed;


static void
test_check(int ok, int line, const char *what)
{
    if (ok) {
        test_passed++;
        return;
    }
    test_failed++;
    printf("FAIL line %d: %s (errno %d: %s)\n", line, what, errno,
        strerror(errno));
}


static void
test_check_int(long got, long want, int line, const char *what)
{
    if (got == want) {
        test_passed++;
        return;
    }
    test_failed++;
    printf("FAIL line %d: %s is %ld, want %ld\n", line, what, got, want);
}


static void
test_check_str(const char *got, const char *want, int line, const char *what)
{
    if (got != NULL && strcmp(got, want) == 0) {
        test_passed++;
        return;
    }
    test_failed++;
    printf("FAIL line %d: %s is \"%s\", want \"%s\"\n", line, what,
        got ? got : "(null)", want);
}


#define CHECK(c)           test_check((c) ? 1 : 0, __LINE__, #c)
#define CHECK_INT(g, w)    test_check_int((long) (g), (long) (w), __LINE__, #g)
#define CHECK_STR(g, w)    test_check_str((g), (w), __LINE__, #g)
#define CHECK_ERR(rc, e)             \
    do {                             \
        long r_ = (long) (rc);       \
        int e_ = errno;              \
        CHECK_INT(r_, CS_ERROR);     \
        CHECK_INT(e_, e);            \
    } while (0)


/* poll one fd; returns revents (0 on timeout) */
static int
test_wait(int fd, short events, int ms)
{
    struct pollfd p;

    p.fd = fd;
    p.events = events;
    p.revents = 0;
    if (poll(&p, 1, ms) <= 0) {
        return 0;
    }
    return p.revents;
}


/* a listener on family's loopback, port 0; fills a with its address */
static int
test_listener(int family, cs_addr_t *a)
{
    int fd;

    if (cs_net_addr_loopback(a, family, 0) != CS_OK) {
        return -1;
    }
    fd = cs_net_listen(a, 16, 1, 0);
    if (fd == -1) {
        return -1;
    }
    if (cs_net_sockname(fd, a) != CS_OK) {
        cs_net_close(fd);
        return -1;
    }
    return fd;
}


/* connects a new socket to a, finishing a connect in progress; the fd,
 * or -1 (*inprogress counts the CS_AGAIN answers) */
static int
test_connect(const cs_addr_t *a, int type, int *inprogress)
{
    int fd, rc;

    fd = cs_net_socket(a->ss.ss_family, type);
    if (fd == -1) {
        return -1;
    }
    rc = cs_net_connect(fd, a);
    if (rc == CS_AGAIN) {
        if (inprogress != NULL) {
            (*inprogress)++;
        }
        if (!(test_wait(fd, POLLOUT, 2000) & (POLLOUT | POLLERR | POLLHUP))) {
            cs_net_close(fd);
            errno = ETIMEDOUT;
            return -1;
        }
        rc = cs_net_connect_result(fd);
    }
    if (rc != CS_OK) {
        rc = errno;
        cs_net_close(fd);
        errno = rc;
        return -1;
    }
    return fd;
}


/* accepts, waiting up to 2 s */
static int
test_accept(int lfd, cs_addr_t *peer)
{
    int fd;

    test_wait(lfd, POLLIN, 2000);
    fd = cs_net_accept(lfd, peer);
    return fd;
}


/* a connected stream pair over family's loopback (or unix path); 0 or -1 */
static int
test_pair(const cs_addr_t *la, int lfd, int *c, int *s)
{
    *c = test_connect(la, SOCK_STREAM, NULL);
    if (*c == -1) {
        return -1;
    }
    *s = test_accept(lfd, NULL);
    if (*s == -1) {
        cs_net_close(*c);
        return -1;
    }
    return 0;
}


/* reads exactly len bytes from fd, whatever the short-I/O mode */
static int
test_read_all(int fd, char *buf, size_t len)
{
    size_t got;
    int spins;

    got = 0;
    for (spins = 0; got < len && spins < 10000; spins++) {
        ssize_t n = cs_net_recv(fd, buf + got, len - got);

        if (n > 0) {
            got += (size_t) n;
        } else if (n == CS_AGAIN) {
            test_wait(fd, POLLIN, 1000);
        } else {
            return -1;
        }
    }
    return got == len ? 0 : -1;
}


static int
test_fd_flags_ok(int fd)
{
    int fl, fdfl;

    fl = fcntl(fd, F_GETFL);
    fdfl = fcntl(fd, F_GETFD);
    return fl != -1 && fdfl != -1 && (fl & O_NONBLOCK) && (fdfl & FD_CLOEXEC);
}


/* ---------------------------------------------------------------------- */

typedef struct {
    const char *host;
    size_t len;      /* 0: strlen(host) */
    int port;
    int rc;          /* CS_OK or CS_ERROR */
    int err;         /* errno when CS_ERROR */
    int family;      /* when CS_OK */
    const char *text; /* cs_net_format_addr() when CS_OK */
    int outport;     /* its port */
} test_parse_case_t;


static void
test_parse(void)
{
    static const test_parse_case_t cases[] = {
        {"127.0.0.1", 0, 80, CS_OK, 0, AF_INET, "127.0.0.1", 80},
        {"0.0.0.0", 0, 0, CS_OK, 0, AF_INET, "0.0.0.0", 0},
        {"255.255.255.255", 0, 65535, CS_OK, 0, AF_INET, "255.255.255.255",
            65535},
        {"::1", 0, 443, CS_OK, 0, AF_INET6, "::1", 443},
        {"[::1]", 0, 443, CS_OK, 0, AF_INET6, "::1", 443},
        {"::", 0, 1, CS_OK, 0, AF_INET6, "::", 1},
        {"0:0:0:0:0:0:0:1", 0, 2, CS_OK, 0, AF_INET6, "::1", 2},
        {"::ffff:10.0.0.1", 0, 3, CS_OK, 0, AF_INET6, "::ffff:10.0.0.1", 3},
        {"[fe80::1%7]", 0, 4, CS_OK, 0, AF_INET6, "fe80::1%7", 4},
        {"fe80::1%0", 0, 4, CS_OK, 0, AF_INET6, "fe80::1", 4},
        {"fe80::1%4294967295", 0, 4, CS_OK, 0, AF_INET6,
            "fe80::1%4294967295", 4},
        {"127.0.0.1:80", 9, 5, CS_OK, 0, AF_INET, "127.0.0.1", 5},
        {"unix:/tmp/x.sock", 0, 0, CS_OK, 0, AF_UNIX, "unix:/tmp/x.sock", 0},
        {"UNIX:/tmp/x.sock", 0, 99999, CS_OK, 0, AF_UNIX, "unix:/tmp/x.sock",
            0},
        {"unix:rel.sock", 0, -5, CS_OK, 0, AF_UNIX, "unix:rel.sock", 0},
        {"unix:@abstract", 0, 0, CS_OK, 0, AF_UNIX, "unix:@abstract", 0},
        /* names: the caller resolves them */
        {"localhost", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {"example.com", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {"127.1", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {"256.0.0.1", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {"0x7f.0.0.1", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {" 127.0.0.1", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        {"127.0.0.1%1", 0, 80, CS_ERROR, ENOENT, 0, NULL, 0},
        /* invalid */
        {"", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"127.0.0.1", 0, -1, CS_ERROR, EINVAL, 0, NULL, 0},
        {"127.0.0.1", 0, 65536, CS_ERROR, EINVAL, 0, NULL, 0},
        {"localhost", 0, 65536, CS_ERROR, EINVAL, 0, NULL, 0},
        {"127.0.0.1\0x", 11, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"[::1", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"[]", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"[127.0.0.1]", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"[localhost]", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"::1::2", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"example.com:80", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"fe80::1%", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"fe80::1%4294967296", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"fe80::1%no-such-if9", 0, 80, CS_ERROR, EINVAL, 0, NULL, 0},
        {"unix:", 0, 0, CS_ERROR, EINVAL, 0, NULL, 0},
    };
    char buf[CS_NET_ADDRSTRLEN], longpath[300];
    cs_addr_t a, b;
    size_t i, len;
    int port;
    unsigned int lo;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const test_parse_case_t *c = &cases[i];
        int rc, err;

        len = c->len ? c->len : strlen(c->host);
        errno = 0;
        rc = cs_net_parse_addr(&a, c->host, len, c->port);
        err = errno;
        if (rc != c->rc || (rc != CS_OK && err != c->err)) {
            test_failed++;
            printf("FAIL parse \"%s\" port %d: rc %d errno %d, want %d/%d\n",
                c->host, c->port, rc, err, c->rc, c->err);
            continue;
        }
        test_passed++;
        if (rc != CS_OK) {
            continue;
        }
        CHECK_INT(a.ss.ss_family, c->family);
        port = -1;
        rc = cs_net_format_addr(&a, buf, sizeof(buf), &port);
        CHECK_INT(rc, c->outport);
        CHECK_INT(port, c->outport);
        CHECK_STR(buf, c->text);
        /* and back again */
        CHECK_INT(cs_net_parse_addr(&b, buf, strlen(buf), port), CS_OK);
        CHECK(cs_net_addr_equal(&a, &b));
    }

    /* an interface name as the scope */
    lo = if_nametoindex("lo");
    if (lo != 0) {
        char want[64];

        CHECK_INT(cs_net_parse_addr(&a, "fe80::1%lo", 10, 8), CS_OK);
        snprintf(want, sizeof(want), "fe80::1%%%u", lo);
        CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), NULL), 8);
        CHECK_STR(buf, want);
    }

    /* unix paths: the longest that fits sun_path with its NUL, one more */
    memcpy(longpath, "unix:", 5);
    len = sizeof(((struct sockaddr_un *) NULL)->sun_path) - 1;
    memset(longpath + 5, 'p', len + 1);
    longpath[0 + 5] = '/';
    CHECK_INT(cs_net_parse_addr(&a, longpath, 5 + len, 0), CS_OK);
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), &port), 0);
    CHECK_INT(strlen(buf), 5 + len);
    CHECK_ERR(cs_net_parse_addr(&a, longpath, 5 + len + 1, 0), ENAMETOOLONG);
    /* a name far longer than any literal */
    memset(longpath, 'a', sizeof(longpath));
    CHECK_ERR(cs_net_parse_addr(&a, longpath, sizeof(longpath), 80), ENOENT);
    longpath[100] = ':';
    CHECK_ERR(cs_net_parse_addr(&a, longpath, sizeof(longpath), 80), EINVAL);
    longpath[0] = '[';
    longpath[sizeof(longpath) - 1] = ']';
    CHECK_ERR(cs_net_parse_addr(&a, longpath, sizeof(longpath), 80), EINVAL);
    CHECK_ERR(cs_net_parse_addr(&a, NULL, 0, 80), EINVAL);

    /* formatting into small buffers */
    CHECK_INT(cs_net_parse_addr(&a, "10.1.2.3", 8, 7), CS_OK);
    buf[0] = 'x';
    CHECK_ERR(cs_net_format_addr(&a, buf, 8, &port), ENOSPC);
    CHECK_INT(buf[0], '\0');
    CHECK_INT(cs_net_format_addr(&a, buf, 9, &port), 7);
    CHECK_STR(buf, "10.1.2.3");
    CHECK_ERR(cs_net_format_addr(&a, buf, 0, &port), ENOSPC);
    memset(&a, 0, sizeof(a));
    a.ss.ss_family = AF_UNSPEC;
    a.len = sizeof(a.ss);
    CHECK_ERR(cs_net_format_addr(&a, buf, sizeof(buf), &port), EAFNOSUPPORT);
    a.ss.ss_family = AF_INET;
    a.len = 4; /* too short for a sockaddr_in */
    CHECK_ERR(cs_net_format_addr(&a, buf, sizeof(buf), &port), EAFNOSUPPORT);
    /* an unnamed unix socket */
    memset(&a, 0, sizeof(a));
    a.ss.ss_family = AF_UNIX;
    a.len = sizeof(sa_family_t);
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), &port), 0);
    CHECK_STR(buf, "unix:");

    /* localhost and unix: predicates */
    CHECK(cs_net_is_localhost("localhost", 9));
    CHECK(cs_net_is_localhost("LocalHost", 9));
    CHECK(!cs_net_is_localhost("localhost.", 10));
    CHECK(!cs_net_is_localhost("localhos", 8));
    CHECK(!cs_net_is_localhost("localhostx", 10));
    CHECK(cs_net_is_localhost("localhostx", 9));
    CHECK(cs_net_is_unix("unix:/x", 7));
    CHECK(cs_net_is_unix("Unix:", 5));
    CHECK(!cs_net_is_unix("unix", 4));
    CHECK(!cs_net_is_unix("unix:", 4));

    /* from raw addresses, loopback, ports, equality */
    {
        struct in_addr in4;
        struct in6_addr in6;

        in4.s_addr = htonl(0x0a000001);
        CHECK_INT(cs_net_addr_from_ip(&a, AF_INET, &in4, 53), CS_OK);
        CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), NULL), 53);
        CHECK_STR(buf, "10.0.0.1");
        CHECK_INT(inet_pton(AF_INET6, "2001:db8::5", &in6), 1);
        CHECK_INT(cs_net_addr_from_ip(&a, AF_INET6, &in6, 853), CS_OK);
        CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), NULL), 853);
        CHECK_STR(buf, "2001:db8::5");
        CHECK_ERR(cs_net_addr_from_ip(&a, AF_UNIX, &in6, 1), EAFNOSUPPORT);
        CHECK_ERR(cs_net_addr_from_ip(&a, AF_INET, &in4, 70000), EINVAL);
    }
    CHECK_INT(cs_net_addr_loopback(&a, AF_INET, 8080), CS_OK);
    CHECK_INT(cs_net_parse_addr(&b, "127.0.0.1", 9, 8080), CS_OK);
    CHECK(cs_net_addr_equal(&a, &b));
    CHECK_INT(cs_net_addr_port(&a), 8080);
    CHECK_INT(cs_net_addr_set_port(&a, 8081), CS_OK);
    CHECK_INT(cs_net_addr_port(&a), 8081);
    CHECK(!cs_net_addr_equal(&a, &b));
    CHECK_ERR(cs_net_addr_set_port(&a, -1), EINVAL);
    CHECK_INT(cs_net_addr_loopback(&a, AF_INET6, 1), CS_OK);
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), NULL), 1);
    CHECK_STR(buf, "::1");
    CHECK_INT(cs_net_addr_set_port(&a, 65535), CS_OK);
    CHECK_INT(cs_net_addr_port(&a), 65535);
    CHECK(!cs_net_addr_equal(&a, &b));
    CHECK_INT(cs_net_parse_addr(&a, "unix:/a", 7, 0), CS_OK);
    CHECK_INT(cs_net_parse_addr(&b, "unix:/a", 7, 1), CS_OK);
    CHECK(cs_net_addr_equal(&a, &b));
    CHECK_INT(cs_net_addr_port(&a), 0);
    CHECK_ERR(cs_net_addr_set_port(&a, 1), EINVAL);
    CHECK_INT(cs_net_parse_addr(&b, "unix:/b", 7, 0), CS_OK);
    CHECK(!cs_net_addr_equal(&a, &b));
}


static void
test_strerror(void)
{
    static const int errs[] = {
        ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, EHOSTUNREACH,
        ENETUNREACH, ENETDOWN, EHOSTDOWN, ECONNABORTED, EADDRINUSE,
        EADDRNOTAVAIL, EAFNOSUPPORT, EPFNOSUPPORT, EPROTONOSUPPORT,
        EPROTOTYPE, ESOCKTNOSUPPORT, ENOPROTOOPT, EPROTO, EOPNOTSUPP,
        ENOTCONN, EISCONN, ESHUTDOWN, EDESTADDRREQ, EMSGSIZE, ENOTSOCK,
        EBADF, EINVAL, EFAULT, EAGAIN, EINPROGRESS, EALREADY, EINTR,
        ENOBUFS, ENOMEM, EMFILE, ENFILE, EACCES, EPERM, ENOENT, ENOTDIR,
        ENAMETOOLONG, ELOOP, EROFS, EIO, ENOSYS,
#ifdef ENONET
        ENONET,
#endif
        EDOM, ENOSPC, 4242, -1,
    };
    char low[256];
    size_t i, j;
    const char *s;

    /* what OpenResty users see (lowercased ngx_strerror) */
    CHECK_STR(cs_net_strerror(ECONNREFUSED), "connection refused");
    CHECK_STR(cs_net_strerror(ECONNRESET), "connection reset by peer");
    CHECK_STR(cs_net_strerror(EPIPE), "broken pipe");
    CHECK_STR(cs_net_strerror(EHOSTUNREACH), "no route to host");
    CHECK_STR(cs_net_strerror(ENETUNREACH), "network is unreachable");
    CHECK_STR(cs_net_strerror(ETIMEDOUT), "connection timed out");
    CHECK_STR(cs_net_strerror(ENOENT), "no such file or directory");
    CHECK_STR(cs_net_strerror(EMFILE), "too many open files");
    CHECK_STR(cs_net_strerror(0), "error");
#if EWOULDBLOCK != EAGAIN
    CHECK_STR(cs_net_strerror(EWOULDBLOCK), cs_net_strerror(EAGAIN));
#endif

    /* every string is glibc's strerror() lowercased, as in OpenResty; the
     * ones outside the table come from strerror() itself everywhere */
    for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        s = strerror(errs[i]);
        for (j = 0; j < sizeof(low) - 1 && s[j] != '\0'; j++) {
            low[j] = (char) (s[j] >= 'A' && s[j] <= 'Z' ? s[j] + 32 : s[j]);
        }
        low[j] = '\0';
#ifndef __GLIBC__
        if (errs[i] != EDOM && errs[i] != ENOSPC && errs[i] != 4242
            && errs[i] != -1)
        {
            continue; /* other C libraries word these differently */
        }
#endif
        CHECK_STR(cs_net_strerror(errs[i]), low);
    }
}


/* TCP over family's loopback: connect in progress, accept, I/O, options,
 * EOF, refused, reset */
static void
test_tcp(int family)
{
    cs_addr_t la, ca, peer, pa;
    char buf[CS_NET_ADDRSTRLEN], data[64];
    int lfd, c, s, rc, port, inprogress, i, v;

    printf("# tcp %s\n", family == AF_INET ? "127.0.0.1" : "::1");
    lfd = test_listener(family, &la);
    CHECK(lfd != -1);
    if (lfd == -1) {
        return;
    }
    CHECK(test_fd_flags_ok(lfd));
    CHECK(cs_net_addr_port(&la) > 0);

    /* nothing to accept yet */
    errno = 0;
    CHECK_INT(cs_net_accept(lfd, &peer), -1);
    CHECK_INT(errno, EAGAIN);

    /* a nonblocking connect: in progress on Linux, then writable */
    inprogress = 0;
    for (i = 0; i < 3; i++) {
        c = test_connect(&la, SOCK_STREAM, &inprogress);
        CHECK(c != -1);
        s = test_accept(lfd, &peer);
        CHECK(s != -1);
        CHECK(test_fd_flags_ok(c));
        CHECK(test_fd_flags_ok(s));
        CHECK_INT(cs_net_sockname(c, &ca), CS_OK);
        CHECK(cs_net_addr_equal(&ca, &peer));
        CHECK_INT(cs_net_peername(c, &pa), CS_OK);
        CHECK(cs_net_addr_equal(&pa, &la));
        cs_net_close(c);
        cs_net_close(s);
    }
#ifdef __linux__
    CHECK_INT(inprogress, 3);
#else
    CHECK(inprogress >= 0);
#endif

    /* the completion check itself, step by step */
    c = cs_net_socket(family, SOCK_STREAM);
    CHECK(c != -1);
    rc = cs_net_connect(c, &la);
    CHECK(rc == CS_AGAIN || rc == CS_OK);
    CHECK(test_wait(c, POLLOUT, 2000) & POLLOUT);
    CHECK_INT(cs_net_connect_result(c), CS_OK);
    CHECK_INT(cs_net_connect(c, &la), CS_OK); /* EISCONN */
    s = test_accept(lfd, &peer);
    CHECK(s != -1);

    /* peer address text */
    rc = cs_net_format_addr(&peer, buf, sizeof(buf), &port);
    CHECK(rc > 0 && rc == port);
    CHECK_STR(buf, family == AF_INET ? "127.0.0.1" : "::1");

    /* I/O both ways */
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(errno, EAGAIN);
    CHECK_INT(cs_net_send(c, "hello", 5), 5);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), 5);
    CHECK(memcmp(data, "hello", 5) == 0);
    CHECK_INT(cs_net_send(s, "world!", 6), 6);
    CHECK_INT(test_read_all(c, data, 6), 0);
    CHECK(memcmp(data, "world!", 6) == 0);
    CHECK_INT(cs_net_send(c, "x", 0), 0);
    CHECK_INT(cs_net_recv(c, data, 0), 0);

    /* a send that fills the buffers ends in CS_AGAIN */
    {
        static char big[65536];
        ssize_t n = 0;
        int rounds;

        for (rounds = 0; rounds < 10000; rounds++) {
            n = cs_net_send(c, big, sizeof(big));
            if (n < 0) {
                break;
            }
        }
        CHECK_INT(n, CS_AGAIN);
        /* drain it */
        while (cs_net_recv(s, big, sizeof(big)) > 0) {
        }
    }

    /* options */
    CHECK_INT(cs_net_setoption(c, "tcp-nodelay", 1), CS_OK);
    CHECK_INT(cs_net_getoption(c, "tcp-nodelay", &v), CS_OK);
    CHECK_INT(v, 1);
    CHECK_INT(cs_net_setoption(c, "tcp-nodelay", 0), CS_OK);
    CHECK_INT(cs_net_getoption(c, "tcp-nodelay", &v), CS_OK);
    CHECK_INT(v, 0);
    CHECK_INT(cs_net_setoption(c, "keepalive", 7), CS_OK);
    CHECK_INT(cs_net_getoption(c, "keepalive", &v), CS_OK);
    CHECK_INT(v, 1);
    CHECK_INT(cs_net_setoption(c, "reuseaddr", 1), CS_OK);
    CHECK_INT(cs_net_getoption(c, "reuseaddr", &v), CS_OK);
    CHECK_INT(v, 1);
    CHECK_INT(cs_net_setoption(c, "sndbuf", 65536), CS_OK);
    CHECK_INT(cs_net_getoption(c, "sndbuf", &v), CS_OK);
    CHECK(v >= 65536);
    CHECK_INT(cs_net_setoption(c, "rcvbuf", 32768), CS_OK);
    CHECK_INT(cs_net_getoption(c, "rcvbuf", &v), CS_OK);
    CHECK(v >= 32768);
    CHECK_ERR(cs_net_setoption(c, "sndbuf", -1), EINVAL);
    errno = 0;
    CHECK_INT(cs_net_setoption(c, "nodelay", 1), CS_LIMIT);
    CHECK_INT(errno, ENOPROTOOPT);
    CHECK_INT(cs_net_setoption(c, NULL, 1), CS_LIMIT);
    CHECK_INT(cs_net_getoption(c, "maxline", &v), CS_LIMIT);
    CHECK_ERR(cs_net_setoption(-1, "keepalive", 1), EBADF);

    /* EOF: the peer's FIN reads as CS_CLOSED, again and again */
    CHECK_INT(cs_net_send(s, "bye", 3), 3);
    CHECK_INT(cs_net_shutdown(s, SHUT_WR), CS_OK);
    CHECK_INT(test_read_all(c, data, 3), 0);
    CHECK(test_wait(c, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recv(c, data, sizeof(data)), CS_CLOSED);
    CHECK_INT(cs_net_recv(c, data, sizeof(data)), CS_CLOSED);
    /* the other direction still works */
    CHECK_INT(cs_net_send(c, "ok", 2), 2);
    CHECK_INT(test_read_all(s, data, 2), 0);
    CHECK_INT(cs_net_close(s), CS_OK);
    CHECK_INT(cs_net_close(c), CS_OK);
    CHECK_ERR(cs_net_close(c), EBADF);

    /* reset: the peer closes with SO_LINGER {1, 0} and sends an RST */
    CHECK_INT(test_pair(&la, lfd, &c, &s), 0);
    {
        struct linger lg;

        lg.l_onoff = 1;
        lg.l_linger = 0;
        CHECK_INT(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
    }
    CHECK_INT(cs_net_close(s), CS_OK);
    CHECK(test_wait(c, POLLIN, 2000) & (POLLIN | POLLERR | POLLHUP));
    CHECK_ERR(cs_net_recv(c, data, sizeof(data)), ECONNRESET);
    CHECK_STR(cs_net_strerror(ECONNRESET), "connection reset by peer");
    /* then a send: EPIPE, and no SIGPIPE (it would kill this test) */
    CHECK_ERR(cs_net_send(c, "x", 1), EPIPE);
    CHECK_INT(cs_net_recv(c, data, sizeof(data)), CS_CLOSED);
    cs_net_close(c);

    /* a second listener on the same port: EADDRINUSE */
    errno = 0;
    i = cs_net_listen(&la, 0, 0, 0);
    CHECK_INT(i, -1);
    CHECK_INT(errno, EADDRINUSE);
    cs_net_close(lfd);

    /* refused: a port nobody listens on any more */
    c = test_connect(&la, SOCK_STREAM, NULL);
    CHECK_INT(c, -1);
    CHECK_INT(errno, ECONNREFUSED);
    c = cs_net_socket(family, SOCK_STREAM);
    rc = cs_net_connect(c, &la);
    if (rc == CS_AGAIN) {
        CHECK(test_wait(c, POLLOUT, 2000) != 0);
        rc = cs_net_connect_result(c);
    }
    CHECK_ERR(rc, ECONNREFUSED);
    CHECK_STR(cs_net_strerror(ECONNREFUSED), "connection refused");
    cs_net_close(c);

    /* SO_REUSEPORT twice on one port */
    cs_net_addr_set_port(&la, 0);
    lfd = cs_net_listen(&la, 8, 1, 1);
    CHECK(lfd != -1);
    CHECK_INT(cs_net_sockname(lfd, &la), CS_OK);
    i = cs_net_listen(&la, 8, 1, 1);
    CHECK(i != -1);
    cs_net_close(i);
    cs_net_close(lfd);
}


/* UDP over family's loopback: datagrams, empty ones, truncation, and an
 * ICMP port unreachable read as ECONNREFUSED by the next recv */
static void
test_udp(int family)
{
    cs_addr_t sa, dead, ca;
    char data[64];
    int s, c, d;

    printf("# udp %s\n", family == AF_INET ? "127.0.0.1" : "::1");
    s = cs_net_socket(family, SOCK_DGRAM);
    CHECK(s != -1);
    CHECK(test_fd_flags_ok(s));
    CHECK_INT(cs_net_addr_loopback(&sa, family, 0), CS_OK);
    CHECK_INT(cs_net_bind(s, &sa), CS_OK);
    CHECK_INT(cs_net_sockname(s, &sa), CS_OK);
    CHECK(cs_net_addr_port(&sa) > 0);

    c = cs_net_socket(family, SOCK_DGRAM);
    CHECK_INT(cs_net_connect(c, &sa), CS_OK);
    CHECK_INT(cs_net_recvdgram(s, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(cs_net_senddgram(c, "ping", 4), 4);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(s, data, sizeof(data)), 4);
    CHECK(memcmp(data, "ping", 4) == 0);
    /* an empty datagram is 0, not CS_CLOSED */
    CHECK_INT(cs_net_senddgram(c, "", 0), 0);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(s, data, sizeof(data)), 0);
    /* a datagram longer than the buffer is cut; the rest is gone */
    CHECK_INT(cs_net_senddgram(c, "0123456789", 10), 10);
    CHECK_INT(cs_net_senddgram(c, "next", 4), 4);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(s, data, 3), 3);
    CHECK(memcmp(data, "012", 3) == 0);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(s, data, sizeof(data)), 4);
    CHECK(memcmp(data, "next", 4) == 0);
    /* the reply reaches the connected client */
    CHECK_INT(cs_net_sockname(c, &ca), CS_OK);
    CHECK_INT(cs_net_connect(s, &ca), CS_OK);
    CHECK_INT(cs_net_senddgram(s, "pong", 4), 4);
    CHECK(test_wait(c, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(c, data, sizeof(data)), 4);
    CHECK(memcmp(data, "pong", 4) == 0);
    /* the address is in use */
    d = cs_net_socket(family, SOCK_DGRAM);
    CHECK_ERR(cs_net_bind(d, &sa), EADDRINUSE);
    cs_net_close(d);

    /* ICMP port unreachable: send to a port nobody has */
    dead = sa;
    cs_net_close(s); /* sa's port is free now */
    CHECK_INT(cs_net_connect(c, &dead), CS_OK);
    CHECK_INT(cs_net_senddgram(c, "anyone?", 7), 7);
    CHECK(test_wait(c, POLLIN, 2000) & (POLLERR | POLLIN));
    CHECK_ERR(cs_net_recvdgram(c, data, sizeof(data)), ECONNREFUSED);
    CHECK_STR(cs_net_strerror(ECONNREFUSED), "connection refused");
    /* reported once */
    CHECK_INT(cs_net_recvdgram(c, data, sizeof(data)), CS_AGAIN);
    cs_net_close(c);
}


/* a Unix stream socket and a Unix datagram socket in a temp dir */
static void
test_unix(void)
{
    char dir[] = "/tmp/cs_net_test.XXXXXX";
    char path[256], dpath[256], buf[CS_NET_ADDRSTRLEN], data[16];
    cs_addr_t la, da, a;
    int lfd, c, s, rc, port, d;

    printf("# unix\n");
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
        return;
    }
    snprintf(path, sizeof(path), "unix:%s/s.sock", dir);
    snprintf(dpath, sizeof(dpath), "unix:%s/d.sock", dir);

    CHECK_INT(cs_net_parse_addr(&la, path, strlen(path), 0), CS_OK);
    /* no such file */
    c = cs_net_socket(AF_UNIX, SOCK_STREAM);
    CHECK_ERR(cs_net_connect(c, &la), ENOENT);
    CHECK_STR(cs_net_strerror(ENOENT), "no such file or directory");
    cs_net_close(c);

    lfd = cs_net_listen(&la, 0, 1, 0);
    CHECK(lfd != -1);
    CHECK_INT(cs_net_sockname(lfd, &a), CS_OK);
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), &port), 0);
    CHECK_STR(buf, path);
    CHECK(cs_net_addr_equal(&a, &la));

    c = cs_net_socket(AF_UNIX, SOCK_STREAM);
    rc = cs_net_connect(c, &la);
    if (rc == CS_AGAIN) {
        test_wait(c, POLLOUT, 2000);
        rc = cs_net_connect_result(c);
    }
    CHECK_INT(rc, CS_OK);
    s = test_accept(lfd, &a);
    CHECK(s != -1);
    CHECK(test_fd_flags_ok(s));
    /* the client is unnamed */
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), &port), 0);
    CHECK_STR(buf, "unix:");
    CHECK_INT(cs_net_peername(c, &a), CS_OK);
    CHECK_INT(cs_net_format_addr(&a, buf, sizeof(buf), &port), 0);
    CHECK_STR(buf, path);

    CHECK_INT(cs_net_send(c, "abc", 3), 3);
    CHECK_INT(test_read_all(s, data, 3), 0);
    CHECK(memcmp(data, "abc", 3) == 0);
    CHECK_ERR(cs_net_setoption(c, "tcp-nodelay", 1), EOPNOTSUPP);
    cs_net_close(s);
    CHECK(test_wait(c, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recv(c, data, sizeof(data)), CS_CLOSED);
    CHECK_ERR(cs_net_send(c, "x", 1), EPIPE);
    cs_net_close(c);

    /* listen unlinks nothing: the file is in use */
    errno = 0;
    CHECK_INT(cs_net_listen(&la, 0, 1, 0), -1);
    CHECK_INT(errno, EADDRINUSE);
    cs_net_close(lfd);
    /* a stale socket file refuses */
    c = cs_net_socket(AF_UNIX, SOCK_STREAM);
    CHECK_ERR(cs_net_connect(c, &la), ECONNREFUSED);
    cs_net_close(c);

    /* datagrams */
    CHECK_INT(cs_net_parse_addr(&da, dpath, strlen(dpath), 0), CS_OK);
    d = cs_net_socket(AF_UNIX, SOCK_DGRAM);
    CHECK_INT(cs_net_bind(d, &da), CS_OK);
    c = cs_net_socket(AF_UNIX, SOCK_DGRAM);
    CHECK_INT(cs_net_connect(c, &da), CS_OK);
    CHECK_INT(cs_net_senddgram(c, "dg", 2), 2);
    CHECK_INT(cs_net_senddgram(c, "", 0), 0);
    CHECK_INT(cs_net_recvdgram(d, data, sizeof(data)), 2);
    CHECK_INT(cs_net_recvdgram(d, data, sizeof(data)), 0);
    CHECK_INT(cs_net_recvdgram(d, data, sizeof(data)), CS_AGAIN);
    cs_net_close(d);
    CHECK_ERR(cs_net_senddgram(c, "dg", 2), ECONNREFUSED);
    cs_net_close(c);

    unlink(path + 5);
    unlink(dpath + 5);
    CHECK_INT(rmdir(dir), 0);
}


#ifdef CS_TESTING

/* the short-I/O mode and failure injection; c-s and c2-s2 are connected
 * pairs from listener lfd at la */
static void
test_hooks_live(int lfd, const cs_addr_t *lap, int c, int s, int c2, int s2)
{
    static const char hello[] = "hello";
    cs_addr_t la, ua;
    char data[16];
    int u1, u2, i, fd;
    ssize_t n;

    la = *lap;
    /* alternation per fd: CS_AGAIN first, then one byte, ... */
    cs_net_set_short_io(1);
    for (i = 0; i < 10; i++) {
        n = cs_net_send(c, hello + i / 2, 5 - (size_t) (i / 2));
        if (i % 2 == 0) {
            CHECK_INT(n, CS_AGAIN);
            CHECK_INT(errno, EAGAIN);
        } else {
            CHECK_INT(n, 1);
        }
        /* interleaved with another fd, which keeps its own rhythm */
        n = cs_net_send(c2, "z", 1);
        CHECK_INT(n, i % 2 == 0 ? CS_AGAIN : 1);
        /* and with the other direction of the same fd */
        n = cs_net_recv(c, data, sizeof(data));
        CHECK_INT(n, CS_AGAIN);
    }
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    poll(NULL, 0, 20); /* let all five bytes land */
    memset(data, 0, sizeof(data));
    for (i = 0; i < 10; i++) {
        n = cs_net_recv(s, data + i / 2, sizeof(data) - 8);
        CHECK_INT(n, i % 2 == 0 ? CS_AGAIN : 1);
    }
    CHECK_STR(data, "hello");
    /* recv with nothing there: the real call says CS_AGAIN too */
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(test_read_all(s2, data, 5), 0);
    CHECK(memcmp(data, "zzzzz", 5) == 0);

    /* datagrams: recv alternates but keeps the datagram; send is left
     * alone */
    u1 = cs_net_socket(AF_INET, SOCK_DGRAM);
    CHECK_INT(cs_net_addr_loopback(&ua, AF_INET, 0), CS_OK);
    CHECK_INT(cs_net_bind(u1, &ua), CS_OK);
    CHECK_INT(cs_net_sockname(u1, &ua), CS_OK);
    u2 = cs_net_socket(AF_INET, SOCK_DGRAM);
    CHECK_INT(cs_net_connect(u2, &ua), CS_OK);
    CHECK_INT(cs_net_senddgram(u2, "datagram", 8), 8);
    CHECK_INT(cs_net_senddgram(u2, "two", 3), 3);
    CHECK(test_wait(u1, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recvdgram(u1, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(cs_net_recvdgram(u1, data, sizeof(data)), 8);
    CHECK(memcmp(data, "datagram", 8) == 0);
    CHECK_INT(cs_net_recvdgram(u1, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(cs_net_recvdgram(u1, data, sizeof(data)), 3);
    cs_net_close(u1);
    cs_net_close(u2);

    /* off again: whole sends */
    cs_net_set_short_io(0);
    CHECK_INT(cs_net_send(c, "again", 5), 5);
    CHECK_INT(test_read_all(s, data, 5), 0);

    /* injection */
    CHECK_INT(cs_net_inject("recv", ECONNRESET, 1), CS_OK);
    CHECK_INT(cs_net_send(c, "data", 4), 4);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_ERR(cs_net_recv(s, data, sizeof(data)), ECONNRESET);
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), 4); /* untouched */
    CHECK_INT(cs_net_inject("recv", EINTR, 3), CS_OK);
    CHECK_INT(cs_net_send(c, "eintr", 5), 5);
    CHECK(test_wait(s, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), 5); /* retried */
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), CS_AGAIN); /* used up */
    CHECK_INT(cs_net_inject("send", EPIPE, 1), CS_OK);
    CHECK_ERR(cs_net_send(c, "x", 1), EPIPE);
    CHECK_INT(cs_net_inject("send", ENOBUFS, 2), CS_OK);
    CHECK_ERR(cs_net_send(c, "x", 1), ENOBUFS);
    CHECK_ERR(cs_net_senddgram(c, "x", 1), ENOBUFS);
    CHECK_INT(cs_net_send(c, "x", 1), 1);
    CHECK_INT(cs_net_inject("send", EINTR, 1), CS_OK);
    CHECK_INT(cs_net_send(c, "y", 1), 1);
    CHECK_INT(test_read_all(s, data, 2), 0);
    CHECK(memcmp(data, "xy", 2) == 0);
    CHECK_INT(cs_net_inject("recv", EAGAIN, 1), CS_OK);
    CHECK_INT(cs_net_recvdgram(s, data, sizeof(data)), CS_AGAIN);

    /* accept: EMFILE leaves the connection queued */
    fd = cs_net_socket(AF_INET, SOCK_STREAM);
    CHECK(fd != -1);
    cs_net_connect(fd, &la);
    CHECK(test_wait(lfd, POLLIN, 2000) & POLLIN);
    CHECK_INT(cs_net_inject("accept", EMFILE, 1), CS_OK);
    errno = 0;
    CHECK_INT(cs_net_accept(lfd, NULL), -1);
    CHECK_INT(errno, EMFILE);
    CHECK_STR(cs_net_strerror(EMFILE), "too many open files");
    CHECK_INT(cs_net_inject("accept", EINTR, 2), CS_OK);
    i = cs_net_accept(lfd, NULL);
    CHECK(i != -1);
    cs_net_close(i);
    cs_net_close(fd);

    /* socket: ENFILE, for cs_net_listen too */
    CHECK_INT(cs_net_inject("socket", ENFILE, 2), CS_OK);
    errno = 0;
    CHECK_INT(cs_net_socket(AF_INET, SOCK_STREAM), -1);
    CHECK_INT(errno, ENFILE);
    errno = 0;
    CHECK_INT(cs_net_listen(&la, 0, 1, 0), -1);
    CHECK_INT(errno, ENFILE);
    CHECK_STR(cs_net_strerror(ENFILE), "too many open files in system");

    /* connect: a refusal that never reached the network, then EINTR that
     * is retried (the connect really starts) */
    fd = cs_net_socket(AF_INET, SOCK_STREAM);
    CHECK_INT(cs_net_inject("connect", ENETUNREACH, 1), CS_OK);
    CHECK_ERR(cs_net_connect(fd, &la), ENETUNREACH);
    CHECK_STR(cs_net_strerror(ENETUNREACH), "network is unreachable");
    CHECK_INT(cs_net_inject("connect", EINTR, 1), CS_OK);
    n = cs_net_connect(fd, &la);
    CHECK(n == CS_AGAIN || n == CS_OK);
    CHECK(test_wait(fd, POLLOUT, 2000) & POLLOUT);
    CHECK_INT(cs_net_connect_result(fd), CS_OK);
    i = test_accept(lfd, NULL);
    CHECK(i != -1);
    cs_net_close(i);
    cs_net_close(fd);

    /* clearing, and names that do not exist */
    CHECK_INT(cs_net_inject("recv", ECONNRESET, 5), CS_OK);
    CHECK_INT(cs_net_inject("recv", ECONNRESET, 0), CS_OK);
    CHECK_INT(cs_net_recv(s, data, sizeof(data)), CS_AGAIN);
    CHECK_INT(cs_net_inject("send", EPIPE, 5), CS_OK);
    CHECK_INT(cs_net_inject(NULL, 0, 0), CS_OK);
    CHECK_INT(cs_net_send(c, "z", 1), 1);
    errno = 0;
    CHECK_INT(cs_net_inject("bind", EACCES, 1), CS_LIMIT);
    CHECK_INT(errno, EINVAL);
}

#else

/* without CS_TESTING the hooks change nothing */
static void
test_hooks_inert(int c, int s, int c2)
{
    char data[16];

    cs_net_set_short_io(1);
    CHECK_INT(cs_net_send(c, "hello", 5), 5);
    CHECK_INT(cs_net_send(c2, "z", 1), 1);
    CHECK_INT(test_read_all(s, data, 5), 0);
    cs_net_set_short_io(0);
    errno = 0;
    CHECK_INT(cs_net_inject("recv", ECONNRESET, 1), CS_ERROR);
    CHECK_INT(errno, ENOSYS);
    CHECK_INT(cs_net_send(c, "data", 4), 4);
    CHECK_INT(test_read_all(s, data, 4), 0);
}

#endif


/* the short-I/O mode and failure injection */
static void
test_hooks(void)
{
    cs_addr_t la;
    int lfd, c, s, c2, s2;

    printf("# test hooks\n");
    lfd = test_listener(AF_INET, &la);
    CHECK(lfd != -1);
    CHECK_INT(test_pair(&la, lfd, &c, &s), 0);
    CHECK_INT(test_pair(&la, lfd, &c2, &s2), 0);
#ifdef CS_TESTING
    test_hooks_live(lfd, &la, c, s, c2, s2);
#else
    test_hooks_inert(c, s, c2);
#endif

    cs_net_close(c);
    cs_net_close(s);
    cs_net_close(c2);
    cs_net_close(s2);
    cs_net_close(lfd);
}


static int
test_have_ipv6(void)
{
    cs_addr_t a;
    int fd, ok;

    fd = cs_net_socket(AF_INET6, SOCK_STREAM);
    if (fd == -1) {
        return 0;
    }
    ok = cs_net_addr_loopback(&a, AF_INET6, 0) == CS_OK
         && cs_net_bind(fd, &a) == CS_OK;
    cs_net_close(fd);
    return ok;
}


/* cs_net_split_host: nginx's ngx_parse_url on a cosocket's host, as
 * recorded from OpenResty in spec/59 */
static void
test_split_host(void)
{
    static const struct {
        const char *host;
        int rc;
        const char *lit; /* or the reason */
        int port;        /* after; 80 came in */
    } cases[] = {
        { "127.0.0.1", CS_OK, "127.0.0.1", 80 },
        { "example.com", CS_OK, "example.com", 80 },
        { "127.0.0.1:8080", CS_OK, "127.0.0.1", 8080 },
        { "[::1]", CS_OK, "[::1]", 80 },
        { "[::1]:65535", CS_OK, "[::1]", 65535 },
        { "[x]", CS_OK, "[x]", 80 }, /* cs_net_parse_addr refuses it */
        { "unix:/a:b", CS_OK, "unix:/a:b", 80 },
        { "UNIX:/a", CS_OK, "UNIX:/a", 80 },
        { "", CS_ERROR, "no host", 80 },
        { ":80", CS_ERROR, "no host", 80 },
        { "[]", CS_ERROR, "no host", 80 },
        { "[]:80", CS_ERROR, "no host", 80 },
        { "::1", CS_ERROR, "invalid port", 80 },
        { "a:", CS_ERROR, "invalid port", 80 },
        { "a:0", CS_ERROR, "invalid port", 80 },
        { "a:65536", CS_ERROR, "invalid port", 80 },
        { "a:123456", CS_ERROR, "invalid port", 80 },
        { "a:+1", CS_ERROR, "invalid port", 80 },
        { "a: 1", CS_ERROR, "invalid port", 80 },
        { "[::1]:", CS_ERROR, "invalid port", 80 },
        { "[::1]:x", CS_ERROR, "invalid port", 80 },
        { "a/b", CS_ERROR, "invalid host", 80 },
        { "a?b", CS_ERROR, "invalid host", 80 },
        { "a:80/", CS_ERROR, "invalid host", 80 },
        { "[::1", CS_ERROR, "invalid host", 80 },
        { "[::1]x", CS_ERROR, "invalid host", 80 },
        { "[::1]/", CS_ERROR, "invalid host", 80 },
        { "unix:", CS_ERROR, "no path in the unix domain socket", 80 },
    };
    size_t i, litlen;
    const char *lit, *why;
    int port, rc;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        port = 80;
        rc = cs_net_split_host(cases[i].host, strlen(cases[i].host), &port,
                               &lit, &litlen, &why);
        CHECK_INT(rc, cases[i].rc);
        CHECK_INT(port, cases[i].port);
        if (rc == CS_OK) {
            CHECK_INT(litlen, strlen(cases[i].lit));
            CHECK(strncmp(lit, cases[i].lit, litlen) == 0);
        } else {
            CHECK_STR(why, cases[i].lit);
        }
    }
}


int
main(void)
{
    /* a send without MSG_NOSIGNAL would kill us here: that is the test */
    signal(SIGPIPE, SIG_DFL);
    setvbuf(stdout, NULL, _IOLBF, 0);

    test_parse();
    test_split_host();
    test_strerror();
    test_tcp(AF_INET);
    test_udp(AF_INET);
    if (test_have_ipv6()) {
        test_tcp(AF_INET6);
        test_udp(AF_INET6);
    } else {
        printf("# no ::1 here: IPv6 socket tests skipped\n");
    }
    test_unix();
    test_hooks();

    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed == 0 ? 0 : 1;
}
