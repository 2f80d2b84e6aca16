/* cmd/gateway_stop.c - `openshell gateway stop`: stop the container, keep
 * everything else, so that `gateway start` resumes it with its state. It
 * waits for the gateway's lock, so it never interleaves with a `start`. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/names.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "docker/client.h"
#include "gateway/lookup.h"
#include "gateway/node_lifecycle.h"
#include "gateway/node_record.h"

/* k3s gets this long to shut down before docker kills it. */
#define STOP_GRACE_S 10


static int stop(const struct gateway *gw, os_error *err)
{
	char grace[16];

	if (!gw->c.exists)
		return os_error_set(err, OS_EXIT_NOTFOUND,
				    "gateway '%s' has no container (%s is gone); 'openshell gateway destroy --name %s' removes what is left",
				    gw->name, gw->container, gw->name);
	if (!gw->c.running && !gw->c.restarting) {
		log_info("gateway '%s' is already stopped (%s)", gw->name, gw->c.status);
		return 0;
	}
	snprintf(grace, sizeof(grace), "%d", STOP_GRACE_S);
	const char *args[] = { "stop", "--time", grace, gw->container, NULL };
	log_step("stopping gateway '%s'", gw->name);
	/* docker's own grace period comes on top of the per-call deadline. */
	if (docker_ok(args, STOP_GRACE_S * 1000 + docker_call_timeout_ms(), err) < 0)
		return os_error_wrap(err, "cannot stop gateway '%s'", gw->name);
	log_step_done(1);
	return 0;
}

/* Under the gateway's lock, so a `start` of the same gateway never runs
 * between the lookup and the stop. */
static int stop_locked(const char *name, os_error *err)
{
	struct gateway gw;
	int lock, rc;

	if ((lock = gateway_lock_for_change(name, err)) < 0)
		return -1;
	rc = gateway_lookup(name, &gw, err);
	if (rc == 0) {
		struct node_records rs;
		/* The agents first: none is left retrying a server that is gone. */
		if ((rc = node_records_load(gw.state_dir, &rs, err)) == 0) {
			nodes_stop(&rs);
			node_records_free(&rs);
			rc = stop(&gw, err);
		}
		gateway_free(&gw);
	}
	gateway_unlock(lock);
	return rc;
}

enum { OPT_NAME = 256 };

static const struct cli_opt stop_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_stop_spec = {
	.name = "stop",
	.summary = "stop a gateway, keeping its state",
	.about = "Stop a gateway's container (k3s gets " CLI_STR(STOP_GRACE_S) "s to shut down, then is killed).\n"
		 "The volume, kubeconfig and metadata are kept: 'openshell gateway start'\n"
		 "resumes it with its cluster state. Stopping a stopped gateway succeeds.\n",
	.opts = stop_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_stop_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	os_error err = { 0 };
	int rc;

	/* --name is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		name = optarg;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway stop", argc, argv)) >= 0)
		return rc;
	rc = stop_locked(name, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	os_error_clear(&err);
	return rc;
}
