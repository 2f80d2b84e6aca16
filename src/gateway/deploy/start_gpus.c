/* gateway/deploy/start_gpus.c - a new gateway's GPU decisions (see gateway/deploy/start_gpus.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/container.h"
#include "gateway/deploy/image.h"
#include "gateway/deploy/start_gpus.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig_caps.h"
#include "gateway/gpu/sharing.h"
#include "gateway/gpu/wsl2.h"

/* MPS must be able to share the GPUs (no MIG device under the single
 * strategy, no more clients than a GPU's compute capability allows). */
static int mps_needs_gpus(const struct deploy_plan *p)
{
	return sharing_needs_gpus(&p->req->sharing, p->mig);
}

/* A CDI container has no tmpfs of the hook's to say which MIG instances
 * it was given: the entrypoint is told the capabilities a container given
 * the same devices gets. */
static int cdi_mig_caps(struct deploy_plan *p, const char *image, int timeout_ms, os_error *err)
{
	struct run_child *c = mig_caps_probe_start(p->docker_on, image, 1, &p->req->gpus, timeout_ms, err);

	strv_free(&p->gpu_caps);
	if (!c || mig_caps_probe_finish(c, &p->req->gpus, &p->gpu_caps, err) < 0)
		return -1;
	/* None would keep every instance of the GPU: refused, not silent. */
	if (!p->gpu_caps.n) {
		cleanup_free char *sel = gpus_string(&p->req->gpus);
		return os_error_set(err, OS_EXIT_NOGPU,
				    "a container given --gpus %s through CDI gets no MIG capability node (/dev/nvidia-caps), so the gateway could not keep those instances alone; regenerate the CDI spec with '" CDI_SPEC_GENERATE "', or use --gpu-mode legacy",
				    sel);
	}
	return 0;
}

/* The host's GPUs, looked at with a container of IMAGE: a selection other
 * than all must be there (its UUIDs go to the entrypoint), MPS must be
 * able to share them, and on WSL2 NVML must work in a container that got
 * them as the gateway will. */
static int check_host_gpus(struct deploy_plan *p, const struct daemon_gpus *d, const char *image, int timeout_ms,
			   os_error *err)
{
	struct host_gpus h = { 0 };
	int mps = mps_needs_gpus(p);
	int rc = start_gpus_look_host(p, image, timeout_ms, &h, err);

	if (rc < 0 && d->wsl2)
		wsl2_explain_probe(d, err);
	if (rc == 0 && p->cdi && mig_caps_named(&p->req->gpus))
		rc = cdi_mig_caps(p, image, timeout_ms, err);
	if (rc == 0)
		rc = gpu_allocation_check_driver(p->allocation, h.driver_version, p->node, err);
	if (rc == 0 && mps)
		rc = sharing_check_gpus(&p->req->sharing, p->mig, &h, p->req->gpus.kind == GPUS_ALL ? NULL : &p->gpu_uuids, err);
	host_gpus_free(&h);
	return rc;
}

/* Docker 29.2 and later give --gpus through the CDI spec where it has the
 * devices, which on WSL2 can leave NVML out (gateway/gpu/wsl2.h): proven
 * first. DRA's driver needs a host driver new enough, whose version the
 * look reads from the driver's procfs. */
static int look_needed(const struct deploy_plan *p, const struct daemon_gpus *d)
{
	return p->req->gpu && (p->req->gpus.kind != GPUS_ALL || mps_needs_gpus(p) || (d->wsl2 && d->gpus_by_cdi) ||
			       p->allocation == GPU_ALLOCATION_DRA);
}

/* What a look checks: "--gpus 0,2", "--gpu-sharing mps:N", or else (WSL2,
 * Docker 29.2 and later) NVML through Docker's CDI route (owned). */
static char *checked_option(const struct deploy_plan *p)
{
	cleanup_free char *sel = p->req->gpus.kind != GPUS_ALL ? gpus_string(&p->req->gpus) : NULL;
	cleanup_free char *mps = sel || !mps_needs_gpus(p) ? NULL : sharing_string(&p->req->sharing);

	return sel ? xasprintf("--gpus %s", sel)
	       : mps ? xasprintf("--gpu-sharing %s", mps)
	       : p->allocation == GPU_ALLOCATION_DRA ? xstrdup("--gpu-allocation dra (the host's driver version)")
						     : xstrdup("--gpus all (which this Docker gives through the CDI spec)");
}

int start_gpus_precheck(struct deploy_plan *p, const struct daemon_gpus *d, int timeout_ms, int *looked,
			os_error *err)
{
	cleanup_free char *other = NULL;
	cleanup_free char *what = NULL;

	*looked = 0;
	/* --no-build refuses the absent default image at once. */
	if (!look_needed(p, d) || (p->req->no_build && !p->image_named))
		return 0;
	/* With CDI the daemon's device names are the GPUs a container gets:
	 * a selection they refuse needs no container. */
	if (p->cdi && (gpu_mode_check_cdi_gpus(&p->req->gpus, d, err) < 0 || start_gpus_cdi_names(p, d, err) < 0))
		return -1;
	/* MPS's limits are the GPUs' own facts, which only nvidia-smi tells,
	 * and so is the driver's version. */
	if (p->cdi && !mps_needs_gpus(p) && p->allocation != GPU_ALLOCATION_DRA)
		return 0;
	/* The look needs sh and what the toolkit injects, which any cluster
	 * image has: one that is here spares a build or pull that ends in a
	 * refusal. */
	if (image_find_cluster(p->docker_on, timeout_ms, &other, err) < 0)
		return -1;
	if (other) {
		log_verbose("image %s is not here yet: the Docker host's GPUs are looked at with image %s", p->image,
			    other);
		if (check_host_gpus(p, d, other, timeout_ms, err) < 0)
			return -1;
		*looked = 1;
		return 0;
	}
	what = checked_option(p);
	log_info("%s is checked against the Docker host's GPUs once image %s is here (a container of it lists them)",
		 what, p->image);
	return 0;
}

int start_gpus_check(struct deploy_plan *p, const struct daemon_gpus *d, int looked, int timeout_ms, os_error *err)
{
	if (!p->req->gpu)
		return 0;
	if (!looked && look_needed(p, d) && check_host_gpus(p, d, p->image, timeout_ms, err) < 0)
		return -1;
	/* With CDI the selection's device names must be the daemon's; after the
	 * host's GPUs, which name what the host lacks better. */
	return start_gpus_cdi_names(p, d, err);
}

static int refuse_mismatch(const struct deploy_plan *p, const struct gw_container *c, const struct gpus *kept,
			   os_error *err)
{
	cleanup_free char *opt = start_gpus_option(p);
	cleanup_free char *had = kept ? gpus_string(kept) : xstrdup("a selection that does not read");

	if (c->gpu_request && p->req->gpu) {
		cleanup_free char *want = gpus_string(&p->req->gpus);
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with --gpus %s but --gpus %s was asked for; rerun with --recreate to rebuild it with%s (its cluster state is lost)",
				    p->req->name, had, want, opt);
	}
	cleanup_free char *asked = p->req->gpu ? xasprintf("%s was", opt + 1) : xstrdup("no GPUs were");

	return os_error_set(err, OS_EXIT_CONFLICT,
			    "gateway '%s' exists %s GPUs but %s asked for; rerun with --recreate to rebuild it%s%s (its cluster state is lost)",
			    p->req->name, c->gpu_request ? "with" : "without", asked, p->req->gpu ? " with" : "", opt);
}

int start_gpus_adopt(const struct deploy_plan *p, const struct gw_container *c, os_error *err)
{
	struct gpus had = { 0 };
	os_error e = { 0 };
	int read = c->gpu_request && gpus_of_container(c, &had, &e) == 0;
	int same = c->gpu_request == p->req->gpu && (!p->req->gpu || (read && gpus_equal(&had, &p->req->gpus)));
	int rc = same ? 0 : refuse_mismatch(p, c, read ? &had : NULL, err);

	gpus_free(&had);
	os_error_clear(&e);
	return rc;
}

int start_gpus_mode(struct deploy_plan *p, const struct daemon_gpus *d, os_error *err)
{
	enum gpu_mode asked = p->req->gpu_mode, used = GPU_MODE_LEGACY;

	if (!p->req->gpu)
		return 0;
	if (gpu_mode_resolve(asked, d, &used, err) < 0)
		return -1;
	p->cdi = used == GPU_MODE_CDI;
	log_verbose("GPU mode %s%s%s", gpu_mode_name(used),
		    asked != GPU_MODE_AUTO ? " (--gpu-mode)"
		    : p->cdi               ? " (the daemon lists NVIDIA CDI devices)"
		    : d->wsl2 && d->cdi.n  ? " (WSL2: the toolkit's hook gives libdxcore.so, which CDI specs there can miss)"
					   : " (the daemon lists no NVIDIA CDI devices)",
		    !p->cdi && d->gpus_by_cdi ? "; Docker sends --gpus through CDI itself (29.2 and later)" : "");
	return 0;
}

int start_gpus_cdi_names(const struct deploy_plan *p, const struct daemon_gpus *d, os_error *err)
{
	struct strv names = { 0 };
	int rc;

	if (!p->req->gpu || !p->cdi)
		return 0;
	gpu_mode_cdi_devices(&p->req->gpus, &names);
	rc = gpu_mode_cdi_check(&names, d, err);
	strv_free(&names);
	return rc;
}

int start_gpus_adopt_mode(struct deploy_plan *p, const struct gw_container *c, os_error *err)
{
	enum mig_strategy had;
	const char *why;

	if (!p->req->gpu || !c->gpu_request)
		return 0;
	p->cdi = c->gpu_cdi;
	had = mig_strategy_of_env(c->mig_strategy);
	if (p->req->gpu_mode != GPU_MODE_AUTO && (p->req->gpu_mode == GPU_MODE_CDI) != c->gpu_cdi)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with --gpu-mode %s but --gpu-mode %s was asked for; rerun with --recreate to rebuild it (its cluster state is lost)",
				    p->req->name, c->gpu_cdi ? "cdi" : "legacy", gpu_mode_name(p->req->gpu_mode));
	/* The allocation first: under DRA the device plugin's options have no place. */
	if (p->req->allocation != GPU_ALLOCATION_UNSET && p->req->allocation != gpu_allocation_of_env(c->gpu_allocation))
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with --gpu-allocation %s but --gpu-allocation %s was asked for; rerun with --recreate to rebuild it (its cluster state is lost)",
				    p->req->name, gpu_allocation_name(gpu_allocation_of_env(c->gpu_allocation)),
				    gpu_allocation_name(p->req->allocation));
	p->allocation = gpu_allocation_of_env(c->gpu_allocation);
	if (p->allocation == GPU_ALLOCATION_DRA && p->req->mig != MIG_UNSET)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' allocates its GPUs by DRA (--gpu-allocation dra), where --mig-strategy has no place (it configures the device plugin): leave it out, or rebuild the gateway with --recreate --gpu-allocation device-plugin (its cluster state is lost)",
				    p->req->name);
	if ((why = gpu_allocation_sharing_refused(p->allocation, &p->req->sharing)))
		return os_error_set(err, OS_EXIT_CONFLICT, "gateway '%s' allocates its GPUs by %s: %s", p->req->name,
				    gpu_allocation_name(p->allocation), why);
	if (p->req->mig != MIG_UNSET && p->req->mig != had)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with --mig-strategy %s but --mig-strategy %s was asked for; rerun with --recreate to rebuild it (its cluster state is lost)",
				    p->req->name, mig_strategy_name(had), mig_strategy_name(p->req->mig));
	p->mig = had;
	if (mps_with_mixed(&p->req->sharing, had))
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' runs with --mig-strategy mixed, and the device plugin does not share MIG devices by MPS: use --gpu-sharing time-slicing:N, or rebuild it with --recreate and another --mig-strategy (its cluster state is lost)",
				    p->req->name);
	return 0;
}

char *start_gpus_option(const struct deploy_plan *p)
{
	cleanup_free char *sel = p->req->gpu ? gpus_string(&p->req->gpus) : NULL;

	if (!p->req->gpu)
		return xstrdup("");
	return p->req->gpus.kind == GPUS_ALL ? xstrdup(" --gpu") : xasprintf(" --gpus %s", sel);
}

int start_gpus_look_host(struct deploy_plan *p, const char *image, int timeout_ms, struct host_gpus *h, os_error *err)
{
	cleanup_free char *sel = gpus_string(&p->req->gpus);

	log_step("checking the Docker host's GPUs for --gpus %s", sel);
	strv_free(&p->gpu_uuids);
	if (host_gpus_probe(p->docker_on, image, p->cdi, timeout_ms, h, err) < 0 ||
	    (p->req->gpus.kind != GPUS_ALL && gpus_resolve(&p->req->gpus, h, &p->gpu_uuids, err) < 0))
		return -1;
	log_step_done(1);
	return 0;
}

int start_gpus_wsl2(const struct deploy_plan *p, const struct sharing *sharing, const char *joining, enum wsl2_host host,
		    os_error *err)
{
	return wsl2_check(p->req->gpu ? &p->req->gpus : NULL, p->req->gpu_mode == GPU_MODE_CDI, p->mig, sharing,
			  p->allocation == GPU_ALLOCATION_DRA, joining, host, err);
}
