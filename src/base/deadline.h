/* base/deadline.h - an overall deadline and the time limit of each call within it.
 *
 * A command that makes many calls (docker, kubectl in a gateway) before
 * one overall deadline holds a struct deadline: when it ends, and how long
 * one call may take at most. The two questions every such caller has are
 * answered here and nowhere else:
 *
 * - How long may the next call run? deadline_call_ms(): the per-call cap,
 *   or what is left if that is sooner.
 * - Did the deadline, not the call's own cap, stop a call that timed out?
 *   deadline_cut(): the runner records in the error the limit it applied
 *   (os_error's limit_ms), and a limit below the cap was the remainder.
 *   No clock is read afterwards, so a call stopped by its own cap just
 *   before the deadline is still the call's failure.
 */
#ifndef OPENSHELL_BASE_DEADLINE_H
#define OPENSHELL_BASE_DEADLINE_H

#include "base/error.h"

struct deadline {
	long long at_ms;   /* clock_ms() time at which it passes */
	int per_call_ms;   /* the most one call may take; 0: no cap, a call may last until the deadline */
};

/* A deadline TOTAL_MS from now, each call within it capped at PER_CALL_MS. */
struct deadline deadline_in(int total_ms, int per_call_ms);

/* The same deadline, with another cap for the calls that have one of their own. */
struct deadline deadline_capped(const struct deadline *d, int per_call_ms);

/* What is left, at least 1 ms (a stream that lasts until the deadline). */
int deadline_left_ms(const struct deadline *d);

int deadline_passed(const struct deadline *d);

/* The time limit of the next call: the cap, or what is left if sooner
 * (at least 1 ms). */
int deadline_call_ms(const struct deadline *d);

/* Did D cut short the call that failed with ERR: a timeout under a limit
 * that deadline_call_ms() had cut below the cap? */
int deadline_cut(const struct deadline *d, const os_error *err);

#endif
