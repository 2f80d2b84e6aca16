/* gateway/node/node_add.h - joining a k3s agent on another Docker host to a gateway.
 *
 * gateway_node_add() runs the gateway's cluster image as `k3s agent` on
 * the node's Docker daemon: it refuses what cannot work before anything is
 * made (a server published on loopback alone, the server's own host, a
 * name taken, a daemon out of reach, GPUs without the toolkit there),
 * sends the image by `docker save | docker load` when that daemon lacks
 * it (checked by ID), puts the server's token in the agent's volume from
 * stdin (never argv, environment or a file others read), starts the agent
 * with the node's own GPU request and the server's own isolation, waits
 * until the node is Ready with its GPUs (gateway/wait/node_join.h) and records
 * it (gateway/state/node_record.h). A failure or an interrupt removes what the
 * run made, on both hosts, and says so.
 */
#ifndef OPENSHELL_GATEWAY_NODE_ADD_H
#define OPENSHELL_GATEWAY_NODE_ADD_H

#include "base/error.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"

struct node_add_opts {
	const char *gateway;
	const char *node;
	const char *docker_host;   /* --docker-host, or NULL */
	const char *context;       /* --context, or NULL */
	int gpu;                   /* --gpu or --gpus */
	struct gpus gpus;
	/* The device plugin is one DaemonSet with one configuration for the
	 * cluster: these must be the gateway's own, or are refused. */
	struct sharing sharing;    /* --gpu-sharing; replicas SHARING_UNSET: not given */
	enum mig_strategy mig;     /* --mig-strategy; MIG_UNSET: not given */
	int timeout_ms;
};

struct node_add_result {
	char *endpoint;     /* the node's Docker daemon */
	char *server;       /* the URL its agent joined */
	long long gpus;     /* its allocatable nvidia.com/gpu (under DRA, the GPUs its
	                     * ResourceSlices publish); -1 without */
	int dra;            /* the gateway allocates GPUs by DRA */
	int image_sent;     /* the image went there by save | load */
};

int gateway_node_add(const struct node_add_opts *o, struct node_add_result *r, os_error *err);
void node_add_result_free(struct node_add_result *r);

/* The host part of an https://HOST:PORT server URL (owned), or NULL. */
char *node_server_host(const char *server);

#endif
