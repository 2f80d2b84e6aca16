/* gateway/wait/gpu_report.c - why the GPU wait ran out (see gateway/wait/gpu_state.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/xalloc.h"
#include "gateway/gpu/sharing.h"
#include "gateway/wait/gpu_state.h"
#include "gateway/wait/plugin_faults.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* Under DRA: which fact of the driver's is missing (the runtime's and
 * the API's are gpu_missing's). */
static char *dra_missing(const struct gpu_state *g)
{
	const struct gpu_allocator *by = gpu_state_by(g);
	cleanup_free char *got = g->published.n ? strv_join(&g->published, ", ") : xstrdup("none");
	cleanup_free char *want = g->want_uuids && g->want_uuids->n ? strv_join(g->want_uuids, ", ") : NULL;

	if (!g->plugin_found)
		return xasprintf("the DaemonSet %s/%s of %s does not exist", by->ns, by->daemonset, by->title);
	if (g->ds.desired == 0)
		return xasprintf("the DaemonSet %s/%s schedules no pod (desired 0: the node lacks the label " DRA_NODE_LABEL ", which the gateway's k3s gives it)",
				 by->ns, by->daemonset);
	if (g->ds.ready < g->ds.desired)
		return xasprintf("the DaemonSet %s/%s has %lld of %lld pods ready", by->ns, by->daemonset, g->ds.ready,
				 g->ds.desired);
	if (!g->gate_met)
		return xasprintf("the DaemonSet %s/%s has not rolled out with %s%s, which --gpu-sharing sets through its HelmChartConfig (%lld of %lld pods updated; see the Helm job's logs below)",
				 by->ns, by->daemonset, *g->want_gate ? "feature gate " : "no feature gate of sharing",
				 g->want_gate, g->ds.updated, g->ds.desired);
	if (!g->published.n)
		return xasprintf("node %s publishes no GPU in a ResourceSlice of driver " DRA_DRIVER_NAME
				 " (the kubelet plugin's log says what NVML found)",
				 g->want_node ? g->want_node : "?");
	if (g->stale && !g->stale_slices)
		return xasprintf("the node's status (posted %s) predates the container's last start: its kubelet has not posted it since",
				 g->heartbeat ? g->heartbeat : "?");
	if (gpu_state_slices_met(g) && g->stale_slices)
		return xasprintf("node %s's ResourceSlices (made %s) predate the container's last start: its kubelet has not deleted them, nor the DRA driver's plugin published anew, since",
				 g->want_node ? g->want_node : "?", g->slices_created ? g->slices_created : "?");
	return xasprintf("node %s publishes GPUs %s in its ResourceSlices of driver " DRA_DRIVER_NAME ", not the gateway's %s",
			 g->want_node ? g->want_node : "?", got, want ? want : "?");
}

static char *gpu_missing(const struct gpu_state *g)
{
	char count[32];

	if (g->allocatable < 0)
		snprintf(count, sizeof(count), "absent");
	else
		snprintf(count, sizeof(count), "%lld", g->allocatable);
	/* Nothing read is nothing known: no object is missing then. */
	if (!g->seen)
		return xasprintf("no read of the cluster's objects succeeded%s%s", g->api_error ? ": " : "",
				 g->api_error ? g->api_error : "");
	if (g->runtime_class == 0 && !gpu_state_dra(g))
		return xstrdup("RuntimeClass 'nvidia' does not exist (was k3s started with --disable=runtimes?)");
	if (!g->rt.config_read)
		return xstrdup("k3s has not written its containerd config yet");
	if (gpu_state_dra(g))
		return dra_missing(g);
	if (!g->plugin_found)
		return xstrdup("the nvidia-device-plugin DaemonSet does not exist");
	if (g->ds.desired == 0)
		return xstrdup("the nvidia-device-plugin DaemonSet schedules no pod (desired 0: check its node affinity)");
	if (g->ds.ready < g->ds.desired)
		return xasprintf("the nvidia-device-plugin DaemonSet has %lld of %lld pods ready",
				 g->ds.ready, g->ds.desired);
	/* MPS: the plugin registers nothing until its control daemon is up. */
	if (g->mps_sharing && !gpu_sharing_met(g)) {
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
	if (g->mig_capacity < g->want_mig)
		return xasprintf("the node holds %lld of the %lld MIG devices of the gateway's GPUs: under --mig-strategy mixed the device plugin registers each MIG profile as a resource of its own, and has not registered them all (its log is below)",
				 g->mig_capacity, g->want_mig);
	cleanup_free char *sick = kube_gpus_unhealthy(g->allocatable, g->capacity);
	if (!gpu_sharing_met(g))
		return xasprintf("the node's allocatable nvidia.com/gpu is %lld, not the %lld that --gpu-sharing makes (%s)",
				 g->allocatable, g->want, sick ? sick : "has the Helm job upgraded the device plugin?");
	return xasprintf("the node's allocatable nvidia.com/gpu is 0: %s", kube_gpus_zero_why(g->capacity));
}

/* What keeps the device plugin from running, when the cluster can say:
 * the Helm install job's error, or a pod that cannot start (its image
 * cannot be pulled, its sandbox not made). NULL when nothing says more
 * than gpu_missing(). */
static char *gpu_cause(const struct wait_ctx *w, const struct gpu_state *g, const char *helm_logs, int t)
{
	const struct gpu_allocator *by = gpu_state_by(g);
	cleanup_free char *line = g->plugin_found ? NULL : kube_last_error_line(helm_logs);
	const char *ns = g->plugin_found ? by->ns : "kube-system";
	os_error err = { 0 };
	cJSON *pods = NULL;
	char *cause = NULL;

	/* Helm's own error says more than its pod's crash loop. */
	if (line)
		return xasprintf("its Helm install fails: %s", line);
	if (kube_get(&w->ctr, "pods", NULL, ns, 0, t, &pods, &err) > 0)
		cause = g->plugin_found ? kube_pods_stuck(pods, by->pod_label, by->pod_value)
					: kube_pods_stuck(pods, "job-name", by->helm_job);
	/* A pod still ContainerCreating: the kubelet's warning (a sandbox). */
	if (!cause && g->plugin_found && pods)
		cause = plugin_pod_warning(w, by, pods, t);
	cJSON_Delete(pods);
	os_error_clear(&err);
	if (!cause && !g->plugin_found)
		cause = xstrdup("its Helm install has not finished (see the job's logs below)");
	return cause;
}

int gpu_timeout(const struct wait_ctx *w, const struct gpu_state *g, os_error *err)
{
	cleanup_free char *what = gpu_missing(g);
	cleanup_free char *dur = clock_format_ms(w->timeout_ms);
	cleanup_free char *plugin = NULL, *mps = NULL, *helm = NULL, *detail = NULL, *cause = NULL;
	/* The deadline has passed; the diagnostics get a budget of their own. */
	int t = cleanup_budget_ms();

	const struct gpu_allocator *by = gpu_state_by(g);
	cleanup_free char *job = xasprintf("job-name=%s", by->helm_job);
	cJSON *pods = NULL;   /* read once for the plugin's and the MPS daemon's logs */
	os_error e = { 0 };

	kube_get(&w->ctr, "pods", NULL, by->ns, 0, t, &pods, &e);
	os_error_clear(&e);
	plugin = kube_container_logs_tail(&w->ctr, by->ns, pods, by->container, WAIT_LOG_TAIL_LINES, t);
	mps = g->mps.desired > 0 ? kube_container_logs_tail(&w->ctr, by->ns, pods, MPS_DAEMON_CONTAINER,
							    WAIT_LOG_TAIL_LINES, t)
				 : xstrdup("");
	cJSON_Delete(pods);
	helm = kube_logs_tail(&w->ctr, "kube-system", job, WAIT_LOG_TAIL_LINES, t);
	cause = gpu_cause(w, g, helm, t);
	detail = xasprintf("%s logs:\n%s\n%s%s%s%s logs:\n%s%s%s", by->mode == GPU_ALLOCATION_DRA ? "DRA kubelet plugin" : "device plugin",
			   *plugin ? plugin : "(none)\n",
			   *mps ? "MPS control daemon logs:\n" : "", mps, *mps ? "\n" : "",
			   by->helm_job, *helm ? helm : "(none)\n",
			   g->api_error ? "\nlast error from the API:\n" : "", g->api_error ? g->api_error : "");
	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for GPUs: %s%s%s; the gateway was kept for inspection", dur, what,
		     cause ? ": " : "", cause ? cause : "");
	os_error_set_detail(err, detail);
	return -1;
}
