/* gateway/verify_pods.c - verify's pods: the smoke pod and the isolation pod (see gateway/verify_checks.h).
 *
 * Both go in with one kubectl apply, before verify's looks, are waited for
 * by one kubectl wait (for each container's terminated state, whose
 * termination message is the pod's answer; it prints each pod as it
 * ends), judged, and deleted by one detached kubectl delete.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/child_output.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
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
 * that `kubectl wait` prints, with no call after it. Constants: nothing
 * of the user's is in them. The isolation pod's ends well whatever
 * nvidia-smi says (none found, or not there at all: no GPU either way). */
#define SMOKE_SCRIPT \
	"out=$(nvidia-smi -L 2>&1); s=$?; printf '%s\\n' \"$out\"; printf '%s\\n' \"$out\" >/dev/termination-log; exit $s"
#define ISOLATION_SCRIPT \
	"out=$(nvidia-smi -L 2>&1); printf '%s\\n' \"$out\"; printf '%s\\n' \"$out\" >/dev/termination-log; exit 0"

/* A pod of verify's under the nvidia runtime: RESOURCE (NULL: none) one of
 * which it asks for, ENV_ALL its NVIDIA_VISIBLE_DEVICES=all. */
static cJSON *probe_manifest(const char *pod, const char *image, const char *script, const char *resource, int env_all)
{
	cJSON *m = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(m, "metadata");
	cJSON *spec, *ctr, *cmd;

	cJSON_AddStringToObject(m, "apiVersion", "v1");
	cJSON_AddStringToObject(m, "kind", "Pod");
	cJSON_AddStringToObject(meta, "name", pod);
	cJSON_AddStringToObject(meta, "namespace", SMOKE_NAMESPACE);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "app.kubernetes.io/managed-by", "openshell");
	spec = cJSON_AddObjectToObject(m, "spec");
	/* Never: a finished pod must stay Succeeded, not restart. The nvidia
	 * RuntimeClass is what mounts the driver into the container. */
	cJSON_AddStringToObject(spec, "restartPolicy", "Never");
	cJSON_AddStringToObject(spec, "runtimeClassName", NVIDIA_RUNTIME_CLASS);
	ctr = cJSON_CreateObject();
	cJSON_AddStringToObject(ctr, "name", "smoke");
	cJSON_AddStringToObject(ctr, "image", image);
	cmd = cJSON_AddArrayToObject(ctr, "command");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("sh"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString(script));
	/* Should the shell fail before it writes the file, its log says why. */
	cJSON_AddStringToObject(ctr, "terminationMessagePolicy", "FallbackToLogsOnError");
	if (resource)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(ctr, "resources"), "limits"),
					resource, "1");
	if (env_all) {
		/* What every CUDA image sets: a pod that may name every GPU. */
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", "NVIDIA_VISIBLE_DEVICES");
		cJSON_AddStringToObject(e, "value", "all");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(ctr, "env"), e);
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), ctr);
	return m;
}

static char *print_manifest(cJSON *m)
{
	char *s = cJSON_PrintUnformatted(m);

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

/* One of verify's pods, from its manifest to its verdict. */
struct probe {
	char *name;
	int smoke;              /* the smoke pod, else the isolation pod */
	const char *resource;   /* the smoke pod's MIG resource, else NULL */
	struct check *check;    /* NULL: not wanted (any more) */
	/* verify_judge_smoke() or verify_judge_isolation() */
	void (*judge)(const char *pod, const char *resource, const char *phase, long long code, const char *out,
		      struct check *c);
	int judged;
};

/* The pods, applied with one kubectl apply and waited for with one
 * kubectl wait, which prints each as it finishes. */
struct verify_pods {
	struct probe probes[VERIFY_PODS];
	size_t n;
	struct run_child *apply, *wait;
	int applied;            /* the apply succeeded: the pods are to be deleted */
	char *apply_error;      /* its first line, when it failed */
	size_t waited;          /* how many the running wait is for */
	size_t printed;         /* how many it has printed ("}" closes one) */
	long long deadline;
	const struct verify_pod_plan *plan;
};

/* Judge a finished pod by its phase, exit code and answer. */
static void judge_finished(const char *ctr, struct probe *p, const cJSON *obj)
{
	const char *phase = json_str(json_get(obj, "status", NULL), "phase");
	const cJSON *cs = cJSON_GetArrayItem(json_get(obj, "status", "containerStatuses", NULL), 0);
	cleanup_free char *out = smoke_output(ctr, p->name, cs);
	long long code = -1;

	json_int(json_get(cs, "state", "terminated", "exitCode", NULL), -1000, 1000, &code);
	p->judge(p->name, p->resource, phase ? phase : "", code, out, p->check);
	if (p->check->status == CHECK_FAIL)
		p->check->detail = xstrdup(out);
	p->judged = 1;
}

/* The pod as it was when it finished, or why it has not: a look once the
 * wait gave up (the deadline, a wait that failed). */
static void judge_unfinished(const struct gateway *gw, struct probe *p, int timeout_ms)
{
	cJSON *obj = NULL;
	os_error err = { 0 };
	const char *phase = NULL;
	cleanup_free char *pending = NULL;

	if (kube_get(gw->container, "pods", p->name, SMOKE_NAMESPACE, 0, cleanup_budget_ms(), &obj, &err) > 0)
		phase = json_str(json_get(obj, "status", NULL), "phase");
	if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
		judge_finished(gw->container, p, obj);
	} else {
		cleanup_free char *dur = clock_format_ms(timeout_ms);
		pending = unschedulable_reason(obj) ? xstrdup(unschedulable_reason(obj)) : kube_pod_stuck(obj);
		if (!pending)
			pending = pod_warning(gw->container, p->name);
		check_set(p->check, CHECK_FAIL, pending ? xasprintf("pod %s Pending: %s", p->name, pending)
						  : xasprintf("pod %s did not finish within %s", p->name, dur));
		p->judged = 1;
	}
	cJSON_Delete(obj);
	os_error_clear(&err);
}

/* Deleted, neither waited for nor watched: the API has the deletion once
 * kubectl has run, and the kubelet ends a finished pod on its own. The
 * user waits for none of it (a call of its own, detached). */
static void delete_pods(const char *ctr, const struct verify_pods *vp)
{
	struct strv del = { 0 };
	os_error err = { 0 };

	strv_pushv(&del, (const char *const[]){ "delete", "pod", NULL });
	for (size_t i = 0; i < vp->n; i++)
		strv_push(&del, vp->probes[i].name);
	strv_pushv(&del, (const char *const[]){ "--namespace", SMOKE_NAMESPACE, "--ignore-not-found", "--wait=false", NULL });
	signals_shield();   /* an interrupted verify still cleans up its pods */
	if (kube_detached(ctr, strv_argv(&del), cleanup_budget_ms(), &err) < 0)
		log_warn("could not delete verify's pods: %s", err.msg);
	signals_unshield();
	os_error_clear(&err);
	strv_free(&del);
}

/* kubectl wait prints each object met as indented JSON, whose last line
 * is a "}" alone: once the last one wanted is in, the answer is too, and
 * the call is ended there rather than waited for. */
static int wait_line(void *ctx, const char *line)
{
	struct verify_pods *vp = ctx;

	return strcmp(line, "}") == 0 && ++vp->printed == vp->waited;
}

/* One kubectl wait for the whole run of every wanted pod's container: its
 * terminated state, message included, comes with the phase, in one update. */
static int wait_start(const struct gateway *gw, struct verify_pods *vp, os_error *err)
{
	struct strv args = { 0 };
	struct kube_wait_opts wo = { .timeout_ms = call_budget_ms(vp->deadline, vp->plan->timeout_ms),
				     .on_line = wait_line, .ctx = vp };

	vp->waited = vp->printed = 0;
	strv_push(&args, "--for=jsonpath={.status.containerStatuses[0].state.terminated}");
	for (size_t i = 0; i < vp->n; i++)
		if (vp->probes[i].check && !vp->probes[i].judged) {
			strv_pushf(&args, "pod/%s", vp->probes[i].name);
			vp->waited++;
		}
	strv_pushv(&args, (const char *const[]){ "--namespace", SMOKE_NAMESPACE, "--output=json", NULL });
	if (vp->waited)
		vp->wait = kube_wait_start(gw->container, strv_argv(&args), &wo, err);
	strv_free(&args);
	return !vp->waited || vp->wait ? 0 : -1;
}

/* Judge each pod the wait printed; the others by a look at them. -1 when
 * docker failed (a wait the deadline cut short is a verdict, not that). */
static int wait_end(const struct gateway *gw, struct verify_pods *vp, os_error *err)
{
	struct run_result res = { 0 };
	int rc = docker_await(vp->wait, &res, err);
	const char *p = res.out;
	cJSON *obj;

	vp->wait = NULL;
	if (rc < 0 && !call_cut_by_deadline(err, vp->deadline)) {
		run_result_free(&res);
		return -1;
	}
	os_error_clear(err);
	while (p && (obj = cJSON_ParseWithOpts(p, &p, 0))) {
		const char *name = json_str(json_get(obj, "metadata", NULL), "name");

		for (size_t i = 0; name && i < vp->n; i++)
			if (vp->probes[i].check && !vp->probes[i].judged && strcmp(vp->probes[i].name, name) == 0)
				judge_finished(gw->container, &vp->probes[i], obj);
		cJSON_Delete(obj);
	}
	for (size_t i = 0; i < vp->n; i++)
		if (vp->probes[i].check && !vp->probes[i].judged)
			judge_unfinished(gw, &vp->probes[i], vp->plan->timeout_ms);
	run_result_free(&res);
	return 0;
}

static void add_probe(struct verify_pods *vp, cJSON *items, unsigned tag, struct check *check, int smoke)
{
	struct probe *p = &vp->probes[vp->n++];
	const char *resource = vp->plan->resource;

	if (smoke)
		*p = (struct probe){ .name = xasprintf("openshell-verify-%x", tag), .smoke = 1, .resource = resource,
				     .check = check, .judge = verify_judge_smoke };
	else
		*p = (struct probe){ .name = xasprintf("openshell-verify-%x-nogpu", tag), .check = check,
				     .judge = verify_judge_isolation };
	cJSON_AddItemToArray(items, probe_manifest(p->name, vp->plan->image, smoke ? SMOKE_SCRIPT : ISOLATION_SCRIPT,
						   smoke ? (resource ? resource : GPU_RESOURCE) : NULL, !smoke));
}

struct verify_pods *verify_pods_start(const struct gateway *gw, const struct verify_pod_plan *plan, os_error *err)
{
	unsigned tag = ((unsigned)getpid() & 0xffff) << 16 | (unsigned)(clock_ms() & 0xffff);
	struct verify_pods *vp = xcalloc(1, sizeof(*vp));
	cJSON *list = cJSON_CreateObject();
	cJSON *items = (cJSON_AddStringToObject(list, "apiVersion", "v1"), cJSON_AddStringToObject(list, "kind", "List"),
			cJSON_AddArrayToObject(list, "items"));
	const char *apply[] = { "apply", "-f", "-", NULL };
	cleanup_free char *manifest = NULL;

	vp->plan = plan;
	vp->deadline = clock_ms() + plan->timeout_ms;
	if (plan->smoke)
		add_probe(vp, items, tag, plan->smoke, 1);
	if (plan->isolation)
		add_probe(vp, items, tag, plan->isolation, 0);
	manifest = print_manifest(list);
	if (vp->n && !(vp->apply = kube_start(gw->container, apply,
					      &(struct run_spec){ .input = manifest, .input_len = strlen(manifest) }, err))) {
		verify_pods_drop(gw, vp);
		return NULL;
	}
	return vp;
}

/* The apply's answer, and once it is in the wait for every pod it made. */
static int applied(const struct gateway *gw, struct verify_pods *vp, os_error *err)
{
	struct run_result res = { 0 };
	int rc;

	if (!vp->apply)
		return 0;
	rc = docker_await(vp->apply, &res, err);
	vp->apply = NULL;
	/* Cut short, the pods may be there all the same. */
	vp->applied = rc < 0 || res.status == 0;
	if (rc == 0 && res.status != 0)
		vp->apply_error = run_first_line(res.err);
	run_result_free(&res);
	if (rc == 0 && res.status == 0)
		rc = wait_start(gw, vp, err);
	return rc;
}

void verify_pods_applied(const struct gateway *gw, struct verify_pods *vp)
{
	os_error err = { 0 };

	/* A failure here is verify_pods()'s to say, once it knows the plan. */
	if (vp && applied(gw, vp, &err) < 0)
		log_verbose("%s", err.msg);
	os_error_clear(&err);
}

int verify_pods(const struct gateway *gw, struct verify_pods *vp, const struct verify_pod_plan *plan, os_error *err)
{
	int rc = -1, changed = 0;

	if (!vp && !(vp = verify_pods_start(gw, plan, err)))
		return -1;
	/* The looks may have ruled a pod out (no GPU to schedule, no runtime
	 * to run it): it is neither waited for nor judged. */
	for (size_t i = 0; i < vp->n; i++) {
		struct check *now = vp->probes[i].smoke ? plan->smoke : plan->isolation;
		changed |= vp->probes[i].check != now;
		vp->probes[i].check = now;
	}
	vp->plan = plan;
	if (applied(gw, vp, err) < 0)
		goto out;
	if (vp->apply_error) {
		for (size_t i = 0; i < vp->n; i++)
			if (vp->probes[i].check)
				check_set(vp->probes[i].check, CHECK_FAIL,
					  xasprintf("kubectl apply of verify's pods failed: %s", vp->apply_error));
		rc = 0;
		goto out;
	}
	if (changed && vp->wait) {
		docker_drop(&vp->wait);
		if (wait_start(gw, vp, err) < 0)
			goto out;
	}
	rc = vp->wait ? wait_end(gw, vp, err) : 0;
out:
	verify_pods_drop(gw, vp);
	return rc;
}

void verify_pods_drop(const struct gateway *gw, struct verify_pods *vp)
{
	os_error err = { 0 };

	if (!vp)
		return;
	if (vp->apply) {   /* it must have ended for the delete to find the pods */
		struct run_result res = { 0 };
		vp->applied = docker_await(vp->apply, &res, &err) < 0 || res.status == 0;
		run_result_free(&res);
		os_error_clear(&err);
	}
	docker_drop(&vp->wait);
	if (vp->applied && !vp->plan->keep)
		delete_pods(gw->container, vp);
	else if (vp->applied)
		for (size_t k = 0; k < vp->n; k++)
			log_info("kept pod %s in namespace %s (--keep)", vp->probes[k].name, SMOKE_NAMESPACE);
	for (size_t k = 0; k < vp->n; k++)
		free(vp->probes[k].name);
	free(vp->apply_error);
	free(vp);
}
