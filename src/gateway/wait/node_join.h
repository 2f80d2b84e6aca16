/* gateway/wait/node_join.h - waiting for an agent's node to join its gateway, judged by state.
 *
 * Two streams, no polling: a kubectl watch of the nodes on the server says
 * the moment the node is Ready with its GPUs allocatable (under DRA, a
 * third, of the ResourceSlices, the moment its driver publishes them), and the agent's
 * log, followed on its own Docker host, is its sign of life and says why
 * it cannot join. k3s's agent retries a join for ever (pkg/agent/run.go,
 * pkg/agent/config); the same cause said NODE_JOIN_PATIENCE times in a
 * row is the answer: the agent cannot reach or trust the server at its
 * URL, the server refuses the token, or the agent cannot open its tunnel
 * to the address the server advertises (pkg/agent/tunnel, which the
 * kubelet waits for). An agent that stops ends the wait
 * with its last log lines.
 */
#ifndef OPENSHELL_GATEWAY_NODE_JOIN_H
#define OPENSHELL_GATEWAY_NODE_JOIN_H

#include "base/deadline.h"
#include "base/error.h"
#include "base/strv.h"
#include "docker/target.h"

#define NODE_JOIN_PATIENCE 3

struct node_join {
	const struct docker_ctr *server_ctr; /* the server's container, on the gateway's daemon */
	struct docker_ctr agent;    /* the agent's, on the node's daemon */
	const char *node;           /* its name in the cluster */
	const char *server;         /* the URL the agent joins, for messages */
	const char *gateway;        /* the gateway's name, for the fixes messages give */
	const char *host;           /* the node's Docker host, for messages */
	int gpu;                    /* wait for allocatable nvidia.com/gpu too */
	int dra;                    /* or, under DRA, for GPUs its ResourceSlices publish */
	long long want_gpus;        /* how many (0: any); under DRA node_join_wait() sets it:
	                             * the GPUs of the agent's container the driver publishes */
	const char *since;          /* a Ready posted before this (RFC 3339: the agent's
	                             * start, by its host's clock) is the last run's; or NULL */
	struct deadline by;         /* the wait's deadline */
	int timeout_ms;             /* for messages */
	/* The answer: */
	long long gpus;             /* the node's allocatable nvidia.com/gpu (under DRA, the
	                             * GPUs its slices publish), -1: none */
};

/* Wait until the node is Ready (and with gpu, advertises want_gpus, or
 * any). -1 with err saying why not: the agent's own cause, its exit, or
 * at the deadline (OS_EXIT_TIMEOUT) what is still missing; under DRA, at
 * once when its container has no GPU the driver publishes (OS_EXIT_NOGPU). */
int node_join_wait(struct node_join *j, os_error *err);

/* A warning or error the agent logged, as "MSG" or "MSG: ERROR" (owned),
 * or NULL: what a timeout quotes when no cause was recognised. */
char *node_join_said(const char *line);

/* What an agent's log line says of its join to GATEWAY at SERVER: a
 * cause of failure to report (owned), or NULL. */
char *node_join_cause(const char *line, const char *server, const char *gateway);

#endif
