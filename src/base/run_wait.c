/* base/run_wait.c - serve running children: their output, callbacks,
 * deadlines and interrupts, in one poll() (see base/runner.h).
 *
 * The wait is a poll() on each child's stdout pipe and on a pidfd for it,
 * bounded by the nearest deadline or tick. Polling both means a chatty
 * child never blocks on a full pipe and a silent one is noticed the moment
 * it exits, with no sleeping.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/run_child.h"
#include "base/signals.h"
#include "base/xalloc.h"

/* Hand each complete line of new output to on_line. */
static void feed_lines(struct run_child *c, size_t from)
{
	char *out = c->res.out;
	char *nl;

	for (char *p = out + from; !c->stop && (nl = memchr(p, '\n', c->res.out_len - (size_t)(p - out)));
	     p = nl + 1) {
		int said;

		*nl = '\0';
		said = c->spec.on_line(c->spec.ctx, out + c->line_start);
		*nl = '\n';
		if (said == RUN_WAKE)
			c->woke = 1;
		else if (said)
			c->stop = 1;
		c->line_start = (size_t)(nl + 1 - out);
	}
	if (c->spec.discard_lines && c->line_start > 0) {
		memmove(out, out + c->line_start, c->res.out_len - c->line_start);
		c->res.out_len -= c->line_start;
		c->line_start = 0;
	}
}

/* Read what there is; 1 at EOF (or when no more is wanted), else 0. */
static int drain_stdout(struct run_child *c)
{
	for (;;) {
		ssize_t n;

		if (c->res.out_len + 65536 + 1 > c->cap) {
			c->cap = c->cap ? c->cap * 2 : 65536 * 2;
			c->res.out = xrealloc(c->res.out, c->cap);
		}
		n = read(c->outfd, c->res.out + c->res.out_len, 65536);
		if (n > 0) {
			c->res.out_len += (size_t)n;
			if (c->spec.on_line)
				feed_lines(c, c->res.out_len - (size_t)n);
			if (c->res.out_len > RUN_MAX_OUTPUT) {
				c->too_big = 1;
				return 1;
			}
			if (c->stop || c->woke)
				return 0;
			continue;
		}
		if (n == 0)
			return 1;           /* EOF */
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? 0 : 1;
	}
}

/* Without a pidfd (valgrind does not know pidfd_open), look without
 * reaping: the reaping belongs to libpipeline, whose SIGCHLD handler may
 * already have done it (ECHILD), which also means the child is gone. */
static void check_exited(struct run_child *c)
{
	siginfo_t info = { 0 };

	if (c->exited || c->pidfd >= 0)
		return;
	if (c->pid <= 0 || waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    info.si_pid == c->pid)
		c->exited = 1;
}

/* Signal the child's process group (a child's own children must not
 * outlive it), but only while its pid is still its own. libpipeline's
 * SIGCHLD handler reaps any child the moment it exits, and a pidfd does not
 * keep a reaped pid from being handed out again: on a busy host the pid
 * space wraps within a minute, and a container's init (a group leader on
 * the host) may get the number. With SIGCHLD blocked nothing can reap the
 * child between the look and the kill; a child not yet reaped, zombie or
 * not, still owns its pid and its group's id. */
static void signal_group(struct run_child *c, int sig)
{
	sigset_t chld, old;
	siginfo_t info = { 0 };

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &old) < 0) {
		/* The look cannot be made safe: only the pidfd, which cannot
		 * miss, signals (the leader alone). */
		if (c->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0);
		return;
	}
	if (c->pid > 0 && waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
		if (kill(-c->pid, sig) < 0)
			kill(c->pid, sig);
	} else {
		c->exited = 1;   /* reaped already: nothing of it is left to stop */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* SIGTERM, a short grace, then SIGKILL: the child cannot outlive its
 * deadline by more than RUN_KILL_GRACE_MS. */
static void terminate(struct run_child *c)
{
	/* A child run_stop() has killed needs no grace of its own. */
	long long end = (c->stopped_at ? c->stopped_at : clock_ms()) + RUN_KILL_GRACE_MS;

	check_exited(c);
	if (c->exited)
		return;
	if (!c->stopped_at)
		signal_group(c, SIGTERM);
	while (!c->exited && clock_ms() < end) {
		struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };
		long long left = end - clock_ms();

		if (c->pidfd >= 0) {
			if (poll(&pfd, 1, left > 10 ? 10 : (int)left) > 0)
				c->exited = 1;
		} else {
			poll(NULL, 0, 10);
			check_exited(c);
		}
	}
	if (!c->exited)
		signal_group(c, SIGKILL);
}

void run_stop(struct run_child *c)
{
	if (!c || c->ended)
		return;
	/* Its answer is no longer wanted, and nothing of it is to keep: no
	 * grace. The docker CLI shuts a connection down with care (through
	 * ssh, its connhelper gives ssh seconds to go), which a stream whose
	 * answer is in does not need. */
	check_exited(c);
	if (!c->exited && !c->stopped_at) {
		signal_group(c, SIGKILL);
		c->stopped_at = clock_ms();
	}
}

void run_child_end(struct run_child *c, enum run_end why)
{
	c->why = why;
	terminate(c);
	c->ended = 1;
}

/* What ends a child other than its own exit: an interrupt (after its
 * grace), its deadline, a callback's stop, too much output; and its tick,
 * when due. */
static void check_due(struct run_child *c)
{
	long long now = clock_ms();

	if (signals_stop_requested()) {
		if (c->spec.interrupt_grace_ms > 0 && !c->grace_end)
			c->grace_end = now + c->spec.interrupt_grace_ms;
		if (c->spec.interrupt_grace_ms <= 0 || now >= c->grace_end)
			return run_child_end(c, RUN_END_INTERRUPT);
	}
	if (c->stop)
		return run_child_end(c, RUN_END_STOPPED);
	if (c->too_big)
		return run_child_end(c, RUN_END_NONE);
	if (c->deadline && now >= c->deadline)
		return run_child_end(c, RUN_END_DEADLINE);
	if (c->next_tick && now >= c->next_tick) {
		int delay = c->spec.on_tick(c->spec.ctx);   /* may run commands of its own */

		if (delay == RUN_WAKE) {
			c->woke = 1;
			c->next_tick = 0;   /* its news is told: no more ticks */
			return;
		}
		if (delay <= 0)
			return run_child_end(c, RUN_END_STOPPED);
		c->next_tick = clock_ms() + delay;
	}
}

/* How long poll() may sleep for C: to its deadline, next tick or the end
 * of its grace, or a short backoff without a pidfd; -1 for no limit. */
static int poll_timeout(struct run_child *c, int timeout)
{
	long long now = clock_ms();
	long long at[] = { c->deadline, c->next_tick, c->grace_end };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (!at[i])
			continue;
		long long left = at[i] - now;
		left = left < 0 ? 0 : left > 60000 ? 60000 : left;
		timeout = timeout < 0 || timeout > left ? (int)left : timeout;
	}
	if (!c->exited && c->pidfd < 0) {
		timeout = timeout < 0 || timeout > c->backoff ? c->backoff : timeout;
		c->backoff = c->backoff < 50 ? c->backoff * 2 : 50;
	}
	return timeout;
}

int run_wait_any(struct run_child *const *kids, size_t n)
{
	return run_wait_until(kids, n, 0);
}

int run_wait_until(struct run_child *const *kids, size_t n, long long due)
{
	for (;;) {
		struct pollfd fds[2 * RUN_MAX_CHILDREN + 1];
		struct run_child *owner[2 * RUN_MAX_CHILDREN + 1];
		nfds_t nfds = 0;
		int timeout = -1, live = 0, r;

		for (size_t i = 0; i < n && i < RUN_MAX_CHILDREN; i++) {
			struct run_child *c = kids[i];

			if (!c || c->reported)
				continue;
			check_exited(c);
			if (!c->ended && c->outfd < 0 && c->exited)
				c->ended = 1;
			if (!c->ended)
				check_due(c);
			if (c->ended) {
				c->reported = 1;
				return (int)i;
			}
			if (c->woke) {
				c->woke = 0;
				return (int)i;
			}
			live++;
			timeout = poll_timeout(c, timeout);
			if (c->outfd >= 0) {
				owner[nfds] = c;
				fds[nfds++] = (struct pollfd){ .fd = c->outfd, .events = POLLIN };
			}
			if (c->pidfd >= 0 && !c->exited) {
				owner[nfds] = c;
				fds[nfds++] = (struct pollfd){ .fd = c->pidfd, .events = POLLIN };
			}
		}
		if (!live)
			return -1;
		if (due) {
			long long left = due - clock_ms();
			if (left <= 0)
				return RUN_WAIT_DUE;
			timeout = timeout < 0 || timeout > left ? (int)(left > 60000 ? 60000 : left) : timeout;
		}
		/* Once a stop is asked for the wake fd stays readable: the
		 * children still running have a grace, which their timeout holds. */
		if (!signals_stop_requested() && signals_wake_fd() >= 0) {
			owner[nfds] = NULL;
			fds[nfds++] = (struct pollfd){ .fd = signals_wake_fd(), .events = POLLIN };
		}
		r = poll(fds, nfds, timeout);
		if (r < 0 && errno == EINTR)
			continue;   /* libpipeline's SIGCHLD handler */
		if (r < 0) {
			/* Cannot watch them: stop them rather than wait blind,
			 * and say so, rather than call it their deadline. */
			int e = errno;
			for (size_t i = 0; i < n && i < RUN_MAX_CHILDREN; i++)
				if (kids[i] && !kids[i]->ended) {
					kids[i]->poll_errno = e;
					run_child_end(kids[i], RUN_END_UNWATCHED);
				}
			continue;
		}
		for (nfds_t i = 0; i < nfds; i++) {
			struct run_child *c = owner[i];

			if (!fds[i].revents || !c)
				continue;   /* the wake fd: the next round sees the signal */
			if (fds[i].fd == c->outfd) {
				if (drain_stdout(c))
					c->outfd = -1;   /* libpipeline closes it with the pipeline */
			} else if (fds[i].fd == c->pidfd) {
				c->exited = 1;
			}
		}
	}
}
