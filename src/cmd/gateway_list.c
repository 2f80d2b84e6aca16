/* cmd/gateway_list.c - `openshell gateway list`: every gateway, one line each.
 *
 * Names come from both labelled containers and metadata files
 * (gateway/info.h); each is then looked up as `status` would, so the two
 * commands never disagree about a gateway's state.
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
#include "docker/daemon.h"
#include "gateway/info.h"
#include "gateway/lookup.h"

struct row {
	struct gateway gw;
	int found;
};


/* A gateway may vanish between the listing and its lookup; one that
 * cannot be looked up is named on stderr and left out. */
static void lookup_rows(const struct strv *names, struct row *rows)
{
	for (size_t i = 0; i < names->n; i++) {
		os_error err = { 0 };

		/* each where it lives, none led astray by the one before */
		docker_daemon_unfollow();
		rows[i].found = gateway_lookup(names->v[i], &rows[i].gw, &err) == 0;
		if (!rows[i].found && err.code != OS_EXIT_NOTFOUND)
			log_warn("gateway '%s': %s", names->v[i], err.msg);
		os_error_clear(&err);
	}
}

static const char *api_of(const struct gateway *gw)
{
	return gw->has_metadata ? gw->md.server : "-";
}

static void print_table(const struct row *rows, size_t n)
{
	int wname = 4, wstate = 5, wgpu = 3;

	for (size_t i = 0; i < n; i++) {
		if (!rows[i].found)
			continue;
		cleanup_free char *gpus = gateway_gpus(&rows[i].gw);
		int a = (int)strlen(rows[i].gw.name), b = (int)strlen(gateway_state_word(&rows[i].gw));
		int g = gpus ? (int)strlen(gpus) : 0;
		wname = a > wname ? a : wname;
		wstate = b > wstate ? b : wstate;
		wgpu = g > wgpu ? g : wgpu;
	}
	printf("%-*s  %-*s  %-*s  %s\n", wname, "NAME", wstate, "STATE", wgpu, "GPU", "API");
	for (size_t i = 0; i < n; i++) {
		const struct gateway *gw = &rows[i].gw;

		cleanup_free char *gpus = rows[i].found ? gateway_gpus(gw) : NULL;

		/* "yes" for all of the host's GPUs, else the selection. */
		if (rows[i].found)
			printf("%-*s  %-*s  %-*s  %s\n", wname, gw->name, wstate, gateway_state_word(gw), wgpu,
			       gpus && strcmp(gpus, "all") ? gpus : gateway_wants_gpu(gw) ? "yes" : "no", api_of(gw));
	}
}

static void print_json(const struct row *rows, size_t n)
{
	cJSON *doc = json_document();
	cJSON *arr = cJSON_AddArrayToObject(doc, "gateways");

	for (size_t i = 0; i < n; i++) {
		if (!rows[i].found)
			continue;
		cJSON *o = cJSON_CreateObject();
		gateway_json_common(o, &rows[i].gw);
		cJSON_AddItemToArray(arr, o);
	}
	json_print_stdout(doc);
}

enum { OPT_JSON = 256 };

static const struct cli_opt list_opts[] = {
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object on stdout: the gateways, each with the keys of 'gateway status --json'" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_list_spec = {
	.name = "list",
	.summary = "list every gateway openshell knows",
	.about = "List every gateway openshell knows: those with a container labelled as\n"
		 "openshell's and those with a metadata.json, so a gateway whose metadata\n"
		 "was deleted, or whose container was removed (state 'missing'), still shows.\n",
	.opts = list_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_list_spec };
	struct strv names = { 0 };
	struct row *rows;
	os_error err = { 0 };
	int json = 0, rc;

	/* --json is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway list", argc, argv)) >= 0)
		return rc;
	if (gateway_known_names(&names, &err) < 0) {
		rc = log_error_report(&err);
		os_error_clear(&err);
		strv_free(&names);
		return rc;
	}
	rows = xcalloc(names.n + 1, sizeof(*rows));
	lookup_rows(&names, rows);
	if (json)
		print_json(rows, names.n);
	else
		print_table(rows, names.n);
	for (size_t i = 0; i < names.n; i++)
		if (rows[i].found)
			gateway_free(&rows[i].gw);
	free(rows);
	strv_free(&names);
	return OS_EXIT_OK;
}
