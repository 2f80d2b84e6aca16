/* base/clock.h - clocks and the backoff every readiness wait uses (deadlines: base/deadline.h).
 *
 * Waits poll state (docker inspect, kubectl get) rather than sleeping a
 * fixed time: the first retry comes after 50 ms and the delay doubles to at
 * most 500 ms, so a fast cluster is noticed at once and a slow one is not
 * hammered. A wait never sleeps past its deadline.
 */
#ifndef OPENSHELL_BASE_CLOCK_H
#define OPENSHELL_BASE_CLOCK_H

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

/* A duration the way messages show it: "250ms", "30s", "1.5s". */
char *clock_format_ms(int ms);

#endif
