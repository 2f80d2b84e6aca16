/* gateway/state/node_network.h - how pods on different hosts reach each other:
 * `--node-network vxlan|wireguard`.
 *
 * k3s's flannel carries the traffic between pods of different nodes to
 * each node's flannel address: over VXLAN on 8472/udp, unencrypted (vxlan,
 * the default, k3s's own), or over WireGuard on 51820/udp, 51821/udp for
 * IPv6 (wireguard: k3s's wireguard-native backend), encrypted, for hosts
 * without a trusted network between them. The server chooses for the
 * cluster (its agents take the backend from the server's config); the
 * gateway's container keeps the choice as a label, and a kept gateway
 * keeps it.
 */
#ifndef OPENSHELL_GATEWAY_NODE_NETWORK_H
#define OPENSHELL_GATEWAY_NODE_NETWORK_H

#include "base/error.h"

/* NODE_NETWORK_UNSET: a request that names none (gateway/deploy/deploy.h). */
enum node_network { NODE_NETWORK_UNSET = -1, NODE_NETWORK_VXLAN, NODE_NETWORK_WIREGUARD };

/* "vxlan" or "wireguard"; a usage error otherwise. */
int node_network_parse(const char *text, enum node_network *n, os_error *err);
const char *node_network_name(enum node_network n);

/* The choice a container's label (NULL: made before it) records: vxlan,
 * k3s's default, unless it says wireguard. */
enum node_network node_network_of_label(const char *value);

/* k3s's --flannel-backend for it, or NULL for k3s's default. */
const char *node_network_backend(enum node_network n);

/* The UDP port the other nodes send pod traffic to, over IPv6 or not. */
int node_network_port(enum node_network n, int ipv6);

#endif
