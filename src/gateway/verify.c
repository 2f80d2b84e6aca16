/* gateway/verify.c - the five GPU checks (see gateway/verify.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpus.h"
#include "gateway/mig.h"
#include "gateway/sharing.h"
#include "gateway/verify.h"
#include "gateway/verify_checks.h"
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"

#define SMOKE_NAMESPACE "default"

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = { "pass", "fail", "skip", "n/a" };

	return names[s];
}

void check_set(struct check *c, enum check_status s, char *evidence)
{
	c->status = s;
	free(c->evidence);
	c->evidence = evidence;
}

/* k3s makes RuntimeClass nvidia whatever is installed: the proof is the
 * runtime in its containerd config (kube/containerd.h). */
static int check_runtime_class(const struct gateway *gw, struct check *c, os_error *err)
{
	cJSON *rc = NULL;
	struct runtime_fact rt;
	int found = kube_get(gw->container, "runtimeclasses", NVIDIA_RUNTIME_CLASS, NULL, 0, 0, &rc, err);
	const char *handler = json_str(rc, "handler");

	if (found < 0 || containerd_nvidia_runtime(gw->container, 0, &rt, err) < 0) {
		cJSON_Delete(rc);
		return -1;
	}
	if (!found)
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia not found (was k3s started with --disable=runtimes?)"));
	else if (!handler || strcmp(handler, "nvidia") != 0)
		check_set(c, CHECK_FAIL, xasprintf("RuntimeClass nvidia has handler '%s', not 'nvidia'", handler ? handler : ""));
	else if (!rt.nvidia)
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia exists (k3s always makes it), but containerd has no nvidia runtime: the image lacks nvidia-container-runtime (" K3S_CONTAINERD_CONFIG ")"));
	else
		check_set(c, CHECK_PASS, xasprintf("RuntimeClass nvidia, handler nvidia; containerd runs it with %s",
					     rt.binary ? rt.binary : "nvidia-container-runtime"));
	runtime_fact_free(&rt);
	cJSON_Delete(rc);
	return 0;
}

static int check_device_plugin(const struct gateway *gw, struct check *c, os_error *err)
{
	cJSON *list = NULL;
	struct ds_status st;
	const cJSON *ds;

	if (kube_get(gw->container, "daemonsets", NULL, NULL, 1, 0, &list, err) < 0)
		return -1;
	ds = kube_find_device_plugin(list);
	kube_daemonset_status(ds, &st);
	if (!ds) {
		check_set(c, CHECK_FAIL, xstrdup("no DaemonSet labelled " DEVICE_PLUGIN_LABEL "=" DEVICE_PLUGIN_NAME
					   " (was the Helm chart installed? see job " DEVICE_PLUGIN_HELM_JOB ")"));
	} else {
		const char *ns = json_str(json_get(ds, "metadata", NULL), "namespace");
		const char *name = json_str(json_get(ds, "metadata", NULL), "name");
		if (st.desired == 0)
			check_set(c, CHECK_FAIL, xasprintf("DaemonSet %s/%s schedules 0 pods: its node affinity matches no node",
						     ns ? ns : "?", name ? name : "?"));
		else
			check_set(c, st.ready == st.desired ? CHECK_PASS : CHECK_FAIL,
			    xasprintf("DaemonSet %s/%s: %lld/%lld pods ready", ns ? ns : "?",
				      name ? name : "?", st.ready, st.desired));
		if (c->status == CHECK_FAIL)
			c->detail = kube_container_logs_tail(gw->container, ns ? ns : DEVICE_PLUGIN_NAMESPACE, NULL,
							     DEVICE_PLUGIN_CONTAINER, 20, 0);
	}
	cJSON_Delete(list);
	return 0;
}

/* With --mig-strategy mixed the smoke pod asks for a MIG device: the
 * first profile the node has (owned, in *resource). */
static void mig_choice(const struct gateway *gw, const struct strv *mig, char **resource)
{
	if (gw->c.mig_strategy && strcmp(gw->c.mig_strategy, "mixed") == 0 && mig->n)
		*resource = xstrndup(mig->v[0], strcspn(mig->v[0], "="));
}

/* With time-slicing the node advertises each of the container's GPUS
 * replicas times: exactly that, or the arithmetic is off. MIG devices of
 * the mixed strategy count as resources of their own. */
static int check_allocatable(const struct gateway *gw, int gpus, struct check *c, char **resource, int *schedulable,
			     os_error *err)
{
	struct sharing sh;
	struct strv mig = { 0 };
	cJSON *nodes = NULL;
	cleanup_free char *migs = NULL, *sick = NULL;
	long long n, cap, nmig;
	/* Under the single strategy the plugin's devices are MIG devices, if any. */
	int single = gw->c.mig_strategy && strcmp(gw->c.mig_strategy, "single") == 0;
	const char *unit = single ? (gpus == 1 ? "device" : "devices") : (gpus == 1 ? "GPU" : "GPUs");

	if (sharing_read(gw->container, DEVICE_PLUGIN_RELEASE, 0, &sh, err) < 0 ||
	    kube_get(gw->container, "nodes", NULL, NULL, 0, 0, &nodes, err) < 0)
		return -1;
	n = kube_nodes_allocatable_gpus(nodes);
	cap = kube_nodes_capacity_gpus(nodes);
	sick = kube_gpus_unhealthy(n, cap);
	nmig = mig_resources(nodes, &mig);
	*schedulable = n > 0 || nmig > 0;
	migs = strv_join(&mig, ", ");
	mig_choice(gw, &mig, resource);
	if (n < 0 && nmig > 0)
		check_set(c, CHECK_PASS, xasprintf("node allocatable %s (MIG, --mig-strategy %s); no whole GPU", migs,
						   gw->c.mig_strategy ? gw->c.mig_strategy : "none"));
	else if (n < 0)
		check_set(c, CHECK_FAIL, xstrdup("node allocatable has no nvidia.com/gpu: the device plugin registered no GPU (it logs \"No devices found. Waiting indefinitely.\" when it sees none)"));
	else if (sick)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld: %s", n, sick));
	else if (sh.replicas > 1 && !gpus)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld with %s:%d, but the gateway's own GPUs are unknown (see device-request), so the replicas cannot be checked",
						   n, sharing_mode_name(&sh), sh.replicas));
	else if (sh.replicas > 1 && n != (long long)gpus * sh.replicas)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld, not %d %s x %d (%s:%d)", n, gpus, unit,
						   sh.replicas, sharing_mode_name(&sh), sh.replicas));
	else if (sh.replicas > 1)
		check_set(c, CHECK_PASS, xasprintf("node allocatable nvidia.com/gpu = %lld: %d %s x %d, %s (%s)",
						   n, gpus, unit, sh.replicas, sharing_mode_name(&sh),
						   sh.mps ? "pods share a GPU at once, each with its share of it" : "pods share a GPU in turns"));
	else
		check_set(c, n > 0 || nmig > 0 ? CHECK_PASS : CHECK_FAIL,
			  xasprintf("node allocatable nvidia.com/gpu = %lld%s%s%s%s", n,
				    n || nmig ? "" : ": ", n || nmig ? "" : kube_gpus_zero_why(cap),
				    nmig ? ", " : "", nmig ? migs : ""));
	strv_free(&mig);
	cJSON_Delete(nodes);
	return 0;
}

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
	cJSON_AddItemToArray(cmd, cJSON_CreateString("nvidia-smi"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("-L"));
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

static char *pod_logs(const char *ctr, const char *pod)
{
	const char *args[] = { "logs", "--namespace", SMOKE_NAMESPACE, pod, "--tail=20", NULL };
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *out = kube_exec(ctr, args, NULL, 0, &res, &err) == 0 && res.status == 0
			    ? xstrdup(res.out) : xstrdup("");

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

/* Judge a finished pod: Succeeded with a GPU named in its log, and with
 * a MIG RESOURCE the MIG device under it. */
static void judge_smoke(const char *ctr, const char *pod, const char *resource, const cJSON *obj, struct check *c)
{
	const char *phase = json_str(json_get(obj, "status", NULL), "phase");
	cleanup_free char *logs = pod_logs(ctr, pod);
	const char *gpu = strstr(logs, "GPU ");
	cleanup_free char *gpu_line = run_first_line(gpu);
	long long code = -1;
	const cJSON *cs = cJSON_GetArrayItem(json_get(obj, "status", "containerStatuses", NULL), 0);

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

static int run_smoke(const struct gateway *gw, const struct verify_opts *vo, const char *resource, struct check *c,
		     os_error *err)
{
	cleanup_free char *pod = xasprintf("openshell-verify-%x%04x", (unsigned)getpid() & 0xffff,
					   (unsigned)(clock_ms() & 0xffff));
	cleanup_free char *manifest = verify_smoke_manifest(pod, vo->smoke_image, resource);
	const char *apply[] = { "apply", "-f", "-", NULL };
	/* Deleted, not waited for: the API has the deletion, the kubelet ends
	 * a finished pod on its own. */
	const char *del[] = { "delete", "pod", pod, "--namespace", SMOKE_NAMESPACE, "--ignore-not-found",
			      "--wait=false", NULL };
	struct run_result res = { 0 };
	long long deadline = clock_ms() + vo->timeout_ms;
	struct backoff b = { 0 };
	cleanup_free char *pending = NULL;
	cleanup_free char *target = xasprintf("pod/%s", pod);
	/* One kubectl wait while the pod runs, not a get per poll: its
	 * container's terminated state comes with the phase, in one update. */
	const char *until_done[] = { "--for=jsonpath={.status.containerStatuses[0].state.terminated}", target,
				     "--namespace", SMOKE_NAMESPACE, "--output=json", NULL };
	char *done = NULL;        /* the finished pod, as kubectl wait printed it */
	int rc = -1, waited = 0;

	if (kube_exec(gw->container, apply, manifest, 0, &res, err) < 0)
		goto out;
	if (res.status != 0) {
		cleanup_free char *line = run_first_line(res.err);
		check_set(c, CHECK_FAIL, xasprintf("kubectl apply of the smoke pod failed: %s", line));
		rc = 0;
		goto out;
	}
	for (;;) {
		os_error perr = { 0 };
		cJSON *obj = done ? json_parse(done, strlen(done), "kubectl wait output", &perr) : NULL;
		int found = obj ? 1 : kube_get(gw->container, "pods", pod, SMOKE_NAMESPACE, 0, 0, &obj, err);
		const char *phase = json_str(json_get(obj, "status", NULL), "phase");

		os_error_clear(&perr);   /* unreadable: the get above read it instead */
		free(done);
		done = NULL;
		if (found < 0)
			goto out;
		if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
			judge_smoke(gw->container, pod, resource, obj, c);
			cJSON_Delete(obj);
			break;
		}
		free(pending);
		pending = unschedulable_reason(obj) ? xstrdup(unschedulable_reason(obj)) : kube_pod_stuck(obj);
		cJSON_Delete(obj);
		if (!waited++) {
			/* The pod as it was when it finished: no get after it. */
			struct kube_wait_opts ko = { .timeout_ms = call_budget_ms(deadline, vo->timeout_ms),
						     .output = &done };
			int met = kube_wait(gw->container, until_done, &ko, err);

			if (met < 0 && !call_cut_by_deadline(err, deadline))
				goto out;
			os_error_clear(err);
			if (met > 0)
				continue;
		}
		if (!backoff_wait(&b, deadline)) {
			cleanup_free char *dur = clock_format_ms(vo->timeout_ms);
			if (!pending)
				pending = pod_warning(gw->container, pod);
			check_set(c, CHECK_FAIL, pending ? xasprintf("pod %s Pending: %s", pod, pending)
						   : xasprintf("pod %s did not finish within %s", pod, dur));
			break;
		}
	}
	rc = 0;
out:
	free(done);
	run_result_free(&res);
	if (!vo->keep) {
		os_error derr = { 0 };
		signals_shield();   /* an interrupted verify still cleans up its pod */
		if (kube_exec(gw->container, del, NULL, 0, &res, &derr) < 0 || res.status != 0)
			log_warn("could not delete smoke pod %s: %s", pod, derr.msg ? derr.msg : res.err);
		signals_unshield();
		run_result_free(&res);
		os_error_clear(&derr);
	} else {
		log_info("kept smoke pod %s in namespace %s (--keep)", pod, SMOKE_NAMESPACE);
	}
	return rc;
}

int verify_gateway(const struct gateway *gw, const struct verify_opts *vo,
		   struct check checks[VERIFY_NCHECKS], os_error *err)
{
	static const char *const names[VERIFY_NCHECKS] = {
		"device-request", "runtime-class", "device-plugin", "allocatable", "smoke-pod",
	};
	struct strv seen = { 0 };   /* the GPUs the gateway's container sees */
	int devices = 0;            /* what the plugin advertises for them */
	char *resource = NULL;      /* what the smoke pod asks for, if not nvidia.com/gpu */
	int i, rc = -1, schedulable = 0;

	for (i = 0; i < VERIFY_NCHECKS; i++)
		checks[i] = (struct check){ .name = names[i], .status = CHECK_SKIP };
	if (!gw->c.gpu_request) {
		for (i = 0; i < VERIFY_NCHECKS; i++)
			check_set(&checks[i], CHECK_NA, xstrdup("the gateway was started without --gpu"));
		return 0;
	}
	verify_device_request(gw, &checks[0]);
	if (checks[0].status == CHECK_PASS && verify_selected_gpus(gw, &seen, &devices, &checks[0], err) < 0)
		goto out;
	/* A cluster that does not answer fails the cluster checks, with that
	 * as their evidence, rather than ending verify without a report. */
	int ready = kube_readyz(gw->container, 0, err);
	if (ready < 0)
		goto out;
	if (!ready) {
		for (i = 1; i < VERIFY_NCHECKS - 1; i++)
			check_set(&checks[i], CHECK_FAIL, xstrdup("the k3s API does not answer (kubectl get --raw /readyz)"));
		check_set(&checks[VERIFY_NCHECKS - 1], CHECK_SKIP, xstrdup("not run: the k3s API does not answer"));
		rc = 0;
		goto out;
	}
	if (check_runtime_class(gw, &checks[1], err) < 0 || check_device_plugin(gw, &checks[2], err) < 0 ||
	    check_allocatable(gw, devices, &checks[3], &resource, &schedulable, err) < 0)
		goto out;
	/* Without a schedulable GPU the smoke pod could only wait for nothing;
	 * with some (an unhealthy one beside, a count off) it proves those. */
	if (!schedulable) {
		check_set(&checks[4], CHECK_SKIP, xstrdup("not run: no allocatable GPU"));
		rc = 0;
		goto out;
	}
	if ((rc = run_smoke(gw, vo, resource, &checks[4], err)) == 0)
		verify_smoke_gpu(&seen, &checks[4]);
out:
	strv_free(&seen);
	free(resource);
	return rc;
}

void verify_free(struct check checks[VERIFY_NCHECKS])
{
	for (int i = 0; i < VERIFY_NCHECKS; i++) {
		free(checks[i].evidence);
		free(checks[i].detail);
		checks[i].evidence = checks[i].detail = NULL;
	}
}
