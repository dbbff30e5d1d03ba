/*
 * Light threads: creation, the end of a thread (zombie, hand-over to a
 * waiting parent, discard), kill, error reports, and the teardown of cs.run.
 * The Lua API (spawn, wait, kill, status, self, sleep, stats, dump,
 * on_error) is in cs_thread.c too.
 */
#ifndef CS_THREAD_H
#define CS_THREAD_H

#include "cs_sched.h"

/* [-0, +1, m] a new light thread that will call the function at fidx with
 * the nargs values after it; pushes the coroutine. The values are copied. */
cs_thread_t *cs_thread_new(cs_sched_t *S, lua_State *L, int fidx, int nargs,
                           cs_co_t *parent, int kind);

/* th's own coroutine ended with status; returns the thread to resume next
 * (a parent that was waiting for it, with its results) or NULL */
cs_thread_t *cs_thread_finish(cs_sched_t *S, cs_thread_t *th, int status,
                              int nres);

/* [-0, +0, m] the user coroutine c has ended (returned, raised, closed or
 * killed): its zombie children are discarded */
void cs_thread_co_ended(cs_sched_t *S, lua_State *L, cs_co_t *c);

/* cancels th's pending operation, closes its coroutines, discards it */
void cs_thread_kill(cs_sched_t *S, lua_State *L, cs_thread_t *th);

/* the entry thread failed: kill every thread, fire timers prematurely */
void cs_thread_teardown(cs_sched_t *S);

/* nothing can run: kill everything and raise the deadlock error on L */
void cs_thread_deadlock(cs_sched_t *S, lua_State *L);

/* the end of cs.run: returns the entry's results or raises */
int cs_thread_run_done(cs_sched_t *S, lua_State *L, int status);

/* cross-coroutine tracebacks for errors propagated by coroutine.wrap */
void cs_thread_stash_traceback(cs_sched_t *S, cs_thread_t *th, lua_State *co);
void cs_thread_clear_stash(cs_sched_t *S, cs_thread_t *th);

/* [-0, +0, m] the status of the coroutine at idx as seen from L */
const char *cs_thread_costatus(cs_sched_t *S, lua_State *L, int idx);

#endif
