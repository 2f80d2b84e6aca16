/* cmd/manpage.c - the man page's SYNOPSIS and OPTIONS, made from the command tree.
 *
 * The build runs `openshell __man < doc/openshell.1.in > doc/openshell.1`.
 * The template is roff with three kinds of marker lines, each replaced:
 *   .\" @synopsis              every command's synopsis, from its table
 *   .\" @options COMMAND...    starts the options of that command (the
 *                              common ones for "openshell"); each option
 *                              is a .TP whose heading comes from the table
 *   .\" @opt NAME              the heading of option NAME; the roff lines
 *                              after it, up to the next marker, .SS or .SH,
 *                              are its description
 * An option the template does not describe gets its --help text; one it
 * describes that the table lacks fails the build, so the page and the
 * parser cannot drift apart.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"

#define MARK_SYNOPSIS ".\\\" @synopsis"
#define MARK_OPTIONS ".\\\" @options "
#define MARK_OPT ".\\\" @opt "

/* Text for roff: '-' and '\' escaped, no request at a line's start. */
static void roff_text(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", out);
		else if (*s == '\\')
			fputs("\\e", out);
		else
			fputc(*s, out);
	}
}

static void opt_heading(FILE *out, const struct cli_opt *o)
{
	int letter = o->key > 0 && o->key < 128;

	fputs(".TP\n", out);
	if (letter) {
		fprintf(out, ".BR \\-%c \", \" ", o->key);
		roff_text(out, "--");
		roff_text(out, o->name);
	} else {
		fputs(o->arg ? ".BI " : ".B ", out);
		roff_text(out, "--");
		roff_text(out, o->name);
	}
	if (o->arg) {
		fputs(letter ? "\n.I \"" : " \" ", out);
		roff_text(out, o->arg);
		fputc('"', out);
	}
	fputc('\n', out);
}

static void synopsis_of(FILE *out, const char *path, const struct cli_spec *spec)
{
	/* .SY hangs the options under the command's name (groff's an-ext). */
	fputs(".SY \"openshell", out);
	if (*path)
		fputc(' ', out), roff_text(out, path);
	fputs("\"\n", out);
	for (const struct cli_opt *o = spec->opts; o && o->name; o++) {
		fputs(".RB [ ", out);
		roff_text(out, "--");
		roff_text(out, o->name);
		/* \~ keeps an option and its value on one line. */
		if (o->arg) {
			fputs("\\~\\fI", out);
			roff_text(out, o->arg);
			fputs("\\fR", out);
		}
		fputs(" ]", out);
		fputs(o->repeatable ? "...\n" : "\n", out);
	}
	if (spec->subs)
		fputs(".I command\n.RI [ options ]\n", out);
	if (spec->operands) {
		roff_text(out, spec->operands);
		fputc('\n', out);
	}
	fputs(".YS\n", out);
}

/* Depth first: the root, then every command that runs (groups only lead
 * to theirs). */
static void synopsis(FILE *out, const struct cli_spec *at, int top)
{
	if (top || !at->subs) {
		cleanup_free char *path = cli_path(at);
		synopsis_of(out, path, at);
	}
	for (const struct cli_spec *const *s = at->subs; s && *s; s++)
		if (!(*s)->hidden && *s != &cli_help_spec)
			synopsis(out, *s, 0);
	if (top)
		synopsis_of(out, "help", &cli_help_spec);
}

/* The options block being filled: its command and which options the
 * template described. */
struct block {
	const struct cli_spec *spec;   /* NULL: outside a block */
	const struct cli_opt *opts[2]; /* the spec's own; the common ones for the root */
	unsigned char done[2][CLI_MAX_OPTS];
};

static const struct cli_spec *spec_of_path(char *words)
{
	const struct cli_spec *at = cli_root();

	for (char *w = strtok(words, " \n"); w && at; w = strtok(NULL, " \n"))
		if (strcmp(w, "openshell") != 0)
			at = strcmp(w, "help") == 0 ? &cli_help_spec : cli_find(at, w);
	return at;
}

/* The end of a block: the options the template left out, with their help. */
static void block_end(FILE *out, struct block *b)
{
	for (int t = 0; b->spec && t < 2; t++)
		for (int i = 0; b->opts[t] && b->opts[t][i].name; i++)
			if (!b->done[t][i]) {
				opt_heading(out, &b->opts[t][i]);
				roff_text(out, b->opts[t][i].help);
				fputs(".\n", out);
			}
	memset(b, 0, sizeof(*b));
}

static int block_opt(FILE *out, struct block *b, const char *name, int lineno, os_error *err)
{
	for (int t = 0; b->spec && t < 2; t++)
		for (int i = 0; b->opts[t] && b->opts[t][i].name; i++)
			if (strcmp(b->opts[t][i].name, name) == 0) {
				b->done[t][i] = 1;
				opt_heading(out, &b->opts[t][i]);
				return 0;
			}
	cleanup_free char *path = b->spec ? cli_path(b->spec) : xstrdup("(no @options block)");
	return os_error_set(err, OS_EXIT_FAILURE,
			    "man page template line %d: '%s' has no option --%s; describe only the options its table has",
			    lineno, path, name);
}

static int fill(FILE *in, FILE *out, os_error *err)
{
	struct block b = { 0 };
	char *line = NULL;
	size_t size = 0;
	int lineno = 0, rc = 0;

	while (rc == 0 && getline(&line, &size, in) != -1) {
		lineno++;
		if (strncmp(line, ".SS", 3) == 0 || strncmp(line, ".SH", 3) == 0)
			block_end(out, &b);
		if (strncmp(line, MARK_SYNOPSIS, strlen(MARK_SYNOPSIS)) == 0) {
			synopsis(out, cli_root(), 1);
		} else if (strncmp(line, MARK_OPTIONS, strlen(MARK_OPTIONS)) == 0) {
			block_end(out, &b);
			if (!(b.spec = spec_of_path(line + strlen(MARK_OPTIONS))))
				rc = os_error_set(err, OS_EXIT_FAILURE, "man page template line %d: no such command", lineno);
			b.opts[0] = b.spec ? b.spec->opts : NULL;
			b.opts[1] = b.spec == cli_root() ? cli_common_opts : NULL;
		} else if (strncmp(line, MARK_OPT, strlen(MARK_OPT)) == 0) {
			line[strcspn(line, "\n")] = '\0';
			rc = block_opt(out, &b, line + strlen(MARK_OPT), lineno, err);
		} else {
			fputs(line, out);
		}
	}
	block_end(out, &b);
	free(line);
	return rc;
}

static int run(int argc, char **argv)
{
	os_error err = { 0 };
	int rc = OS_EXIT_OK;

	if (argc != 1)
		return log_usage_error("__man", "no arguments: the template comes on stdin");
	if (fill(stdin, stdout, &err) == 0 && fflush(stdout) != 0)
		os_error_set(&err, OS_EXIT_FAILURE, "cannot write the man page: %s", strerror(errno));
	if (err.msg)
		rc = log_error_report(&err);
	os_error_clear(&err);
	return rc;
}

const struct cli_spec manpage_spec = {
	.name = "__man",
	.summary = "fill the man page template on stdin from the option tables (for the build)",
	.run = run,
	.hidden = 1,
};
