/* cmd/gateway_destroy.c - `openshell gateway destroy`: remove a gateway (gateway/manage/destroy.h).
 *
 * What is not there is an error (exit 5) unless --ignore-not-found, so a
 * script can run it twice; without --yes the user is asked, and with no
 * terminal to ask on, nothing is done. All of it happens under the
 * gateway's lock, as in `stop` and `start`, so that it never interleaves
 * with them.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/names.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/manage/destroy.h"
#include "gateway/state/lookup.h"

struct opts {
	const char *name;
	int yes, keep_volume, ignore_not_found;
};

static int confirmed(const struct destroy_plan *p)
{
	char answer[16] = "";

	if (p->nodes.n)
		fprintf(stderr, "Destroy gateway '%s', its %zu node%s on other hosts, and its data? [y/N] ", p->name,
			p->nodes.n, p->nodes.n == 1 ? "" : "s");
	else
		fprintf(stderr, "Destroy gateway '%s' and its data? [y/N] ", p->name);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return 0;
	answer[strcspn(answer, "\n")] = '\0';
	return strcmp(answer, "y") == 0 || strcmp(answer, "Y") == 0 || strcmp(answer, "yes") == 0;
}

static int survey_and_destroy(const struct opts *o, os_error *err)
{
	struct destroy_plan p;
	int nothing, rc;

	if (gateway_destroy_survey(o->name, &p, &nothing, err) < 0) {
		rc = -1;
	} else if (nothing && !o->ignore_not_found) {
		rc = os_error_set(err, OS_EXIT_NOTFOUND, "no gateway named '%s'; nothing to destroy", o->name);
	} else if (nothing) {
		log_info("no gateway named '%s'; nothing to destroy", o->name);
		rc = 0;
	} else if (!o->yes && !confirmed(&p)) {
		rc = os_error_set(err, OS_EXIT_FAILURE, "gateway '%s' was not destroyed", o->name);
	} else {
		rc = gateway_destroy_apply(&p, o->keep_volume, err);
	}
	destroy_plan_free(&p);
	return rc;
}

/* Under the gateway's lock, so a `start` of the same gateway never runs
 * between the survey and the removal; it is held while the user is asked
 * too, as the answer is about what the survey found. */
static int run_destroy(const struct opts *o, os_error *err)
{
	int lock, rc;

	if ((lock = gateway_lock_for_change(o->name, err)) < 0)
		return -1;
	rc = survey_and_destroy(o, err);
	gateway_unlock(lock);
	return rc;
}

enum { OPT_NAME = 256, OPT_KEEP_VOLUME, OPT_IGNORE_NOT_FOUND, OPT_YES };

static const struct cli_opt destroy_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "keep-volume", .key = OPT_KEEP_VOLUME,
	  .help = "keep the volume (the cluster's data)" },
	{ .name = "ignore-not-found", .key = OPT_IGNORE_NOT_FOUND,
	  .help = "a gateway that does not exist is not an error (exit 0)" },
	{ .name = "yes", .key = OPT_YES,
	  .help = "do not ask; required when stdin is not a terminal" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_destroy_spec = {
	.name = "destroy",
	.summary = "remove a gateway's container, network, volume and files",
	.about = "Remove a gateway: its container, network and volume (openshell-cluster-NAME)\n"
		 "and its kubeconfig and metadata; first, each node 'gateway node add' made,\n"
		 "from its own Docker host. Only objects labelled\n"
		 LABEL_MANAGED "=" LABEL_MANAGED_VALUE " and " LABEL_GATEWAY "=NAME are\n"
		 "removed; others of the same name are left, with a warning.\n"
		 "A gateway that does not exist is an error (exit 5), as for stop.\n",
	.opts = destroy_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser parser = { .spec = &gateway_destroy_spec };
	struct opts p = { .name = GATEWAY_DEFAULT_NAME };
	os_error err = { 0 };
	int c, rc;

	while ((c = cli_next_option(&parser, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: p.name = optarg; break;
		case OPT_KEEP_VOLUME: p.keep_volume = 1; break;
		case OPT_IGNORE_NOT_FOUND: p.ignore_not_found = 1; break;
		case OPT_YES: p.yes = 1; break;
		}
	}
	if (parser.done >= 0)
		return parser.done;
	if ((rc = cli_no_operands("gateway destroy", argc, argv)) >= 0)
		return rc;
	/* Decided before anything runs, so a script learns it at once. */
	if (!p.yes && !isatty(STDIN_FILENO))
		return log_usage_error("gateway destroy", "stdin is not a terminal to confirm on; pass --yes to destroy without asking");
	rc = run_destroy(&p, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	os_error_clear(&err);
	return rc;
}
