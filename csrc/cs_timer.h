/*
 * cs.timer.at / cs.timer.every: timer objects in the scheduler's heap
 * whose handlers run in new detached light threads.
 */
#ifndef CS_TIMER_H
#define CS_TIMER_H

#include "cs_sched.h"

/* the entry thread failed: run every pending timer now, premature */
void cs_timer_fire_all(cs_sched_t *S);

/* cs.run is failing: drop every pending timer without running it */
void cs_timer_cancel_all(cs_sched_t *S, lua_State *L);

#endif
