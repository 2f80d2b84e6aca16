/* docker/inspect_any.h - several names, each of any type, in one `docker inspect`.
 *
 * An untyped `docker inspect` looks each name up as a container, then an
 * image, a network, a volume (and swarm objects, plugins), and answers
 * with the first it finds (docker/cli cli/command/system/inspect.go,
 * inspectAll): one array of the objects found, in the order of the names,
 * and for each name it found nothing for one stderr line "Error: No such
 * object: NAME" ("error: no such object: NAME" from the v29 CLI on,
 * docker/cli 9ba1314d3a), with exit status 1. So one call tells a start
 * whether its container is there, and which of its network or volume is
 * when it is not, and whether its image is: where a typed inspect is one
 * call a type. What each object is, is read from its shape.
 */
#ifndef OPENSHELL_DOCKER_INSPECT_ANY_H
#define OPENSHELL_DOCKER_INSPECT_ANY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"

enum docker_kind {
	DOCKER_MISSING,     /* no object of any type has the name */
	DOCKER_CONTAINER,
	DOCKER_IMAGE,
	DOCKER_NETWORK,
	DOCKER_VOLUME,
	DOCKER_OTHER,       /* a plugin, a swarm object */
};

struct docker_found {
	enum docker_kind kind;
	cJSON *obj;         /* the object docker printed (owned); NULL when missing */
};

struct docker_target;
/* `docker inspect -- NAMES…` (N of them) on ON (docker/client.h) into found[N]: 0 with each name
 * answered, -1 when docker failed otherwise (the message quotes it) or its
 * answer cannot be matched to the names. found[] must be released either
 * way. */
int docker_inspect_any(const struct docker_target *on, const char *const *names, size_t n, int timeout_ms,
		       struct docker_found *found, os_error *err);

/* The same from docker's output: its stdout (OUT) and stderr (ERRTEXT). */
int docker_found_parse(const char *const *names, size_t n, const char *out, size_t out_len, const char *errtext,
		       struct docker_found *found, os_error *err);

void docker_found_free(struct docker_found *found, size_t n);

#endif
