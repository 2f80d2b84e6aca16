/* gateway/wait_gpus.c - the wait for allocatable GPUs (see gateway/wait.h).
 *
 * The facts come in order (the nvidia runtime in containerd, the device
 * plugin's DaemonSet and pod, the node's nvidia.com/gpu); one `kubectl
 * get` reads them all, and a `kubectl wait` for the next one to come
 * replaces a poll, with a slow look at all of them on its ticks so that a
 * plugin that can never start is reported without waiting for it.
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
#include "gateway/gpu_state.h"
#include "gateway/mig.h"
#include "gateway/plugin_faults.h"
#include "gateway/sharing.h"
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define GPU_TICK_FIRST_MS 3000
#define GPU_TICK_MAX_MS 4000
#define FACT_WAIT_MAX_MS 60000
#define KUBE_JSONPATH_GPU "nvidia\\.com/gpu"


static int gpu_ready(const struct gpu_state *g)
{
	return g->runtime_class && g->rt.nvidia && g->plugin_found && g->ds.desired > 0 &&
	       g->ds.ready == g->ds.desired && (g->allocatable > 0 || g->mig > 0) && gpu_sharing_met(g);
}

/* One call for the cluster-wide facts: the node, the DaemonSets and the
 * RuntimeClasses in one List (several reads batched into one exec). */
#define GPU_STATE_TYPES "nodes,daemonsets,runtimeclasses"

/* The nodes' facts, from a List that holds them. */
static void read_node_facts(const cJSON *list, struct gpu_state *g)
{
	g->nodes = kube_count_kind(list, "Node");
	free(g->heartbeat);
	g->heartbeat = kube_nodes_heartbeat(list);
	g->allocatable = kube_nodes_allocatable_gpus(list);
	g->capacity = kube_nodes_capacity_gpus(list);
	strv_free(&g->migs);
	g->mig = mig_resources(list, &g->migs);
}

/* Until k3s has written its containerd config, that is read with the
 * cluster's objects, in the same exec. */
static int read_gpu_state(const struct wait_ctx *w, struct gpu_state *g, os_error *err)
{
	const char *file = g->rt.config_read ? NULL : K3S_CONTAINERD_CONFIG;
	cleanup_free char *config = NULL;
	struct run_child *get;
	cJSON *list = NULL;

	if (!(get = kube_get_start(w->container, file, GPU_STATE_TYPES, NULL, 1, wait_call_budget_ms(w), err)))
		return -1;
	if (kube_get_finish(get, GPU_STATE_TYPES, &list, file ? &config : NULL, err) < 0)
		return -1;
	if (config)
		containerd_parse_nvidia(config, &g->rt);
	g->seen = 1;
	g->runtime_class = kube_find(list, "RuntimeClass", NVIDIA_RUNTIME_CLASS) != NULL;
	const cJSON *ds = kube_find_device_plugin(list);
	g->plugin_found = ds != NULL;
	kube_daemonset_status(ds, &g->ds);
	const cJSON *mps = kube_find(list, "DaemonSet", DEVICE_PLUGIN_RELEASE "-mps-control-daemon");
	g->mps_found = mps != NULL;
	kube_daemonset_status(mps, &g->mps);
	read_node_facts(list, g);
	cJSON_Delete(list);
	return 0;
}

/* The node a met `kubectl wait -o json` printed is the answer to the
 * look that would read it again: its facts replace the old ones. 0 when
 * the output is not exactly one Node (a cluster of several nodes prints
 * one object each), and the look is made. */
static int take_waited_node(const char *out, struct gpu_state *g)
{
	cJSON *node = out && g->nodes == 1 ? cJSON_ParseWithOpts(out, NULL, 1) : NULL;
	cJSON *list = cJSON_CreateObject();
	const char *kind = json_str(node, "kind");
	int took = kind && strcmp(kind, "Node") == 0;

	if (took) {
		cJSON_AddItemToArray(cJSON_AddArrayToObject(list, "items"), node);
		read_node_facts(list, g);
	} else {
		cJSON_Delete(node);
	}
	cJSON_Delete(list);
	return took;
}

/* A cluster image without the NVIDIA runtime can never run the plugin: say
 * so as soon as k3s has written its containerd config. */
static int runtime_missing(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	if (!g->rt.config_read || g->rt.nvidia)
		return 0;
	return os_error_set(err, OS_EXIT_FAILURE,
			    "k3s configured no nvidia runtime in containerd (%s has none), so no GPU pod can start in gateway container %s: its image lacks the NVIDIA Container Toolkit's nvidia-container-runtime; build one with it ('openshell image build') or name one with --image, then rerun with --recreate",
			    K3S_CONTAINERD_CONFIG, w->container);
}

/* While the plugin's pods are not ready: the kubelet's and the plugin's
 * own verdicts, from one look at its pods. */
static int plugin_broken(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	os_error e = { 0 };
	cJSON *pods = NULL;
	int rc = 0;

	if (!g->plugin_found || g->ds.desired == 0 || g->ds.ready == g->ds.desired)
		return 0;
	if (kube_get(w->container, "pods", NULL, DEVICE_PLUGIN_NAMESPACE, 0, wait_call_budget_ms(w), &pods, &e) > 0)
		rc = plugin_faults_judge(w, pods, err);
	cJSON_Delete(pods);
	os_error_clear(&e);
	return rc;
}

/* A kubectl that failed (the API restarting, a 5xx, a request timeout) is
 * tried again until the deadline; only a lost daemon or an interrupt ends
 * the wait. Keeps the message for the timeout's report. */
static int transient(struct gpu_state *g, os_error *err)
{
	if (err->code != OS_EXIT_FAILURE && err->code != OS_EXIT_TIMEOUT)
		return 0;
	free(g->api_error);
	g->api_error = xstrdup(err->msg ? err->msg : "?");
	log_verbose("will retry: %s", g->api_error);
	os_error_clear(err);
	return 1;
}

static void gpu_state_free(struct gpu_state *g)
{
	free(g->heartbeat);
	runtime_fact_free(&g->rt);
	free(g->api_error);
	strv_free(&g->migs);
}

/* One look at every fact: 1 ready, 0 not yet, -1 a verdict (err set). */
static int gpu_look(const struct wait_ctx *w, struct gpu_state *g, os_error *err)
{
	if (read_gpu_state(w, g, err) < 0)
		return transient(g, err) ? 0 : -1;
	if (g->rt.nvidia && g->runtime_class)
		phases_mark(w->phases, PHASE_RUNTIME);
	if (g->plugin_found && g->ds.desired > 0 && g->ds.ready == g->ds.desired)
		phases_mark(w->phases, PHASE_PLUGIN);
	if (g->allocatable > 0 || g->mig > 0)
		phases_mark(w->phases, PHASE_GPUS);
	if (runtime_missing(w, g, err) < 0 || plugin_broken(w, g, err) < 0)
		return -1;
	return gpu_ready(g);
}

struct gpu_watch {
	const struct wait_ctx *w;
	struct gpu_state *g;
	int delay_ms;
	int verdict;              /* of the last tick's look */
	os_error err;             /* with verdict -1 */
};

/* Beside a kubectl wait for the next fact, a slow look at all of them, so
 * that a plugin that can never start is reported without waiting for it. */
static int gpu_tick(void *ctx)
{
	struct gpu_watch *t = ctx;

	t->verdict = gpu_look(t->w, t->g, &t->err);
	return t->verdict != 0 ? 0 : wait_next_delay(&t->delay_ms, GPU_TICK_MAX_MS);
}

/* The kubectl wait for the next fact to come, in the order they come; 0
 * when there is none to wait on: no node yet (`--all` needs one, and
 * --for=create is too new to count on), or a count of 0. */
static int plugin_pending(const struct gpu_state *g)
{
	return g->plugin_found && g->ds.desired > 0 && g->ds.ready < g->ds.desired;
}

static void plugin_fact(const struct gpu_state *g, struct strv *args)
{
	strv_pushf(args, "--for=jsonpath={.status.numberReady}=%lld", g->ds.desired);
	strv_pushv(args, (const char *const[]){ "daemonset/" DEVICE_PLUGIN_RELEASE, "--namespace",
					  DEVICE_PLUGIN_NAMESPACE, NULL });
}

static int next_fact(const struct gpu_state *g, struct strv *args, int *of_nodes)
{
	*of_nodes = g->nodes > 0 && (g->want_set ? !gpu_sharing_met(g) : g->allocatable < 0);
	if (g->nodes > 0 && g->allocatable < 0 && !g->want_set) {
		/* Needs the DaemonSet, its pod and the plugin's registration. */
		strv_pushv(args, (const char *const[]){ "--for=jsonpath={.status.allocatable." KUBE_JSONPATH_GPU "}",
						  "nodes", "--all", "--output=json", NULL });
	} else if (g->nodes > 0 && !gpu_sharing_met(g)) {
		/* A sharing change: the upgraded plugin registers the replicas. */
		strv_pushf(args, "--for=jsonpath={.status.allocatable." KUBE_JSONPATH_GPU "}=%lld", g->want);
		strv_pushv(args, (const char *const[]){ "nodes", "--all", "--output=json", NULL });
	} else if (plugin_pending(g)) {
		plugin_fact(g, args);
	}
	return args->n > 0;
}

/* Beside a wait for the node's GPUs, one for the plugin's DaemonSet when
 * it is not ready yet: the two facts come within moments of each other,
 * and the second wait then ends as its fact comes, where a look after the
 * first would cost a call. NULL when there is none (or it cannot start:
 * the look is made then). */
static struct run_child *start_plugin_wait(const struct wait_ctx *w, const struct gpu_state *g,
					   const struct kube_wait_opts *o)
{
	struct strv args = { 0 };
	struct run_child *c = NULL;
	os_error err = { 0 };

	if (plugin_pending(g)) {
		plugin_fact(g, &args);
		if (!(c = kube_wait_start(w->container, strv_argv(&args), o, &err)))
			log_verbose("%s", err.msg);
	}
	strv_free(&args);
	os_error_clear(&err);
	return c;
}

/* The node's GPUs have come: with the plugin's wait beside it met too,
 * every fact holds without another look. 1: both hold; 0: a look is
 * needed; -1: the deadline passed (err set). */
static int node_answers(const struct wait_ctx *w, struct gpu_state *g, struct run_child **plugin,
			const struct kube_wait_opts *po, const char *out, os_error *err)
{
	int met = 1;

	if (*plugin) {
		met = kube_wait_await(*plugin, po, err);
		*plugin = NULL;
		if (met < 0 && call_cut_by_deadline(err, w->deadline))
			return -1;
		os_error_clear(err);   /* any other failure: the look says */
		if (met > 0)
			g->ds.ready = g->ds.desired;
	}
	return met > 0 && take_waited_node(out, g) && gpu_ready(g);
}

/* Wait for the next fact with kubectl wait, looking at all of them on
 * ticks. 1: met, worth looking again now; 0: not met (*waited says
 * whether a wait ran at all); -1: error. */
static int await_fact(const struct wait_ctx *w, struct gpu_state *g, int *ready, int *waited, os_error *err)
{
	struct gpu_watch t = { .w = w, .g = g, .delay_ms = GPU_TICK_FIRST_MS };
	/* A kubectl wait that openshell stops (a tick's verdict, an interrupt)
	 * runs on in the container until its own --timeout: a minute at most,
	 * then the next round waits again. */
	int most = wait_remaining_ms(w) < FACT_WAIT_MAX_MS ? wait_remaining_ms(w) : FACT_WAIT_MAX_MS;
	cleanup_free char *out = NULL;
	struct kube_wait_opts ko = { .timeout_ms = most, .tick_ms = GPU_TICK_FIRST_MS,
				     .on_tick = gpu_tick, .ctx = &t, .output = &out };
	struct kube_wait_opts po = { .timeout_ms = most, .tick_ms = GPU_TICK_FIRST_MS, .on_tick = gpu_tick, .ctx = &t };
	struct run_child *plugin = NULL;
	struct strv args = { 0 };
	int met, of_nodes, answered = 0;

	if (!(*waited = next_fact(g, &args, &of_nodes)))
		return 0;
	if (of_nodes)
		plugin = start_plugin_wait(w, g, &po);
	met = kube_wait(w->container, strv_argv(&args), &ko, err);
	strv_free(&args);
	/* The node's GPUs were the last fact to come: no look after the wait. */
	if (met > 0 && t.verdict == 0 && of_nodes && (answered = node_answers(w, g, &plugin, &po, out, err)) > 0) {
		phases_mark(w->phases, PHASE_PLUGIN);
		phases_mark(w->phases, PHASE_GPUS);
		*ready = 1;
		return 1;
	}
	if (plugin) {
		os_error e = { 0 };

		kube_wait_finish(plugin, &po, &e);   /* no longer wanted: stopped */
		os_error_clear(&e);
	}
	if (answered < 0)
		return -1;
	/* Its own minute up before the overall deadline: not met, wait again. */
	if (met < 0 && err->code == OS_EXIT_TIMEOUT && !call_cut_by_deadline(err, w->deadline)) {
		os_error_clear(err);
		met = 0;
	}
	if (t.verdict < 0) {
		os_error_clear(err);
		*err = t.err;
		return -1;
	}
	*ready = t.verdict > 0;
	return met;
}

/* Where the GPU wait stands; each step names the next. */
enum gpu_step {
	STEP_LOOK,          /* read every fact */
	STEP_AWAIT,         /* kubectl wait for the next fact to come, looking on ticks */
	STEP_ALIVE,         /* a wait not met may mean a stopped container: look at it first */
	STEP_CONFIRM,       /* the facts hold: so they do if the container runs, and they postdate its start */
	STEP_DONE,
	STEP_FAILED,        /* err set */
	STEP_OUT_OF_TIME,   /* the deadline passed between calls */
};

static enum gpu_step step_look(const struct wait_ctx *w, struct gpu_state *g, os_error *err)
{
	int look = gpu_look(w, g, err);

	return look < 0 ? STEP_FAILED : look > 0 ? STEP_CONFIRM : STEP_AWAIT;
}

/* A kubectl wait met says nothing of the container: it is looked at
 * after one that was not, and once at the end. */
static enum gpu_step step_await(const struct wait_ctx *w, struct gpu_state *g, struct backoff *b, os_error *err)
{
	int ready = 0, waited = 0, met = await_fact(w, g, &ready, &waited, err);

	if (met < 0)
		return STEP_FAILED;
	if (ready)
		return STEP_CONFIRM;
	if (met)
		return STEP_LOOK;
	if (!backoff_wait(b, w->deadline))
		return STEP_OUT_OF_TIME;
	return waited || g->stale ? STEP_ALIVE : STEP_LOOK;
}

/* Facts from before the container's last start (a restart keeps the node
 * object) count only once its kubelet has posted the node's status again. */
static enum gpu_step step_alive(const struct wait_ctx *w, struct gpu_state *g, struct backoff *b, int confirm,
				os_error *err)
{
	struct gw_container c;
	int alive = wait_check_alive(w, &c, err);

	g->stale = alive == 0 && confirm && kube_status_predates(g->heartbeat, c.started_at);
	container_free(&c);
	if (alive < 0)
		return STEP_FAILED;
	if (confirm && !g->stale)
		return STEP_DONE;
	if (g->stale && !backoff_wait(b, w->deadline))
		return STEP_OUT_OF_TIME;
	return STEP_LOOK;
}

static enum gpu_step gpu_step_run(enum gpu_step step, const struct wait_ctx *w, struct gpu_state *g,
				  struct backoff *b, os_error *err)
{
	switch (step) {
	case STEP_LOOK: return step_look(w, g, err);
	case STEP_AWAIT: return step_await(w, g, b, err);
	case STEP_ALIVE: return step_alive(w, g, b, 0, err);
	case STEP_CONFIRM: return step_alive(w, g, b, 1, err);
	default: return step;
	}
}

int wait_gpus(const struct wait_ctx *w, const struct sharing_want *want, long long *gpus, struct strv *mig,
	      os_error *err)
{
	struct backoff b = { 0 };
	struct gpu_state g = { .allocatable = -1, .want_set = want->changed, .want = want->allocatable,
				.mps_sharing = want->mps };
	/* The API just answered: the container is alive. */
	enum gpu_step step = STEP_LOOK;
	int rc = -1;

	log_step("waiting for allocatable nvidia.com/gpu");
	while (step < STEP_DONE)
		step = gpu_step_run(step, w, &g, &b, err);
	if (step == STEP_FAILED) {
		if (deadline_hit(w, err))
			gpu_timeout(w, &g, err);
		goto out;
	}
	if (step == STEP_OUT_OF_TIME) {
		gpu_timeout(w, &g, err);
		goto out;
	}
	*gpus = g.allocatable;
	*mig = g.migs;   /* moved out */
	g.migs = (struct strv){ 0 };
	log_step_done(1);
	{
		cleanup_free char *sick = kube_gpus_unhealthy(g.allocatable, g.capacity);
		if (sick)   /* ready on the healthy ones, but the user must know */
			log_warn("%s; 'openshell gateway verify' fails while any is", sick);
	}
	rc = 0;
out:
	gpu_state_free(&g);
	return rc;
}
