/* cmd/cli.h - the command tree, its option tables, and everything made from them.
 *
 * Every command is one struct cli_spec: its name, what it is, its options
 * and the paragraphs around them. The same tables drive getopt_long, the
 * --help text, the man page's SYNOPSIS and OPTIONS (cmd/manpage.c) and the
 * shell completion (cmd/completion.c), so none of them can disagree with
 * what the parser takes. Values are checked with base/parse.h, so bad input
 * is refused with one line and OS_EXIT_USAGE before anything runs.
 */
#ifndef OPENSHELL_CMD_CLI_H
#define OPENSHELL_CMD_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "base/names.h"

/* What an option's value is, for completion. */
enum cli_value {
	CLI_VALUE_NONE,      /* the option takes no value */
	CLI_VALUE_TEXT,      /* free text: nothing to offer */
	CLI_VALUE_WORDS,     /* one of .words; one ending in ':' is a prefix ("mps:") */
	CLI_VALUE_GATEWAY,   /* a gateway's name */
	CLI_VALUE_CONTEXT,   /* a docker context's name */
	CLI_VALUE_FILE,      /* a path: the shell completes it */
};

struct cli_opt {
	const char *name;            /* long name, without "--"; NULL ends a table */
	int key;                     /* getopt_long's answer: a letter (also -LETTER) or >= 256 */
	const char *arg;             /* the value's name in help ("NAME"); NULL: no value */
	const char *help;            /* one paragraph, unwrapped: --help wraps it */
	enum cli_value value;
	const char *const *words;    /* CLI_VALUE_WORDS: the values, NULL-ended */
	int repeatable;              /* may be given more than once */
};

struct cli_spec {
	const char *name;            /* "start"; the root's is "openshell" */
	const char *summary;         /* one line for the parent's command list */
	const char *operands;        /* the usage line after [OPTIONS], e.g. "[REF]" */
	const char *const *operand_words;   /* what the first operand may be, for completion */
	const char *about;           /* text under the usage line, wrapped as written */
	const struct cli_opt *opts;  /* the command's own; the common ones are added */
	const char *after;           /* text after the options, wrapped as written */
	int (*run)(int argc, char **argv);   /* argv[0] is the command's name */
	const struct cli_spec *const *subs;  /* a group's commands, NULL-ended */
	int hidden;                  /* kept out of help, man page and completion */
};

/* --name NAME, the option of every command about one existing gateway. */
#define CLI_GATEWAY_NAME_OPT(k)                                                         \
	{ .name = "name", .key = (k), .arg = "NAME", .help = "gateway name (default: " GATEWAY_DEFAULT_NAME ")", \
	  .value = CLI_VALUE_GATEWAY }

/* The common options: every command takes them, before or after its own. */
enum { CLI_OPT_HELP = 'h', CLI_OPT_VERBOSE = 'v', CLI_OPT_QUIET = 'q' };
extern const struct cli_opt cli_common_opts[];

/* The tree main() runs, for those that describe it all (the man page,
 * completion). Set by cli_main(). */
const struct cli_spec *cli_root(void);

/* main(): the root's options, each of its own handed to option() (which
 * returns -1 to go on, or the exit status to end with), then the command
 * named next. */
int cli_main(const struct cli_spec *root, int argc, char **argv, int (*option)(int c));

/* A group (`gateway`, `image`): the common options, then the subcommand
 * named next (or `help [COMMAND]`); none is a usage error that prints the
 * group's usage. */
int cli_run_group(const struct cli_spec *group, int argc, char **argv);

/* `help [COMMAND...]`, which every group takes (cli_dispatch() runs it). */
extern const struct cli_spec cli_help_spec;

/* Run the subcommand of `parent` named by argv[0]; an unknown name is a
 * usage error. */
int cli_dispatch(const struct cli_spec *parent, int argc, char **argv);

/* The spec of the subcommand `name` of `parent`, or NULL. */
const struct cli_spec *cli_find(const struct cli_spec *parent, const char *name);

/* "gateway start" for a spec of the tree, "" for the root (owned). */
char *cli_path(const struct cli_spec *spec);

/* --help of a command: usage line, about, options wrapped to 80 columns. */
void cli_usage(FILE *out, const struct cli_spec *spec);

/* The option of `spec` (its own or a common one) with long name `name`. */
const struct cli_opt *cli_find_opt(const struct cli_spec *spec, const char *name);

/* Apply -v / -q; returns 1 if c was one of them. */
int cli_common_option(int c);

/* One command's option parse, stepped by cli_next_option(); getopt's
 * tables are made from the spec on the first call, in place, so that a
 * command may return in the middle of its parse. */
#define CLI_MAX_OPTS 32
struct cli_parser {
	const struct cli_spec *spec;
	int done;                    /* see cli_next_option() */
	int ready;
	struct option longopts[CLI_MAX_OPTS];
	char shortopts[2 * CLI_MAX_OPTS + 3];
};

/* The next option that is the command's own, with -v/-q applied, -h
 * answered with usage on stdout, and a bad option reported. Returns -1
 * when parsing ends; then p->done is -1 to go on with the operands at
 * optind, or the exit status to end with (OS_EXIT_OK after -h,
 * OS_EXIT_USAGE after a bad option). */
int cli_next_option(struct cli_parser *p, int argc, char **argv);

/* As cli_next_option(), for a command whose operands may come among its
 * options, as kubectl's and docker's do (`node add NODE --name GW`):
 * 0 with *operand set for each operand, in order. */
int cli_next_arg(struct cli_parser *p, int argc, char **argv, const char **operand);

/* Report what getopt_long rejected ('?' or ':') in one line. */
int cli_bad_option(const char *cmd, int c, char **argv);

/* -1 when no operand follows the options; otherwise reports the first as
 * unexpected and returns OS_EXIT_USAGE. */
int cli_no_operands(const char *cmd, int argc, char **argv);

/* An option whose value is a duration: -1 when value parses into *ms,
 * else the usage error is reported (naming the option) and returned. */
int cli_duration_option(const char *cmd, const char *opt, const char *value, int *ms);

/* Stringify a number macro for a table's text: CLI_STR(DEPLOY_DEFAULT_PORT). */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

#endif
