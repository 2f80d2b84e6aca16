/* gateway/start_gpus.c - a new gateway's GPU decisions (see gateway/start_gpus.h). */
#include "config.h"

#include "gateway/gpus.h"
#include "gateway/sharing.h"
#include "gateway/start_gpus.h"

/* The host's GPUs, looked at only when a choice needs them: a selection
 * other than all must be there (its UUIDs go to the entrypoint), and MPS
 * must be able to share them (no MIG device under the single strategy,
 * no more clients than a GPU's compute capability allows). */
static int check_host_gpus(struct deploy_opts *o, int timeout_ms, os_error *err)
{
	struct host_gpus h = { 0 };
	int mps = o->sharing_set && sharing_needs_gpus(&o->sharing, o->mig), rc;

	if (o->gpus.kind == GPUS_ALL && !mps)
		return 0;
	rc = gpus_check_host(o, timeout_ms, &h, err);
	if (rc == 0 && mps)
		rc = sharing_check_gpus(&o->sharing, o->mig, &h, o->gpus.kind == GPUS_ALL ? NULL : &o->gpu_uuids, err);
	host_gpus_free(&h);
	return rc;
}

int start_gpus_check(struct deploy_opts *o, const struct daemon_gpus *d, int timeout_ms, os_error *err)
{
	if (!o->gpu || check_host_gpus(o, timeout_ms, err) < 0)
		return o->gpu ? -1 : 0;
	/* With CDI the selection's device names must be the daemon's; after the
	 * host's GPUs, which name what the host lacks better. */
	return gpu_mode_check_names(o, d, err);
}
