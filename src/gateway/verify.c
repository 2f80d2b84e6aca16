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
#include "gateway/sharing.h"
#include "gateway/verify.h"
#include "gateway/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"

#define SMOKE_NAMESPACE "default"

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = { "pass", "fail", "skip", "n/a" };

	return names[s];
}

static void set(struct check *c, enum check_status s, char *evidence)
{
	c->status = s;
	free(c->evidence);
	c->evidence = evidence;
}

static int has_cap(const char *caps, const char *cap)
{
	size_t n = strlen(cap);

	for (const char *p = caps; (p = strstr(p, cap)); p += n)
		if ((p == caps || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The request must reach the nvidia driver, name at least one GPU, and
 * carry what the chain needs: utility (NVML, nvidia-smi) and compute. */
static void check_device_request(const struct gateway *gw, struct check *c)
{
	const struct gw_container *k = &gw->c;
	cleanup_free char *missing = xstrdup("");

	for (const char *const *cap = (const char *const[]){ "gpu", "utility", "compute", NULL }; *cap; cap++)
		if (!has_cap(k->gpu_caps, *cap)) {
			char *m = xasprintf("%s%s%s", missing, *missing ? "," : "", *cap);
			free(missing);
			missing = m;
		}
	if (*k->gpu_driver && strcmp(k->gpu_driver, "nvidia") != 0)
		set(c, CHECK_FAIL, xasprintf("%s: driver is not nvidia", k->gpu_request_desc));
	else if (k->gpu_count == 0 && !*k->gpu_devices)
		set(c, CHECK_FAIL, xasprintf("%s: the request names no GPU", k->gpu_request_desc));
	else if (*missing)
		set(c, CHECK_FAIL, xasprintf("%s: capabilities %s missing", k->gpu_request_desc, missing));
	else
		set(c, CHECK_PASS, xstrdup(k->gpu_request_desc));
}

static int in_list(const struct strv *s, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return 1;
	return 0;
}

/* The container must see exactly the GPUs its request means on the Docker
 * host, by UUID: its own nvidia-smi against the host's (a throwaway
 * container lists those, gateway/gpus.h). *seen gets the container's. */
static int check_selected_gpus(const struct gateway *gw, struct strv *seen, struct check *c, os_error *err)
{
	cleanup_free char *sel = gpus_of_request(gw->c.gpu_count, gw->c.gpu_devices);
	struct host_gpus mine = { 0 }, host = { 0 };
	struct strv want = { 0 };
	struct gpus g = { 0 };
	os_error e = { 0 };
	cleanup_free char *has = NULL, *means = NULL;
	int rc = -1, exact;

	if (gpus_parse(sel, &g, err) < 0 || container_gpus(gw->container, 0, &mine, err) < 0)
		goto out;
	for (int i = 0; i < mine.n; i++)
		strv_push(seen, mine.v[i].uuid);
	if (host_gpus_probe(gw->c.image, 0, &host, &e) == 0 && host.n == 0 && mine.n == 0) {
		set(c, CHECK_PASS, xasprintf("%s; the gateway sees no GPU, and the Docker host has none", c->evidence));
		rc = 0;
		goto out;
	}
	if (e.msg || gpus_resolve(&g, &host, &want, &e) < 0) {
		set(c, CHECK_FAIL, xasprintf("%s; %s", c->evidence, e.msg));
		rc = 0;
		goto out;
	}
	exact = seen->n == want.n;
	for (size_t i = 0; exact && i < want.n; i++)
		exact = in_list(seen, want.v[i]);
	has = strv_join(seen, ", ");
	means = strv_join(&want, ", ");
	if (exact)
		set(c, CHECK_PASS, xasprintf("%s; the gateway sees %s: exactly --gpus %s", c->evidence, has, sel));
	else
		set(c, CHECK_FAIL, xasprintf("%s; the gateway sees %s, but --gpus %s is %s on the Docker host",
					     c->evidence, *has ? has : "no GPU", sel, means));
	rc = 0;
out:
	gpus_free(&g);
	host_gpus_free(&mine);
	host_gpus_free(&host);
	strv_free(&want);
	os_error_clear(&e);
	return rc;
}

/* The smoke pod's GPU must be one the gateway was given. */
static void check_smoke_gpu(const struct strv *seen, struct check *c)
{
	const char *u = c->evidence ? strstr(c->evidence, "(UUID: ") : NULL;
	cleanup_free char *uuid = u ? xstrndup(u + 7, strcspn(u + 7, ")")) : NULL;

	if (c->status == CHECK_PASS && uuid && seen->n && !in_list(seen, uuid))
		set(c, CHECK_FAIL, xasprintf("%s, which is not one of the gateway's GPUs", c->evidence));
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
		set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia not found (was k3s started with --disable=runtimes?)"));
	else if (!handler || strcmp(handler, "nvidia") != 0)
		set(c, CHECK_FAIL, xasprintf("RuntimeClass nvidia has handler '%s', not 'nvidia'", handler ? handler : ""));
	else if (!rt.nvidia)
		set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia exists (k3s always makes it), but containerd has no nvidia runtime: the image lacks nvidia-container-runtime (" K3S_CONTAINERD_CONFIG ")"));
	else
		set(c, CHECK_PASS, xasprintf("RuntimeClass nvidia, handler nvidia; containerd runs it with %s",
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
		set(c, CHECK_FAIL, xstrdup("no DaemonSet labelled " DEVICE_PLUGIN_LABEL "=" DEVICE_PLUGIN_NAME
					   " (was the Helm chart installed? see job " DEVICE_PLUGIN_HELM_JOB ")"));
	} else {
		const char *ns = json_str(json_get(ds, "metadata", NULL), "namespace");
		const char *name = json_str(json_get(ds, "metadata", NULL), "name");
		if (st.desired == 0)
			set(c, CHECK_FAIL, xasprintf("DaemonSet %s/%s schedules 0 pods: its node affinity matches no node",
						     ns ? ns : "?", name ? name : "?"));
		else
			set(c, st.ready == st.desired ? CHECK_PASS : CHECK_FAIL,
			    xasprintf("DaemonSet %s/%s: %lld/%lld pods ready", ns ? ns : "?",
				      name ? name : "?", st.ready, st.desired));
		if (c->status == CHECK_FAIL)
			c->detail = kube_logs_tail(gw->container, ns ? ns : DEVICE_PLUGIN_NAMESPACE,
						   DEVICE_PLUGIN_LABEL "=" DEVICE_PLUGIN_NAME, 20, 0);
	}
	cJSON_Delete(list);
	return 0;
}

/* With time-slicing the node advertises each of the container's GPUS
 * replicas times: exactly that, or the arithmetic is off. */
static int check_allocatable(const struct gateway *gw, size_t gpus, struct check *c, os_error *err)
{
	struct sharing sh;
	cJSON *nodes = NULL;
	long long n;

	if (sharing_read(gw->container, DEVICE_PLUGIN_RELEASE, 0, &sh, err) < 0 ||
	    kube_get(gw->container, "nodes", NULL, NULL, 0, 0, &nodes, err) < 0)
		return -1;
	n = kube_nodes_allocatable_gpus(nodes);
	if (n < 0)
		set(c, CHECK_FAIL, xstrdup("node allocatable has no nvidia.com/gpu: the device plugin registered no GPU (it logs \"No devices found. Waiting indefinitely.\" when it sees none)"));
	else if (sh.replicas > 1 && gpus && n != (long long)gpus * sh.replicas)
		set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld, not %zu GPUs x %d (time-slicing:%d)", n, gpus,
					     sh.replicas, sh.replicas));
	else if (sh.replicas > 1)
		set(c, CHECK_PASS, xasprintf("node allocatable nvidia.com/gpu = %lld: %zu GPU%s x %d, time-slicing (pods share a GPU in turns)",
					     n, gpus, gpus == 1 ? "" : "s", sh.replicas));
	else
		set(c, n > 0 ? CHECK_PASS : CHECK_FAIL,
		    xasprintf("node allocatable nvidia.com/gpu = %lld%s", n, n ? "" : ": the plugin found no GPU"));
	cJSON_Delete(nodes);
	return 0;
}

char *verify_smoke_manifest(const char *pod, const char *image)
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
				GPU_RESOURCE, "1");
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

/* Judge a finished pod: Succeeded with a GPU named in its log. */
static void judge_smoke(const char *ctr, const char *pod, const cJSON *obj, struct check *c)
{
	const char *phase = json_str(json_get(obj, "status", NULL), "phase");
	cleanup_free char *logs = pod_logs(ctr, pod);
	const char *gpu = strstr(logs, "GPU ");
	cleanup_free char *gpu_line = run_first_line(gpu);
	long long code = -1;
	const cJSON *cs = cJSON_GetArrayItem(json_get(obj, "status", "containerStatuses", NULL), 0);

	json_int(json_get(cs, "state", "terminated", "exitCode", NULL), -1000, 1000, &code);
	if (strcmp(phase, "Succeeded") == 0 && gpu)
		set(c, CHECK_PASS, xasprintf("pod %s Succeeded: %s", pod, gpu_line));
	else if (strcmp(phase, "Succeeded") == 0)
		set(c, CHECK_FAIL, xasprintf("pod %s Succeeded but its log names no GPU", pod));
	else
		set(c, CHECK_FAIL, xasprintf("pod %s Failed (exit code %lld)", pod, code));
	if (c->status == CHECK_FAIL)
		c->detail = xstrdup(logs);
}

static int run_smoke(const struct gateway *gw, const struct verify_opts *vo, struct check *c,
		     os_error *err)
{
	cleanup_free char *pod = xasprintf("openshell-verify-%x%04x", (unsigned)getpid() & 0xffff,
					   (unsigned)(clock_ms() & 0xffff));
	cleanup_free char *manifest = verify_smoke_manifest(pod, vo->smoke_image);
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
		set(c, CHECK_FAIL, xasprintf("kubectl apply of the smoke pod failed: %s", line));
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
			judge_smoke(gw->container, pod, obj, c);
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

			if (met < 0 && (err->code != OS_EXIT_TIMEOUT || clock_ms() < deadline))
				goto out;
			os_error_clear(err);
			if (met > 0)
				continue;
		}
		if (!backoff_wait(&b, deadline)) {
			cleanup_free char *dur = clock_format_ms(vo->timeout_ms);
			if (!pending)
				pending = pod_warning(gw->container, pod);
			set(c, CHECK_FAIL, pending ? xasprintf("pod %s Pending: %s", pod, pending)
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
	int i, rc = -1;

	for (i = 0; i < VERIFY_NCHECKS; i++)
		checks[i] = (struct check){ .name = names[i], .status = CHECK_SKIP };
	if (!gw->c.gpu_request) {
		for (i = 0; i < VERIFY_NCHECKS; i++)
			set(&checks[i], CHECK_NA, xstrdup("the gateway was started without --gpu"));
		return 0;
	}
	check_device_request(gw, &checks[0]);
	if (checks[0].status == CHECK_PASS && check_selected_gpus(gw, &seen, &checks[0], err) < 0)
		goto out;
	/* A cluster that does not answer fails the cluster checks, with that
	 * as their evidence, rather than ending verify without a report. */
	int ready = kube_readyz(gw->container, 0, err);
	if (ready < 0)
		goto out;
	if (!ready) {
		for (i = 1; i < VERIFY_NCHECKS - 1; i++)
			set(&checks[i], CHECK_FAIL, xstrdup("the k3s API does not answer (kubectl get --raw /readyz)"));
		set(&checks[VERIFY_NCHECKS - 1], CHECK_SKIP, xstrdup("not run: the k3s API does not answer"));
		rc = 0;
		goto out;
	}
	if (check_runtime_class(gw, &checks[1], err) < 0 || check_device_plugin(gw, &checks[2], err) < 0 ||
	    check_allocatable(gw, seen.n, &checks[3], err) < 0)
		goto out;
	/* Without a schedulable GPU the smoke pod could only wait for nothing. */
	if (checks[3].status != CHECK_PASS) {
		set(&checks[4], CHECK_SKIP, xstrdup("not run: no allocatable GPU"));
		rc = 0;
		goto out;
	}
	if ((rc = run_smoke(gw, vo, &checks[4], err)) == 0)
		check_smoke_gpu(&seen, &checks[4]);
out:
	strv_free(&seen);
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
