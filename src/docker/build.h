/* docker/build.h - `docker build` with BuildKit, its progress, its failures.
 *
 * The cluster image is built by the user's docker CLI, as every other
 * docker call is. BuildKit is asked for (DOCKER_BUILDKIT=1): the recipe
 * relies on it to skip the stages a build does not use. Progress is read
 * from the plain output as it arrives, a line per build step (BuildKit's
 * "#N [stage k/n] INSTRUCTION", or the legacy "Step k/n : INSTRUCTION"),
 * and the step that failed is named in the error with the build's last
 * lines as its detail.
 */
#ifndef OPENSHELL_DOCKER_BUILD_H
#define OPENSHELL_DOCKER_BUILD_H

#include "base/error.h"
#include "base/strv.h"

struct docker_target;
struct build_request {
	const struct docker_target *on; /* the daemon that builds (docker/client.h) */
	const char *context;          /* the build context directory */
	const char *dockerfile;       /* the Dockerfile, relative to the context */
	const char *tag;
	const struct strv *build_args; /* "KEY=VALUE" each */
	int pull;                     /* --pull: fresh base images */
	int no_cache;                 /* --no-cache */
	const char *network;          /* --network for RUN steps, or NULL */
	int timeout_ms;
};

/* Build and tag. Each step is reported with log_step_progress() inside the
 * caller's log_step(); with -v every output line is shown. */
int docker_build(const struct build_request *rq, os_error *err);

/* The step a build output was at, and the cause of its failure, read from
 * BuildKit's or the legacy builder's plain output (for docker_build() and
 * its tests). Both are owned and may be NULL. */
struct build_outcome {
	char *step;    /* "[bundle-fetch 3/3] RUN ..." or "Step 5/12 : RUN ..." */
	char *cause;   /* the error line that says why */
};
void build_outcome_read(const char *output, struct build_outcome *o);
void build_outcome_free(struct build_outcome *o);

#endif
