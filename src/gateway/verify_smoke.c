/* gateway/verify_smoke.c - verify's last check: a pod that asks for one GPU (see gateway/verify_checks.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/child_output.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "gateway/mig.h"
#include "gateway/verify.h"
#include "gateway/verify_checks.h"
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define SMOKE_NAMESPACE "default"

/* nvidia-smi -L, its answer both printed (for `kubectl logs`) and written
 * to the termination message, which the kubelet puts into the pod's status
 * as the container ends (pkg/kubelet/kuberuntime/kuberuntime_container.go,
 * getTerminationMessage): the answer comes with the end, in the object
 * that `kubectl wait` prints, with no call after it. A constant: nothing
 * of the user's is in it. */
#define SMOKE_SCRIPT \
	"out=$(nvidia-smi -L 2>&1); s=$?; printf '%s\\n' \"$out\"; printf '%s\\n' \"$out\" >/dev/termination-log; exit $s"

char *verify_smoke_manifest(const char *pod, const char *image, const char *resource)
{
	cJSON *m = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(m, "metadata");
	cJSON *spec, *ctr, *cmd;
	char *s;

	cJSON_AddStringToObject(m, "apiVersion", "v1");
	cJSON_AddStringToObject(m, "kind", "Pod");
	cJSON_AddStringToObject(meta, "name", pod);
	cJSON_AddStringToObject(meta, "namespace", SMOKE_NAMESPACE);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "app.kubernetes.io/managed-by", "openshell");
	spec = cJSON_AddObjectToObject(m, "spec");
	/* Never: a finished smoke test must stay Succeeded, not restart. The
	 * nvidia RuntimeClass is what mounts the driver into the container. */
	cJSON_AddStringToObject(spec, "restartPolicy", "Never");
	cJSON_AddStringToObject(spec, "runtimeClassName", NVIDIA_RUNTIME_CLASS);
	ctr = cJSON_CreateObject();
	cJSON_AddStringToObject(ctr, "name", "smoke");
	cJSON_AddStringToObject(ctr, "image", image);
	cmd = cJSON_AddArrayToObject(ctr, "command");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("sh"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString(SMOKE_SCRIPT));
	/* Should the shell fail before it writes the file, its log says why. */
	cJSON_AddStringToObject(ctr, "terminationMessagePolicy", "FallbackToLogsOnError");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(ctr, "resources"), "limits"),
				resource ? resource : GPU_RESOURCE, "1");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), ctr);
	s = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	return s;
}

/* The scheduler's reason a pod is Pending, or NULL. */
static const char *unschedulable_reason(const cJSON *pod)
{
	const cJSON *cond;

	cJSON_ArrayForEach(cond, json_get(pod, "status", "conditions", NULL)) {
		const char *type = json_str(cond, "type"), *status = json_str(cond, "status");
		if (type && status && strcmp(type, "PodScheduled") == 0 && strcmp(status, "False") == 0)
			return json_str(cond, "message");
	}
	return NULL;
}

/* The kubelet's last warning about the pod (a sandbox it cannot make). */
static char *pod_warning(const char *ctr, const char *pod)
{
	os_error err = { 0 };
	cJSON *events = NULL;
	char *w = kube_get(ctr, "events", NULL, SMOKE_NAMESPACE, 0, cleanup_budget_ms(), &events, &err) > 0
			  ? kube_pod_warning(events, pod) : NULL;

	cJSON_Delete(events);
	os_error_clear(&err);
	return w;
}

/* What the smoke container said: its termination message, which the
 * finished pod carries; a cluster that gave none (a kubelet without the
 * file, an image whose shell never ran) is asked for the log instead. */
static char *smoke_output(const char *ctr, const char *pod, const cJSON *cs)
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

/* Judge a finished pod: Succeeded with a GPU named in its output, and
 * with a MIG RESOURCE the MIG device under it. */
static void judge_smoke(const char *ctr, const char *pod, const char *resource, const cJSON *obj, struct check *c)
{
	const char *phase = json_str(json_get(obj, "status", NULL), "phase");
	const cJSON *cs = cJSON_GetArrayItem(json_get(obj, "status", "containerStatuses", NULL), 0);
	cleanup_free char *logs = smoke_output(ctr, pod, cs);
	const char *gpu = strstr(logs, "GPU ");
	cleanup_free char *gpu_line = run_first_line(gpu);
	long long code = -1;

	const char *mig = strstr(logs, "  MIG ");
	cleanup_free char *mig_line = run_first_line(mig ? mig + 2 : NULL);

	json_int(json_get(cs, "state", "terminated", "exitCode", NULL), -1000, 1000, &code);
	if (strcmp(phase, "Succeeded") == 0 && gpu && resource && !mig_of_profile(mig_line, resource))
		check_set(c, CHECK_FAIL, xasprintf("pod %s asked for %s and Succeeded, but its log names no MIG device of that profile%s%s",
						   pod, resource, mig ? ": " : "", mig ? mig_line : ""));
	else if (strcmp(phase, "Succeeded") == 0 && gpu && resource)
		check_set(c, CHECK_PASS, xasprintf("pod %s (%s) Succeeded: %s; %s", pod, resource, gpu_line, mig_line));
	else if (strcmp(phase, "Succeeded") == 0 && gpu)
		check_set(c, CHECK_PASS, xasprintf("pod %s Succeeded: %s", pod, gpu_line));
	else if (strcmp(phase, "Succeeded") == 0)
		check_set(c, CHECK_FAIL, xasprintf("pod %s Succeeded but its log names no GPU", pod));
	else
		check_set(c, CHECK_FAIL, xasprintf("pod %s Failed (exit code %lld)", pod, code));
	if (c->status == CHECK_FAIL)
		c->detail = xstrdup(logs);
}

/* The pod as it was when it finished, or why it has not: a look once the
 * wait gave up (the deadline, a wait that failed). */
static void judge_unfinished(const struct gateway *gw, const char *pod, const char *resource,
			     const struct verify_opts *vo, struct check *c)
{
	cJSON *obj = NULL;
	os_error err = { 0 };
	const char *phase = NULL;
	cleanup_free char *pending = NULL;

	if (kube_get(gw->container, "pods", pod, SMOKE_NAMESPACE, 0, cleanup_budget_ms(), &obj, &err) > 0)
		phase = json_str(json_get(obj, "status", NULL), "phase");
	if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
		judge_smoke(gw->container, pod, resource, obj, c);
	} else {
		cleanup_free char *dur = clock_format_ms(vo->timeout_ms);
		pending = unschedulable_reason(obj) ? xstrdup(unschedulable_reason(obj)) : kube_pod_stuck(obj);
		if (!pending)
			pending = pod_warning(gw->container, pod);
		check_set(c, CHECK_FAIL, pending ? xasprintf("pod %s Pending: %s", pod, pending)
					   : xasprintf("pod %s did not finish within %s", pod, dur));
	}
	cJSON_Delete(obj);
	os_error_clear(&err);
}

/* Deleted, neither waited for nor watched: the API has the deletion once
 * kubectl has run, and the kubelet ends a finished pod on its own. The
 * user waits for none of it (a call of its own, detached). */
static void delete_smoke(const char *ctr, const char *pod)
{
	const char *del[] = { "delete", "pod", pod, "--namespace", SMOKE_NAMESPACE, "--ignore-not-found",
			      "--wait=false", NULL };
	os_error err = { 0 };

	signals_shield();   /* an interrupted verify still cleans up its pod */
	if (kube_detached(ctr, del, cleanup_budget_ms(), &err) < 0)
		log_warn("could not delete smoke pod %s: %s", pod, err.msg);
	signals_unshield();
	os_error_clear(&err);
}

int verify_smoke(const struct gateway *gw, const struct verify_opts *vo, const char *resource, struct check *c,
		 os_error *err)
{
	cleanup_free char *pod = xasprintf("openshell-verify-%x%04x", (unsigned)getpid() & 0xffff,
					   (unsigned)(clock_ms() & 0xffff));
	cleanup_free char *manifest = verify_smoke_manifest(pod, vo->smoke_image, resource);
	cleanup_free char *target = xasprintf("pod/%s", pod);
	const char *apply[] = { "apply", "-f", "-", NULL };
	/* One kubectl wait for the whole run: its container's terminated
	 * state, message included, comes with the phase, in one update. */
	const char *until_done[] = { "--for=jsonpath={.status.containerStatuses[0].state.terminated}", target,
				     "--namespace", SMOKE_NAMESPACE, "--output=json", NULL };
	struct run_result res = { 0 };
	long long deadline = clock_ms() + vo->timeout_ms;
	char *done = NULL;        /* the finished pod, as kubectl wait printed it */
	cJSON *obj = NULL;
	int rc = -1, met;

	if (kube_exec(gw->container, apply, manifest, 0, &res, err) < 0)
		goto gone;   /* cut short: the pod may be there all the same */
	if (res.status != 0) {
		cleanup_free char *line = run_first_line(res.err);
		check_set(c, CHECK_FAIL, xasprintf("kubectl apply of the smoke pod failed: %s", line));
		rc = 0;
		goto out;
	}
	met = kube_wait(gw->container, until_done,
			&(struct kube_wait_opts){ .timeout_ms = call_budget_ms(deadline, vo->timeout_ms), .output = &done },
			err);
	if (met < 0 && !call_cut_by_deadline(err, deadline))
		goto gone;
	os_error_clear(err);
	if (met > 0 && (obj = json_parse(done, strlen(done), "kubectl wait output", err)))
		judge_smoke(gw->container, pod, resource, obj, c);
	else
		judge_unfinished(gw, pod, resource, vo, c);
	os_error_clear(err);
	rc = 0;
gone:
	if (!vo->keep)
		delete_smoke(gw->container, pod);
	else
		log_info("kept smoke pod %s in namespace %s (--keep)", pod, SMOKE_NAMESPACE);
out:
	cJSON_Delete(obj);
	free(done);
	run_result_free(&res);
	return rc;
}
