/* cmd/gateway_node_list.c - `openshell gateway node list`: every node of a gateway, its host and GPUs. */
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
#include "gateway/gpu/gpus.h"
#include "gateway/node/node_list.h"

enum { OPT_NAME = 256, OPT_JSON };

static const struct cli_opt list_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "json", .key = OPT_JSON, .help = "print the nodes as JSON on stdout" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_node_list_spec = {
	.name = "list",
	.summary = "list a gateway's nodes, with their Docker hosts and GPUs",
	.about = "List the gateway's nodes: its server's, then each agent 'gateway node add'\n"
		 "joined, with the Docker host it runs on, its state in the cluster and its\n"
		 "allocatable nvidia.com/gpu (under --gpu-allocation dra, the GPUs its\n"
		 "ResourceSlices publish). A stopped gateway's nodes are listed from its\n"
		 "files, their state unknown.\n",
	.opts = list_opts,
	.run = run,
};

static void print_rows(const char *gateway, const struct node_row *rows, size_t n, int json)
{
	if (json) {
		cJSON *j = json_document(), *arr;

		cJSON_AddStringToObject(j, "gateway", gateway);
		arr = cJSON_AddArrayToObject(j, "nodes");
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", rows[i].name);
			cJSON_AddStringToObject(o, "role", rows[i].role);
			json_add_string_or_null(o, "docker_endpoint", rows[i].endpoint);
			cJSON_AddStringToObject(o, "container", rows[i].container);
			cJSON_AddStringToObject(o, "status", rows[i].status);
			cJSON_AddItemToObject(o, "gpus", rows[i].gpus ? gpus_json(rows[i].gpus) : cJSON_CreateNull());
			json_add_count_or_null(o, "gpus_allocatable", rows[i].allocatable);
			cJSON_AddItemToArray(arr, o);
		}
		json_print_stdout(j);
		return;
	}
	printf("%-20s %-7s %-10s %-5s %s\n", "NODE", "ROLE", "STATUS", "GPUS", "DOCKER HOST");
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *g = rows[i].allocatable >= 0 ? xasprintf("%lld", rows[i].allocatable) : xstrdup("-");
		printf("%-20s %-7s %-10s %-5s %s\n", rows[i].name, rows[i].role, rows[i].status, g,
		       rows[i].endpoint ? rows[i].endpoint : "-");
	}
}

static int list(const char *name, int json, os_error *err)
{
	struct node_list l;
	int rc = gateway_node_list(name, &l, err);

	if (rc == 0)
		print_rows(name, l.v, l.n, json);
	node_list_free(&l);
	return rc;
}

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_node_list_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	os_error err = { 0 };
	int c, json = 0, rc;

	while ((c = cli_next_option(&p, argc, argv)) != -1)
		if (c == OPT_NAME)
			name = optarg;
		else if (c == OPT_JSON)
			json = 1;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway node list", argc, argv)) >= 0)
		return rc;
	rc = list(name, json, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	os_error_clear(&err);
	return rc;
}
