/*
 * echo_client: the C baseline of the socket benchmarks (bench/echo.sh).
 * libevent 2 with plain event callbacks (no bufferevents): one persistent
 * read event per connection; a full 64-byte answer sends the next request
 * straight from the read callback.
 *
 * PORTS is one port or a comma-separated list (bench/echo_server listens on
 * several): connection i goes to the (i mod count)-th.
 *
 *   echo_client rt   HOST PORTS CONNS WARMUP_S DURATION_S
 *       CONNS connections each loop request (64 bytes) -> response
 *       (64 bytes), starting once all are connected. Then WARMUP_S
 *       seconds, then counts
 *       round trips for DURATION_S seconds. Prints
 *       "rate=<round trips/s> cpu_us=<process CPU us per round trip>
 *       user_us=<of which in user space> n=CONNS"
 *   echo_client idle HOST PORTS CONNS
 *       CONNS connections, each with its read event armed, nothing sent.
 *       Prints "per_conn=<VmRSS growth / CONNS, bytes> n=CONNS"
 *
 * Connections are opened with at most 1,000 connects in flight (every
 * client of the suite does the same), so the listen queue never overflows.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#define MSG 64
#define WINDOW 1000
#define MAXPORTS 64

typedef struct {
    int fd;
    int got;                /* bytes of the current answer */
    struct event ev;
} conn_t;

static struct event_base *base;
static conn_t *conns;
static int nconn, next_conn, inflight, connected, idle_mode;
static struct sockaddr_in addr;
static unsigned short ports[MAXPORTS];
static int nports;
static char msg[MSG];
static unsigned long long count, count0;
static double t0, c0, u0, warmup, duration;
static long rss0;
static struct event *phase;

static void die(const char *what)
{
    fprintf(stderr, "echo_client: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* user CPU time of the process, seconds */
static double user_time(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec * 1e-6;
}

static double now(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static long vmrss(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

static void send_req(conn_t *c)
{
    ssize_t n = send(c->fd, msg, MSG, MSG_NOSIGNAL);

    if (n != MSG) /* 64 bytes into an empty send buffer always fit */
        die("send");
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    conn_t *c = arg;
    char buf[4096];
    ssize_t n;

    (void) what;
    n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        errno = n == 0 ? ECONNRESET : errno;
        die("recv");
    }
    c->got += (int) n;
    if (c->got >= MSG) {
        c->got -= MSG;
        count++;
        send_req(c);
    }
}

static void phase_cb(evutil_socket_t fd, short what, void *arg);

static void start_phase(double sec)
{
    struct timeval tv;

    tv.tv_sec = (time_t) sec;
    tv.tv_usec = (suseconds_t) ((sec - (double) tv.tv_sec) * 1e6);
    evtimer_add(phase, &tv);
}

static void all_connected(void)
{
    if (idle_mode) {
        printf("per_conn=%.1f n=%d\n", (double) (vmrss() - rss0) / nconn,
               nconn);
        event_base_loopbreak(base);
        return;
    }
    for (int i = 0; i < nconn; i++)
        send_req(&conns[i]);
    start_phase(warmup);
}

static void phase_cb(evutil_socket_t fd, short what, void *arg)
{
    double t, c;

    (void) fd;
    (void) what;
    (void) arg;
    if (t0 == 0) { /* the warm-up ends */
        t0 = now(CLOCK_MONOTONIC);
        c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        u0 = user_time();
        count0 = count;
        start_phase(duration);
        return;
    }
    t = now(CLOCK_MONOTONIC) - t0;
    c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    printf("rate=%.1f cpu_us=%.3f user_us=%.3f n=%d\n",
           (double) (count - count0) / t, c * 1e6 / (double) (count - count0),
           (user_time() - u0) * 1e6 / (double) (count - count0), nconn);
    event_base_loopbreak(base);
}

static void start_connects(void);

static void on_connect(evutil_socket_t fd, short what, void *arg)
{
    conn_t *c = arg;
    int err = 0;
    socklen_t len = sizeof(err);

    (void) what;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
        errno = err;
        die("connect");
    }
    inflight--;
    connected++;
    event_assign(&c->ev, base, fd, EV_READ | EV_PERSIST, on_read, c);
    event_add(&c->ev, NULL);
    start_connects();
    if (connected == nconn)
        all_connected();
}

static void start_connects(void)
{
    int one = 1;

    while (inflight < WINDOW && next_conn < nconn) {
        conn_t *c = &conns[next_conn++];
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (c->fd < 0)
            die("socket");
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        addr.sin_port = htons(ports[(next_conn - 1) % nports]);
        if (connect(c->fd, (struct sockaddr *) &addr, sizeof(addr)) < 0
            && errno != EINPROGRESS)
            die("connect");
        inflight++;
        event_assign(&c->ev, base, c->fd, EV_WRITE, on_connect, c);
        event_add(&c->ev, NULL);
    }
}

int main(int argc, char **argv)
{
    struct rlimit rl;
    char *p, *end;

    if (argc < 5 || (strcmp(argv[1], "rt") != 0 && strcmp(argv[1], "idle"))
        || (strcmp(argv[1], "rt") == 0 && argc < 7)) {
        fprintf(stderr, "usage: echo_client rt HOST PORTS CONNS WARMUP_S "
                        "DURATION_S\n       echo_client idle HOST PORTS "
                        "CONNS\n");
        return 2;
    }
    idle_mode = strcmp(argv[1], "idle") == 0;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    for (p = argv[3]; nports < MAXPORTS; p = end + 1) {
        long port = strtol(p, &end, 10);
        if (end == p || port <= 0 || port > 65535) {
            fprintf(stderr, "echo_client: bad port list %s\n", argv[3]);
            return 2;
        }
        ports[nports++] = (unsigned short) port;
        if (*end != ',')
            break;
    }
    if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) {
        fprintf(stderr, "echo_client: %s: not an IPv4 address\n", argv[2]);
        return 2;
    }
    nconn = atoi(argv[4]);
    if (!idle_mode) {
        warmup = atof(argv[5]);
        duration = atof(argv[6]);
    }
    if (nconn <= 0)
        return 2;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    memset(msg, 'x', sizeof(msg));

    base = event_base_new();
    if (base == NULL)
        die("event_base_new");
    phase = evtimer_new(base, phase_cb, NULL);
    rss0 = vmrss();
    conns = calloc((size_t) nconn, sizeof(conn_t));
    if (conns == NULL)
        die("calloc");
    start_connects();
    event_base_dispatch(base);
    fflush(stdout);
    _exit(0); /* the kernel closes the sockets */
}
