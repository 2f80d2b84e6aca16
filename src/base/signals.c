/* base/signals.c - record SIGINT/SIGTERM/SIGHUP/SIGQUIT for the runner to
 * act on, and wake it through a self-pipe. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/signals.h"

static volatile sig_atomic_t pending;
static int shield;
static int wake[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;

	if (!pending)
		pending = sig;
	/* A poll that began after the check of pending sees this byte: a
	 * signal between the two can no longer be missed. */
	if (wake[1] >= 0 && write(wake[1], "", 1) < 0) {
		/* the pipe is full: it is readable already */
	}
	errno = saved;
}

void signals_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
		wake[0] = wake[1] = -1;   /* polls then wake by EINTR alone */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking poll or sleep must return to notice. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int signals_wake_fd(void) { return shield > 0 ? -1 : wake[0]; }

int signals_pending(void) { return pending; }
void signals_shield(void) { shield++; }
void signals_unshield(void) { shield--; }
int signals_stop_requested(void) { return pending && shield <= 0; }
