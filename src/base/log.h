/* base/log.h - what openshell says on stderr.
 *
 * Diagnostics go to stderr, one line each, prefixed "openshell: " so they
 * stand out in scripts' logs; requested output goes to stdout and is not
 * this module's business. Verbose lines (-v) show each command that runs.
 * Progress lines are plain text unless stderr is a terminal, and NO_COLOR
 * turns colour off.
 */
#ifndef OPENSHELL_BASE_LOG_H
#define OPENSHELL_BASE_LOG_H

#include "base/error.h"

void log_set_verbosity(int level);
int log_verbosity(void);

/* -v and above: a line of trace. */
void log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress of a multi-step command: begin a step, then end it with ok or
 * failed. On a terminal the step line is rewritten in place; otherwise each
 * call prints a plain line. Quiet mode (-q) prints neither. */
void log_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_step_done(int ok);

/* News of the step in progress (a build's current stage): on a terminal
 * the step's line is rewritten to end with it; otherwise a plain line
 * "openshell: STEP: NEWS". */
void log_step_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print an error the way the top level reports it, and return err->code. */
int log_error_report(const os_error *err);

/* The command being run ("gateway start"; NULL: openshell itself), for
 * the hint under every usage error. */
void log_set_command(const char *cmd);

/* A usage error, in the one format every command uses:
 *     openshell: error: MESSAGE
 *     Try 'openshell CMD --help' for more information.
 * Returns OS_EXIT_USAGE. log_error_report() prints an error whose code is
 * OS_EXIT_USAGE the same way, for the command of log_set_command(). */
int log_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
