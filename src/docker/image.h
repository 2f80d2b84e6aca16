/* docker/image.h - an image as `docker image inspect` describes it.
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
int image_inspect(const char *ref, int timeout_ms, struct docker_image *img, os_error *err);
void docker_image_free(struct docker_image *img);

/* A label's value, or NULL when it is absent or empty. */
const char *image_label(const struct docker_image *img, const char *key);

#endif
