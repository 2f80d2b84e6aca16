/* gateway/state/metadata.h - gateways/NAME/metadata.json: what openshell made, and when.
 *
 * Written with cJSON when a gateway starts and read back by the other
 * commands. A file that is not ours (wrong schema, missing or mistyped
 * fields) is reported as such, never half-trusted.
 */
#ifndef OPENSHELL_GATEWAY_METADATA_H
#define OPENSHELL_GATEWAY_METADATA_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "docker/daemon.h"
#include "gateway/gpu/allocation.h"

#define METADATA_SCHEMA 1

struct gw_metadata {
	char *name;
	char *container;
	char *image;
	char *bind;
	int port;
	int gpu;
	/* Its GPU allocation ("gpu_allocation"), so that a reader asks for
	 * what it serves before the container is inspected;
	 * GPU_ALLOCATION_UNSET without GPUs, or in older files. */
	enum gpu_allocation allocation;
	char *server;       /* https://ADDR:PORT, as in the kubeconfig */
	char *kubeconfig;   /* absolute path */
	char *created;      /* RFC 3339, UTC */
	char *user_kubeconfig; /* the user's kubeconfig it was merged into, or NULL */
	/* The daemon it was made on: its context (NULL in older files), that
	 * context's endpoint, the default context's TLS settings. */
	struct docker_target docker;
};

char *metadata_to_json(const struct gw_metadata *md);
int metadata_parse(const char *json, size_t len, struct gw_metadata *md, os_error *err);
void metadata_free(struct gw_metadata *md);

/* The docker_* keys of a file that records a daemon (metadata.json, a
 * node's record: gateway/state/node_record.h): written from T, read into
 * T (absent or null ones: NULL, TLS not recorded). */
void metadata_docker_to_json(cJSON *o, const struct docker_target *t);
void metadata_docker_from_json(const cJSON *o, struct docker_target *t);

/* The current time as RFC 3339 UTC ("2026-11-29T14:31:43Z"). */
char *metadata_now(void);

#endif
