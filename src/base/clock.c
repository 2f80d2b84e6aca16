/* base/clock.c - monotonic time and bounded exponential backoff. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

#include "base/clock.h"
#include "base/signals.h"
#include "base/xalloc.h"

long long clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int backoff_wait(struct backoff *b, long long deadline)
{
	long long left = deadline - clock_ms();
	long long d, end;

	if (left <= 0)
		return 0;
	if (b->delay_ms <= 0)
		b->delay_ms = BACKOFF_FIRST_MS;
	d = b->delay_ms < left ? b->delay_ms : left;
	/* An interrupt ends the sleep early, even one that came just before
	 * it (the wake fd is readable then); the next docker call reports it. */
	for (end = clock_ms() + d; !signals_stop_requested() && clock_ms() < end;) {
		struct pollfd pfd = { .fd = signals_wake_fd(), .events = POLLIN };
		poll(&pfd, pfd.fd >= 0 ? 1 : 0, (int)(end - clock_ms()));
	}
	b->delay_ms = b->delay_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : b->delay_ms * 2;
	return clock_ms() < deadline;
}

char *clock_format_ms(int ms)
{
	if (ms < 1000)
		return xasprintf("%dms", ms);
	if (ms % 1000 == 0)
		return xasprintf("%ds", ms / 1000);
	return xasprintf("%.1fs", ms / 1000.0);
}
