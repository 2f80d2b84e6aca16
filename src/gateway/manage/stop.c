/* gateway/manage/stop.c - a gateway stopped, its state kept (see gateway/manage/stop.h). */
#include "config.h"

#include <stdio.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "docker/client.h"
#include "gateway/deploy/node_lifecycle.h"
#include "gateway/manage/stop.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"

static int stop_server(const struct gateway *gw, os_error *err)
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
	snprintf(grace, sizeof(grace), "%d", GATEWAY_STOP_GRACE_S);
	const char *args[] = { "stop", "--time", grace, gw->container, NULL };
	log_step("stopping gateway '%s'", gw->name);
	/* docker's own grace period comes on top of the per-call deadline. */
	if (docker_ok(gw->ctr.on, args, GATEWAY_STOP_GRACE_S * 1000 + docker_call_timeout_ms(), err) < 0)
		return os_error_wrap(err, "cannot stop gateway '%s'", gw->name);
	log_step_done(1);
	return 0;
}

int gateway_stop(const char *name, os_error *err)
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
			rc = stop_server(&gw, err);
		}
		gateway_free(&gw);
	}
	gateway_unlock(lock);
	return rc;
}
