/* docker/image.h - an image as `docker image inspect` describes it, and
 * sent from one daemon to another.
 *
 * image_parse_inspect() reads the JSON array docker prints into the facts
 * openshell shows and acts on: the id, when it was built, its size and the
 * labels the cluster recipe sets. A missing field reads as absent; an image
 * that does not exist is exists = 0, not an error.
 */
#ifndef OPENSHELL_DOCKER_IMAGE_H
#define OPENSHELL_DOCKER_IMAGE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"

struct docker_image {
	int exists;
	char *id;          /* "sha256:…" */
	char *created;     /* RFC 3339, as docker prints it */
	long long size;    /* bytes; -1 when unknown */
	cJSON *labels;     /* Config.Labels, an object (empty when none); owned */
};

int image_parse_inspect(const char *json, size_t len, struct docker_image *img, os_error *err);
/* `docker image inspect REF` on the daemon ON names (docker/client.h). */
struct docker_target;
int image_inspect(const struct docker_target *on, const char *ref, int timeout_ms, struct docker_image *img,
		  os_error *err);
void docker_image_free(struct docker_image *img);

/* A label's value, or NULL when it is absent or empty. */
const char *image_label(const struct docker_image *img, const char *key);

/* Copy IMAGE from the gateway's daemon to a node's as `docker save IMAGE |
 * docker load`. FROM and TO name each docker's daemon (docker/target.h),
 * NULL the one every docker call talks to (docker/client.h's target). save and load run side
 * by side, each under timeout_ms (0: the per-call default), the bytes
 * streamed between them through a pipe, never held in memory or on disk;
 * the IDs are read before and after under the per-call deadline. Succeeds
 * only once the node's daemon has the image under the ID the gateway's has
 * (*id_out, owned); an image missing on the gateway's daemon, or arriving
 * as another ID, is an error. A side that fails is named in the message
 * (saving from the gateway's daemon, loading on the node's), with the first
 * line of its docker's stderr, and the other side is stopped. */
int docker_image_send(const char *image, const struct docker_target *from, const struct docker_target *to,
		      int timeout_ms, char **id_out, os_error *err);

#endif
