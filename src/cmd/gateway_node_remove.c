/* cmd/gateway_node_remove.c - `openshell gateway node remove`: drain a node, delete it, remove its agent. */
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
#include "gateway/node/node_remove.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"

enum { OPT_NAME = 256, OPT_YES };

static const struct cli_opt remove_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "yes", .key = OPT_YES, .help = "do not ask for confirmation" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_node_remove_spec = {
	.name = "remove",
	.summary = "drain and delete a node, and remove its agent from its host",
	.operands = "NODE",
	.about = "Drain NODE (its pods evicted, the DaemonSets' left), delete it from the\n"
		 "gateway's cluster, then remove its agent's container and volume from its\n"
		 "Docker host. The gateway must be running. Without --yes the user is asked,\n"
		 "and with no terminal to ask on, nothing is done.\n",
	.opts = remove_opts,
	.run = run,
};

static int confirmed(const char *node, const char *gateway)
{
	char answer[16] = "";

	fprintf(stderr, "Remove node '%s' from gateway '%s'? [y/N] ", node, gateway);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return 0;
	answer[strcspn(answer, "\n")] = '\0';
	return strcmp(answer, "y") == 0 || strcmp(answer, "Y") == 0 || strcmp(answer, "yes") == 0;
}

static int remove_node(const struct gateway *gw, const struct node_record *r, int yes, os_error *err)
{
	int removed;

	if (!yes && !confirmed(r->name, gw->name))
		return os_error_set(err, OS_EXIT_FAILURE, "node '%s' was not removed", r->name);
	log_step("draining node '%s' and deleting it from the cluster", r->name);
	if (node_drain_delete(&gw->ctr, r->name, NODE_DRAIN_TIMEOUT_MS, err) < 0)
		return -1;
	log_step_done(1);
	log_step("removing its agent from %s", r->docker.endpoint);
	if (node_agent_remove(r, &removed, err) < 0)
		return -1;
	log_step_done(1);
	return node_record_remove(gw->state_dir, r->name, err);
}

static int remove_locked(const char *name, const char *node, int yes, os_error *err)
{
	struct gateway gw;
	struct node_records rs = { 0 };
	const struct node_record *r;
	int lock, rc = -1;

	if (node_name_check(node, err) < 0 || (lock = gateway_lock_for_change(name, err)) < 0)
		return -1;
	if (gateway_lookup(name, &gw, err) < 0)
		goto unlock;
	if (gateway_require_running(&gw, err) == 0 && node_records_load(gw.state_dir, &rs, err) == 0) {
		if (!(r = node_records_find(&rs, node)))
			os_error_set(err, OS_EXIT_NOTFOUND, "gateway '%s' has no node '%s' (see 'openshell gateway node list --name %s')",
				     name, node, name);
		else
			rc = remove_node(&gw, r, yes, err);
	}
	node_records_free(&rs);
	gateway_free(&gw);
unlock:
	gateway_unlock(lock);
	return rc;
}

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_node_remove_spec };
	const char *name = GATEWAY_DEFAULT_NAME, *node = NULL, *operand = NULL;
	os_error err = { 0 };
	int c, yes = 0, rc;

	while ((c = cli_next_arg(&p, argc, argv, &operand)) != -1) {
		if (c == OPT_NAME)
			name = optarg;
		else if (c == OPT_YES)
			yes = 1;
		else if (c == 0 && node)
			return log_usage_error("gateway node remove", "unexpected argument '%s': one node at a time", operand);
		else if (c == 0)
			node = operand;
	}
	if (p.done >= 0)
		return p.done;
	if (!node)
		return log_usage_error("gateway node remove", "name the node: 'openshell gateway node remove NODE'");
	if (!yes && !isatty(STDIN_FILENO))
		return log_usage_error("gateway node remove", "stdin is not a terminal to confirm on; pass --yes to remove without asking");
	rc = remove_locked(name, node, yes, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	if (rc == OS_EXIT_OK)
		printf("Node '%s' removed from gateway '%s'.\n", node, name);
	os_error_clear(&err);
	return rc;
}
