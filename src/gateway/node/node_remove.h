/* gateway/node/node_remove.h - taking a gateway's node away: from the cluster, then from its host.
 *
 * The node is drained (kubectl drain: cordoned, its pods evicted but the
 * DaemonSets'), then deleted from the cluster, which forgets its password
 * Secret too (k3s's node password controller); then its agent's container
 * and volume go from its Docker host, each only when its labels say it is
 * this gateway's agent of that node. Docker is told which daemon on each
 * call, so the caller's daemon stays as it was.
 */
#ifndef OPENSHELL_GATEWAY_NODE_REMOVE_H
#define OPENSHELL_GATEWAY_NODE_REMOVE_H

#include "base/error.h"
#include "docker/target.h"
#include "gateway/state/node_record.h"

#define NODE_DRAIN_TIMEOUT_MS 120000

/* Drain NODE and delete it from the cluster of the server container CTR. */
int node_drain_delete(const struct docker_ctr *ctr, const char *node, int timeout_ms, os_error *err);

/* Remove R's agent (container, then volume) from the daemon R records.
 * *removed counts what went (0 when nothing of it was there). */
int node_agent_remove(const struct node_record *r, int *removed, os_error *err);

#endif
