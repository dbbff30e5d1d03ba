/*
 * Allocation-failure driver: embeds Lua 5.4 with a lua_Alloc that fails
 * after N allocations and runs fuzz/alloc_fail.lua (the scheduler, timers,
 * semaphore, queue, coroutines and a TCP echo over loopback) in a fresh
 * lua_State for every N. Every run must end in a Lua error or success:
 * never a crash, a hang, a leak of Lua memory or a leaked fd.
 *
 * Build and run (fuzz/alloc_fail.sh does this):
 *
 *   cc -std=c99 -D_GNU_SOURCE -O1 -g -Wall -Wextra -o build/alloc_fail \
 *       fuzz/alloc_fail.c $(pkg-config --cflags --libs lua5.4)
 *   build/alloc_fail [options] fuzz/alloc_fail.lua build
 *
 * The second argument is a build directory: corosched is loaded through
 * require with package.cpath = "<build>/?.so" and package.path =
 * "lua/?.lua;lua/?/init.lua" (run it from the checkout).
 *
 * Options:
 *   -m persist|once  persist (default): every allocation after the first
 *                    N fails (the allocator is exhausted for good);
 *                    once: only allocation N fails (and Lua's immediate
 *                    emergency-GC retry of that same request), so the
 *                    program goes on after the error: the recovery paths
 *                    of the scheduler run too.
 *   -f FIRST -l LAST -s STRIDE   N = FIRST, FIRST+STRIDE, ..., LAST
 *                    (defaults 1, the count of a run without failures,
 *                    1). -l 0 means that count.
 *   -n               no fork: every N runs in this process, one after the
 *                    other (for gdb or ASan; valgrind follows the forked
 *                    children by itself); a crash ends the driver.
 *   -t SECONDS       a run taking longer is a hang (fork mode; default 20)
 *   -v               one line per N
 *
 * Checks per N: the script's outcome (ok / Lua error), then after
 * lua_close(): no Lua memory is still allocated (the allocator's byte
 * count is back to 0) and the process has as many open fds as before.
 * In fork mode each N runs in a child, so a crash or a hang is reported
 * with its N and the driver goes on; rerun one N under gdb with
 *   gdb --args build/alloc_fail -n -f N -l N fuzz/alloc_fail.lua build
 *
 * Exit status: 0 when every N was ok or a Lua error, 1 otherwise. The last
 * line reads "alloc_fail: R runs: A ok, E lua errors, C crashes, H hangs,
 * L leaks (lua_newstate refused: S)" (the first few N leave lua_newstate
 * itself without memory: it returns NULL, which is fine).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

enum { MODE_PERSIST, MODE_ONCE };

/* child exit statuses */
enum { RC_OK = 0, RC_LUAERR = 10, RC_LEAKMEM = 11, RC_LEAKFD = 12,
       RC_LEAKBOTH = 13, RC_NOSTATE = 14 };

typedef struct alloc_s {
    long count;        /* allocations granted or refused so far */
    long limit;        /* refuse allocation number `limit` (1-based) and,
                          in persist mode, every later one; 0 = never */
    int mode;
    long failures;     /* allocations refused */
    size_t live;       /* bytes currently allocated */
    /* the last refused request (once mode: its retry is refused too) */
    void *fptr;
    size_t fosize, fnsize;
    int fretry;
} alloc_t;

static const char *script_path, *build_dir;
static int verbose;


/* called at the first refused allocation of a run:
 *   gdb -ex 'break first_refusal' -ex run -ex bt --args \
 *       build/alloc_fail -n -f N -l N fuzz/alloc_fail.lua build */
static void __attribute__((noinline))
first_refusal(alloc_t *a)
{
    __asm__ volatile("" : : "r"(a) : "memory");
}


static void *
test_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    alloc_t *a = ud;
    size_t old = ptr != NULL ? osize : 0;
    void *p;

    if (nsize == 0) {
        free(ptr);
        a->live -= old;
        return NULL;
    }
    if (nsize > old) { /* an allocation or a growth: may fail */
        int refuse = 0;
        if (a->mode == MODE_ONCE && a->fretry && ptr == a->fptr
            && osize == a->fosize && nsize == a->fnsize) {
            a->fretry = 0; /* the emergency-GC retry of the same request */
            refuse = 1;
        } else {
            a->fretry = 0;
            a->count++;
            if (a->limit > 0
                && (a->mode == MODE_PERSIST ? a->count >= a->limit
                                            : a->count == a->limit)) {
                refuse = 1;
                a->fptr = ptr;
                a->fosize = osize;
                a->fnsize = nsize;
                a->fretry = 1;
            }
        }
        if (refuse) {
            if (a->failures++ == 0)
                first_refusal(a); /* a place for a gdb breakpoint */
            return NULL;
        }
    }
    p = realloc(ptr, nsize);
    if (p == NULL) {
        if (nsize <= old) /* Lua assumes shrinking never fails */
            abort();
        return NULL;
    }
    a->live += nsize - old;
    return p;
}


static int
count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.')
            n++;
    }
    closedir(d);
    return n - 1; /* the directory itself */
}


/* runs in protected mode: libraries, paths, the script */
static int
pmain(lua_State *L)
{
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s/?.so", build_dir);
    lua_setfield(L, -2, "cpath");
    lua_pushliteral(L, "lua/?.lua;lua/?/init.lua");
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
    if (luaL_loadfile(L, script_path) != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 0);
    return 0;
}


/* one run with allocation limit `limit` (0: none); returns an RC_* and
 * stores the number of allocations made in *count */
static int
run_one(long limit, int mode, long *count, char *msg, size_t msglen)
{
    alloc_t a;
    lua_State *L;
    int fds0 = count_fds(), fds1, status, rc;

    memset(&a, 0, sizeof(a));
    a.limit = limit;
    a.mode = mode;
    msg[0] = '\0';
    L = lua_newstate(test_alloc, &a);
    if (L == NULL) {
        *count = a.count;
        snprintf(msg, msglen, "lua_newstate failed");
        return RC_NOSTATE;
    }
    lua_pushcfunction(L, pmain);
    status = lua_pcall(L, 0, 0, 0);
    rc = RC_OK;
    if (status != LUA_OK) {
        const char *m = lua_tostring(L, -1);
        snprintf(msg, msglen, "%s", m != NULL ? m : "(error object)");
        rc = RC_LUAERR;
    }
    lua_close(L);
    *count = a.count;
    fds1 = count_fds();
    if (a.live != 0 && fds1 != fds0) {
        snprintf(msg, msglen, "%zu bytes of Lua memory and %d fds leaked",
                 a.live, fds1 - fds0);
        return RC_LEAKBOTH;
    }
    if (a.live != 0) {
        snprintf(msg, msglen, "%zu bytes of Lua memory still allocated "
                 "after lua_close", a.live);
        return RC_LEAKMEM;
    }
    if (fds1 != fds0) {
        snprintf(msg, msglen, "%d fds leaked (%d before, %d after)",
                 fds1 - fds0, fds0, fds1);
        return RC_LEAKFD;
    }
    return rc;
}


static void
usage(void)
{
    fprintf(stderr, "usage: alloc_fail [-m persist|once] [-f first] "
            "[-l last] [-s stride] [-n] [-t sec] [-v] script build_dir\n");
    exit(2);
}


int
main(int argc, char **argv)
{
    long first = 1, last = 0, stride = 1, n, total, count;
    long runs = 0, ok = 0, errs = 0, crashes = 0, hangs = 0, leaks = 0;
    long nostate = 0;
    int mode = MODE_PERSIST, nofork = 0, timeout = 20, c, rc;
    char msg[512];

    while ((c = getopt(argc, argv, "m:f:l:s:nt:v")) != -1) {
        switch (c) {
        case 'm':
            if (strcmp(optarg, "persist") == 0)
                mode = MODE_PERSIST;
            else if (strcmp(optarg, "once") == 0)
                mode = MODE_ONCE;
            else
                usage();
            break;
        case 'f': first = atol(optarg); break;
        case 'l': last = atol(optarg); break;
        case 's': stride = atol(optarg); break;
        case 'n': nofork = 1; break;
        case 't': timeout = atoi(optarg); break;
        case 'v': verbose = 1; break;
        default: usage();
        }
    }
    if (argc - optind != 2 || first < 1 || stride < 1)
        usage();
    script_path = argv[optind];
    build_dir = argv[optind + 1];
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* a run without failures: it must succeed, and gives the count */
    rc = run_one(0, mode, &total, msg, sizeof(msg));
    printf("alloc_fail: a run without failures makes %ld allocations: %s\n",
           total, rc == RC_OK ? "ok" : msg);
    if (rc != RC_OK)
        return 1;
    if (last <= 0 || last > total + 50)
        last = last <= 0 ? total : total + 50;
    printf("alloc_fail: mode %s, N = %ld..%ld step %ld (%ld runs)%s\n",
           mode == MODE_PERSIST ? "persist" : "once", first, last, stride,
           (last - first) / stride + 1, nofork ? ", no fork" : "");

    for (n = first; n <= last; n += stride) {
        int st = 0, sig = 0;
        runs++;
        if (nofork) {
            rc = run_one(n, mode, &count, msg, sizeof(msg));
        } else {
            pid_t pid;
            time_t t0;
            int fd[2];
            ssize_t r;

            if (pipe(fd) != 0) {
                perror("pipe");
                return 1;
            }
            fflush(NULL);
            pid = fork();
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            if (pid == 0) {
                close(fd[0]);
                rc = run_one(n, mode, &count, msg, sizeof(msg));
                if (write(fd[1], msg, strlen(msg)) < 0)
                    _exit(RC_LUAERR);
                _exit(rc);
            }
            close(fd[1]);
            t0 = time(NULL);
            for (;;) {
                pid_t w = waitpid(pid, &st, WNOHANG);
                if (w == pid)
                    break;
                if (time(NULL) - t0 > timeout) {
                    kill(pid, SIGKILL);
                    waitpid(pid, &st, 0);
                    sig = -1;
                    break;
                }
                usleep(1000);
            }
            r = read(fd[0], msg, sizeof(msg) - 1);
            msg[r > 0 ? r : 0] = '\0';
            close(fd[0]);
            if (sig == -1)
                rc = -1;
            else if (WIFSIGNALED(st))
                sig = WTERMSIG(st), rc = -2;
            else
                rc = WEXITSTATUS(st);
        }
        switch (rc) {
        case RC_OK: ok++; break;
        case RC_LUAERR: errs++; break;
        case RC_NOSTATE: nostate++; break; /* lua_newstate said NULL */
        case -1:
            hangs++;
            printf("HANG  N=%ld: no end after %d s\n", n, timeout);
            break;
        case -2:
            crashes++;
            printf("CRASH N=%ld: signal %d (%s)\n", n, sig, strsignal(sig));
            break;
        case RC_LEAKMEM: case RC_LEAKFD: case RC_LEAKBOTH:
            leaks++;
            printf("LEAK  N=%ld: %s\n", n, msg);
            break;
        default:
            crashes++;
            printf("FAIL  N=%ld: exit status %d %s\n", n, rc, msg);
        }
        if (verbose)
            printf("N=%ld rc=%d %s\n", n, rc, msg);
    }
    printf("alloc_fail: %ld runs: %ld ok, %ld lua errors, %ld crashes, "
           "%ld hangs, %ld leaks (lua_newstate refused: %ld)\n", runs, ok,
           errs, crashes, hangs, leaks, nostate);
    return (crashes || hangs || leaks) ? 1 : 0;
}
