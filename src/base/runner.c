/* base/runner.c - run children through libpipeline, with capture and deadlines.
 *
 * libpipeline forks, execs and reaps; it offers neither a deadline nor
 * stderr capture, so this file adds both: stderr goes to an unlinked
 * temporary file installed by a pre-exec hook, and the wait is a poll() on
 * the stdout pipe and on a pidfd for the child, bounded by the deadline.
 * Polling both means a chatty child never blocks on a full pipe and a
 * silent one is noticed the moment it exits, with no sleeping.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

#include "base/clock.h"
#include "base/command.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/xalloc.h"

/* In the child, before exec: stderr to the capture file, and a process
 * group of its own, so that a terminal's ^C reaches openshell alone and
 * openshell decides how the child ends (base/signals.h). */
static void unblock_sigchld(void)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_UNBLOCK, &chld, NULL) < 0)
		_exit(127);
}

/* Set in a forked child before it execs: a child whose exec fails exits
 * through libpipeline, and must not run openshell's atexit handlers. */
static volatile sig_atomic_t in_child;

static void mark_child(void) { in_child = 1; }

int run_in_child(void) { return in_child; }

/* An attached child keeps openshell's process group and terminal. */
static void prepare_attached_child(void *unused)
{
	(void)unused;
	unblock_sigchld();
}

/* The stderr fd for the child: the capture file, or -1 for stdout's pipe. */
static void prepare_child(void *data)
{
	int fd = *(int *)data;

	unblock_sigchld();   /* blocked by the parent around the fork */
	setpgid(0, 0);
	if (dup2(fd >= 0 ? fd : STDOUT_FILENO, STDERR_FILENO) < 0)
		_exit(127);
}

/* stdin for the child: the given bytes in an anonymous file, rewound. */
static int input_fd(const struct run_spec *spec, os_error *err)
{
	int fd;

	if (!spec->input) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			os_error_set(err, OS_EXIT_FAILURE, "cannot open /dev/null: %s", strerror(errno));
		return fd;
	}
	fd = anonymous_file(err);
	if (fd < 0)
		return -1;
	if (write_all(fd, spec->input, spec->input_len) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		os_error_set(err, OS_EXIT_FAILURE, "cannot buffer input for a command: %s",
			     strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Keep the tail of stderr: the cause of a failure is usually last. */
static void read_stderr(int fd, struct run_result *res)
{
	struct stat st;
	off_t from = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return;
	if (st.st_size > (off_t)RUN_MAX_STDERR)
		from = st.st_size - (off_t)RUN_MAX_STDERR;
	res->err = xrealloc(res->err, (size_t)(st.st_size - from) + 1);
	n = pread(fd, res->err, (size_t)(st.st_size - from), from);
	res->err_len = n > 0 ? (size_t)n : 0;
	res->err[res->err_len] = '\0';
}

struct wait_state {
	const struct run_spec *spec;
	int outfd;        /* -1 once closed or not captured */
	int pidfd;        /* -1 when unavailable or closed */
	int exited;       /* the child has exited (maybe not yet reaped) */
	pid_t pid;
	struct run_result *res;
	size_t cap;
	size_t line_start;   /* where the line on_line has not seen yet begins */
	int too_big;
	int stop;            /* a callback asked to end the child */
};

/* Hand each complete line of new output to on_line. */
static void feed_lines(struct wait_state *w, size_t from)
{
	char *out = w->res->out;
	char *nl;

	for (char *p = out + from; !w->stop && (nl = memchr(p, '\n', w->res->out_len - (size_t)(p - out)));
	     p = nl + 1) {
		*nl = '\0';
		w->stop = w->spec->on_line(w->spec->ctx, out + w->line_start) != 0;
		*nl = '\n';
		w->line_start = (size_t)(nl + 1 - out);
	}
	if (w->spec->discard_lines && w->line_start > 0) {
		memmove(out, out + w->line_start, w->res->out_len - w->line_start);
		w->res->out_len -= w->line_start;
		w->line_start = 0;
	}
}

static int drain_stdout(struct wait_state *w)
{
	for (;;) {
		ssize_t n;

		if (w->res->out_len + 65536 + 1 > w->cap) {
			w->cap = w->cap ? w->cap * 2 : 65536 * 2;
			w->res->out = xrealloc(w->res->out, w->cap);
		}
		n = read(w->outfd, w->res->out + w->res->out_len, 65536);
		if (n > 0) {
			w->res->out_len += (size_t)n;
			if (w->spec->on_line)
				feed_lines(w, w->res->out_len - (size_t)n);
			if (w->res->out_len > RUN_MAX_OUTPUT) {
				w->too_big = 1;
				return 1;
			}
			if (w->stop)
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
static void check_exited(struct wait_state *w)
{
	siginfo_t info = { 0 };

	if (w->exited || w->pidfd >= 0)
		return;
	if (w->pid <= 0 || waitid(P_PID, (id_t)w->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    info.si_pid == w->pid)
		w->exited = 1;
}

/* The next tick is due: call it. 1 when it asks to stop the child. */
static int tick(struct wait_state *w, long long *next_tick)
{
	int delay;

	if (!*next_tick || clock_ms() < *next_tick)
		return 0;
	if ((delay = w->spec->on_tick(w->spec->ctx)) <= 0)
		return 1;
	*next_tick = clock_ms() + delay;
	return 0;
}

/* Wait until stdout is at EOF and the child has exited, or until the
 * deadline, an interrupt or a callback's stop. Returns 1 on timeout, 2 on
 * interrupt, 3 on a stop, else 0. */
static int wait_child(struct wait_state *w, long long deadline)
{
	long long next_tick = w->spec->on_tick ? clock_ms() + w->spec->tick_ms : 0;
	long long grace_end = 0;   /* once interrupted: when the grace ends */
	int backoff = 1;

	for (check_exited(w); w->outfd >= 0 || !w->exited; check_exited(w)) {
		struct pollfd fds[3];
		nfds_t n = 0;
		int timeout = -1, r, waking = 1;

		if (signals_stop_requested()) {
			if (w->spec->interrupt_grace_ms <= 0)
				return 2;
			if (!grace_end)
				grace_end = clock_ms() + w->spec->interrupt_grace_ms;
			if (clock_ms() >= grace_end)
				return 2;
			/* The wake fd stays readable: poll until the grace ends. */
			waking = 0;
			timeout = (int)(grace_end - clock_ms());
		}
		if (w->stop || tick(w, &next_tick))
			return 3;
		if (deadline) {
			long long left = deadline - clock_ms();
			if (left <= 0)
				return 1;
			left = left > 60000 ? 60000 : left;
			timeout = timeout < 0 || timeout > left ? (int)left : timeout;
		}
		if (next_tick) {
			long long left = next_tick - clock_ms();
			left = left < 0 ? 0 : left;
			timeout = timeout < 0 || timeout > left ? (int)left : timeout;
		}
		if (!w->exited && w->pidfd < 0) {   /* no pidfd: bounded backoff */
			timeout = timeout < 0 || timeout > backoff ? backoff : timeout;
			backoff = backoff < 50 ? backoff * 2 : 50;
		}
		if (w->outfd >= 0)
			fds[n++] = (struct pollfd){ .fd = w->outfd, .events = POLLIN };
		if (w->pidfd >= 0 && !w->exited)
			fds[n++] = (struct pollfd){ .fd = w->pidfd, .events = POLLIN };
		if (waking && signals_wake_fd() >= 0)
			fds[n++] = (struct pollfd){ .fd = signals_wake_fd(), .events = POLLIN };
		r = poll(fds, n, timeout);
		if (r < 0 && errno == EINTR)
			continue;   /* libpipeline's SIGCHLD handler */
		if (r < 0)
			return 1;   /* cannot watch the child: stop it rather than wait blind */
		for (nfds_t i = 0; i < n; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == w->outfd) {
				if (drain_stdout(w)) {
					w->outfd = -1;
					if (w->too_big)
						return 0;
				}
			} else if (fds[i].fd == w->pidfd) {
				w->exited = 1;
			}   /* the wake fd: the loop's check sees the signal */
		}
	}
	return 0;
}

/* Signal the child's process group (a child's own children must not
 * outlive it), but only while its pid is still its own. libpipeline's
 * SIGCHLD handler reaps any child the moment it exits, and a pidfd does not
 * keep a reaped pid from being handed out again: on a busy host the pid
 * space wraps within a minute, and a container's init (a group leader on
 * the host) may get the number. With SIGCHLD blocked nothing can reap the
 * child between the look and the kill; a child not yet reaped, zombie or
 * not, still owns its pid and its group's id. 0 when it was signalled. */
static int signal_group(struct wait_state *w, int sig)
{
	sigset_t chld, old;
	siginfo_t info = { 0 };
	int rc = -1;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int blocked = sigprocmask(SIG_BLOCK, &chld, &old) == 0;
	if (blocked && w->pid > 0 && waitid(P_PID, (id_t)w->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
		if ((rc = kill(-w->pid, sig)) < 0)
			rc = kill(w->pid, sig);
	} else if (!blocked) {
		/* Cannot make the look safe: only the pidfd, which cannot
		 * miss, signals (the leader alone). */
		rc = w->pidfd >= 0 ? (int)syscall(SYS_pidfd_send_signal, w->pidfd, sig, NULL, 0) : -1;
	}
	if (rc < 0 && errno == ECHILD)
		w->exited = 1;   /* reaped already: nothing of it is left to stop */
	if (blocked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* SIGTERM, a short grace, then SIGKILL: the child cannot outlive its
 * deadline by more than RUN_KILL_GRACE_MS. */
static void terminate(struct wait_state *w)
{
	long long end = clock_ms() + RUN_KILL_GRACE_MS;

	check_exited(w);
	if (w->exited)
		return;
	signal_group(w, SIGTERM);
	while (!w->exited && clock_ms() < end) {
		struct pollfd pfd = { .fd = w->pidfd, .events = POLLIN };
		long long left = end - clock_ms();

		if (w->pidfd >= 0) {
			if (poll(&pfd, 1, left > 10 ? 10 : (int)left) > 0)
				w->exited = 1;
		} else {
			poll(NULL, 0, 10);
			check_exited(w);
		}
	}
	if (!w->exited)
		signal_group(w, SIGKILL);
}

/* libpipeline prints "cmd: Terminated" for a child ended by a signal; the
 * runner reports that itself, in context (a deadline, an interrupt, an
 * exit status of 128 + N), so the library's line is sent to /dev/null. */
static void wait_quietly(pipeline *p, int **statuses, int *nstat)
{
	int saved = dup(STDERR_FILENO);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	fflush(stderr);
	if (saved >= 0 && null >= 0)
		dup2(null, STDERR_FILENO);
	pipeline_wait_all(p, statuses, nstat);
	fflush(stderr);
	if (saved >= 0 && null >= 0)
		dup2(saved, STDERR_FILENO);
	if (saved >= 0)
		close(saved);
	if (null >= 0)
		close(null);
}

static int decode_status(int raw)
{
	if (WIFEXITED(raw))
		return WEXITSTATUS(raw);
	if (WIFSIGNALED(raw))
		return 128 + WTERMSIG(raw);
	return OS_EXIT_FAILURE;
}

/* The pipeline for one command: argv as given, stdin from the input (or
 * /dev/null), stdout to a pipe, stderr to *errfd (or that pipe), a process
 * group of its own; or, attached, the user's terminal for all three. */
static pipeline *build_pipeline(const struct run_spec *spec, const char *path, int *infd, int *errfd,
				os_error *err)
{
	pipecmd *cmd = pipecmd_new(path);
	pipeline *p;

	for (size_t i = 1; spec->argv[i]; i++)
		pipecmd_arg(cmd, spec->argv[i]);
	for (size_t i = 0; spec->env && spec->env[i]; i++) {
		cleanup_free char *name = xstrndup(spec->env[i], strcspn(spec->env[i], "="));
		const char *eq = strchr(spec->env[i], '=');
		pipecmd_setenv(cmd, name, eq ? eq + 1 : "");
	}
	p = pipeline_new_commands(cmd, (void *)NULL);
	if (spec->interactive) {
		pipeline_ignore_signals(p, 1);   /* like system(): ^C is the child's */
		pipecmd_pre_exec(cmd, prepare_attached_child, NULL, NULL);
		return p;
	}
	pipeline_ignore_signals(p, 0);
	if ((*infd = input_fd(spec, err)) < 0 || (!spec->merge_stderr && (*errfd = anonymous_file(err)) < 0)) {
		pipeline_free(p);
		return NULL;
	}
	pipecmd_pre_exec(cmd, prepare_child, NULL, errfd);
	pipeline_want_in(p, *infd);
	pipeline_want_out(p, -1);
	return p;
}

/* Start it with SIGCHLD blocked, so that libpipeline cannot reap the child
 * before a pidfd pins it: its pid cannot be reused under us. */
static void start_pinned(pipeline *p, int interactive, struct wait_state *w)
{
	sigset_t chld, old_mask;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pipeline_install_post_fork(mark_child);
	/* Should the mask not be set, libpipeline may reap the child before
	 * pidfd_open pins it; the wait then polls without a pidfd. */
	int blocked = sigprocmask(SIG_BLOCK, &chld, &old_mask) == 0;
	pipeline_start(p);
	w->pid = pipeline_get_pid(p, 0);
	if (w->pid > 0)
		w->pidfd = pidfd_open(w->pid, 0);
	if (blocked && sigprocmask(SIG_SETMASK, &old_mask, NULL) < 0)
		log_warn("cannot restore the signal mask: %s", strerror(errno));
	if (!interactive) {
		int fl;

		w->outfd = fileno(pipeline_get_outfile(p));
		/* A blocking pipe would only make each read wait for data; the
		 * poll before it bounds that, so a failure here is not fatal. */
		if ((fl = fcntl(w->outfd, F_GETFL)) < 0 || fcntl(w->outfd, F_SETFL, fl | O_NONBLOCK) < 0)
			log_verbose("cannot make the output pipe non-blocking: %s", strerror(errno));
	}
}

/* How the wait ended, as the caller's error: 0 for a normal exit. */
static int report_wait(int waited, const struct wait_state *w, const struct run_spec *spec,
		       const char *name, os_error *err)
{
	if (waited == 2)
		return os_error_set(err, 128 + signals_pending(), "interrupted while %s was running; it was stopped",
				    name);
	if (waited == 3)
		return 0;
	if (waited == 1) {
		cleanup_free char *dur = clock_format_ms(spec->timeout_ms);
		os_error_set(err, OS_EXIT_TIMEOUT, "%s timed out after %s and was stopped", name, dur);
		os_error_set_detail(err, w->res->err);
		return -1;
	}
	if (w->too_big)
		return os_error_set(err, OS_EXIT_FAILURE, "%s printed more than %u MiB; refusing to read more",
				    name, RUN_MAX_OUTPUT >> 20);
	return 0;
}

int run_command(const struct run_spec *spec, struct run_result *res, os_error *err)
{
	struct wait_state w = { .spec = spec, .outfd = -1, .pidfd = -1, .res = res };
	cleanup_free char *path = NULL;
	cleanup_free char *name = NULL;
	long long deadline = 0;
	int infd = -1, errfd = -1, rc = -1, waited, *statuses = NULL, nstat = 0;
	pipeline *p;

	memset(res, 0, sizeof(*res));
	res->out = xstrdup("");
	res->err = xstrdup("");
	name = command_short_name(spec->argv);
	if (signals_stop_requested())
		return os_error_set(err, 128 + signals_pending(), "interrupted before %s could run", name);
	path = command_find(spec->argv[0]);
	if (!path)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot run %s: '%s' not found on PATH",
				    name, spec->argv[0]);
	if (log_verbosity() > 0) {
		cleanup_free char *line = command_string(spec->argv);
		log_verbose("+ %s", line);
	}
	if (!(p = build_pipeline(spec, path, &infd, &errfd, err)))
		goto out;
	if (spec->timeout_ms > 0)
		deadline = clock_ms() + spec->timeout_ms;
	start_pinned(p, spec->interactive, &w);
	waited = wait_child(&w, deadline);
	if (waited || w.too_big)
		terminate(&w);
	res->stopped = waited == 3;
	wait_quietly(p, &statuses, &nstat);
	pipeline_free(p);
	res->status = nstat > 0 ? decode_status(statuses[0]) : OS_EXIT_FAILURE;
	if (errfd >= 0)
		read_stderr(errfd, res);
	res->out[res->out_len] = '\0';
	rc = report_wait(waited, &w, spec, name, err);
out:
	free(statuses);
	if (w.pidfd >= 0)
		close(w.pidfd);
	if (infd >= 0)
		close(infd);
	if (errfd >= 0)
		close(errfd);
	return rc;
}

int run_command_ok(const struct run_spec *spec, struct run_result *res, os_error *err)
{
	cleanup_free char *name = NULL;

	if (run_command(spec, res, err) < 0)
		return -1;
	if (res->status == 0)
		return 0;
	name = command_short_name(spec->argv);
	return run_failure(err, OS_EXIT_FAILURE, res, "%s failed (exit status %d)", name, res->status);
}

void run_result_free(struct run_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}
