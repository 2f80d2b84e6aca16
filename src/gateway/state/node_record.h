/* gateway/state/node_record.h - gateways/NAME/nodes/NODE.json: a gateway's agents on other Docker hosts.
 *
 * `gateway node add` writes one file per node once its agent has joined;
 * every later command (node list and remove, stop, start, destroy) finds
 * the agent again through it: the Docker daemon it runs on, its container
 * and what it was asked for. A file apart from metadata.json, which a
 * start rewrites, so that a restart of the server never forgets a node.
 * Written atomically, 0600; a file that is not ours is reported, never
 * half-trusted.
 */
#ifndef OPENSHELL_GATEWAY_NODE_RECORD_H
#define OPENSHELL_GATEWAY_NODE_RECORD_H

#include <stddef.h>

#include "base/error.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/metadata.h"

#define NODE_RECORD_SCHEMA 1

struct node_record {
	char *name;          /* the node's name in the cluster (base/names.h rules) */
	char *gateway;
	char *container;     /* the agent's container on its host: openshell-node-GATEWAY */
	char *image;         /* the image it runs, as the server's container names it */
	char *image_id;      /* and its ID, the same on both daemons */
	char *server;        /* https://ADDR:PORT, the URL the agent joined */
	int gpu;
	struct gpus gpus;    /* with gpu: the selection (--gpus all|N|LIST), read once */
	char *created;       /* RFC 3339, UTC */
	struct docker_target docker;  /* the daemon the agent runs on */
};

char *node_record_to_json(const struct node_record *r);
int node_record_parse(const char *json, size_t len, struct node_record *r, os_error *err);
void node_record_free(struct node_record *r);

/* A gateway's nodes, by name. */
struct node_records {
	struct node_record *v;
	size_t n;
};

/* Every nodes/NODE.json under STATE_DIR, sorted by name (none: n == 0). */
int node_records_load(const char *state_dir, struct node_records *out, os_error *err);
void node_records_free(struct node_records *rs);

/* The one named NAME in RS, or NULL. */
const struct node_record *node_records_find(const struct node_records *rs, const char *name);

int node_record_write(const char *state_dir, const struct node_record *r, os_error *err);

/* Remove NAME's file (gone already: fine), and the nodes directory once
 * it is empty. */
int node_record_remove(const char *state_dir, const char *name, os_error *err);

/* The agent's container and volume on its host, and the container's
 * hostname: openshell-node-GATEWAY. One per gateway and host: an agent
 * runs in the host's network, where one kubelet has its port. */
char *node_resource_name(const char *gateway);

#endif
