/* gateway/state/lookup.h - find an existing gateway by name: its container and files;
 * lock one before changing it.
 *
 * Every command after `start` begins here. A gateway exists when its
 * container (openshell-cluster-NAME) or its metadata.json does. A
 * container that is not labelled as openshell's is never managed; a
 * metadata.json that cannot be read is reported, not trusted. A gateway
 * whose metadata records the Docker daemon it was made on is looked for
 * there, and every call about it names that daemon (gw->ctr;
 * docker/daemon.h's docker_daemon_follow()).
 */
#ifndef OPENSHELL_GATEWAY_LOOKUP_H
#define OPENSHELL_GATEWAY_LOOKUP_H

#include "base/error.h"
#include "docker/container.h"
#include "docker/target.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/mig.h"
#include "gateway/state/metadata.h"

struct gateway {
	char *name;
	char *container;          /* openshell-cluster-NAME */
	struct docker_ctr ctr;    /* that container on the daemon the gateway lives on: what
	                           * every call about it names (docker/target.h); from a
	                           * lookup (gateway_load_files() leaves ctr.on NULL) */
	struct docker_target *daemon; /* that daemon when it is not the process's target
	                               * (owned; ctr.on), else NULL */
	char *state_dir;          /* $XDG_CONFIG_HOME/openshell/gateways/NAME */
	struct gw_container c;    /* c.exists == 0 when there is no container */
	enum mig_strategy mig;    /* the container's MIG strategy (none without one) */
	enum gpu_allocation allocation; /* and its GPU allocation (the device plugin without one) */
	int has_gpus;             /* a container that asks for GPUs, whose selection reads: */
	struct gpus gpus;         /* that selection, read once (gateway_read_container) */
	char *gpus_error;         /* or why it does not read */
	struct gw_metadata md;    /* valid when has_metadata */
	int has_metadata;
	char *metadata_error;     /* why metadata.json was not usable, or NULL */
	char *daemon_error;       /* why its daemon could not be asked (gateway/state/roster.h):
	                           * its state is unknown; or NULL */
};

/* What gw->c says, read once into typed values: the MIG strategy and
 * the GPU selection. */
void gateway_read_container(struct gateway *gw);

/* That selection as --gpus takes it ("2", "0,2") when it is not all of
 * the host's GPUs, the usual case that says nothing more; else NULL
 * (owned). */
char *gateway_gpus_named(const struct gateway *gw);

/* Fails with OS_EXIT_USAGE for a bad name, OS_EXIT_NOTFOUND when neither
 * container nor metadata exists, OS_EXIT_CONFLICT when the container of
 * that name is not openshell's. */
int gateway_lookup(const char *name, struct gateway *gw, os_error *err);

/* gateway_lookup() in its two halves, for a caller with work to start
 * between them: the name, the files and the daemon followed; then the
 * container. Each frees GW when it fails. */
int gateway_lookup_files(const char *name, struct gateway *gw, os_error *err);
int gateway_lookup_container(struct gateway *gw, os_error *err);
void gateway_free(struct gateway *gw);

/* What gateway NAME's files say, without asking Docker: gw's name,
 * container, state_dir and metadata (no container: c.exists == 0); its
 * daemon not followed (ctr.on NULL). */
int gateway_load_files(const char *name, struct gateway *gw, os_error *err);

/* The daemon gateway NAME was made on, as its metadata records it
 * (docker_daemon_follow()): *ON a copy for its calls to name
 * (docker_target_destroy()), or NULL where the process's target serves. */
int gateway_follow_daemon(const char *name, struct docker_target **on, os_error *err);

/* The same, then `docker inspect` its container there into c; a daemon
 * that is gone gets the fix that forgets the gateway. */
int gateway_inspect_followed(const char *name, struct gw_container *c, struct docker_target **on, os_error *err);

/* gateway_lookup() for a command's top level: returns 0, or reports the
 * error on stderr and returns the exit status to end with. */
int gateway_lookup_or_report(const char *name, struct gateway *gw);

/* Does the gateway ask for GPUs? The container says; without one, the
 * metadata does. */
int gateway_wants_gpu(const struct gateway *gw);

/* 0 when the container runs; else fails with "gateway 'NAME' is not
 * running (STATE); start it with 'openshell gateway start --name NAME'",
 * naming --gpu when the gateway asks for GPUs. */
int gateway_require_running(const struct gateway *gw, os_error *err);

/* How long stop and destroy wait for another openshell (a `start`, say)
 * to finish with the same gateway. */
#define GATEWAY_LOCK_WAIT_MS 60000

/* Check the name, then take the gateway's lock (base/files.h), waiting at
 * most GATEWAY_LOCK_WAIT_MS. Returns the lock's fd for gateway_unlock(). */
int gateway_lock_for_change(const char *name, os_error *err);

#endif
