/* gateway/start/start_look.h - what a start finds of a gateway before it acts.
 *
 * One untyped `docker inspect` of the gateway's name and of the image
 * asked for (docker/inspect_any.h). The name is its container's; where
 * there is none, docker answers with the first of its network and its
 * volume it finds (it looks for a network before a volume), or says
 * there is no such object: then neither is there. So a fresh start
 * learns in one call what took three (the container's, the image's and
 * the volume's inspects). What the look cannot tell is asked later, type
 * by type; what it told is only as fresh as the look, so a start that
 * spends minutes on a build forgets it (start_look_forget()).
 */
#ifndef OPENSHELL_GATEWAY_START_LOOK_H
#define OPENSHELL_GATEWAY_START_LOOK_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/names.h"
#include "docker/container.h"
#include "docker/target.h"

#define LOOK_NOT_KNOWN (-1)

struct start_look {
	const struct docker_ctr *ctr; /* openshell-cluster-NAME, on the start's daemon */
	const char *gateway;   /* NAME, whose labels make an object ours */
	int net_owner;         /* enum owner of the network, or LOOK_NOT_KNOWN */
	int vol_owner;         /* of the volume */
	int image_here;        /* the image: 1 here, 0 not, or LOOK_NOT_KNOWN */
	const char *image;     /* which image that is about */
	cJSON *image_labels;   /* its Config.Labels when here (owned), or NULL */
};

/* Look at RES (gateway GATEWAY's) and IMAGE: L's facts, and C the
 * container (c->exists 0 when there is none; container_free() it either
 * way). */
int start_look(const struct docker_ctr *ctr, const char *gateway, const char *image, int timeout_ms,
	       struct start_look *l, struct gw_container *c, os_error *err);

/* Is IMAGE here? 1 or 0 as the look found it, LOOK_NOT_KNOWN when it
 * cannot tell (another image, or an object of another type of its name). */
int start_look_image(const struct start_look *l, const char *image);

/* IMAGE's labels as the look found them (an object), or NULL when it did
 * not find that image: a caller that needs them asks docker itself. */
const cJSON *start_look_image_labels(const struct start_look *l, const char *image);

void start_look_free(struct start_look *l);

/* Whose the gateway's TYPE ("network" or "volume") is: as the look found
 * it, else asked now. */
int start_look_owner(const struct start_look *l, const char *type, int timeout_ms, enum owner *out, os_error *err);

/* Its network and volume may not be as they were (a long build, a
 * removal): asked again when next wanted. */
void start_look_forget(struct start_look *l);

#endif
