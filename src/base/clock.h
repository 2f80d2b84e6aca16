/* base/clock.h - clocks, deadlines and the backoff every readiness wait uses.
 *
 * Waits poll state (docker inspect, kubectl get) rather than sleeping a
 * fixed time: the first retry comes after 50 ms and the delay doubles to at
 * most 500 ms, so a fast cluster is noticed at once and a slow one is not
 * hammered. A wait never sleeps past its deadline.
 */
#ifndef OPENSHELL_BASE_CLOCK_H
#define OPENSHELL_BASE_CLOCK_H

#include "base/error.h"

#define BACKOFF_FIRST_MS 50
#define BACKOFF_MAX_MS 500

/* Monotonic milliseconds. */
long long clock_ms(void);

struct backoff {
	int delay_ms;
};

/* Sleep the next backoff step, cut short at the deadline or by SIGINT or
 * SIGTERM. Returns 0 when the deadline has passed (the caller should give
 * up), 1 otherwise. */
int backoff_wait(struct backoff *b, long long deadline);

/* The time a single call may take: the per-call limit, or what is left
 * before the deadline if that is sooner (at least 1 ms). */
int call_budget_ms(long long deadline, int per_call_ms);

/* Did DEADLINE, not the call's own limit, stop a call that failed with ERR
 * (a timeout once the deadline has come: call_budget_ms cut its budget)? */
int call_cut_by_deadline(const os_error *err, long long deadline);

/* A duration the way messages show it: "250ms", "30s", "1.5s". */
char *clock_format_ms(int ms);

#endif
