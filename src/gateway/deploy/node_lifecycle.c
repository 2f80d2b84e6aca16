/* gateway/deploy/node_lifecycle.c - agents stopped and resumed with their server (see gateway/deploy/node_lifecycle.h). */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/daemon.h"
#include "gateway/deploy/node_lifecycle.h"
#include "gateway/wait/node_join.h"

/* k3s's agent gets as long as the server to shut down (gateway stop). */
#define AGENT_STOP_GRACE "10"
#define AGENT_STOP_GRACE_MS 10000

int nodes_stop(const struct node_records *rs)
{
	int failed = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const char *stop[] = { "stop", "--time", AGENT_STOP_GRACE, rs->v[i].container, NULL };
		os_error e = { 0 };

		log_step("stopping node '%s' on %s", rs->v[i].name, rs->v[i].docker.endpoint);
		if (docker_ok(&rs->v[i].docker, stop, AGENT_STOP_GRACE_MS + docker_call_timeout_ms(), &e) < 0) {
			log_step_done(0);
			log_warn("could not stop node '%s''s agent on %s: %s", rs->v[i].name, rs->v[i].docker.endpoint, e.msg);
			failed++;
		} else {
			log_step_done(1);
		}
		os_error_clear(&e);
	}
	return failed;
}

/* Each agent of RS started again on its host; one that cannot be is
 * warned of (its node stays NotReady, which the waits then name). */
static void start_agents(const struct node_records *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		const char *start[] = { "start", rs->v[i].container, NULL };
		os_error e = { 0 };

		if (docker_ok(&rs->v[i].docker, start, 0, &e) < 0)
			log_warn("could not start node '%s''s agent on %s: %s", rs->v[i].name, rs->v[i].docker.endpoint,
				 e.msg);
		os_error_clear(&e);
	}
}

static int wait_node(const struct node_record *r, const struct docker_ctr *server_ctr, enum gpu_allocation allocation,
		     const struct deadline *by, int timeout_ms, os_error *err)
{
	struct node_join j = { .server_ctr = server_ctr, .agent = { &r->docker, r->container }, .node = r->name,
			       .server = r->server, .gateway = r->gateway, .host = r->docker.endpoint, .gpu = r->gpu,
			       .dra = allocation == GPU_ALLOCATION_DRA, .by = *by, .timeout_ms = timeout_ms };
	const char *started[] = { "inspect", "--format", "{{.State.StartedAt}}", r->container, NULL };
	struct run_result res = { 0 };
	int rc;

	log_step("waiting for node '%s' on %s", r->name, r->docker.endpoint);
	/* Its node's Ready from before the stop is no news. */
	rc = docker_run_ok(j.agent.on, started, NULL, 0, 0, &res, err);
	res.out[strcspn(res.out, "\n")] = '\0';
	j.since = res.out;
	if (rc == 0)
		rc = node_join_wait(&j, err);
	run_result_free(&res);
	log_step_done(rc == 0);
	return rc;
}

static int load(const char *gateway, struct node_records *rs, os_error *err)
{
	cleanup_free char *dir = NULL;

	return gateway_state_dir(gateway, &dir, err) < 0 ? -1 : node_records_load(dir, rs, err);
}

int nodes_start_gateway(const char *gateway, os_error *err)
{
	struct node_records rs;

	if (load(gateway, &rs, err) < 0)
		return -1;
	start_agents(&rs);
	node_records_free(&rs);
	return 0;
}

int nodes_refuse_recreate(const char *gateway, os_error *err)
{
	struct node_records rs;
	struct strv where = { 0 };
	cleanup_free char *list = NULL;
	int rc = 0;

	if (load(gateway, &rs, err) < 0)
		return -1;
	for (size_t i = 0; i < rs.n; i++)
		strv_pushf(&where, "%s on %s", rs.v[i].name, rs.v[i].docker.endpoint);
	list = strv_join(&where, ", ");
	if (rs.n)
		rc = os_error_set(err, OS_EXIT_CONFLICT,
			     "gateway '%s' has %s on other hosts (%s), whose agents --recreate would leave joined to a cluster it removes; remove %s first (openshell gateway node remove NODE --name %s), then recreate the gateway and add %s again",
			     gateway, rs.n == 1 ? "a node" : "nodes", list, rs.n == 1 ? "it" : "them", gateway,
			     rs.n == 1 ? "it" : "them");
	strv_free(&where);
	node_records_free(&rs);
	return rc;
}

int nodes_wait_gateway(const char *gateway, const struct docker_ctr *server_ctr, enum gpu_allocation allocation,
		       const struct deadline *by, int timeout_ms, os_error *err)
{
	struct node_records rs;
	int rc = 0;

	if (load(gateway, &rs, err) < 0)
		return -1;
	for (size_t i = 0; i < rs.n && rc == 0; i++)
		rc = wait_node(&rs.v[i], server_ctr, allocation, by, timeout_ms, err);
	node_records_free(&rs);
	return rc;
}
