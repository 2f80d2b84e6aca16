/* base/deadline.c - per-call limits within an overall deadline. */
#include "config.h"

#include "base/clock.h"
#include "base/deadline.h"
#include "base/exitcode.h"

struct deadline deadline_in(int total_ms, int per_call_ms)
{
	return (struct deadline){ .at_ms = clock_ms() + total_ms, .per_call_ms = per_call_ms };
}

struct deadline deadline_capped(const struct deadline *d, int per_call_ms)
{
	return (struct deadline){ .at_ms = d->at_ms, .per_call_ms = per_call_ms };
}

int deadline_left_ms(const struct deadline *d)
{
	long long left = d->at_ms - clock_ms();

	return left < 1 ? 1 : left > 1LL << 30 ? 1 << 30 : (int)left;
}

int deadline_passed(const struct deadline *d)
{
	return clock_ms() >= d->at_ms;
}

int deadline_call_ms(const struct deadline *d)
{
	int left = deadline_left_ms(d);

	return d->per_call_ms <= 0 || left < d->per_call_ms ? left : d->per_call_ms;
}

int deadline_cut(const struct deadline *d, const os_error *err)
{
	return err->code == OS_EXIT_TIMEOUT && err->limit_ms > 0 &&
	       (d->per_call_ms <= 0 || err->limit_ms < d->per_call_ms);
}
