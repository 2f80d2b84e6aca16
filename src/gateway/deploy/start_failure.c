/* gateway/deploy/start_failure.c - what a failed or interrupted start of a
 * gateway means (see gateway/deploy/start_failure.h). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "gateway/deploy/start_failure.h"
#include "gateway/deploy/start_gpus.h"
#include "gateway/gpu/gpu_errors.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/node_network.h"

int start_port_taken(const char *text)
{
	return strstr(text, "port is already allocated") || strstr(text, "address already in use");
}

int start_node_port_taken(const struct deploy_plan *p, const char *text)
{
	int port = deploy_node_port(p);
	char at[16];
	size_t n = (size_t)snprintf(at, sizeof(at), ":%d", port);

	if (!port || !start_port_taken(text))
		return 0;
	for (const char *s = strstr(text, at); s; s = strstr(s + 1, at))
		if (!isdigit((unsigned char)s[n]))
			return 1;
	return 0;
}

/* flannel's port was taken: a kept gateway's, or a new one's. */
static void node_port_taken(const struct deploy_plan *p, const char *verb, os_error *err)
{
	int port = deploy_node_port(p);
	const char *net = node_network_name(p->node_network);

	if (strcmp(verb, "start") == 0)
		os_error_set(err, OS_EXIT_FAILURE,
			     "port %d/udp on %s, which gateway '%s' keeps for its nodes' pod traffic (--node-network %s), is in use by something else now; free it and rerun 'openshell gateway start --name %s', or rebuild the gateway with --recreate and another --bind or --node-network (its cluster state is lost)",
			     port, p->bind, p->req->name, net, p->req->name);
	else
		os_error_set(err, OS_EXIT_FAILURE,
			     "port %d/udp on %s, where the nodes on other hosts send pod traffic (--node-network %s), is already in use, by another gateway with an address to advertise or something else; free it, or choose another --bind address or --node-network",
			     port, p->bind, net);
}

int start_explain_failure(const struct deploy_plan *p, const char *container, const struct run_result *res,
			  const char *verb, os_error *err)
{
	if (gpu_errors_explain(res->err, strcmp(verb, "start") == 0, err)) {
		/* the CDI path's own failures, with their fix */
	} else if (strstr(res->err, "could not select device driver")) {
		gpu_errors_no_toolkit(p->docker_on, p->image, err);
	} else if (start_node_port_taken(p, res->err)) {
		node_port_taken(p, verb, err);
	} else if (start_port_taken(res->err) && strcmp(verb, "start") == 0) {
		/* A stopped gateway keeps its port (--port is refused for it). */
		os_error_set(err, OS_EXIT_FAILURE,
			     "port %d on %s, which gateway '%s' keeps, is in use by something else now; free it and rerun 'openshell gateway start --name %s', or rebuild the gateway on another port with --recreate --port N (its cluster state is lost)",
			     p->port, p->bind, p->req->name, p->req->name);
	} else if (start_port_taken(res->err)) {
		os_error_set(err, OS_EXIT_FAILURE, "port %d on %s is already in use; choose another with --port",
			     p->port, p->bind);
	} else if (strcmp(verb, "start") == 0 && strstr(res->err, "network ") && strstr(res->err, " not found")) {
		/* Someone removed the network under a stopped gateway: Docker
		 * cannot start a container whose network is gone. */
		cleanup_free char *opt = start_gpus_option(p);
		os_error_set(err, OS_EXIT_FAILURE,
			     "gateway '%s' cannot start: its network %s is gone (removed while the gateway was stopped); rebuild it with 'openshell gateway start --name %s%s --recreate' (its cluster state is lost)",
			     p->req->name, container, p->req->name, opt);
	} else {
		run_failure(err, OS_EXIT_FAILURE, res, "docker %s failed (exit status %d)", verb, res->status);
	}
	os_error_set_detail(err, res->err);
	return -1;
}

int start_explain_interrupt(const struct deploy_plan *p, int kept, int removed_old, int rolled_back, os_error *err)
{
	int code = 128 + signals_pending();
	cleanup_free char *opt = start_gpus_option(p);

	if (kept)
		return os_error_set(err, code,
				    "interrupted; gateway '%s' was kept and goes on starting: run 'openshell gateway start --name %s%s' to wait for it again, or destroy it with 'openshell gateway destroy --name %s'",
				    p->req->name, p->req->name, opt, p->req->name);
	if (removed_old)
		return os_error_set(err, code,
				    "interrupted; gateway '%s' was removed (--recreate)%s and not created again: run 'openshell gateway start --name %s%s' to create it",
				    p->req->name, rolled_back ? ", and what this run had begun was removed too" : "",
				    p->req->name, opt);
	if (rolled_back)
		return os_error_set(err, code, "interrupted; removed what this run had created for gateway '%s'",
				    p->req->name);
	return os_error_set(err, code, "interrupted; gateway '%s' was not changed", p->req->name);
}
