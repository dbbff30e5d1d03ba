/*
 * corosched's own C heap calls, made fallible on demand for tests.
 *
 * In a -DCS_TESTING build, every malloc, calloc and realloc written in a
 * file that includes this header (last, after the system headers) goes
 * through cs_alloc_hook (cs_net.c, with the other test hooks), so that
 * core._testing.alloc_fail can make one of them return NULL and the specs
 * can reach each "no memory" path; CS_ALLOC_FAIL=k in the environment
 * arms the same before the first allocation (k allocations succeed, the
 * next fails). Elsewhere this header changes nothing.
 * Allocations made inside Lua, libevent or OpenSSL are not affected.
 */
#ifndef CS_ALLOC_H
#define CS_ALLOC_H

#include <stdlib.h>

#ifdef CS_TESTING

/* 1 when this allocation must fail (it is counted either way) */
int cs_alloc_hook(void);

/* the next `after` allocations succeed, the `count` after them fail;
 * count <= 0 clears */
void cs_alloc_fail(long after, int count);

/* allocations made (or failed) since the process started */
unsigned long cs_alloc_count(void);

/* failures still to come: the armed ones not reached yet */
int cs_alloc_pending(void);

#define malloc(n) (cs_alloc_hook() ? NULL : malloc(n))
#define calloc(n, s) (cs_alloc_hook() ? NULL : calloc((n), (s)))
#define realloc(p, n) (cs_alloc_hook() ? NULL : realloc((p), (n)))

#endif

#endif
