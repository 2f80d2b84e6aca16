/* cmd/cli.h - command tables, dispatch and the option loop every command uses.
 *
 * main() and `gateway` each hold a table of subcommands and hand argv to
 * cli_dispatch(); every command parses its own options with getopt_long
 * and checks values with base/parse.h, so bad input is refused with
 * one line and OS_EXIT_USAGE before anything runs.
 */
#ifndef OPENSHELL_CMD_CLI_H
#define OPENSHELL_CMD_CLI_H

#include <getopt.h>
#include <stdio.h>

struct os_command {
	const char *name;
	int (*run)(int argc, char **argv);  /* argv[0] is the command's name */
	const char *summary;
};

/* Run the command named by argv[0] from the table. `parent` ("gateway" or
 * NULL) is used in messages. Unknown names are a usage error. */
int cli_dispatch(const char *parent, const struct os_command *cmds, int argc, char **argv);

/* A command that only groups others (`gateway`, `image`): the common
 * options, then dispatch to the subcommand named next; none is a usage
 * error that prints the group's usage. */
int cli_run_group(const char *group, const struct os_command *cmds, void (*usage)(FILE *out), int argc,
		  char **argv);

/* Options every command accepts, merged into each getopt_long table. */
#define CLI_COMMON_SHORT "hvq"
#define CLI_COMMON_LONG                                   \
	{ "help", no_argument, NULL, 'h' },               \
	{ "verbose", no_argument, NULL, 'v' },            \
	{ "quiet", no_argument, NULL, 'q' }

/* Apply -v / -q; returns 1 if c was one of them. */
int cli_common_option(int c);

/* Print "  name   summary" lines for a table. */
void cli_print_commands(FILE *out, const struct os_command *cmds);

/* getopt_long runs quiet (optstrings start with CLI_OPTS_PREFIX) so that
 * this can report what it rejected in one line, with where to look. c is
 * what getopt_long returned ('?' or ':'); cmd is e.g. "gateway start". */
#define CLI_OPTS_PREFIX "+:"
int cli_bad_option(const char *cmd, int c, char **argv);

/* One command's option parse, stepped by cli_next_option(). */
struct cli_parser {
	const char *cmd;                  /* "gateway stop"; NULL for openshell itself */
	const char *shortopts;            /* the command's own, beyond CLI_COMMON_SHORT */
	const struct option *longopts;    /* CLI_COMMON_LONG plus the command's own */
	void (*usage)(FILE *out);
	int done;                         /* see cli_next_option() */
};

/* The next option that is the command's own, with -v/-q applied, -h
 * answered with usage on stdout, and a bad option reported. Returns -1
 * when parsing ends; then p->done is -1 to go on with the operands at
 * optind, or the exit status to end with (OS_EXIT_OK after -h,
 * OS_EXIT_USAGE after a bad option). */
int cli_next_option(struct cli_parser *p, int argc, char **argv);

/* -1 when no operand follows the options; otherwise reports the first as
 * unexpected and returns OS_EXIT_USAGE. */
int cli_no_operands(const char *cmd, int argc, char **argv);

/* An option whose value is a duration: -1 when value parses into *ms,
 * else the usage error is reported (naming the option) and returned. */
int cli_duration_option(const char *cmd, const char *opt, const char *value, int *ms);

#endif
