/* base/runner.c - run children through libpipeline, with capture and deadlines.
 *
 * libpipeline forks, execs and reaps; it offers neither a deadline nor
 * stderr capture, so this file adds both: stderr goes to an anonymous
 * file (base/files.h) installed by a pre-exec hook, and the wait (run_wait.c)
 * is bounded by the deadline. This file starts children and reaps them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pipeline.h>

#include "base/clock.h"
#include "base/command.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/run_child.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/strv.h"
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

static int stderr_to_stdout = -1;

/* The stderr fd for the child: the capture file, or -1 for where stdout
 * goes. Of openshell's descriptors only stdin, stdout and stderr cross
 * into the child: a third child holding an end of the pipe that joins two
 * would keep its reader from ever seeing EOF, its writer from a broken pipe. */
static void prepare_child(void *data)
{
	int fd = *(int *)data;

	unblock_sigchld();   /* blocked by the parent around the fork */
	setpgid(0, 0);
	if (dup2(fd >= 0 ? fd : STDOUT_FILENO, STDERR_FILENO) < 0)
		_exit(127);
	close_range(STDERR_FILENO + 1, ~0U, 0);   /* a failure leaves only what exec closes */
}

/* A copy of the caller's descriptor for the child, for libpipeline to
 * close once the child has it: the caller may close its own at once. */
static int copy_fd(int fd, os_error *err)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

	if (copy < 0)
		os_error_set(err, OS_EXIT_FAILURE, "cannot pass descriptor %d to a command: %s", fd, strerror(errno));
	return copy;
}

/* /dev/null, opened once for the process: each open of a device is a
 * path walk and a device cgroup check, and a start runs nine children. */
static int dev_null(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	return fd;
}

/* A /dev/null of the child's own, for libpipeline to close. */
static int open_null(os_error *err)
{
	if (dev_null() < 0)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot open /dev/null: %s", strerror(errno));
	return copy_fd(dev_null(), err);
}

/* stdin for the child: the caller's descriptor, the given bytes in an
 * anonymous file, rewound, or /dev/null. */
static int input_fd(const struct run_spec *spec, os_error *err)
{
	int fd;

	if (spec->stdin_fd > STDERR_FILENO)
		return copy_fd(spec->stdin_fd, err);
	if (!spec->input)
		return open_null(err);
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

/* stdout for the child as pipeline_want_out() takes it: -1 for the
 * capture pipe; quiet, errfd's /dev/null; else the caller's descriptor. */
static int output_fd(const struct run_spec *spec, int errfd, int *fd, os_error *err)
{
	*fd = -1;
	if (spec->quiet)
		*fd = errfd;
	else if (spec->stdout_fd > STDERR_FILENO && (*fd = copy_fd(spec->stdout_fd, err)) < 0)
		return -1;
	return 0;
}

static int captures_stdout(const struct run_spec *spec)
{
	return !spec->interactive && !spec->quiet && spec->stdout_fd <= STDERR_FILENO;
}

/* The caller's environment changes: "NAME=VALUE" sets, a bare "NAME" unsets. */
static void apply_env(pipecmd *cmd, const char *const *env)
{
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (!eq) {
			pipecmd_unsetenv(cmd, env[i]);
			continue;
		}
		cleanup_free char *name = xstrndup(env[i], (size_t)(eq - env[i]));
		pipecmd_setenv(cmd, name, eq + 1);
	}
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

/* libpipeline prints "cmd: Terminated" for a child ended by a signal; the
 * runner reports that itself, in context (a deadline, an interrupt, an
 * exit status of 128 + N), so the library's line is sent to /dev/null. */
static void wait_quietly(pipeline *p, int **statuses, int *nstat)
{
	int saved = dup(STDERR_FILENO);
	int null = dev_null();

	fflush(stderr);
	if (saved >= 0 && null >= 0)
		dup2(null, STDERR_FILENO);
	pipeline_wait_all(p, statuses, nstat);
	fflush(stderr);
	if (saved >= 0 && null >= 0)
		dup2(saved, STDERR_FILENO);
	if (saved >= 0)
		close(saved);
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
 * the caller's descriptor, or /dev/null), stdout to a pipe (or the
 * caller's descriptor), stderr to *errfd (or where stdout goes), a process
 * group of its own; or, attached, the user's terminal for all three. */
static pipeline *build_pipeline(const struct run_spec *spec, const char *path, int *infd, int *errfd,
				os_error *err)
{
	pipecmd *cmd = pipecmd_new(path);
	pipeline *p;
	int outfd;

	for (size_t i = 1; spec->argv[i]; i++)
		pipecmd_arg(cmd, spec->argv[i]);
	apply_env(cmd, spec->env_base);
	apply_env(cmd, spec->env);
	p = pipeline_new_commands(cmd, (void *)NULL);
	if (spec->interactive) {
		pipeline_ignore_signals(p, 1);   /* like system(): ^C is the child's */
		pipecmd_pre_exec(cmd, prepare_attached_child, NULL, NULL);
		return p;
	}
	pipeline_ignore_signals(p, 0);
	if ((*infd = input_fd(spec, err)) < 0 || (spec->quiet && (*errfd = open_null(err)) < 0) ||
	    (!spec->quiet && !spec->merge_stderr && (*errfd = anonymous_file(err)) < 0) ||
	    output_fd(spec, *errfd, &outfd, err) < 0) {
		pipeline_free(p);
		return NULL;
	}
	/* Quiet: stderr goes where stdout does (libpipeline has made the
	 * /dev/null descriptor the child's stdout, and closed it). */
	pipecmd_pre_exec(cmd, prepare_child, NULL, spec->quiet ? (void *)&stderr_to_stdout : errfd);
	pipeline_want_in(p, *infd);
	pipeline_want_out(p, outfd);
	return p;
}

/* Start it with SIGCHLD blocked, so that libpipeline cannot reap the child
 * before a pidfd is open on it. */
static void start_pinned(struct run_child *c)
{
	sigset_t chld, old_mask;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pipeline_install_post_fork(mark_child);
	/* Should the mask not be set, libpipeline may reap the child before
	 * pidfd_open sees it; the wait then polls without a pidfd. */
	int blocked = sigprocmask(SIG_BLOCK, &chld, &old_mask) == 0;
	pipeline_start(c->p);
	c->pid = pipeline_get_pid(c->p, 0);
	if (c->pid > 0)
		c->pidfd = pidfd_open(c->pid, 0);
	if (blocked && sigprocmask(SIG_SETMASK, &old_mask, NULL) < 0)
		log_warn("cannot restore the signal mask: %s", strerror(errno));
	/* libpipeline closed what it gave the child: its stdin, and a stdout
	 * other than the capture pipe (quiet: the /dev/null in errfd). */
	c->infd = -1;
	if (c->spec.quiet)
		c->errfd = -1;
	if (captures_stdout(&c->spec)) {
		int fl;

		c->outfd = fileno(pipeline_get_outfile(c->p));
		/* A blocking pipe would only make each read wait for data; the
		 * poll before it bounds that, so a failure here is not fatal. */
		if ((fl = fcntl(c->outfd, F_GETFL)) < 0 || fcntl(c->outfd, F_SETFL, fl | O_NONBLOCK) < 0)
			log_verbose("cannot make the output pipe non-blocking: %s", strerror(errno));
	}
}

/* How the child ended, as the caller's error: 0 for a normal exit. */
static int report_end(const struct run_child *c, os_error *err)
{
	if (c->why == RUN_END_INTERRUPT)
		return os_error_set(err, 128 + signals_pending(), "interrupted while %s was running; it was stopped",
				    c->name);
	if (c->why == RUN_END_STOPPED)
		return 0;
	if (c->why == RUN_END_UNWATCHED)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot wait for %s (poll: %s); it was stopped", c->name,
				    strerror(c->poll_errno));
	if (c->why == RUN_END_DEADLINE) {
		cleanup_free char *dur = clock_format_ms(c->spec.timeout_ms);
		os_error_set(err, OS_EXIT_TIMEOUT, "%s timed out after %s and was stopped", c->name, dur);
		os_error_set_detail(err, c->res.err);
		err->limit_ms = c->spec.timeout_ms;
		return -1;
	}
	if (c->too_big)
		return os_error_set(err, OS_EXIT_FAILURE, "%s printed more than %u MiB; refusing to read more",
				    c->name, RUN_MAX_OUTPUT >> 20);
	return 0;
}

static void child_free(struct run_child *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->infd >= 0)
		close(c->infd);
	if (c->errfd >= 0)
		close(c->errfd);
	run_result_free(&c->res);
	strv_free(&c->env);
	free(c->name);
	free(c);
}

struct run_child *run_start(const struct run_spec *spec, os_error *err)
{
	struct run_child *c = xcalloc(1, sizeof(*c));
	cleanup_free char *path = NULL;

	c->spec = *spec;
	if (spec->env) {
		strv_pushv(&c->env, spec->env);
		c->spec.env = strv_argv(&c->env);
	}
	c->infd = c->errfd = c->outfd = c->pidfd = -1;
	c->backoff = 1;
	c->res.out = xstrdup("");
	c->res.err = xstrdup("");
	c->name = command_short_name(spec->argv);
	if (signals_stop_requested()) {
		os_error_set(err, 128 + signals_pending(), "interrupted before %s could run", c->name);
		goto fail;
	}
	if (!(path = command_find(spec->argv[0]))) {
		os_error_set(err, OS_EXIT_FAILURE, "cannot run %s: '%s' not found on PATH", c->name, spec->argv[0]);
		goto fail;
	}
	if (log_verbosity() > 0) {
		cleanup_free char *line = command_string(spec->argv);
		log_verbose("+ %s", line);
	}
	if (!(c->p = build_pipeline(spec, path, &c->infd, &c->errfd, err)))
		goto fail;
	if (spec->timeout_ms > 0)
		c->deadline = clock_ms() + spec->timeout_ms;
	if (spec->on_tick)
		c->next_tick = clock_ms() + spec->tick_ms;
	c->spec.argv = NULL;   /* the caller's, and copied into the pipeline */
	c->spec.input = NULL;
	c->spec.env_base = NULL;   /* read only at the start (runner.h) */
	start_pinned(c);
	return c;
fail:
	child_free(c);
	return NULL;
}

int run_ended(const struct run_child *c)
{
	return c->reported;
}

const char *const *run_env(const struct run_child *c)
{
	return c->spec.env;
}

/* Moved above stdio: with stdin closed, pipe2() hands out 0, which
 * run_spec reads as unset. -1 with errno set (and fd closed) on failure. */
static int above_stdio(int fd)
{
	int copy, e;

	if (fd > STDERR_FILENO)
		return fd;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	e = errno;
	close(fd);
	errno = e;
	return copy;
}

int run_pipe(int fds[2], os_error *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make a pipe: %s", strerror(errno));
	fds[0] = above_stdio(fds[0]);
	fds[1] = above_stdio(fds[1]);
	if (fds[0] >= 0 && fds[1] >= 0)
		return 0;
	os_error_set(err, OS_EXIT_FAILURE, "cannot make a pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return -1;
}

int run_finish(struct run_child *c, struct run_result *res, os_error *err)
{
	int *statuses = NULL, nstat = 0, rc;

	if (!c->ended)
		run_child_end(c, signals_stop_requested() ? RUN_END_INTERRUPT : RUN_END_STOPPED);
	c->res.stopped = c->why == RUN_END_STOPPED;
	wait_quietly(c->p, &statuses, &nstat);
	pipeline_free(c->p);
	c->res.status = nstat > 0 ? decode_status(statuses[0]) : OS_EXIT_FAILURE;
	free(statuses);
	if (c->errfd >= 0)
		read_stderr(c->errfd, &c->res);
	c->res.out[c->res.out_len] = '\0';
	rc = report_end(c, err);
	*res = c->res;
	c->res = (struct run_result){ 0 };
	child_free(c);
	return rc;
}

int run_await(struct run_child *c, struct run_result *res, os_error *err)
{
	while (run_wait_any(&c, 1) >= 0)
		;   /* until it ends: a line that wakes the waiter does not end it */
	return run_finish(c, res, err);
}

int run_command(const struct run_spec *spec, struct run_result *res, os_error *err)
{
	struct run_child *c = run_start(spec, err);

	if (!c) {
		*res = (struct run_result){ .out = xstrdup(""), .err = xstrdup("") };
		return -1;
	}
	return run_await(c, res, err);
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

int run_detached(const struct run_spec *spec, os_error *err)
{
	struct strv argv = { 0 };
	cleanup_free char *secs = xasprintf("%ds", spec->timeout_ms > 1000 ? spec->timeout_ms / 1000 : 1);
	struct run_spec s = { .timeout_ms = RUN_DETACH_START_MS, .quiet = 1, .env = spec->env,
			      .env_base = spec->env_base };
	struct run_result res = { 0 };
	int rc;

	/* A session of its own, so that nothing openshell's terminal or its
	 * end sends reaches it; setsid's own process exits at once, the
	 * command's deadline is timeout(1)'s once openshell is gone. */
	strv_pushv(&argv, (const char *const[]){ "setsid", "--fork", "timeout", "--kill-after=1s", secs, NULL });
	strv_pushv(&argv, spec->argv);
	s.argv = strv_argv(&argv);
	rc = run_command_ok(&s, &res, err);
	run_result_free(&res);
	strv_free(&argv);
	return rc;
}

void run_result_free(struct run_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
}
