/* gateway/start/start_ready.c - a start's waits and files (see gateway/start/start_ready.h). */
#include "config.h"

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "gateway/start/files.h"
#include "gateway/start/start_ready.h"
#include "kube/kubeconfig.h"
#include "kube/objects.h"

struct ready {
	const struct deploy_plan *p;
	struct wait_ctx *w;
	struct start_result *r;
};

/* K3S_YAML: its text as the GPU wait read it, or NULL to read it. */
static int save_files(const struct ready *rd, const char *k3s_yaml, os_error *err)
{
	if ((k3s_yaml ? gateway_write_files_from(rd->p, rd->w->ctr.name, k3s_yaml, rd->r, err)
		      : gateway_write_files(rd->p, rd->w, rd->r, err)) == 0)
		return 0;
	/* A container that restarted as its kubeconfig was read ("is
	 * restarting") is that news, not a failure to save. */
	if (err->code == OS_EXIT_TIMEOUT || signals_pending() || wait_container_news(rd->w, err))
		return -1;
	return os_error_wrap(err, "gateway '%s' runs, but its files were not saved (fix that, then rerun 'openshell gateway start --name %s')",
			     rd->p->req->name, rd->p->req->name);
}

/* A wait failed: the gateway is kept for inspection, so its files are
 * saved all the same, a failure to only a warning. Returns -1. */
static int save_anyway(const struct ready *rd)
{
	os_error e = { 0 };

	signals_shield();
	if (save_files(rd, NULL, &e) < 0)
		log_warn("%s", e.msg);
	signals_unshield();
	os_error_clear(&e);
	return -1;
}

static int kubeconfig_got(void *ctx, const char *text, os_error *err)
{
	return save_files(ctx, text, err);
}

/* The chart's sharing first: a change makes the plugin register another
 * count. Then the GPU wait, which hands over k3s.yaml. */
static int wait_gpus_saving(const struct ready *rd, os_error *err)
{
	const struct deploy_plan *p = rd->p;
	struct sharing_want want;   /* what a --gpu-sharing change makes */
	cleanup_free char *node = gateway_hostname(p->req->name);
	struct wait_file kc = { .path = K3S_KUBECONFIG_PATH, .got = kubeconfig_got, .ctx = (void *)rd };
	int rc = sharing_configure(&rd->w->ctr, sharing_asked(&p->req->sharing), p->mig, DEVICE_PLUGIN_RELEASE,
				   &rd->w->by, &want, err);

	want.node = node;
	if (rc == 0)
		rc = wait_gpus(rd->w, &want, &kc, &rd->r->gpus, &rd->r->mig, err);
	if (rc < 0 && !kc.done)
		save_anyway(rd);
	return rc;
}

/* Under DRA: the driver's sharing first, then the GPUs the gateway's
 * container sees, those its node's kubelet plugin is to publish (whole,
 * or a MIG-enabled one as its MIG devices; one with none, not at all).
 * Then the wait, which hands over k3s.yaml. */
static int wait_dra_saving(const struct ready *rd, os_error *err)
{
	const struct sharing *s = sharing_asked(&rd->p->req->sharing);
	cleanup_free char *node = gateway_hostname(rd->p->req->name);
	struct wait_file kc = { .path = K3S_KUBECONFIG_PATH, .got = kubeconfig_got, .ctx = (void *)rd };
	cleanup_free char *what = xasprintf("gateway '%s'", rd->p->req->name);
	struct strv uuids = { 0 };
	int rc = sharing_configure_dra(&rd->w->ctr, s, DRA_DRIVER_RELEASE, &rd->w->by, err);

	if (rc == 0)
		rc = container_dra_gpus(&rd->w->ctr, what, deadline_call_ms(&rd->w->by), &uuids, err);
	if (rc == 0)
		rc = wait_dra_gpus(rd->w, node, &uuids, s ? sharing_dra_gate(s) : NULL, &kc, &rd->r->gpus, err);
	if (rc < 0 && !kc.done)
		save_anyway(rd);
	strv_free(&uuids);
	return rc;
}

int start_ready(const struct deploy_plan *p, struct wait_ctx *w, int new_volume, struct start_result *r,
		os_error *err)
{
	const struct ready rd = { .p = p, .w = w, .r = r };
	const struct gpu_allocator *const every[] = { gpu_allocator(GPU_ALLOCATION_DEVICE_PLUGIN),
						      gpu_allocator(GPU_ALLOCATION_DRA) };
	const struct gpu_allocator *other = gpu_allocator(p->allocation == GPU_ALLOCATION_DRA ? GPU_ALLOCATION_DEVICE_PLUGIN
												 : GPU_ALLOCATION_DRA);
	/* What an earlier run left on a kept volume must go, through the API:
	 * without --gpu every GPU chart; with it, in a container made on that
	 * volume, the other allocation's (an existing container has this one:
	 * start_gpus_adopt_mode). A GPU container made there waits for the
	 * API even with --no-wait: no later start of it would remove them (a
	 * start without --gpu removes them whenever it waits). */
	int clean = !new_volume && (p->req->gpu ? w->fresh : 1);
	int forced = p->req->no_wait && clean && p->req->gpu;

	if (p->req->no_wait && !forced)
		return wait_kubeconfig_written(w, err) < 0 ? -1 : save_files(&rd, NULL, err);
	if (wait_k3s_api(w, err) < 0)
		return forced ? save_anyway(&rd) : -1;
	if (clean && wait_gpu_release_removed(w, p->req->gpu ? &other : every, p->req->gpu ? 1 : 2, err) < 0)
		return save_anyway(&rd);
	if (!p->req->gpu || p->req->no_wait)
		return save_files(&rd, NULL, err);
	return p->allocation == GPU_ALLOCATION_DRA ? wait_dra_saving(&rd, err) : wait_gpus_saving(&rd, err);
}
