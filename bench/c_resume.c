/*
 * c_resume: the floor for a C scheduler. Embeds Lua 5.4, starts NTHREADS
 * coroutines running `while true do coroutine.yield() end` and resumes them
 * round-robin from a C loop with lua_resume, ITERS resumes in all.
 *
 *   c_resume NTHREADS ITERS      prints nanoseconds per resume/yield round trip
 *
 * Built by bench/run.sh:
 *   gcc -O2 -o bench/build/c_resume bench/c_resume.c $(pkg-config --cflags --libs lua5.4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void
resume_one(lua_State *L, lua_State *co)
{
    int nres, rc;

    rc = lua_resume(co, L, 0, &nres);
    if (rc != LUA_YIELD) {
        fprintf(stderr, "c_resume: coroutine did not yield (%d): %s\n", rc,
                lua_tostring(co, -1));
        exit(1);
    }
    lua_pop(co, nres);
}

int
main(int argc, char **argv)
{
    static const char body[] =
        "return function() local yield = coroutine.yield "
        "while true do yield() end end";
    lua_State *L, **cos;
    long nth, iters, rounds, r, i;
    double t0, t1;

    if (argc != 3 || (nth = atol(argv[1])) < 1 || (iters = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: c_resume NTHREADS ITERS\n");
        return 2;
    }
    rounds = iters / nth;
    if (rounds < 1)
        rounds = 1;

    L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dostring(L, body) != LUA_OK) {      /* function at index 1 */
        fprintf(stderr, "c_resume: %s\n", lua_tostring(L, -1));
        return 1;
    }
    lua_createtable(L, (int) nth, 0);            /* anchors, index 2 */
    cos = malloc(sizeof(*cos) * (size_t) nth);
    if (cos == NULL)
        return 1;

    for (i = 0; i < nth; i++) {
        cos[i] = lua_newthread(L);
        lua_rawseti(L, 2, i + 1);
        lua_pushvalue(L, 1);
        lua_xmove(L, cos[i], 1);
        resume_one(L, cos[i]);                   /* runs up to the first yield */
    }

    t0 = now();
    for (r = 0; r < rounds; r++)
        for (i = 0; i < nth; i++)
            resume_one(L, cos[i]);
    t1 = now();

    printf("%.6g\n", (t1 - t0) * 1e9 / (double) (rounds * nth));
    free(cos);
    lua_close(L);
    return 0;
}
