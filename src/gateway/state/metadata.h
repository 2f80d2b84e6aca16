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
	char *docker_context;  /* the Docker context it was made in, or NULL (older files) */
	char *docker_endpoint; /* that context's daemon: unix://…, ssh://…, tcp://… */
	/* The default context's TLS settings (docker/daemon.h), recorded
	 * when docker_tls_recorded: flags and a path, no key material. */
	int docker_tls_recorded, docker_tls, docker_tls_verify;
	char *docker_cert_path;
};

char *metadata_to_json(const struct gw_metadata *md);
int metadata_parse(const char *json, size_t len, struct gw_metadata *md, os_error *err);
void metadata_free(struct gw_metadata *md);

/* The daemon md records (pointing into md). */
void metadata_where(const struct gw_metadata *md, struct docker_where *w);

/* A daemon as a file records it (owned copies of struct docker_where's
 * fields): metadata.json's, a node's (gateway/state/node_record.h). */
struct where_record {
	char *context, *endpoint;
	int tls_recorded, tls, tls_verify;
	char *cert_path;
};
void where_record_view(const struct where_record *r, struct docker_where *w);
void where_record_copy(const struct docker_where *w, struct where_record *r);
void where_record_free(struct where_record *r);

/* The docker_* keys of such a file: written from W, read into R (absent
 * or null ones: NULL, TLS not recorded). */
void metadata_where_to_json(cJSON *o, const struct docker_where *w);
void metadata_where_from_json(const cJSON *o, struct where_record *r);

/* The current time as RFC 3339 UTC ("2026-11-29T14:31:43Z"). */
char *metadata_now(void);

#endif
