/* base/signals.c - record SIGINT/SIGTERM for the runner to act on. */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "base/signals.h"

static volatile sig_atomic_t pending;
static int shield;

static void on_signal(int sig)
{
	if (!pending)
		pending = sig;
}

void signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking poll or sleep must return to notice. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int signals_pending(void) { return pending; }
void signals_shield(void) { shield++; }
void signals_unshield(void) { shield--; }
int signals_stop_requested(void) { return pending && shield <= 0; }
