/* gateway/wait.c - readiness waits (see gateway/wait.h). */
#include "config.h"

#include <stdio.h>
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
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubeconfig.h"
#include "kube/kubectl.h"

#define LOG_TAIL_LINES 20

int wait_call_budget_ms(const struct wait_ctx *w)
{
	return call_budget_ms(w->deadline, docker_call_timeout_ms());
}

int cleanup_budget_ms(void)
{
	return docker_call_timeout_ms() < 10000 ? docker_call_timeout_ms() : 10000;
}

static char *docker_logs_tail(const struct wait_ctx *w)
{
	char tail[16];
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *text;

	snprintf(tail, sizeof(tail), "%d", LOG_TAIL_LINES);
	const char *args[] = { "logs", "--tail", tail, w->container, NULL };
	if (docker_run(args, NULL, 0, cleanup_budget_ms(), &res, &err) < 0)
		text = xasprintf("(logs unavailable: %s)", err.msg);
	else
		text = xasprintf("%s%s", res.out, res.err);
	run_result_free(&res);
	os_error_clear(&err);
	return text;
}

/* Fail if the container has stopped or restarted since the waits began. */
static int check_alive(const struct wait_ctx *w, struct gw_container *c, os_error *err)
{
	if (container_inspect(w->container, c, err) < 0)
		return -1;
	if (!c->exists)
		return os_error_set(err, OS_EXIT_FAILURE, "container %s disappeared while starting",
				    w->container);
	if (c->running && !c->restarting && c->restart_count == w->restarts)
		return 0;
	cleanup_free char *logs = docker_logs_tail(w);
	/* A count that went down was reset by a restarted daemon, which
	 * restarted the container too. */
	if (c->restarting || c->restart_count != w->restarts)
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s restarted (last exit code %lld); the gateway was kept for inspection, its last log lines follow",
			     w->container, c->exit_code);
	else
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s is %s (exit code %lld%s%s); the gateway was kept for inspection, its last log lines follow",
			     w->container, c->status, c->exit_code, c->state_error && *c->state_error ? ": " : "",
			     c->state_error ? c->state_error : "");
	os_error_set_detail(err, logs);
	return -1;
}

/* A call cut short because the overall deadline came: not the call's
 * failure but the wait's, which the caller reports with its diagnostics. */
int deadline_hit(const struct wait_ctx *w, os_error *err)
{
	if (err->code != OS_EXIT_TIMEOUT || clock_ms() < w->deadline)
		return 0;
	os_error_clear(err);
	return 1;
}

int wait_timeout_error(const struct wait_ctx *w, const char *what, const char *detail,
		       os_error *err)
{
	cleanup_free char *dur = clock_format_ms(w->timeout_ms);

	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for %s; the gateway was kept for inspection (--timeout sets the limit)",
		     dur, what);
	if (detail)
		os_error_set_detail(err, detail);
	return -1;
}

int wait_k3s_api(const struct wait_ctx *w, os_error *err)
{
	struct backoff b = { 0 };
	cleanup_free char *health = NULL;

	log_step("waiting for the k3s API");
	for (;;) {
		struct gw_container c;
		int ready;

		if (check_alive(w, &c, err) < 0) {
			container_free(&c);
			if (deadline_hit(w, err))
				return wait_timeout_error(w, "the k3s API (kubectl get --raw /readyz)", health, err);
			return -1;
		}
		free(health);
		health = c.health_output ? xstrdup(c.health_output) : NULL;
		container_free(&c);
		if ((ready = kube_readyz(w->container, wait_call_budget_ms(w), err)) < 0 && !deadline_hit(w, err))
			return -1;
		if (ready > 0)
			break;
		if (!backoff_wait(&b, w->deadline))
			return wait_timeout_error(w, "the k3s API (kubectl get --raw /readyz)", health, err);
	}
	log_step_done(1);
	return 0;
}

int wait_running(const struct wait_ctx *w, os_error *err)
{
	struct gw_container c;
	int rc = check_alive(w, &c, err);

	container_free(&c);
	return rc;
}

int wait_kubeconfig_written(const struct wait_ctx *w, os_error *err)
{
	const char *test[] = { "exec", w->container, "test", "-s", K3S_KUBECONFIG_PATH, NULL };
	struct backoff b = { 0 };

	log_step("waiting for the container to run");
	for (;;) {
		struct run_result res = { 0 };
		int rc;

		if (wait_running(w, err) < 0)
			return -1;
		rc = docker_run(test, NULL, 0, wait_call_budget_ms(w), &res, err);
		int written = rc == 0 && res.status == 0;
		run_result_free(&res);
		if (rc < 0 && !deadline_hit(w, err))
			return -1;
		if (written)
			break;
		if (!backoff_wait(&b, w->deadline))
			return wait_timeout_error(w, "the kubeconfig (" K3S_KUBECONFIG_PATH ")", NULL, err);
	}
	log_step_done(1);
	return 0;
}

/* The container's own healthcheck is the judge. */
int wait_healthy(const struct wait_ctx *w, os_error *err)
{
	struct backoff b = { 0 };

	log_step("waiting for the container to be healthy");
	for (;;) {
		struct gw_container c;
		int healthy;

		if (check_alive(w, &c, err) < 0) {
			container_free(&c);
			if (deadline_hit(w, err))
				return wait_timeout_error(w, "the container's healthcheck", NULL, err);
			return -1;
		}
		healthy = !c.health || strcmp(c.health, "healthy") == 0;
		if (!healthy && !backoff_wait(&b, w->deadline)) {
			wait_timeout_error(w, "the container's healthcheck", c.health_output, err);
			container_free(&c);
			return -1;
		}
		container_free(&c);
		if (healthy)
			break;
	}
	log_step_done(1);
	return 0;
}

/* --- GPUs allocatable --- */

struct gpu_state {
	int runtime_class;        /* RuntimeClass nvidia exists */
	struct runtime_fact rt;   /* containerd's nvidia runtime, once k3s wrote its config */
	int plugin_found;
	struct ds_status ds;
	long long allocatable;    /* -1: absent */
	char *api_error;          /* the last transient kubectl error, or NULL */
};

static int gpu_ready(const struct gpu_state *g)
{
	return g->runtime_class && g->rt.nvidia && g->plugin_found && g->ds.desired > 0 &&
	       g->ds.ready == g->ds.desired && g->allocatable > 0;
}

static int read_gpu_state(const struct wait_ctx *w, struct gpu_state *g, os_error *err)
{
	cJSON *obj = NULL;
	int found;

	if (!g->rt.config_read && containerd_nvidia_runtime(w->container, wait_call_budget_ms(w), &g->rt, err) < 0)
		return -1;
	if (!g->runtime_class) {
		found = kube_get(w->container, "runtimeclasses", NVIDIA_RUNTIME_CLASS, NULL, 0, wait_call_budget_ms(w), &obj, err);
		cJSON_Delete(obj);
		if (found < 0)
			return -1;
		g->runtime_class = found;
	}
	if (kube_get(w->container, "daemonsets", NULL, NULL, 1, wait_call_budget_ms(w), &obj, err) < 0)
		return -1;
	const cJSON *ds = kube_find_device_plugin(obj);
	g->plugin_found = ds != NULL;
	kube_daemonset_status(ds, &g->ds);
	cJSON_Delete(obj);
	if (kube_get(w->container, "nodes", NULL, NULL, 0, wait_call_budget_ms(w), &obj, err) < 0)
		return -1;
	g->allocatable = kube_nodes_allocatable_gpus(obj);
	cJSON_Delete(obj);
	return 0;
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
	if (g->allocatable < 0)
		return xstrdup("the node has no allocatable nvidia.com/gpu: the device plugin runs but registered no GPU (its log says \"No devices found\" when the container has no /dev/nvidia*: was it started with the host's GPUs?)");
	return xstrdup("the node's allocatable nvidia.com/gpu is 0 (the plugin found no GPU)");
}

static char *plugin_pod_warning(const struct wait_ctx *w, const cJSON *pods, int t)
{
	os_error err = { 0 };
	cJSON *events = NULL;
	const cJSON *pod;
	char *why = NULL;

	if (kube_get(w->container, "events", NULL, DEVICE_PLUGIN_NAMESPACE, 0, t, &events, &err) > 0)
		cJSON_ArrayForEach(pod, json_get(pods, "items", NULL)) {
			const char *name = json_str(json_get(pod, "metadata", NULL), "name");
			cleanup_free char *warn = name ? kube_pod_warning(events, name) : NULL;
			if (warn && !why)
				why = xasprintf("pod %s/%s: %s", DEVICE_PLUGIN_NAMESPACE, name, warn);
		}
	cJSON_Delete(events);
	os_error_clear(&err);
	return why;
}

/* The nvidia runtime is there but fails: the kubelet cannot make the
 * plugin pod's sandbox, and says so in a Warning event naming the runtime.
 * Looked at only while the plugin's pods are not ready. */
static int runtime_broken(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	os_error e = { 0 };
	cJSON *pods = NULL;
	cleanup_free char *why = NULL;

	if (!g->plugin_found || g->ds.desired == 0 || g->ds.ready == g->ds.desired)
		return 0;
	if (kube_get(w->container, "pods", NULL, DEVICE_PLUGIN_NAMESPACE, 0, wait_call_budget_ms(w), &pods, &e) > 0)
		why = plugin_pod_warning(w, pods, wait_call_budget_ms(w));
	cJSON_Delete(pods);
	os_error_clear(&e);
	if (!why || !strstr(why, "FailedCreatePodSandBox") || !strstr(why, "nvidia-container-runtime"))
		return 0;
	return os_error_set(err, OS_EXIT_FAILURE,
			    "the nvidia runtime in gateway container %s cannot start pods: %s; check the image's toolkit ('openshell image info') and the host's driver ('nvidia-smi'), then rerun with --recreate",
			    w->container, why);
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
	cleanup_free char *plugin = NULL, *helm = NULL, *detail = NULL, *cause = NULL;
	/* The deadline has passed; the diagnostics get a budget of their own. */
	int t = cleanup_budget_ms();

	plugin = kube_logs_tail(w->container, DEVICE_PLUGIN_NAMESPACE,
				DEVICE_PLUGIN_LABEL "=" DEVICE_PLUGIN_NAME, LOG_TAIL_LINES, t);
	helm = kube_logs_tail(w->container, "kube-system", "job-name=" DEVICE_PLUGIN_HELM_JOB, LOG_TAIL_LINES, t);
	cause = gpu_cause(w, g, helm, t);
	detail = xasprintf("device plugin logs:\n%s\n%s logs:\n%s%s%s", *plugin ? plugin : "(none)\n",
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
	runtime_fact_free(&g->rt);
	free(g->api_error);
}

static int delete_device_plugin_chart(const struct wait_ctx *w, int *deleted, os_error *err)
{
	const char *del[] = { "delete", "helmchart", DEVICE_PLUGIN_HELMCHART, "--namespace", "kube-system",
			      "--ignore-not-found", NULL };
	struct run_result res = { 0 };
	int rc = kube_exec(w->container, del, NULL, wait_call_budget_ms(w), &res, err);

	if (rc == 0 && res.status != 0)
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "kubectl delete helmchart %s failed",
				 DEVICE_PLUGIN_HELMCHART);
	*deleted = rc == 0 && strstr(res.out, "deleted") != NULL;
	run_result_free(&res);
	return rc;
}

int wait_gpu_release_removed(const struct wait_ctx *w, os_error *err)
{
	struct backoff b = { 0 };
	int deleted, gone = 0;

	if (delete_device_plugin_chart(w, &deleted, err) < 0)
		return -1;
	if (!deleted)
		return 0;   /* there was none: the usual case */
	log_step("removing the device plugin a GPU run left on the volume");
	while (!gone) {
		cJSON *list = NULL;

		if (kube_get(w->container, "daemonsets", NULL, NULL, 1, wait_call_budget_ms(w), &list, err) < 0)
			return -1;
		gone = kube_find_device_plugin(list) == NULL;
		cJSON_Delete(list);
		if (!gone && !backoff_wait(&b, w->deadline))
			return wait_timeout_error(w, "the device plugin's release to be uninstalled", NULL, err);
	}
	log_step_done(1);
	return 0;
}

int wait_gpus(const struct wait_ctx *w, long long *gpus, os_error *err)
{
	struct backoff b = { 0 };
	struct gpu_state g = { .allocatable = -1 };
	int rc = -1;

	log_step("waiting for allocatable nvidia.com/gpu");
	for (;;) {
		struct gw_container c;
		int alive = check_alive(w, &c, err);

		container_free(&c);
		if (alive < 0 || (read_gpu_state(w, &g, err) < 0 && !transient(&g, err))) {
			if (deadline_hit(w, err))
				gpu_timeout(w, &g, err);
			goto out;
		}
		if (runtime_missing(w, &g, err) < 0 || runtime_broken(w, &g, err) < 0)
			goto out;
		if (gpu_ready(&g))
			break;
		if (!backoff_wait(&b, w->deadline)) {
			gpu_timeout(w, &g, err);
			goto out;
		}
	}
	*gpus = g.allocatable;
	log_step_done(1);
	rc = 0;
out:
	gpu_state_free(&g);
	return rc;
}

