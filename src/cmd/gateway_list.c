/* cmd/gateway_list.c - `openshell gateway list`: every gateway, one line each.
 *
 * gateway/state/roster.h gathers them, each from the daemon it lives on; a
 * daemon that cannot be asked leaves its gateways listed as unknown, with
 * one error line for it, and the exit status is that error's.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/state/info.h"
#include "gateway/state/roster.h"

static const char *api_of(const struct gateway *gw)
{
	return gw->has_metadata ? gw->md.server : "-";
}

static void print_table(const struct roster *r)
{
	int wname = 4, wstate = 5, wgpu = 3;

	for (size_t i = 0; i < r->n; i++) {
		cleanup_free char *gpus = gateway_gpus_named(&r->gw[i]);
		int a = (int)strlen(r->gw[i].name), b = (int)strlen(gateway_state_word(&r->gw[i]));
		int g = gpus ? (int)strlen(gpus) : 0;
		wname = a > wname ? a : wname;
		wstate = b > wstate ? b : wstate;
		wgpu = g > wgpu ? g : wgpu;
	}
	printf("%-*s  %-*s  %-*s  %s\n", wname, "NAME", wstate, "STATE", wgpu, "GPU", "API");
	for (size_t i = 0; i < r->n; i++) {
		const struct gateway *gw = &r->gw[i];
		cleanup_free char *gpus = gateway_gpus_named(gw);

		/* "yes" for all of the host's GPUs, else the selection. */
		printf("%-*s  %-*s  %-*s  %s\n", wname, gw->name, wstate, gateway_state_word(gw), wgpu,
		       gpus ? gpus : gateway_wants_gpu(gw) ? "yes" : "no", api_of(gw));
	}
}

static void print_json(const struct roster *r)
{
	cJSON *doc = json_document();
	cJSON *arr = cJSON_AddArrayToObject(doc, "gateways");

	for (size_t i = 0; i < r->n; i++) {
		const struct gateway *gw = &r->gw[i];
		cJSON *o = cJSON_CreateObject();

		gateway_json_common(o, gw);
		/* where it lives, and why that daemon could not be asked */
		json_add_string_or_null(o, "docker_context", gw->has_metadata ? gw->md.docker.context : NULL);
		json_add_string_or_null(o, "docker_endpoint", gw->has_metadata ? gw->md.docker.endpoint : NULL);
		json_add_string_or_null(o, "daemon_error", gw->daemon_error);
		cJSON_AddItemToArray(arr, o);
	}
	json_print_stdout(doc);
}

enum { OPT_JSON = 256 };

static const struct cli_opt list_opts[] = {
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object on stdout: the gateways, each with the keys of 'gateway status --json' and where it lives" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_list_spec = {
	.name = "list",
	.summary = "list every gateway openshell knows",
	.about = "List every gateway openshell knows: those with a metadata.json, each\n"
		 "looked up on the Docker daemon it was made on, and those with a container\n"
		 "labelled as openshell's on the current daemon. A gateway whose metadata\n"
		 "was deleted still shows, one whose container was removed as 'missing', and\n"
		 "one whose daemon cannot be asked as 'unknown' (the exit status is then\n"
		 "that error's). With --context, only the gateways of that context.\n",
	.opts = list_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_list_spec };
	struct roster r;
	os_error err = { 0 };
	int json = 0, rc;

	/* --json is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway list", argc, argv)) >= 0)
		return rc;
	if (roster_gather(&r, &err) < 0) {
		rc = log_error_report(&err);
		os_error_clear(&err);
		return rc;
	}
	if (json)
		print_json(&r);
	else
		print_table(&r);
	for (size_t i = 0; i < r.warnings.n; i++)
		log_warn("%s", r.warnings.v[i]);
	rc = OS_EXIT_OK;
	for (size_t i = 0; i < r.n_errors; i++) {
		int code = log_error_report(&r.errors[i]);
		rc = rc == OS_EXIT_OK ? code : rc;
	}
	roster_free(&r);
	return rc;
}
