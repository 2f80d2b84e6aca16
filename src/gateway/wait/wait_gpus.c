/* gateway/wait/wait_gpus.c - the wait for allocatable GPUs (see gateway/wait/wait.h).
 *
 * The facts come in order (the nvidia runtime in containerd, the device
 * plugin's DaemonSet and pod, the node's nvidia.com/gpu), and are seen as
 * they come: two kubectl watches carry them (kubectl watches one type a
 * call), the nodes, whose exec reads containerd's config first, and the
 * plugin's DaemonSets; under DRA the DRA driver's DaemonSets and, a third
 * watch, the ResourceSlices that publish the node's GPUs in place of its
 * nvidia.com/gpu; the container's log, followed since the API wait,
 * ends if the container stops. The change that makes the last fact hold
 * is the answer, with no call after it. A slow tick beside them looks at
 * what no watch shows (the plugin's pods while they are not ready, a
 * config k3s had not written yet), so that a plugin that can never start
 * is reported without waiting for it.
 */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/wait/gpu_state.h"
#include "gateway/wait/plugin_faults.h"
#include "gateway/wait/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"
#include "kube/watch.h"

#define GPU_TICK_FIRST_MS 3000
#define GPU_TICK_MAX_MS 4000
/* A watch's own limit, which also bounds its kubectl in the container
 * once openshell has stopped listening; then it starts again. */
#define WATCH_MAX_MS 60000

struct gpu_wait {
	struct wait_ctx *w;
	struct gpu_state *g;
	struct kube_watch nodes, sets;   /* sets: with FILE, read first */
	struct kube_watch slices;        /* DRA's ResourceSlices (resource NULL: not watched) */
	struct wait_file *file;
	struct run_child *rt_call;   /* a read of containerd's config the watch could not make */
	int rt_asked;                /* made once the plugin's DaemonSet is there */
	struct backoff b;
	long long next_tick;
	int delay_ms;
};

/* The facts as the watches last said them. */
static void read_facts(struct gpu_wait *gw)
{
	struct gpu_state *g = gw->g;

	if (gw->nodes.file_text && !g->rt.config_read)
		containerd_parse_nvidia(gw->nodes.file_text, &g->rt);
	gpu_state_read_nodes(g, gw->nodes.list);
	gpu_state_read_sets(g, gw->sets.list);
	if (gw->slices.resource && gw->slices.list)
		gpu_state_read_slices(g, gw->slices.list);
	/* In their order, so that the phases' times add up: two watches may
	 * tell of two facts in either order. DRA's pods need no RuntimeClass. */
	if (!g->rt.nvidia || (g->runtime_class == 0 && !gpu_state_dra(g)))
		return;
	phases_mark(gw->w->phases, PHASE_RUNTIME);
	if (!g->plugin_found || g->ds.desired == 0 || g->ds.ready < g->ds.desired)
		return;
	phases_mark(gw->w->phases, PHASE_PLUGIN);
	if (gpu_state_dra(g) ? gpu_state_slices_met(g)
			     : (g->allocatable > 0 || g->mig > 0) && g->mig_capacity >= g->want_mig)
		phases_mark(gw->w->phases, PHASE_GPUS);
}

/* A cluster image without the NVIDIA runtime can never run the plugin: say
 * so as soon as k3s has written its containerd config. */
static int runtime_missing(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	if (!g->rt.config_read || g->rt.nvidia)
		return 0;
	return os_error_set(err, OS_EXIT_FAILURE,
			    "k3s configured no nvidia runtime in containerd (%s has none), so no GPU pod can start in gateway container %s: its image lacks the NVIDIA Container Toolkit's nvidia-container-runtime; build one with it ('openshell image build') or name one with --image, then rerun with --recreate",
			    K3S_CONTAINERD_CONFIG, w->ctr.name);
}

/* While the plugin's pods are not ready: the kubelet's and the plugin's
 * own verdicts, from one look at its pods. Before its DaemonSet exists
 * under DRA, where k3s runs every pod on the nvidia runtime, the chart's
 * Helm job may be what a broken runtime cannot start: its namespace's. */
static int plugin_broken(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	const char *ns = g->plugin_found ? gpu_state_by(g)->ns : "kube-system";
	os_error e = { 0 };
	cJSON *pods = NULL;
	int rc = 0;

	if (g->plugin_found ? g->ds.desired == 0 || g->ds.ready == g->ds.desired : !gpu_state_dra(g))
		return 0;
	if (kube_get(&w->ctr, "pods", NULL, ns, 0, deadline_call_ms(&w->by), &pods, &e) > 0)
		rc = g->plugin_found ? plugin_faults_judge(w, gpu_state_by(g), pods, err)
				     : plugin_runtime_judge(w, ns, pods, err);
	cJSON_Delete(pods);
	os_error_clear(&e);
	return rc;
}

/* A kubectl that failed (the API restarting, a 5xx, a request timeout) is
 * tried again until the deadline BY; only a lost daemon or an interrupt
 * ends the wait. Keeps the message for the timeout's report: the API's
 * own, not that of a last call the deadline cut short, which says
 * nothing of the API. */
static int transient(const struct deadline *by, struct gpu_state *g, os_error *err)
{
	if (err->code != OS_EXIT_FAILURE && err->code != OS_EXIT_TIMEOUT)
		return 0;
	log_verbose("will retry: %s", err->msg ? err->msg : "?");
	if (!g->api_error || !deadline_cut(by, err)) {
		free(g->api_error);
		g->api_error = xstrdup(err->msg ? err->msg : "?");
	}
	os_error_clear(err);
	return 1;
}

/* The tick: what no watch shows. 0, or -1 with a verdict in err. */
static int gpu_tick(struct gpu_wait *gw, os_error *err)
{
	struct gpu_state *g = gw->g;
	os_error e = { 0 };

	if (!g->rt.config_read && !gw->rt_call) {
		runtime_fact_free(&g->rt);
		if (containerd_nvidia_runtime(&gw->w->ctr, deadline_call_ms(&gw->w->by), &g->rt, &e) < 0)
			transient(&gw->w->by, g, &e);
	}
	os_error_clear(&e);
	if (runtime_missing(gw->w, g, err) < 0 || plugin_broken(gw->w, g, err) < 0)
		return -1;
	gw->next_tick = clock_ms() + wait_next_delay(&gw->delay_ms, GPU_TICK_MAX_MS);
	return 0;
}

/* A watch's limit: the wait's deadline, capped at WATCH_MAX_MS. */
static struct deadline watch_by(const struct gpu_wait *gw)
{
	return deadline_capped(&gw->w->by, WATCH_MAX_MS);
}

static int start_watch(struct gpu_wait *gw, struct kube_watch *kw, os_error *err)
{
	struct deadline by = watch_by(gw);

	/* The config is read with the nodes until it has been, the caller's
	 * file with the DaemonSets. */
	if (kw == &gw->nodes)
		kw->file = gw->g->rt.config_read ? NULL : K3S_CONTAINERD_CONFIG;
	else if (kw == &gw->sets)
		kw->file = gw->file && !gw->file->done ? gw->file->path : NULL;
	return kube_watch_start(kw, &gw->w->ctr, deadline_call_ms(&by), err);
}

/* A watch ended: started again, at once after an end of kubectl's own
 * (its request timeout), after a step of the backoff after a failure. */
static int watch_ended(struct gpu_wait *gw, struct kube_watch *kw, os_error *err)
{
	struct deadline by = watch_by(gw);

	if (kube_watch_end(kw, err) == 0) {
		gw->g->seen = 1;   /* it listed, and watched to its end */
	} else if (deadline_cut(&by, err)) {
		os_error_clear(err);   /* the wait's timeout, reported with its diagnostics */
		return -1;
	} else if (!transient(&by, gw->g, err)) {
		return -1;
	} else if (!wait_follower(gw->w) && wait_container_news(gw->w, err)) {
		return -1;   /* with no log followed, a look says whether the container stopped */
	} else if (!backoff_wait(&gw->b, gw->w->by.at_ms)) {
		return -1;   /* out of time, err clear: the wait's timeout */
	}
	return start_watch(gw, kw, err);
}

/* Containerd's config, read beside the watches once the plugin's
 * DaemonSet is there (a pod of k3s's ran: containerd, and so its config,
 * is up) when the nodes' exec found none yet. */
static void ask_runtime(struct gpu_wait *gw)
{
	os_error e = { 0 };

	if (gw->g->rt.config_read || gw->rt_asked || !gw->g->plugin_found || !gw->nodes.file_read)
		return;
	gw->rt_asked = 1;
	if (!(gw->rt_call = containerd_nvidia_runtime_start(&gw->w->ctr, deadline_call_ms(&gw->w->by), &e)))
		transient(&gw->w->by, gw->g, &e);
	os_error_clear(&e);
}

static void runtime_read(struct gpu_wait *gw)
{
	os_error e = { 0 };

	runtime_fact_free(&gw->g->rt);
	if (containerd_nvidia_runtime_finish(gw->rt_call, &gw->g->rt, &e) < 0)
		transient(&gw->w->by, gw->g, &e);
	gw->rt_call = NULL;
	os_error_clear(&e);
}

/* Every fact holds: so they do if the container still runs and they
 * postdate its start. Its log followed says the first, or an inspect
 * does; a volume this run made, or the start an inspect saw, the second.
 * 1: done; 0: wait on (stale facts); -1: error. */
static int confirm(struct gpu_wait *gw, os_error *err)
{
	struct gpu_state *g = gw->g;
	struct gw_container c;
	int alive;

	if (wait_follower(gw->w) && (gw->w->new_volume || gw->w->started_at)) {
		gpu_state_mark_stale(g, gw->w->new_volume ? NULL : gw->w->started_at);
		return !g->stale;
	}
	alive = wait_check_alive(gw->w, &c, err);
	if (alive == 0 && c.started_at && !gw->w->started_at)
		gw->w->started_at = xstrdup(c.started_at);
	gpu_state_mark_stale(g, alive == 0 ? c.started_at : NULL);
	container_free(&c);
	if (alive < 0)
		return -1;
	/* The kubelet's next post of the node's status is the news. */
	return !g->stale;
}

/* The caller's file, once the DaemonSets' exec has read it. */
static int hand_file(struct gpu_wait *gw, os_error *err)
{
	struct wait_file *f = gw->file;

	if (!f || f->done || !gw->sets.file || !gw->sets.file_read)
		return 0;
	f->done = 1;
	return f->got(f->ctx, gw->sets.file_text, err);
}

/* Serve the log, the watches and the config read until every fact holds. */
static int serve(struct gpu_wait *gw, os_error *err)
{
	for (;;) {
		struct run_child *kids[] = { wait_follower(gw->w), gw->nodes.c, gw->sets.c, gw->rt_call, gw->slices.c };
		int i, ok;

		if (hand_file(gw, err) < 0)
			return -1;
		read_facts(gw);
		if (runtime_missing(gw->w, gw->g, err) < 0)
			return -1;
		if (gpu_state_ready(gw->g) && (!gw->file || gw->file->done) && (ok = confirm(gw, err)) != 0)
			return ok < 0 ? -1 : 0;
		ask_runtime(gw);
		kids[3] = gw->rt_call;
		i = run_wait_until(kids, 5, gw->next_tick);
		if (i == RUN_WAIT_DUE) {
			if (gpu_tick(gw, err) < 0)
				return -1;
		} else if (i == 0 && run_ended(kids[0])) {
			if (wait_follower_ended(gw->w, err) < 0)
				return -1;
		} else if (i == 1 && run_ended(kids[1])) {
			if (watch_ended(gw, &gw->nodes, err) < 0)
				return -1;
		} else if (i == 2 && run_ended(kids[2])) {
			if (watch_ended(gw, &gw->sets, err) < 0)
				return -1;
		} else if (i == 3) {
			runtime_read(gw);
		} else if (i == 4 && run_ended(kids[4])) {
			if (watch_ended(gw, &gw->slices, err) < 0)
				return -1;
		} else if (i < 0) {   /* the watches always run: a bug, not a wait */
			return os_error_set(err, OS_EXIT_FAILURE, "the GPU wait has nothing left to wait on");
		} else if (i > 0) {
			gw->g->seen = 1;   /* an event: a watch has listed */
		}
	}
}

/* The timeout's report names a missing RuntimeClass only when a look
 * says so: the watches do not read them. */
static void look_runtime_class(const struct wait_ctx *w, struct gpu_state *g)
{
	cJSON *rc = NULL;
	os_error e = { 0 };
	int found;

	if (g->runtime_class >= 0 || gpu_state_dra(g))
		return;
	found = kube_get(&w->ctr, "runtimeclass", NVIDIA_RUNTIME_CLASS, NULL, 0, cleanup_budget_ms(), &rc, &e);
	if (found >= 0)
		g->runtime_class = found;
	cJSON_Delete(rc);
	os_error_clear(&e);
}

static void drop_watches(struct gpu_wait *gw)
{
	kube_watch_free(&gw->nodes);
	kube_watch_free(&gw->sets);
	kube_watch_free(&gw->slices);
	docker_drop(&gw->rt_call);
}

/* Start the watches and serve them until every fact of GW's state holds;
 * a timeout says which does not. */
static int run_wait(struct gpu_wait *gw, os_error *err)
{
	if (start_watch(gw, &gw->nodes, err) < 0 || start_watch(gw, &gw->sets, err) < 0 ||
	    (gw->slices.resource && start_watch(gw, &gw->slices, err) < 0) || serve(gw, err) < 0) {
		drop_watches(gw);
		if (!err->msg || wait_cut(gw->w, err)) {
			look_runtime_class(gw->w, gw->g);
			gpu_timeout(gw->w, gw->g, err);
		}
		return -1;
	}
	/* Done: every stream is told at once, then reaped. */
	docker_stop(gw->nodes.c);
	docker_stop(gw->sets.c);
	docker_stop(gw->slices.c);
	docker_stop(gw->rt_call);
	docker_stop(wait_follower(gw->w));
	drop_watches(gw);
	log_step_done(1);
	return 0;
}

int wait_gpus(struct wait_ctx *w, const struct sharing_want *want, struct wait_file *file, long long *gpus,
	      struct strv *mig, os_error *err)
{
	struct gpu_state g = { .allocatable = -1, .runtime_class = -1, .want_set = want->changed,
			       .want = want->allocatable, .mps_sharing = want->mps, .want_mig = want->mig,
			       .want_node = want->node };
	struct gpu_wait gw = { .w = w, .g = &g, .file = file, .nodes = { .resource = "nodes" },
			       .sets = { .resource = "daemonsets", .ns = DEVICE_PLUGIN_NAMESPACE },
			       .next_tick = clock_ms() + GPU_TICK_FIRST_MS, .delay_ms = GPU_TICK_FIRST_MS };
	int rc;

	log_step("waiting for allocatable nvidia.com/gpu");
	if ((rc = run_wait(&gw, err)) == 0) {
		cleanup_free char *sick = kube_gpus_unhealthy(g.allocatable, g.capacity);

		*gpus = g.allocatable;
		*mig = g.migs;   /* moved out */
		g.migs = (struct strv){ 0 };
		if (sick)   /* ready on the healthy ones, but the user must know */
			log_warn("%s; 'openshell gateway verify' fails while any is", sick);
	}
	gpu_state_free(&g);
	return rc;
}

int wait_dra_gpus(struct wait_ctx *w, const char *node, const struct strv *uuids, const char *gate,
		  struct wait_file *file, long long *gpus, os_error *err)
{
	const struct gpu_allocator *by = gpu_allocator(GPU_ALLOCATION_DRA);
	struct gpu_state g = { .by = by, .allocatable = -1, .runtime_class = -1, .want_node = node, .want_uuids = uuids,
			       .want_gate = gate };
	struct gpu_wait gw = { .w = w, .g = &g, .file = file, .nodes = { .resource = "nodes" },
			       .sets = { .resource = "daemonsets", .ns = by->ns },
			       .slices = { .resource = "resourceslices" },
			       .next_tick = clock_ms() + GPU_TICK_FIRST_MS, .delay_ms = GPU_TICK_FIRST_MS };
	int rc;

	log_step("waiting for the node's GPUs in ResourceSlices of " DRA_DRIVER_NAME);
	if ((rc = run_wait(&gw, err)) == 0)
		*gpus = (long long)g.published.n;
	gpu_state_free(&g);
	return rc;
}
