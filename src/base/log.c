/* base/log.c - diagnostics and progress on stderr. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/xalloc.h"

static int verbosity;
static char *step_text;   /* the step in progress, for its final line */

void log_set_verbosity(int level) { verbosity = level; }
int log_verbosity(void) { return verbosity; }

static int stderr_is_tty(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

static int use_colour(void)
{
	const char *nc = getenv("NO_COLOR");

	return stderr_is_tty() && !(nc && *nc);
}

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "openshell: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_verbose(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(use_colour() ? "\033[33mwarning:\033[0m " : "warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 0)
		return;
	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void log_step(const char *fmt, ...)
{
	va_list ap;

	free(step_text);
	va_start(ap, fmt);
	if (vasprintf(&step_text, fmt, ap) < 0)
		step_text = NULL;
	va_end(ap);
	if (verbosity < 0 || !step_text)
		return;
	/* On a terminal, leave the line open so the result lands on it; in
	 * verbose mode command traces interleave, so print whole lines. */
	if (stderr_is_tty() && verbosity == 0)
		fprintf(stderr, "  ... %s", step_text);
	else
		fprintf(stderr, "openshell: %s ...\n", step_text);
	fflush(stderr);
}

void log_step_progress(const char *fmt, ...)
{
	cleanup_free char *news = NULL;
	va_list ap;

	if (verbosity < 0 || !step_text)
		return;
	va_start(ap, fmt);
	news = xvasprintf(fmt, ap);
	va_end(ap);
	if (stderr_is_tty() && verbosity == 0)
		fprintf(stderr, "\r  ... %s: %s\033[K", step_text, news);
	else
		fprintf(stderr, "openshell: %s: %s\n", step_text, news);
	fflush(stderr);
}

void log_step_done(int ok)
{
	if (verbosity >= 0 && step_text) {
		if (stderr_is_tty() && verbosity == 0) {
			const char *mark = ok ? (use_colour() ? "\033[32m ok \033[0m" : " ok ")
					      : (use_colour() ? "\033[31mfail\033[0m" : "fail");
			fprintf(stderr, "\r[%s] %s\033[K\n", mark, step_text);
		} else if (!ok) {
			fprintf(stderr, "openshell: %s: failed\n", step_text);
		}
	}
	free(step_text);
	step_text = NULL;
}

static char current_command[64];

void log_set_command(const char *cmd)
{
	snprintf(current_command, sizeof(current_command), "%s", cmd ? cmd : "");
}

static void print_error_line(const char *msg)
{
	fprintf(stderr, "openshell: %serror:%s %s\n",
		use_colour() ? "\033[31m" : "", use_colour() ? "\033[0m" : "", msg);
}

static void print_try_help(const char *cmd)
{
	fprintf(stderr, "Try 'openshell %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd && *cmd ? " " : "");
}

int log_error_report(const os_error *err)
{
	if (step_text)
		log_step_done(0);
	print_error_line(err->msg ? err->msg : "unknown error");
	if (err->code == OS_EXIT_USAGE)
		print_try_help(current_command);
	if (err->detail && *err->detail) {
		/* Quote the detail (a child's stderr, log lines) indented, so the
		 * first line stays the one-line summary. */
		const char *p = err->detail;
		while (*p) {
			size_t n = strcspn(p, "\n");
			fprintf(stderr, "  | %.*s\n", (int)n, p);
			p += n;
			if (*p == '\n')
				p++;
		}
	}
	return err->code ? err->code : OS_EXIT_FAILURE;
}

int log_usage_error(const char *cmd, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	print_error_line(msg);
	print_try_help(cmd);
	return OS_EXIT_USAGE;
}
