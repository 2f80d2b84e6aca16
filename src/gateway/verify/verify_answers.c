/* gateway/verify/verify_answers.c - what verify's pods said, judged (see gateway/verify/verify_checks.h).
 *
 * Each pod's answer is its nvidia-smi -L (from its termination message,
 * or its log): the smoke pod must name one GPU, and with a MIG resource
 * the MIG device of that profile; the isolation pod must name none. Also
 * what a pod says of itself, read for those verdicts: why it is Pending,
 * the kubelet's warning, its output.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "base/child_output.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "gateway/gpu/mig.h"
#include "gateway/verify/verify_checks.h"
#include "gateway/wait/wait.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* Is LINE ("MIG 1g.10gb     Device  0: (UUID: MIG-…)") a device of the
 * profile whose resource is RESOURCE (nvidia.com/mig-1g.10gb; the plugin
 * writes a profile's "+" as ".")? */
static int mig_of_profile(const char *line, const char *resource)
{
	const char *want = resource + strlen(MIG_RESOURCE_PREFIX);
	size_t n;

	if (!line || strncmp(line, "MIG ", 4) != 0)
		return 0;
	line += 4;
	n = strcspn(line, " ");
	if (n != strlen(want))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((line[i] == '+' ? '.' : line[i]) != want[i])
			return 0;
	return 1;
}

/* The GPUs ("GPU N: …" lines) a pod's nvidia-smi -L named, and the first. */
static int gpu_lines(const char *out, const char **first)
{
	int n = 0;

	*first = NULL;
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "GPU ", 4) == 0 && isdigit((unsigned char)p[4])) {
			*first = *first ? *first : p;
			n++;
		}
	}
	return n;
}

/* The smoke pod: Succeeded, naming one GPU, and with a MIG resource the
 * MIG device of that profile under it. */
void verify_judge_smoke(const char *pod, const char *resource, int device_gpus, const char *phase, long long code,
			const char *out, struct check *c)
{
	const char *gpu;
	int gpus = gpu_lines(out, &gpu);
	cleanup_free char *gpu_line = run_first_line(gpu);
	const char *mig = strstr(out, "  MIG ");
	cleanup_free char *mig_line = run_first_line(mig ? mig + 2 : NULL);
	int ok = strcmp(phase, "Succeeded") == 0;

	if (ok && device_gpus > 1 && gpus == device_gpus)
		check_set(c, CHECK_PASS, xasprintf("pod %s Succeeded: its one device is all %d GPUs (WSL2's device all): %s, …",
						   pod, gpus, gpu_line));
	else if (ok && device_gpus > 1)
		check_set(c, CHECK_FAIL, xasprintf("pod %s asked for one device, all %d GPUs of WSL2's, and sees %d%s%s", pod,
						   device_gpus, gpus, gpus ? ": " : "", gpus ? gpu_line : ""));
	else if (ok && gpus > 1)
		check_set(c, CHECK_FAIL, xasprintf("pod %s asked for one GPU and sees %d: %s, …", pod, gpus, gpu_line));
	else if (ok && gpus && resource && !mig_of_profile(mig_line, resource))
		check_set(c, CHECK_FAIL, xasprintf("pod %s asked for %s and Succeeded, but its log names no MIG device of that profile%s%s",
						   pod, resource, mig ? ": " : "", mig ? mig_line : ""));
	else if (ok && gpus && resource)
		check_set(c, CHECK_PASS, xasprintf("pod %s (%s) Succeeded: %s; %s", pod, resource, gpu_line, mig_line));
	else if (ok && gpus && mig && !strstr(mig + 1, "\n  MIG "))
		/* Given one MIG device alone (DRA's claim): the GPU and it. */
		check_set(c, CHECK_PASS, xasprintf("pod %s Succeeded: %s; %s", pod, gpu_line, mig_line));
	else if (ok && gpus)
		check_set(c, CHECK_PASS, xasprintf("pod %s Succeeded: %s", pod, gpu_line));
	else if (ok)
		check_set(c, CHECK_FAIL, xasprintf("pod %s Succeeded but its log names no GPU", pod));
	else
		check_set(c, CHECK_FAIL, xasprintf("pod %s Failed (exit code %lld)", pod, code));
}

void verify_judge_privileged(const char *pod, const char *resource, int device_gpus, const char *phase,
			     long long code, const char *out, struct check *c)
{
	const char *gpu;

	verify_judge_smoke(pod, resource, device_gpus, phase, code, out, c);
	if (c->status == CHECK_FAIL && strcmp(phase, "Succeeded") == 0 && device_gpus <= 1 && gpu_lines(out, &gpu) > 1)
		check_set(c, CHECK_FAIL,
			  xasprintf("privileged %s: containerd gives a privileged pod every device it sees unless the pod's runtime sets privileged_without_host_devices (the cluster image's config-v3.toml.d drop-in)",
				    c->evidence));
	else if (c->status == CHECK_PASS)
		check_set(c, CHECK_PASS, xasprintf("privileged %s", c->evidence));
}

/* The isolation pod: it ran, and its nvidia-smi saw no GPU although it
 * named them all in NVIDIA_VISIBLE_DEVICES. */
void verify_judge_isolation(const char *pod, const char *resource, int device_gpus, const char *phase,
			    long long code, const char *out, struct check *c)
{
	const char *gpu;
	int gpus = gpu_lines(out, &gpu);
	cleanup_free char *line = run_first_line(gpus ? gpu : out);

	(void)resource;   /* it asks for none */
	(void)device_gpus;
	if (strcmp(phase, "Succeeded") != 0)
		check_set(c, CHECK_FAIL, xasprintf("pod %s Failed (exit code %lld)", pod, code));
	else if (gpus)
		check_set(c, CHECK_FAIL, xasprintf("pod %s asked for no GPU and sees %d through NVIDIA_VISIBLE_DEVICES=all (%s): the nvidia runtime takes that variable from unprivileged pods; the gateway's image must set accept-nvidia-visible-devices-envvar-when-unprivileged = false",
						   pod, gpus, line));
	else
		check_set(c, CHECK_PASS, xasprintf("pod %s, no GPU asked, NVIDIA_VISIBLE_DEVICES=all: sees none (%s)", pod,
						   *line ? line : "nvidia-smi said nothing"));
}

const char *verify_pod_unschedulable(const cJSON *pod)
{
	const cJSON *cond;

	cJSON_ArrayForEach(cond, json_get(pod, "status", "conditions", NULL)) {
		const char *type = json_str(cond, "type"), *status = json_str(cond, "status");
		if (type && status && strcmp(type, "PodScheduled") == 0 && strcmp(status, "False") == 0)
			return json_str(cond, "message");
	}
	return NULL;
}

char *verify_pod_warning(const struct docker_ctr *ctr, const char *pod)
{
	os_error err = { 0 };
	cJSON *events = NULL;
	char *w = kube_get(ctr, "events", NULL, SMOKE_NAMESPACE, 0, cleanup_budget_ms(), &events, &err) > 0
			  ? kube_pod_warning(events, pod) : NULL;

	cJSON_Delete(events);
	os_error_clear(&err);
	return w;
}

char *verify_pod_output(const struct docker_ctr *ctr, const char *pod, const cJSON *cs)
{
	const char *msg = json_str(json_get(cs, "state", "terminated", NULL), "message");
	const char *args[] = { "logs", "--namespace", SMOKE_NAMESPACE, pod, "--tail=20", NULL };
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *out;

	if (msg && *msg)
		return xstrdup(msg);
	out = kube_exec(ctr, args, NULL, cleanup_budget_ms(), &res, &err) == 0 && res.status == 0 ? xstrdup(res.out)
												     : xstrdup("");
	run_result_free(&res);
	os_error_clear(&err);
	return out;
}
