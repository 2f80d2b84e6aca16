/* gateway/wait_gpus.c - the wait for allocatable GPUs (see gateway/wait.h).
 *
 * The facts come in order (the nvidia runtime in containerd, the device
 * plugin's DaemonSet and pod, the node's nvidia.com/gpu); one `kubectl
 * get` reads them all, and a `kubectl wait` for the next one to come
 * replaces a poll, with a slow look at all of them on its ticks so that a
 * plugin that can never start is reported without waiting for it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/mig.h"
#include "gateway/plugin_faults.h"
#include "gateway/sharing.h"
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubeconfig.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define GPU_TICK_FIRST_MS 3000
#define GPU_TICK_MAX_MS 4000
#define FACT_WAIT_MAX_MS 60000
#define KUBE_JSONPATH_GPU "nvidia\\.com/gpu"

struct gpu_state {
	int runtime_class;        /* RuntimeClass nvidia exists */
	struct runtime_fact rt;   /* containerd's nvidia runtime, once k3s wrote its config */
	int plugin_found;
	struct ds_status ds;
	struct ds_status mps;     /* the chart's MPS control daemon (all 0 without it) */
	int mps_found;            /* and whether the chart has rendered it */
	int nodes;                /* how many the cluster has */
	long long allocatable;    /* -1: absent */
	long long capacity;       /* the same, healthy or not */
	long long mig;            /* MIG devices allocatable as resources of their own (mixed) */
	long long want;           /* the allocatable sharing makes, or 0: any */
	int mps_sharing;          /* that sharing is MPS: its control daemon comes first */
	char *heartbeat;          /* the oldest node's Ready heartbeat (RFC 3339), or NULL */
	int stale;                /* the facts predate the container's last start */
	char *api_error;          /* the last transient kubectl error, or NULL */
};

static int gpu_ready(const struct gpu_state *g)
{
	return g->runtime_class && g->rt.nvidia && g->plugin_found && g->ds.desired > 0 &&
	       g->ds.ready == g->ds.desired && (g->allocatable > 0 || (g->mig > 0 && !g->want)) &&
	       (!g->want || g->allocatable == g->want);
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
	g->mig = mig_resources(list, NULL);
}

/* Until k3s has written its containerd config, that is read beside the
 * cluster's objects, not before them. */
static int read_gpu_state(const struct wait_ctx *w, struct gpu_state *g, os_error *err)
{
	struct run_child *rt = NULL, *get;
	cJSON *list = NULL;
	int rc;

	if (!g->rt.config_read && !(rt = containerd_nvidia_runtime_start(w->container, wait_call_budget_ms(w), err)))
		return -1;
	if (!(get = kube_get_start(w->container, GPU_STATE_TYPES, NULL, NULL, 1, wait_call_budget_ms(w), err))) {
		docker_drop(&rt);
		return -1;
	}
	rc = rt ? containerd_nvidia_runtime_finish(rt, &g->rt, err) : 0;
	if (rc < 0) {
		docker_drop(&get);
		return -1;
	}
	if (kube_get_finish(get, GPU_STATE_TYPES, &list, err) < 0)
		return -1;
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

static char *gpu_missing(const struct gpu_state *g)
{
	char count[32];

	if (g->allocatable < 0)
		snprintf(count, sizeof(count), "absent");
	else
		snprintf(count, sizeof(count), "%lld", g->allocatable);
	if (!g->runtime_class)
		return xstrdup("RuntimeClass 'nvidia' does not exist (was k3s started with --disable=runtimes?)");
	if (!g->rt.config_read)
		return xstrdup("k3s has not written its containerd config yet");
	if (!g->plugin_found)
		return xstrdup("the nvidia-device-plugin DaemonSet does not exist");
	if (g->ds.desired == 0)
		return xstrdup("the nvidia-device-plugin DaemonSet schedules no pod (desired 0: check its node affinity)");
	if (g->ds.ready < g->ds.desired)
		return xasprintf("the nvidia-device-plugin DaemonSet has %lld of %lld pods ready",
				 g->ds.ready, g->ds.desired);
	/* MPS: the plugin registers nothing until its control daemon is up. */
	if (g->mps_sharing && g->allocatable != g->want) {
		if (!g->mps_found)
			return xasprintf("the node's allocatable nvidia.com/gpu is %s, not the %lld that --gpu-sharing makes: the chart has not rendered its MPS control daemon yet (see the Helm job's logs below)",
					 count, g->want);
		if (g->mps.desired == 0)
			return xasprintf("the node's allocatable nvidia.com/gpu is %s, not the %lld that --gpu-sharing makes: the chart's MPS control daemon schedules no pod, so the node lacks the label " MPS_NODE_LABEL "=true (rerun with --gpu-sharing mps:N to label it again)",
					 count, g->want);
		if (g->mps.ready < g->mps.desired)
			return xasprintf("the node's allocatable nvidia.com/gpu is %s, not the %lld that --gpu-sharing makes: the MPS control daemon has %lld of %lld pods ready, and the plugin registers the replicas once it is up (its log is below)",
					 count, g->want, g->mps.ready, g->mps.desired);
	}
	if (g->allocatable < 0)
		return xstrdup("the node has no allocatable nvidia.com/gpu: the device plugin runs but registered no GPU (its log says \"No devices found\" when the container has no /dev/nvidia*: was it started with the host's GPUs?)");
	if (g->stale)
		return xasprintf("the node's status (posted %s) predates the container's last start: its kubelet has not posted it since",
				 g->heartbeat ? g->heartbeat : "?");
	cleanup_free char *sick = kube_gpus_unhealthy(g->allocatable, g->capacity);
	if (g->want && g->allocatable != g->want)
		return xasprintf("the node's allocatable nvidia.com/gpu is %lld, not the %lld that --gpu-sharing makes (%s)",
				 g->allocatable, g->want, sick ? sick : "has the Helm job upgraded the device plugin?");
	return xasprintf("the node's allocatable nvidia.com/gpu is 0: %s", kube_gpus_zero_why(g->capacity));
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

/* What keeps the device plugin from running, when the cluster can say:
 * the Helm install job's error, or a pod that cannot start (its image
 * cannot be pulled, its sandbox not made). NULL when nothing says more
 * than gpu_missing(). */
static char *gpu_cause(const struct wait_ctx *w, const struct gpu_state *g, const char *helm_logs, int t)
{
	cleanup_free char *line = g->plugin_found ? NULL : kube_last_error_line(helm_logs);
	const char *ns = g->plugin_found ? DEVICE_PLUGIN_NAMESPACE : "kube-system";
	os_error err = { 0 };
	cJSON *pods = NULL;
	char *cause = NULL;

	/* Helm's own error says more than its pod's crash loop. */
	if (line)
		return xasprintf("its Helm install fails: %s", line);
	if (kube_get(w->container, "pods", NULL, ns, 0, t, &pods, &err) > 0)
		cause = g->plugin_found ? kube_pods_stuck(pods, DEVICE_PLUGIN_LABEL, DEVICE_PLUGIN_NAME)
					: kube_pods_stuck(pods, "job-name", DEVICE_PLUGIN_HELM_JOB);
	/* A pod still ContainerCreating: the kubelet's warning (a sandbox). */
	if (!cause && g->plugin_found && pods)
		cause = plugin_pod_warning(w, pods, t);
	cJSON_Delete(pods);
	os_error_clear(&err);
	if (!cause && !g->plugin_found)
		cause = xstrdup("its Helm install has not finished (see the job's logs below)");
	return cause;
}

static int gpu_timeout(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	cleanup_free char *what = gpu_missing(g);
	cleanup_free char *dur = clock_format_ms(w->timeout_ms);
	cleanup_free char *plugin = NULL, *mps = NULL, *helm = NULL, *detail = NULL, *cause = NULL;
	/* The deadline has passed; the diagnostics get a budget of their own. */
	int t = cleanup_budget_ms();

	cJSON *pods = NULL;   /* read once for the plugin's and the MPS daemon's logs */
	os_error e = { 0 };

	kube_get(w->container, "pods", NULL, DEVICE_PLUGIN_NAMESPACE, 0, t, &pods, &e);
	os_error_clear(&e);
	plugin = kube_container_logs_tail(w->container, DEVICE_PLUGIN_NAMESPACE, pods, DEVICE_PLUGIN_CONTAINER,
					  WAIT_LOG_TAIL_LINES, t);
	mps = g->mps.desired > 0 ? kube_container_logs_tail(w->container, DEVICE_PLUGIN_NAMESPACE, pods, MPS_DAEMON_CONTAINER,
							    WAIT_LOG_TAIL_LINES, t)
				 : xstrdup("");
	cJSON_Delete(pods);
	helm = kube_logs_tail(w->container, "kube-system", "job-name=" DEVICE_PLUGIN_HELM_JOB, WAIT_LOG_TAIL_LINES, t);
	cause = gpu_cause(w, g, helm, t);
	detail = xasprintf("device plugin logs:\n%s\n%s%s%s%s logs:\n%s%s%s", *plugin ? plugin : "(none)\n",
			   *mps ? "MPS control daemon logs:\n" : "", mps, *mps ? "\n" : "",
			   DEVICE_PLUGIN_HELM_JOB, *helm ? helm : "(none)\n",
			   g->api_error ? "\nlast error from the API:\n" : "", g->api_error ? g->api_error : "");
	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for GPUs: %s%s%s; the gateway was kept for inspection", dur, what,
		     cause ? ": " : "", cause ? cause : "");
	os_error_set_detail(err, detail);
	return -1;
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
static int next_fact(const struct gpu_state *g, struct strv *args, int *of_nodes)
{
	*of_nodes = g->nodes > 0 && (g->want ? g->allocatable != g->want : g->allocatable < 0);
	if (g->nodes > 0 && g->allocatable < 0 && !g->want) {
		/* Needs the DaemonSet, its pod and the plugin's registration. */
		strv_pushv(args, (const char *const[]){ "--for=jsonpath={.status.allocatable." KUBE_JSONPATH_GPU "}",
						  "nodes", "--all", "--output=json", NULL });
	} else if (g->nodes > 0 && g->want && g->allocatable != g->want) {
		/* A sharing change: the upgraded plugin registers the replicas. */
		strv_pushf(args, "--for=jsonpath={.status.allocatable." KUBE_JSONPATH_GPU "}=%lld", g->want);
		strv_pushv(args, (const char *const[]){ "nodes", "--all", "--output=json", NULL });
	} else if (g->plugin_found && g->ds.desired > 0 && g->ds.ready < g->ds.desired) {
		strv_pushf(args, "--for=jsonpath={.status.numberReady}=%lld", g->ds.desired);
		strv_pushv(args, (const char *const[]){ "daemonset/" DEVICE_PLUGIN_RELEASE, "--namespace",
						  DEVICE_PLUGIN_NAMESPACE, NULL });
	}
	return args->n > 0;
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
	struct strv args = { 0 };
	int met, of_nodes;

	if (!(*waited = next_fact(g, &args, &of_nodes)))
		return 0;
	met = kube_wait(w->container, strv_argv(&args), &ko, err);
	strv_free(&args);
	/* The node's GPUs were the last fact to come: no look after the wait. */
	if (met > 0 && t.verdict == 0 && of_nodes && take_waited_node(out, g) && gpu_ready(g)) {
		phases_mark(w->phases, PHASE_GPUS);
		*ready = 1;
		return 1;
	}
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

int wait_gpus(const struct wait_ctx *w, const struct sharing_want *want, long long *gpus, long long *mig, os_error *err)
{
	struct backoff b = { 0 };
	struct gpu_state g = { .allocatable = -1, .want = want->allocatable, .mps_sharing = want->mps };
	/* The API just answered: the container is alive. */
	int rc = -1, ready = 0, look_alive = 0;

	log_step("waiting for allocatable nvidia.com/gpu");
	for (;;) {
		int look, met, waited;

		/* A kubectl wait met says nothing of the container: it is
		 * looked at again when one was not, and once at the end. */
		if (look_alive || ready) {
			struct gw_container c;
			int alive = wait_check_alive(w, &c, err);

			/* Facts from before the container's last start (a restart
			 * keeps the node object) count only once its kubelet has
			 * posted the node's status again. */
			g.stale = alive == 0 && ready && kube_status_predates(g.heartbeat, c.started_at);
			container_free(&c);
			if (alive < 0)
				goto fail;
			if (ready && !g.stale)
				break;
			if (g.stale && !backoff_wait(&b, w->deadline)) {
				gpu_timeout(w, &g, err);
				goto out;
			}
			ready = 0;
		}
		if ((look = gpu_look(w, &g, err)) < 0)
			goto fail;
		if ((ready = look > 0))
			continue;
		look_alive = look_alive || g.stale;
		if ((met = await_fact(w, &g, &ready, &waited, err)) < 0)
			goto fail;
		if (met || ready)
			continue;
		look_alive = waited || g.stale;   /* a wait that failed may mean a stopped container */
		if (!backoff_wait(&b, w->deadline)) {
			gpu_timeout(w, &g, err);
			goto out;
		}
	}
	*gpus = g.allocatable;
	*mig = g.mig;
	log_step_done(1);
	{
		cleanup_free char *sick = kube_gpus_unhealthy(g.allocatable, g.capacity);
		if (sick)   /* ready on the healthy ones, but the user must know */
			log_warn("%s; 'openshell gateway verify' fails while any is", sick);
	}
	rc = 0;
	goto out;
fail:
	if (deadline_hit(w, err))
		gpu_timeout(w, &g, err);
out:
	gpu_state_free(&g);
	return rc;
}
