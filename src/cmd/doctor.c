/* cmd/doctor.c - `openshell doctor`: host preflight, creating nothing
 * (the checks: gateway/check/doctor.h).
 *
 * Each check prints one line: pass, warn or fail, what was seen, and for
 * anything short of a pass, the fix. With --json the same checks become
 * one object, each check with a stable name, as verify's are (see
 * gateway/check/check.h). The exit status is 1 when any check failed, so
 * scripts can gate on it.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/check/doctor.h"

/* One check, as doctor reports it: a line, or with --json one object. */
static void report(void *ctx, enum check_status s, const char *name, const char *evidence, const char *fix)
{
	cJSON *checks = ctx;

	if (!checks) {
		printf("%-4s  %s%s%s%s\n", check_status_name(s), evidence, fix ? " (" : "", fix ? fix : "",
		       fix ? ")" : "");
		return;
	}
	/* The line is all a doctor check has: no logs, as verify's detail. */
	cJSON_AddItemToArray(checks, check_json(name, s, evidence, NULL, fix));
}

static void print_json(cJSON *checks, const int *counts)
{
	cJSON *j = json_document();

	cJSON_AddItemToObject(j, "checks", checks);
	cJSON_AddItemToObject(j, "counts", check_counts_json(counts));
	json_print_stdout(j);
}

enum { OPT_JSON = 256 };

static const struct cli_opt doctor_opts[] = {
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object: the checks (name, status, evidence, detail, fix) and their counts by status" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec doctor_spec = {
	.name = "doctor",
	.summary = "check that the Docker host can run a GPU gateway",
	.about = "Check what a GPU gateway needs: the docker CLI and daemon, Docker's NVIDIA\n"
		 "runtime, cgroups, the cluster image (built? self-contained?), and on the\n"
		 "daemon's host, read in a container of that image: the NVIDIA driver and\n"
		 "its GPUs, the NVIDIA Container Toolkit and known pitfalls.\n"
		 "Creates nothing. Exit status 1 when a check fails.\n",
	.opts = doctor_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &doctor_spec };
	struct doctor d = { .on_check = report };
	int json = 0, rc;

	/* --json is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("doctor", argc, argv)) >= 0)
		return rc;
	/* Made after parsing, so a usage error leaves nothing to free. */
	if (json)
		d.ctx = cJSON_CreateArray();
	doctor_run(&d);
	if (d.ctx)
		print_json(d.ctx, d.counts);
	else
		printf("%d failed, %d warning%s\n", d.counts[CHECK_FAIL], d.counts[CHECK_WARN],
		       d.counts[CHECK_WARN] == 1 ? "" : "s");
	return d.counts[CHECK_FAIL] ? OS_EXIT_FAILURE : OS_EXIT_OK;
}
