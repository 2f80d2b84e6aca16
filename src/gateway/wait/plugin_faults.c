/* gateway/wait/plugin_faults.c - faults that keep the device plugin from
 * ever running (see gateway/wait/plugin_faults.h). */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"
#include "gateway/wait/plugin_faults.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define PLUGIN_FATAL_RESTARTS 2   /* failed restarts with its own fatal error: a verdict */

/* The kubelet's last Warning for a pod of PODS, of namespace NS. */
static char *pod_warning(const struct wait_ctx *w, const char *ns, const cJSON *pods, int t)
{
	os_error err = { 0 };
	cJSON *events = NULL;
	const cJSON *pod;
	char *why = NULL;

	if (kube_get(&w->ctr, "events", NULL, ns, 0, t, &events, &err) > 0)
		cJSON_ArrayForEach(pod, json_get(pods, "items", NULL)) {
			const char *name = json_str(json_get(pod, "metadata", NULL), "name");
			cleanup_free char *warn = name ? kube_pod_warning(events, name) : NULL;
			if (warn && !why)
				why = xasprintf("pod %s/%s: %s", ns, name, warn);
		}
	cJSON_Delete(events);
	os_error_clear(&err);
	return why;
}

char *plugin_pod_warning(const struct wait_ctx *w, const struct gpu_allocator *by, const cJSON *pods, int t)
{
	return pod_warning(w, by->ns, pods, t);
}

/* A pod whose sandbox the kubelet cannot make stays Pending. */
static int any_pending(const cJSON *pods)
{
	const cJSON *pod;

	cJSON_ArrayForEach(pod, json_get(pods, "items", NULL)) {
		const char *phase = json_str(json_get(pod, "status", NULL), "phase");
		if (phase && strcmp(phase, "Pending") == 0)
			return 1;
	}
	return 0;
}

/* The nvidia runtime is there but fails: the kubelet cannot make a pod's
 * sandbox, and says so in a Warning event naming the runtime. The events
 * are read only while a pod is Pending: a tick of a healthy start spends no
 * exec on them. */
int plugin_runtime_judge(const struct wait_ctx *w, const char *ns, const cJSON *pods, os_error *err)
{
	cleanup_free char *why = any_pending(pods) ? pod_warning(w, ns, pods, deadline_call_ms(&w->by)) : NULL;

	if (!why || !strstr(why, "FailedCreatePodSandBox") || !strstr(why, "nvidia-container-runtime"))
		return 0;
	return os_error_set(err, OS_EXIT_FAILURE,
			    "the nvidia runtime in gateway container %s cannot start pods: %s; check the image's toolkit ('openshell image info') and the host's driver ('nvidia-smi'), then rerun with --recreate",
			    w->ctr.name, why);
}

/* How often the plugin's container has restarted after failing: the most
 * of its pods' (the MPS control daemon's and the config manager's are
 * other containers). */
static long long plugin_failed_restarts(const cJSON *pods)
{
	const cJSON *pod, *cs;
	long long most = 0;

	cJSON_ArrayForEach(pod, json_get(pods, "items", NULL))
		cJSON_ArrayForEach(cs, json_get(pod, "status", "containerStatuses", NULL)) {
			const char *name = json_str(cs, "name");
			long long n = 0, code = 0;

			if (!name || strcmp(name, DEVICE_PLUGIN_CONTAINER) != 0 ||
			    json_int(json_get(cs, "lastState", "terminated", "exitCode", NULL), -1000, 1000, &code) < 0 ||
			    code == 0)
				continue;
			json_int(json_get(cs, "restartCount", NULL), 0, 1LL << 40, &n);
			most = n > most ? n : most;
		}
	return most;
}

/* The last line of the plugin's log that says why it stopped (main.go
 * logs "error starting plugins: …" before it exits), or NULL (owned). */
static char *plugin_fatal_line(const char *logs)
{
	const char *p = logs, *last = NULL;

	while ((p = strstr(p, "error starting plugins: ")))
		last = p++;
	return last ? xstrndup(last, strcspn(last, "\n")) : NULL;
}

/* What to change for the plugin's fatal LINE. */
static const char *plugin_fix(const char *line)
{
	if (strstr(line, "MPS") && strstr(line, "MIG"))
		return "share the MIG devices with --gpu-sharing time-slicing:N, or use --mig-strategy none";
	if (strstr(line, "MIG") || strstr(line, "migEnabled"))
		return "choose a --mig-strategy that fits the GPUs' MIG layout ('nvidia-smi -L' shows it)";
	return "check the host's driver ('nvidia-smi') and the gateway's GPU options";
}

/* A plugin that exits with its own fatal error at every start (a MIG
 * layout its strategy cannot take, MPS on MIG devices, no NVML) never
 * comes up without another configuration: after its second failed restart
 * that is the verdict, not a wait until the deadline. */
static int plugin_exits(const struct wait_ctx *w, const struct gpu_allocator *by, const cJSON *pods, os_error *err)
{
	long long restarts = by->mode == GPU_ALLOCATION_DEVICE_PLUGIN ? plugin_failed_restarts(pods) : 0;
	cleanup_free char *logs = NULL, *line = NULL;

	/* The DRA driver's fatal errors are not read yet: its pods wait out the deadline. */
	if (restarts < PLUGIN_FATAL_RESTARTS)
		return 0;
	logs = kube_container_logs_tail(&w->ctr, by->ns, pods, by->container, WAIT_LOG_TAIL_LINES,
					deadline_call_ms(&w->by));
	if (!(line = plugin_fatal_line(logs)))
		return 0;
	os_error_set(err, OS_EXIT_FAILURE,
		     "%s in gateway container %s exits at every start (%lld restarts): %s; %s, then rerun with --recreate",
		     by->title, w->ctr.name, restarts, line,
		     plugin_fix(line));
	os_error_set_detail(err, logs);
	return -1;
}

int plugin_faults_judge(const struct wait_ctx *w, const struct gpu_allocator *by, const cJSON *pods, os_error *err)
{
	return plugin_runtime_judge(w, by->ns, pods, err) < 0 || plugin_exits(w, by, pods, err) < 0 ? -1 : 0;
}
