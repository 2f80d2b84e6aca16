/* base/runner.h - the one place that runs child processes.
 *
 * Every subprocess openshell starts goes through run_command(), which sits
 * on libpipeline (that library owns SIGCHLD). Commands are argv vectors,
 * never shell strings. A captured run:
 *   - feeds stdin from spec->input (or /dev/null, so a child never eats
 *     the user's terminal input),
 *   - captures stdout completely (up to RUN_MAX_OUTPUT bytes),
 *   - captures stderr in an anonymous file (a memfd), to be quoted when
 *     the call fails,
 *   - enforces spec->timeout_ms: past it the child gets SIGTERM, then
 *     SIGKILL a short grace later, and the call fails naming the command
 *     and the deadline.
 * Either end may be a descriptor of the caller's instead (spec->stdin_fd,
 * spec->stdout_fd), so that two children run side by side are joined by a
 * pipe (`docker save | docker load`): the bytes pass between them, never
 * through openshell. A captured child inherits only its stdin, stdout and
 * stderr, so a pipe's end reaches only the child it was given to.
 * An interactive run (spec->interactive) inherits stdin, stdout and stderr
 * instead and waits without capturing (for `exec`, `logs --follow`).
 *
 * Children can also run side by side: run_start() starts one, and
 * run_wait_any() serves several at once (their output, callbacks,
 * deadlines and interrupts, in one poll) until one of them ends or is woken
 * by its on_line; run_finish() reaps one, stopping it first if it still
 * runs, and gives its result as run_command() would. A detached run
 * (run_detached) goes on after openshell has gone, within its deadline.
 */
#ifndef OPENSHELL_BASE_RUNNER_H
#define OPENSHELL_BASE_RUNNER_H

#include <stddef.h>

#include "base/child_output.h"
#include "base/error.h"

#define RUN_MAX_OUTPUT (256u << 20)   /* stdout beyond this is an error */
#define RUN_MAX_STDERR (64u << 10)    /* stderr kept for messages */
#define RUN_KILL_GRACE_MS 500         /* SIGTERM → SIGKILL */
#define RUN_WAKE (-1)                 /* on_line: wake the waiter, keep the child */
#define RUN_MAX_CHILDREN 8            /* run side by side in one run_wait_any() */
#define RUN_DETACH_START_MS 5000      /* for a detached run to be on its way */

struct run_spec {
	const char *const *argv;  /* NULL-terminated; argv[0] looked up on PATH */
	const char *input;        /* bytes for stdin, or NULL for /dev/null */
	size_t input_len;
	int timeout_ms;           /* > 0: deadline for the whole call; 0: none */
	int interactive;          /* inherit stdio; nothing is captured */
	int merge_stderr;         /* stderr into the stdout capture (2>&1) */
	int quiet;                /* stdout and stderr to /dev/null: nothing captured */
	/* > 2: a descriptor the child gets as its stdin, instead of input;
	 * or as its stdout, instead of the capture (res->out stays "" and
	 * on_line is never called; stderr is still captured, unless
	 * merge_stderr sends it along; quiet wins); 0: unset. The child has
	 * a copy of its own once run_start() returns, and the caller should
	 * close its own then: a pipe's reader sees EOF only once every copy
	 * of the write end is closed. Interactive runs ignore both. */
	int stdin_fd;
	int stdout_fd;
	/* For the child only: "NAME=VALUE" sets NAME, a bare "NAME" unsets
	 * it (DOCKER_CONTEXT beside a DOCKER_HOST that overrides it); or NULL.
	 * run_env() hands it back, for messages about the child. */
	const char *const *env;
	/* The same, applied before env: the defaults of a family of calls
	 * (docker's: which daemon, docker/client.h), which env may override;
	 * read only while the child starts. */
	const char *const *env_base;
	/* Called with each complete line of stdout as it arrives (without its
	 * newline), so that a long child's progress is shown while it runs and
	 * a stream (docker logs --follow) is read as it comes. Returning
	 * non-zero ends the child there: it is stopped as at a deadline, and
	 * the call succeeds with res->stopped set; RUN_WAKE instead ends only
	 * the run_wait_any() in progress, and the child goes on. */
	int (*on_line)(void *ctx, const char *line);
	int discard_lines;        /* keep no line on_line has seen (a long stream) */
	/* Called tick_ms after the start and then after each delay it returns,
	 * while the child runs (a fallback poll beside a stream); returning 0
	 * stops the child as on_line does, RUN_WAKE wakes the waiter as
	 * on_line's does and ends the ticks. */
	int tick_ms;
	int (*on_tick)(void *ctx);
	void *ctx;                /* for on_line and on_tick */
	/* > 0: an interrupt stops the child only once it has had this long
	 * more to finish, for a call whose work the other side completes
	 * whether or not the client waits (docker run: the daemon goes on
	 * creating the container), so that what it did is known. */
	int interrupt_grace_ms;
};

struct run_result {
	int status;       /* exit status; 128 + N when killed by signal N */
	char *out;        /* NUL-terminated stdout (owned) */
	size_t out_len;
	char *err;        /* NUL-terminated stderr, at most RUN_MAX_STDERR (owned) */
	size_t err_len;
	int stopped;      /* on_line or on_tick ended the child */
};

/* Run the command to completion. Returns 0 once the child has exited,
 * whatever its status (see res->status); -1 with *err set when it could
 * not be started, timed out, or produced too much output. res is always
 * initialised and must be released with run_result_free(). */
int run_command(const struct run_spec *spec, struct run_result *res, os_error *err);

/* As run_command(), but a non-zero exit status is an error too, whose
 * message names the command and quotes the first line of its stderr. */
int run_command_ok(const struct run_spec *spec, struct run_result *res, os_error *err);

void run_result_free(struct run_result *res);

/* A child started by run_start(), until run_finish() reaps it. */
struct run_child;

/* Start the command; NULL with *err set when it cannot
 * be, as run_command() would fail. spec's callbacks and ctx must outlive
 * the child; its argv, input and env are used only here (the child keeps
 * a copy of env). */
struct run_child *run_start(const struct run_spec *spec, os_error *err);

/* A pipe to join two children (stdout_fd of one, stdin_fd of the other):
 * both ends close-on-exec and above stdio, as run_spec wants them even
 * when openshell was started with stdin closed. */
int run_pipe(int fds[2], os_error *err);

/* The child's copy of spec->env, for a message that names what it talked
 * to; freed when the child is reaped (copy it first). */
const char *const *run_env(const struct run_child *c);

/* Serve the children in KIDS (NULL entries and those already returned
 * ended are skipped; at most RUN_MAX_CHILDREN) until one ends (it exited
 * and its output is read, or its deadline, an interrupt or a callback
 * stopped it) or its on_line returns RUN_WAKE: returns its index. Each
 * child ended is returned once; -1 when none is left running. */
int run_wait_any(struct run_child *const *kids, size_t n);

/* As run_wait_any(), but returns RUN_WAIT_DUE once clock_ms() reaches
 * DUE (0: never) with nothing to report: a waiter's own tick. */
#define RUN_WAIT_DUE (-2)
int run_wait_until(struct run_child *const *kids, size_t n, long long due);

/* End a child whose answer is no longer wanted now (SIGKILL to its
 * process group: a stream or a read, with nothing of it to keep), without
 * waiting for it: children no longer wanted are told at once, then reaped
 * one by one by run_finish(), which has no grace to wait out. */
void run_stop(struct run_child *c);

/* Has run_wait_any() returned the child ended? */
int run_ended(const struct run_child *c);

/* Reap the child, stopping it first if it still runs (as its callback
 * would, or as an interrupt when one is pending), and free it: res and
 * the return value as from run_command(). */
int run_finish(struct run_child *c, struct run_result *res, os_error *err);

/* Wait for the child to end by itself (or at its deadline, or an
 * interrupt), serving it alone, then run_finish() it. */
int run_await(struct run_child *c, struct run_result *res, os_error *err);

/* Start SPEC's command in a session of its own with nothing captured,
 * and return without waiting for it: it goes on after openshell exits,
 * stopped by timeout(1) at spec->timeout_ms (util-linux setsid and
 * coreutils timeout run it). For cleanup no one should wait on. */
int run_detached(const struct run_spec *spec, os_error *err);

/* True in a child forked by the runner (before its exec): atexit handlers
 * return at once there, so that a child whose exec fails never runs them. */
int run_in_child(void);

#endif
