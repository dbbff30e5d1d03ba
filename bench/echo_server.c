/*
 * echo_server: the server side of the socket benchmarks (bench/echo.sh).
 * One thread, level-triggered epoll, 127.0.0.1 only.
 *
 *   echo_server [echo|sink] [nports]
 *
 *   echo   writes back whatever it reads (default)
 *   sink   accepts and never reads: clients parked in receive() stay
 *          parked; a connection is closed when its peer hangs up
 *
 * It listens on nports ports (default 8) that the kernel chooses: clients
 * spread their connections over them, because with tens of thousands of
 * connections to one address and port the kernel's search for a free
 * ephemeral port (__inet_check_established) becomes the bottleneck of the
 * connect phase. The first line on stdout is "port P1,P2,..." once the
 * server is listening. It raises its fd limit to the hard
 * limit, and exits on SIGTERM/SIGINT, or by itself after 15 minutes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXEV 1024
#define BUFSZ 65536
#define MAXPORTS 64

typedef struct {
    char *pend;     /* bytes read but not yet written back */
    size_t len, off;
} conn_t;

static conn_t *conns;
static size_t nconns;
static int ep;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void drop(int fd)
{
    if ((size_t) fd < nconns) {
        free(conns[fd].pend);
        conns[fd].pend = NULL;
        conns[fd].len = conns[fd].off = 0;
    }
    close(fd); /* also leaves the epoll set */
}

static void watch(int fd, int op, unsigned events)
{
    struct epoll_event e;

    memset(&e, 0, sizeof(e));
    e.events = events;
    e.data.fd = fd;
    if (epoll_ctl(ep, op, fd, &e) < 0)
        die("epoll_ctl");
}

/* writes what is pending; 0 when all is out, 1 when it must wait, -1 */
static int flush_pending(int fd)
{
    conn_t *c = &conns[fd];

    while (c->off < c->len) {
        ssize_t n = send(fd, c->pend + c->off, c->len - c->off, MSG_NOSIGNAL);
        if (n > 0) {
            c->off += (size_t) n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 1;
        return -1;
    }
    free(c->pend);
    c->pend = NULL;
    c->len = c->off = 0;
    return 0;
}

static void on_read(int fd, char *buf)
{
    for (;;) {
        ssize_t n = recv(fd, buf, BUFSZ, 0), w;
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            drop(fd);
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN */
        }
        w = send(fd, buf, (size_t) n, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN)
            w = 0;
        if (w < 0) {
            drop(fd);
            return;
        }
        if (w < n) { /* the peer does not read: hold the rest, stop reading */
            conn_t *c = &conns[fd];
            c->len = (size_t) (n - w);
            c->off = 0;
            c->pend = malloc(c->len);
            if (c->pend == NULL)
                die("malloc");
            memcpy(c->pend, buf + w, c->len);
            watch(fd, EPOLL_CTL_MOD, EPOLLOUT);
            return;
        }
        if (n < BUFSZ)
            return; /* most likely drained: let epoll say */
    }
}

int main(int argc, char **argv)
{
    int sink = 0, one = 1, nports = 8, listening = 1, k;
    int lfds[MAXPORTS];
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    struct rlimit rl;
    struct epoll_event evs[MAXEV];
    static char buf[BUFSZ];

    if (argc > 1 && strcmp(argv[1], "sink") == 0)
        sink = 1;
    else if (argc > 1 && strcmp(argv[1], "echo") != 0) {
        fprintf(stderr, "usage: echo_server [echo|sink] [nports]\n");
        return 2;
    }
    if (argc > 2)
        nports = atoi(argv[2]);
    if (nports < 1 || nports > MAXPORTS) {
        fprintf(stderr, "echo_server: nports: 1 to %d\n", MAXPORTS);
        return 2;
    }

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    nconns = rl.rlim_cur > 1048576 ? 1048576 : (size_t) rl.rlim_cur;
    conns = calloc(nconns, sizeof(conn_t));
    if (conns == NULL)
        die("calloc");
    signal(SIGPIPE, SIG_IGN);
    alarm(900);

    ep = epoll_create1(0);
    if (ep < 0)
        die("epoll_create1");
    printf("port ");
    for (k = 0; k < nports; k++) {
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (lfd < 0)
            die("socket");
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        alen = sizeof(a);
        if (bind(lfd, (struct sockaddr *) &a, sizeof(a)) < 0)
            die("bind");
        if (listen(lfd, 65535) < 0) /* the kernel caps it at somaxconn */
            die("listen");
        if (getsockname(lfd, (struct sockaddr *) &a, &alen) < 0)
            die("getsockname");
        watch(lfd, EPOLL_CTL_ADD, EPOLLIN);
        lfds[k] = lfd;
        printf("%s%d", k ? "," : "", ntohs(a.sin_port));
    }
    printf("\n");
    fflush(stdout);

    for (;;) {
        int i, n = epoll_wait(ep, evs, MAXEV, listening ? -1 : 10);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        if (!listening) { /* out of fds a moment ago: try again */
            for (k = 0; k < nports; k++)
                watch(lfds[k], EPOLL_CTL_ADD, EPOLLIN);
            listening = 1;
        }
        for (i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            unsigned e = evs[i].events;
            for (k = 0; k < nports && lfds[k] != fd; k++)
                ;
            if (k < nports) {
                for (;;) {
                    int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK);
                    if (c < 0) {
                        if ((errno == EMFILE || errno == ENFILE) && listening) {
                            for (k = 0; k < nports; k++)
                                epoll_ctl(ep, EPOLL_CTL_DEL, lfds[k], NULL);
                            listening = 0;
                        }
                        break;
                    }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                    watch(c, EPOLL_CTL_ADD, sink ? EPOLLRDHUP : EPOLLIN);
                }
                continue;
            }
            if (sink || (e & EPOLLERR)) { /* sink: only hang-ups come */
                drop(fd);
                continue;
            }
            if (e & EPOLLOUT) {
                int r = flush_pending(fd);
                if (r < 0)
                    drop(fd);
                else if (r == 0)
                    watch(fd, EPOLL_CTL_MOD, EPOLLIN);
                continue;
            }
            on_read(fd, buf);
        }
    }
}
