/* cmd/cli.c - subcommand dispatch, option loops and usage errors. */
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

int cli_dispatch(const char *parent, const struct os_command *cmds, int argc, char **argv)
{
	for (const struct os_command *c = cmds; c->name; c++)
		if (strcmp(c->name, argv[0]) == 0) {
			cleanup_free char *path = parent ? xasprintf("%s %s", parent, c->name)
							 : xstrdup(c->name);
			log_set_command(path);
			optind = 0;   /* reset getopt for the command's own parse */
			return c->run(argc, argv);
		}
	if (parent)
		return log_usage_error(parent, "unknown %s command '%s'", parent, argv[0]);
	return log_usage_error(NULL, "unknown command '%s'", argv[0]);
}

/* `openshell gateway help [COMMAND]`, as git's and kubectl's groups take
 * it: the group's usage, or the command's --help. */
static int group_help(const char *group, const struct os_command *cmds, void (*usage)(FILE *out), int argc,
		      char **argv)
{
	char *args[] = { argc > 0 ? argv[0] : NULL, (char *)"--help", NULL };

	if (argc == 0) {
		usage(stdout);
		return OS_EXIT_OK;
	}
	if (argc > 1)
		return log_usage_error(group, "too many words after 'help'; try 'openshell %s help COMMAND'", group);
	return cli_dispatch(group, cmds, 2, args);
}

int cli_run_group(const char *group, const struct os_command *cmds, void (*usage)(FILE *out), int argc,
		  char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct cli_parser p = { .cmd = group, .longopts = longopts, .usage = usage };

	/* Only the common options come before the command's name, so the
	 * parse ends at once: with p.done set, or at the name. */
	cli_next_option(&p, argc, argv);
	if (p.done >= 0)
		return p.done;
	if (optind >= argc) {
		usage(stderr);
		return OS_EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0)
		return group_help(group, cmds, usage, argc - optind - 1, argv + optind + 1);
	return cli_dispatch(group, cmds, argc - optind, argv + optind);
}

int cli_common_option(int c)
{
	if (c == 'v') {
		log_set_verbosity(log_verbosity() < 0 ? 1 : log_verbosity() + 1);
		return 1;
	}
	if (c == 'q') {
		log_set_verbosity(-1);
		return 1;
	}
	return 0;
}

void cli_print_commands(FILE *out, const struct os_command *cmds)
{
	for (const struct os_command *c = cmds; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
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

int cli_next_option(struct cli_parser *p, int argc, char **argv)
{
	cleanup_free char *shortopts = xasprintf(CLI_OPTS_PREFIX CLI_COMMON_SHORT "%s",
						 p->shortopts ? p->shortopts : "");
	int c;

	p->done = -1;
	while ((c = getopt_long(argc, argv, shortopts, p->longopts, NULL)) != -1) {
		if (cli_common_option(c))
			continue;
		if (c == 'h') {
			p->usage(stdout);
			p->done = OS_EXIT_OK;
			return -1;
		}
		if (c == '?' || c == ':') {
			p->done = cli_bad_option(p->cmd, c, argv);
			return -1;
		}
		return c;
	}
	return -1;
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

