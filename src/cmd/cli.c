/* cmd/cli.c - the command tree: dispatch, option loops, --help and usage errors. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "cmd/cli.h"

/* Help lines end by this column (docs/design.md: an 80-column terminal). */
#define HELP_WIDTH 80
/* Option help starts at this column, unless the option's label is longer. */
#define HELP_INDENT 24

const struct cli_opt cli_common_opts[] = {
	{ .name = "verbose", .key = CLI_OPT_VERBOSE,
	  .help = "show each command openshell runs (repeat for more)" },
	{ .name = "quiet", .key = CLI_OPT_QUIET,
	  .help = "print errors only" },
	{ .name = "help", .key = CLI_OPT_HELP,
	  .help = "show this help" },
	{ NULL },
};

static const struct cli_spec *root;

const struct cli_spec *cli_root(void)
{
	return root;
}

const struct cli_spec *cli_find(const struct cli_spec *parent, const char *name)
{
	for (const struct cli_spec *const *s = parent->subs; s && *s; s++)
		if (strcmp((*s)->name, name) == 0)
			return *s;
	return NULL;
}

/* Depth-first search of the tree for spec, appending names to path. */
static int find_path(const struct cli_spec *at, const struct cli_spec *spec, char *path, size_t size)
{
	size_t len = strlen(path);

	for (const struct cli_spec *const *s = at->subs; s && *s; s++) {
		snprintf(path + len, size - len, "%s%s", len ? " " : "", (*s)->name);
		if (*s == spec || find_path(*s, spec, path, size))
			return 1;
		path[len] = '\0';
	}
	return 0;
}

char *cli_path(const struct cli_spec *spec)
{
	char path[128] = "";

	if (spec != root && (!root || !find_path(root, spec, path, sizeof(path))))
		snprintf(path, sizeof(path), "%s", spec->name);   /* outside the tree: a test's */
	return xstrdup(path);
}

const struct cli_opt *cli_find_opt(const struct cli_spec *spec, const char *name)
{
	for (const struct cli_opt *o = spec->opts; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	for (const struct cli_opt *o = cli_common_opts; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* --- --help ------------------------------------------------------------ */

static void opt_label(const struct cli_opt *o, char *buf, size_t size)
{
	int letter = o->key > 0 && o->key < 128;

	snprintf(buf, size, "  %c%c%s--%s%s%s", letter ? '-' : ' ', letter ? o->key : ' ', letter ? ", " : "  ",
		 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Print text from column `col` (the cursor is there), wrapped at
 * HELP_WIDTH with continuation lines indented to `indent`. */
static void print_wrapped(FILE *out, const char *text, int col, int indent)
{
	for (int first = 1; *text; first = 0) {
		size_t word = strcspn(text, " ");

		if (!first && col + 1 + (int)word > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)word, text);
		col += (int)word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void print_opts(FILE *out, const struct cli_opt *opts)
{
	char label[96];

	for (const struct cli_opt *o = opts; o && o->name; o++) {
		int len;

		opt_label(o, label, sizeof(label));
		len = (int)strlen(label);
		/* A label too long for the column is followed by two spaces. */
		len = len + 2 <= HELP_INDENT ? HELP_INDENT : len + 2;
		fprintf(out, "%-*s", len, label);
		cleanup_free char *help = xasprintf("%s%s", o->help, o->repeatable ? " (repeatable)" : "");
		print_wrapped(out, help, len, HELP_INDENT);
	}
}

void cli_usage(FILE *out, const struct cli_spec *spec)
{
	cleanup_free char *path = cli_path(spec);

	fprintf(out, "Usage: openshell%s%s", *path ? " " : "", path);
	if (spec->subs)
		fputs(spec == root ? " [OPTIONS] COMMAND [ARGS...]" : " COMMAND [OPTIONS]", out);
	else
		fputs(" [OPTIONS]", out);
	fprintf(out, "%s%s\n", spec->operands ? " " : "", spec->operands ? spec->operands : "");
	if (spec->about)
		fprintf(out, "\n%s", spec->about);
	if (spec->subs) {
		fputs("\nCommands:\n", out);
		for (const struct cli_spec *const *s = spec->subs; *s; s++)
			if (!(*s)->hidden)
				fprintf(out, "  %-10s %s\n", (*s)->name, (*s)->summary);
	}
	fputs("\nOptions:\n", out);
	print_opts(out, spec->opts);
	print_opts(out, cli_common_opts);
	if (spec->after)
		fprintf(out, "\n%s", spec->after);
	if (spec->subs)
		fprintf(out, "\nRun 'openshell %s%sCOMMAND --help' for a command's options.\n", path, *path ? " " : "");
}

/* --- the option loop --------------------------------------------------- */

int cli_common_option(int c)
{
	if (c == CLI_OPT_VERBOSE) {
		log_set_verbosity(log_verbosity() < 0 ? 1 : log_verbosity() + 1);
		return 1;
	}
	if (c == CLI_OPT_QUIET) {
		log_set_verbosity(-1);
		return 1;
	}
	return 0;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "";

	cleanup_free char *shown = printable(word, 64);

	if (c == ':')
		return log_usage_error(cmd, "option '%s' needs a value", shown);
	/* A known long option given a value it does not take: optopt holds
	 * the option's code, not a character, so name the word instead. */
	if (strncmp(word, "--", 2) == 0 && strchr(word, '=') && optopt)
		return log_usage_error(cmd, "option '%.*s' takes no value", (int)strcspn(shown, "="), shown);
	if (optopt > 0 && optopt < 128 && strncmp(word, "--", 2) != 0)
		return log_usage_error(cmd, "unknown option '-%c'", optopt);
	return log_usage_error(cmd, "unknown option '%s'", shown);
}

static void add_opts(struct cli_parser *p, const struct cli_opt *opts, size_t *n, size_t *s)
{
	for (const struct cli_opt *o = opts; o && o->name; o++) {
		if (*n + 1 >= CLI_MAX_OPTS || *s + 3 >= sizeof(p->shortopts))
			abort();   /* a table larger than the parser: a programming error */
		p->longopts[(*n)++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, o->key };
		if (o->key > 0 && o->key < 128) {
			p->shortopts[(*s)++] = (char)o->key;
			if (o->arg)
				p->shortopts[(*s)++] = ':';
		}
	}
}

/* getopt_long runs quiet (':' first) so that cli_bad_option() can report
 * what it rejected in one line; '+' stops at the first operand, so that a
 * group's options end at its command's name. */
static void make_tables(struct cli_parser *p)
{
	size_t n = 0, s = 2;

	memcpy(p->shortopts, "+:", 2);
	add_opts(p, cli_common_opts, &n, &s);
	add_opts(p, p->spec->opts, &n, &s);
	p->longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	p->shortopts[s] = '\0';
	p->ready = 1;
}

int cli_next_option(struct cli_parser *p, int argc, char **argv)
{
	cleanup_free char *cmd = cli_path(p->spec);
	int c;

	if (!p->ready)
		make_tables(p);
	p->done = -1;
	while ((c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL)) != -1) {
		if (cli_common_option(c))
			continue;
		if (c == CLI_OPT_HELP) {
			cli_usage(stdout, p->spec);
			p->done = OS_EXIT_OK;
			return -1;
		}
		if (c == '?' || c == ':') {
			p->done = cli_bad_option(*cmd ? cmd : NULL, c, argv);
			return -1;
		}
		return c;
	}
	return -1;
}

int cli_next_arg(struct cli_parser *p, int argc, char **argv, const char **operand)
{
	int c = cli_next_option(p, argc, argv);

	if (c != -1 || p->done >= 0 || optind >= argc)
		return c;
	*operand = argv[optind++];
	return 0;
}

int cli_no_operands(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return -1;
	cleanup_free char *shown = printable(argv[optind], 64);
	return log_usage_error(cmd, "unexpected argument '%s'", shown);
}

int cli_duration_option(const char *cmd, const char *opt, const char *value, int *ms)
{
	cleanup_free char *shown = NULL;

	if (parse_duration_ms(value, ms) == 0)
		return -1;
	shown = printable(value, 32);
	return log_usage_error(cmd, "invalid %s '%s': give a duration such as 90s or 10m", opt, shown);
}

/* --- dispatch ------------------------------------------------------------ */

static int unknown_command(const struct cli_spec *parent, const char *word)
{
	cleanup_free char *path = cli_path(parent);
	cleanup_free char *shown = printable(word, 64);

	if (*path)
		return log_usage_error(path, "unknown %s command '%s'", path, shown);
	return log_usage_error(NULL, "unknown command '%s'", shown);
}

/* `openshell help gateway start` and `openshell gateway help start`, as
 * git's and kubectl's take it: the usage of the command the words name. */
static int help_words(const struct cli_spec *from, int argc, char **argv)
{
	const struct cli_spec *at = from;

	for (int i = 0; i < argc; i++) {
		const struct cli_spec *next = cli_find(at, argv[i]);

		if (!at->subs) {
			cleanup_free char *group = cli_path(from);
			return log_usage_error(*group ? group : NULL,
					       "too many words after 'help'; try 'openshell %s%shelp COMMAND'", group,
					       *group ? " " : "");
		}
		if (!next || next->hidden)
			return unknown_command(at, argv[i]);
		at = next;
	}
	cli_usage(stdout, at);
	return OS_EXIT_OK;
}

const struct cli_spec cli_help_spec = {
	.name = "help",
	.summary = "show help for a command",
	.operands = "[COMMAND...]",
	.about = "Show the help of the command the words name, as its --help does;\n"
		 "'openshell gateway help start' is 'openshell help gateway start'.\n",
};

/* `help` under any group: its options (-h shows help's own usage), then
 * the words naming a command below the group. */
static int run_help(const struct cli_spec *parent, int argc, char **argv)
{
	struct cli_parser p = { .spec = &cli_help_spec };

	optind = 0;
	if (cli_next_option(&p, argc, argv) != -1)
		abort();   /* help has no options of its own */
	if (p.done >= 0)
		return p.done;
	return help_words(parent, argc - optind, argv + optind);
}

int cli_dispatch(const struct cli_spec *parent, int argc, char **argv)
{
	const struct cli_spec *spec = cli_find(parent, argv[0]);

	if (strcmp(argv[0], "help") == 0)
		return run_help(parent, argc, argv);
	if (!spec)
		return unknown_command(parent, argv[0]);
	cleanup_free char *path = cli_path(spec);
	log_set_command(path);
	optind = 0;   /* reset getopt for the command's own parse */
	return spec->run(argc, argv);
}

/* After a group's options: the command named next, or the usage. */
static int run_named(const struct cli_spec *group, int argc, char **argv)
{
	if (optind >= argc) {
		cli_usage(stderr, group);
		return OS_EXIT_USAGE;
	}
	return cli_dispatch(group, argc - optind, argv + optind);
}

int cli_run_group(const struct cli_spec *group, int argc, char **argv)
{
	struct cli_parser p = { .spec = group };

	/* Only the common options come before the command's name, so the
	 * parse ends at once: with p.done set, or at the name. */
	if (cli_next_option(&p, argc, argv) != -1)
		abort();   /* a group has no options of its own */
	if (p.done >= 0)
		return p.done;
	return run_named(group, argc, argv);
}

int cli_main(const struct cli_spec *tree, int argc, char **argv, int (*option)(int c))
{
	struct cli_parser p = { .spec = tree };
	int c, rc;

	root = tree;
	while ((c = cli_next_option(&p, argc, argv)) != -1)
		if ((rc = option(c)) >= 0)
			return rc;
	if (p.done >= 0)
		return p.done;
	return run_named(tree, argc, argv);
}
