/* gateway/deploy/image.h - the cluster image: where its recipe is, how it is
 * built, what it holds, and getting it before a gateway is made.
 *
 * The recipe is a directory (the build context) holding
 * docker/Dockerfile.cluster and versions.env: $OPENSHELL_IMAGE_CONTEXT, or
 * the source tree's deploy/ when this openshell runs from its build tree,
 * or what `make install` put in $(pkgdatadir)/deploy. versions.env holds
 * every pin; each becomes a build argument, and the image records them in
 * labels, which image_describe() reads back.
 *
 * The default image of `gateway start` is IMAGE_DEFAULT_TAG, exactly what
 * `image build` makes: when it is absent, start builds it; an image given
 * with --image is pulled instead. Either happens before anything of the
 * gateway is created, so a failure leaves nothing behind.
 */
#ifndef OPENSHELL_GATEWAY_IMAGE_H
#define OPENSHELL_GATEWAY_IMAGE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/error.h"
#include "base/strv.h"
#include "docker/image.h"

#define IMAGE_DEFAULT_TAG "openshell-cluster:" PACKAGE_VERSION

/* Is REF another image than the default, so pulled when absent, never
 * built? */
int image_named(const char *ref);
#define IMAGE_DOCKERFILE "docker/Dockerfile.cluster"
#define IMAGE_VERSIONS_FILE "versions.env"
#define IMAGE_BUILD_TIMEOUT_MS (30 * 60 * 1000)

/* The labels the recipe sets. */
#define IMAGE_LABEL_KIND "org.openshell.image"
#define IMAGE_LABEL_SMOKE "org.openshell.smoke-image"

struct image_build_opts {
	const struct docker_target *on; /* the daemon that builds (docker/client.h) */
	const char *tag;
	int pull;                       /* fresh base images */
	int no_cache;
	const char *network;            /* docker build --network, or NULL */
	const struct strv *build_args;  /* KEY=VALUE overriding versions.env */
	int timeout_ms;
};

/* The recipe's directory (not checked to exist). */
char *image_context_dir(void);

/* versions.env of the recipe in dir, as KEY=VALUE strings, each checked:
 * KEY of [A-Z0-9_], a non-empty value without spaces or quotes. */
int image_versions(const char *dir, struct strv *pairs, os_error *err);

/* Build the image, showing each build step, and tag it. */
int image_build(const struct image_build_opts *o, os_error *err);

/* The image calls of a start name its daemon, ON (docker/client.h); the
 * image commands' and doctor's are the process's (NULL). */

/* Whether ref is here (docker image inspect), a call within BY (NULL:
 * docker's per-call limit). */
int image_present(const struct docker_target *on, const char *ref, const struct deadline *by, int *present,
		  os_error *err);

/* Get ref, which is not here: an explicit reference is pulled, within
 * what is left of BY (no per-call cap: a pull takes long); the default one
 * is built (or, with no_build, refused with the command that builds it). */
int image_fetch(const struct docker_target *on, const char *ref, int explicit_ref, int no_build,
		const struct deadline *by, os_error *err);

/* A cluster image that is here (labelled IMAGE_LABEL_KIND=cluster, as
 * every build of the recipe is, and tagged), the newest: *ref (owned), or
 * NULL when there is none. For a container that must run before the image
 * a start wants is built or pulled. */
int image_find_cluster(const struct docker_target *on, int timeout_ms, char **ref, os_error *err);

/* Whether the image holds the bundle a start needs without network: its
 * labels name a bundle and every file of it is in the image (listed by a
 * container of it, run without network). 1 yes; 0 no, with *why (owned)
 * saying what is missing; -1 when it cannot be looked at. */
int image_self_contained(const char *ref, const struct docker_image *img, char **why, os_error *err);

/* A cluster image as `image info`, `version` and doctor judge it. */
struct image_facts {
	struct docker_image img;   /* img.exists 0: not here, and nothing else is read */
	int self_contained;        /* its bundle holds what a start needs */
	char *why;                 /* else why not (owned) */
	const char *k3s, *chart;   /* its k3s and device plugin chart versions (in img), or NULL */
};

/* Inspect REF and, when it is here, judge its bundle: one read for the
 * commands that describe an image. */
int image_read(const char *ref, struct image_facts *f, os_error *err);
void image_facts_free(struct image_facts *f);

/* What `image info` prints: text lines, or the JSON object's keys, added
 * to O (a json_document()), which is returned. */
void image_describe(const char *ref, const struct image_facts *f, FILE *out);
cJSON *image_describe_json(cJSON *o, const char *ref, const struct image_facts *f);

#endif
