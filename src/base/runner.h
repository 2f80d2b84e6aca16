/* base/runner.h - the one place that runs child processes.
 *
 * Every subprocess openshell starts goes through run_command(), which sits
 * on libpipeline (that library owns SIGCHLD). Commands are argv vectors,
 * never shell strings. A captured run:
 *   - feeds stdin from spec->input (or /dev/null, so a child never eats
 *     the user's terminal input),
 *   - captures stdout completely (up to RUN_MAX_OUTPUT bytes),
 *   - captures stderr in an unlinked temporary file, to be quoted when the
 *     call fails,
 *   - enforces spec->timeout_ms: past it the child gets SIGTERM, then
 *     SIGKILL a short grace later, and the call fails naming the command
 *     and the deadline.
 * An interactive run (spec->interactive) inherits stdin, stdout and stderr
 * instead and waits without capturing (for `exec`, `logs --follow`).
 */
#ifndef OPENSHELL_BASE_RUNNER_H
#define OPENSHELL_BASE_RUNNER_H

#include <stddef.h>

#include "base/error.h"

#define RUN_MAX_OUTPUT (256u << 20)   /* stdout beyond this is an error */
#define RUN_MAX_STDERR (64u << 10)    /* stderr kept for messages */
#define RUN_KILL_GRACE_MS 500         /* SIGTERM → SIGKILL */

struct run_spec {
	const char *const *argv;  /* NULL-terminated; argv[0] looked up on PATH */
	const char *input;        /* bytes for stdin, or NULL for /dev/null */
	size_t input_len;
	int timeout_ms;           /* > 0: deadline for the whole call; 0: none */
	int interactive;          /* inherit stdio; nothing is captured */
	int merge_stderr;         /* stderr into the stdout capture (2>&1) */
	const char *const *env;   /* "NAME=VALUE" set for the child only, or NULL */
	/* Called with each piece of stdout as it arrives (also captured), so
	 * that a long child's progress can be shown while it runs. */
	void (*on_output)(void *ctx, const char *data, size_t len);
	void *on_output_ctx;
};

struct run_result {
	int status;       /* exit status; 128 + N when killed by signal N */
	char *out;        /* NUL-terminated stdout (owned) */
	size_t out_len;
	char *err;        /* NUL-terminated stderr, at most RUN_MAX_STDERR (owned) */
	size_t err_len;
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

/* True in a child forked by the runner (before its exec): atexit handlers
 * return at once there, so that a child whose exec fails never runs them. */
int run_in_child(void);

/* The first line of a child's output, leading blank lines and spaces
 * skipped; "" when there is none (owned). Every message that quotes a
 * child quotes this line, and the rest goes to the error's detail. */
char *run_first_line(const char *text);

/* Fail with "WHAT: FIRST LINE OF STDERR" (WHAT alone when stderr is
 * empty), WHAT formatted from fmt, and all of stderr as the detail when it
 * has more than that one line. Always returns -1. */
int run_failure(os_error *err, int code, const struct run_result *res, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
