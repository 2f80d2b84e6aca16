/* gateway/deploy/node_lifecycle.h - a gateway's agents stopped and resumed with it.
 *
 * `gateway stop` stops each agent on its own host before the server
 * (docker stop; its container, volume and node are kept), so that none
 * retries a server that is gone; `gateway start` starts them again with
 * the server, and returns when each node is Ready again (the wait of
 * gateway/wait/node_join.h). Docker is told each agent's daemon on
 * each call, so the server's stays as the caller set it.
 */
#ifndef OPENSHELL_GATEWAY_NODE_LIFECYCLE_H
#define OPENSHELL_GATEWAY_NODE_LIFECYCLE_H

#include "base/deadline.h"
#include "base/error.h"
#include "docker/target.h"
#include "gateway/gpu/allocation.h"
#include "gateway/state/node_record.h"

/* Stop each agent of RS; one that cannot be stopped is warned of, and the
 * others stop all the same. Returns how many could not. */
int nodes_stop(const struct node_records *rs);

/* Start gateway GATEWAY's agents again, as its files record them, as soon
 * as its server runs (an agent retries its join until the server answers):
 * the server's waits count their nodes' plugin pods too. One that cannot be
 * started is warned of. */
int nodes_start_gateway(const char *gateway, os_error *err);

/* --recreate of gateway GATEWAY: refused (OS_EXIT_CONFLICT, naming its
 * nodes and the fix) while it has nodes on other hosts, whose agents would
 * stay joined to a cluster that the recreate removes (its CA and token go
 * with its volume); 0 when it has none. */
int nodes_refuse_recreate(const char *gateway, os_error *err);

/* Wait, until BY passes, for each of them to be Ready in the cluster of
 * the server container SERVER_CTR, with its GPUs when it has some, as the
 * gateway's ALLOCATION serves them. TIMEOUT_MS is for messages. */
int nodes_wait_gateway(const char *gateway, const struct docker_ctr *server_ctr, enum gpu_allocation allocation,
		       const struct deadline *by, int timeout_ms, os_error *err);

#endif
