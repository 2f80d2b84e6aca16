/* gateway/verify/verify_pods.c - verify's pods: the smoke pod and the isolation pod (see gateway/verify/verify_checks.h).
 *
 * Both go in with one kubectl create, before verify's looks, and the
 * same docker exec then watches them (kube/watch.h's THEN): the watch
 * says each container's end (whose termination message is the pod's
 * answer) as it comes; they are judged as they end, and deleted by one
 * detached kubectl delete.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/child_output.h"
#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/verify/verify_checks.h"
#include "gateway/wait/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"
#include "kube/watch.h"

/* One of verify's pods, from its manifest to its verdict. */
enum probe_kind { PROBE_SMOKE, PROBE_ISOLATION, PROBE_PRIVILEGED, PROBE_EXTENDED };
struct probe {
	char *name;
	enum probe_kind kind;
	struct verify_node_pod *np;   /* an agent's smoke pod: its node's; else NULL (the plan's) */
	const char *resource;   /* the smoke pod's MIG resource, else NULL */
	struct check *check;    /* NULL: not wanted (any more) */
	int device_gpus;        /* the plan's, on the gateway's own node; else 0 */
	int claim;              /* under DRA: it asks by a claim from the run's template */
	/* verify_judge_smoke() or verify_judge_isolation() */
	void (*judge)(const char *pod, const char *resource, int device_gpus, const char *phase, long long code,
		      const char *out, struct check *c);
	int judged;
};

/* The pods, made with one kubectl create and watched by one kubectl
 * watch in the same exec, which says each pod's end as it comes. */
struct verify_pods {
	struct probe probes[VERIFY_PODS];
	size_t n;
	char *instance;         /* their app.kubernetes.io/instance label */
	char *selector;
	char *manifest;         /* their List, the create's stdin */
	char *create;           /* the create's command line (the watch's THEN) */
	struct kube_watch watch;
	char *tmpl;             /* under DRA, the ResourceClaimTemplate of its pods' claims */
	char *since;            /* the resourceVersion of the first object the create made, or NULL */
	int since_read;         /* the create's last line was read for it */
	struct verify_claims claims; /* and those claims, each state seen */
	int created;            /* the create ran, or may have: the pods are to be deleted */
	int created_again;      /* a create the starting API refused was made once more */
	struct deadline by;     /* the plan's --timeout, each watch within POD_WATCH_MAX_MS */
	const struct verify_pod_plan *plan;
};

static char *print_manifest(cJSON *m)
{
	char *s = cJSON_PrintUnformatted(m);

	cJSON_Delete(m);
	return s;
}

/* Judge a finished pod by its phase, exit code and answer. */
static void judge_finished(const struct docker_ctr *ctr, struct probe *p, const cJSON *obj)
{
	const char *phase = json_str(json_get(obj, "status", NULL), "phase");
	const cJSON *cs = cJSON_GetArrayItem(json_get(obj, "status", "containerStatuses", NULL), 0);
	cleanup_free char *out = verify_pod_output(ctr, p->name, cs);
	long long code = -1;

	json_int(json_get(cs, "state", "terminated", "exitCode", NULL), -1000, 1000, &code);
	p->judge(p->name, p->resource, p->device_gpus, phase ? phase : "", code, out, p->check);
	if (p->kind == PROBE_EXTENDED)
		verify_dra_judge_extended(obj, p->check);
	if (p->check->status == CHECK_FAIL)
		p->check->detail = xstrdup(out);
	if (p->np) {   /* judged again once its node's GPUs are known */
		p->np->pod = xstrdup(p->name);
		p->np->phase = xstrdup(phase ? phase : "");
		p->np->out = xstrdup(out);
		p->np->code = code;
	}
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

	if (kube_get(&gw->ctr, "pods", p->name, SMOKE_NAMESPACE, 0, cleanup_budget_ms(), &obj, &err) > 0)
		phase = json_str(json_get(obj, "status", NULL), "phase");
	if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
		judge_finished(&gw->ctr, p, obj);
	} else {
		cleanup_free char *dur = clock_format_ms(timeout_ms);
		pending = verify_pod_unschedulable(obj) ? xstrdup(verify_pod_unschedulable(obj)) : kube_pod_stuck(obj);
		if (!pending)
			pending = verify_pod_warning(&gw->ctr, p->name);
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
static void delete_pods(const struct docker_ctr *ctr, const struct verify_pods *vp)
{
	struct strv del = { 0 };
	os_error err = { 0 };

	strv_push(&del, "delete");
	for (size_t i = 0; i < vp->n; i++)
		strv_pushf(&del, "pod/%s", vp->probes[i].name);
	/* Its claims go with the pods (their owner). */
	if (vp->tmpl)
		strv_pushf(&del, "resourceclaimtemplates.resource.k8s.io/%s", vp->tmpl);
	strv_pushv(&del, (const char *const[]){ "--namespace", SMOKE_NAMESPACE, "--ignore-not-found", "--wait=false", NULL });
	signals_shield();   /* an interrupted verify still cleans up its pods */
	if (kube_detached(ctr, strv_argv(&del), cleanup_budget_ms(), &err) < 0)
		log_warn("could not delete verify's pods: %s", err.msg);
	signals_unshield();
	os_error_clear(&err);
	strv_free(&del);
}

/* A watch of this run's pods lasts at most this long, then starts again:
 * one that openshell stops runs on in the container until then. */
#define POD_WATCH_MAX_MS 30000

static int watch_start(const struct gateway *gw, struct verify_pods *vp, os_error *err)
{
	if (kube_watch_start(&vp->watch, &gw->ctr, deadline_call_ms(&vp->by), err) < 0)
		return -1;
	vp->created = 1;
	return 0;
}

/* The create failed: no pod to wait for. kubectl says a line for each
 * item the API refused (`… pods "NAME" is forbidden: …`), going on past
 * it: each wanted pod fails with its own line, or the first when none
 * names it; the others may be there, and are deleted all the same. */
static void create_failed(struct verify_pods *vp)
{
	const char *all = vp->watch.then_error;

	for (size_t i = 0; i < vp->n; i++) {
		struct probe *p = &vp->probes[i];
		cleanup_free char *quoted = xasprintf("\"%s\"", p->name);
		const char *at = strstr(all, quoted), *line;

		if (!p->check || p->judged)
			continue;
		while (at && at > all && at[-1] != '\n')
			at--;
		line = at ? at : all + strspn(all, " \n");
		check_set(p->check, CHECK_FAIL, xasprintf("kubectl create of verify's pods failed: %.*s",
							  (int)strcspn(line, "\n"), line));
		p->judged = 1;
	}
}

/* THEN is done: the create's resourceVersion, taken off what the look
 * said, once. */
static const char *created_since(struct verify_pods *vp)
{
	if (!vp->since_read && vp->watch.then_done) {
		vp->since_read = 1;
		vp->since = verify_created_since(vp->watch.then_text);
	}
	return vp->since;
}

/* A create answered 503 while k3s's API server was still starting (a
 * verify right after start --no-wait, whose cluster get has waited for
 * the API since), or refused by the RuntimeClass admission plugin before
 * k3s made RuntimeClass nvidia (which the get has waited for since), is
 * made once more, without the look, whose output is in, while the
 * --timeout lasts. The API may have come up between its items:
 * a pod of this run that already exists is no failure then, nor are
 * klog's lines (discovery's warnings); anything else is the create's
 * error. 1 when it is to be made again. */
static int create_again(struct verify_pods *vp)
{
	if (vp->created_again || deadline_passed(&vp->by) ||
	    !verify_create_early(vp->watch.then_error, vp->plan->runtime_class))
		return 0;
	vp->created_again = 1;
	free(vp->create);
	vp->create = verify_create_again_script(kube_request_s(deadline_call_ms(&vp->by)), vp->tmpl);
	vp->watch.then = vp->create;
	free(vp->watch.then_error);
	vp->watch.then_error = NULL;
	return 1;
}

/* Each wanted pod whose container the watch says has ended is judged:
 * its terminated state, message included, comes with the phase. 1 once
 * every wanted pod is. */
static int judge_ended(const struct gateway *gw, struct verify_pods *vp)
{
	const cJSON *pod;
	int left = 0;

	cJSON_ArrayForEach(pod, json_get(vp->watch.list, "items", NULL)) {
		const char *name = json_str(json_get(pod, "metadata", NULL), "name");
		const cJSON *cs = cJSON_GetArrayItem(json_get(pod, "status", "containerStatuses", NULL), 0);

		for (size_t i = 0; name && json_get(cs, "state", "terminated", NULL) && i < vp->n; i++)
			if (vp->probes[i].check && !vp->probes[i].judged && strcmp(vp->probes[i].name, name) == 0)
				judge_finished(&gw->ctr, &vp->probes[i], pod);
	}
	for (size_t i = 0; i < vp->n; i++)
		left += vp->probes[i].check && !vp->probes[i].judged;
	return !left;
}

/* Once the create is done, the claims' watch may start. */
static void follow_claims(struct verify_pods *vp)
{
	if (vp->tmpl && vp->watch.then_done)
		verify_claims_from(&vp->claims, created_since(vp));
}

/* Serve both watches until the pods' says something: 0, as
 * run_wait_any() of the pods' alone would. */
static int wait_watches(struct verify_pods *vp)
{
	int k;

	for (;;) {
		follow_claims(vp);
		verify_claims_again(&vp->claims);
		struct run_child *kids[2] = { vp->watch.c, vp->claims.watch.c };
		/* Woken too when the claims' watch, down, may start again. */
		k = run_wait_until(kids, 2, verify_claims_due(&vp->claims));
		if (k != 1 && k != RUN_WAIT_DUE)
			return k;
	}
}

/* The pods that asked by a claim and passed are judged by their claims,
 * once these have come (or a few seconds more have gone by). */
static void judge_claims(struct verify_pods *vp)
{
	const char *passed[VERIFY_PODS];
	size_t n = 0;

	for (size_t i = 0; i < vp->n; i++)
		if (vp->probes[i].claim && vp->probes[i].check && vp->probes[i].check->status == CHECK_PASS)
			passed[n++] = vp->probes[i].name;
	follow_claims(vp);
	verify_claims_await(&vp->claims, passed, n);
	for (size_t i = 0; i < vp->n; i++)
		if (vp->probes[i].claim && vp->probes[i].check)
			verify_dra_judge_claim(vp->probes[i].name, verify_claims_of(&vp->claims, vp->probes[i].name),
					       vp->claims.error, vp->plan->slices, vp->probes[i].check);
}

/* Serve the watch until every wanted pod is judged; at the deadline, the
 * others by a look at them. -1 when docker failed (a watch the deadline
 * cut short is a verdict, not that). */
static int watch_pods(const struct gateway *gw, struct verify_pods *vp, os_error *err)
{
	struct backoff b = { 0 };

	while (!judge_ended(gw, vp)) {
		if (vp->watch.then_error && create_again(vp))
			continue;
		if (vp->watch.then_error) {
			create_failed(vp);
			return 0;
		}
		if (!vp->watch.c && (deadline_passed(&vp->by) || watch_start(gw, vp, err) < 0))
			break;
		if (wait_watches(vp) != 0 || !run_ended(vp->watch.c) || kube_watch_end(&vp->watch, err) == 0)
			continue;
		if (vp->watch.then_error) {
			os_error_clear(err);
			continue;
		}
		/* The API restarting, or the like: again, after a step. */
		if (deadline_cut(&vp->by, err) ||
		    (err->code != OS_EXIT_FAILURE && err->code != OS_EXIT_TIMEOUT))
			break;
		log_verbose("will retry: %s", err->msg);
		os_error_clear(err);
		if (!backoff_wait(&b, vp->by.at_ms))
			break;
	}
	if (err->msg && !deadline_cut(&vp->by, err))
		return -1;
	os_error_clear(err);
	for (size_t i = 0; i < vp->n; i++)
		if (vp->probes[i].check && !vp->probes[i].judged)
			judge_unfinished(gw, &vp->probes[i], vp->plan->timeout_ms);
	judge_claims(vp);
	return 0;
}

/* The check of the plan's that a pod of KIND on the gateway's own node answers. */
static struct check *plan_check(const struct verify_pod_plan *plan, enum probe_kind kind)
{
	switch (kind) {
	case PROBE_SMOKE: return plan->smoke;
	case PROBE_ISOLATION: return plan->isolation;
	case PROBE_PRIVILEGED: return plan->privileged;
	case PROBE_EXTENDED: return plan->extended;
	}
	return NULL;
}

static void add_probe(struct verify_pods *vp, cJSON *items, unsigned tag, enum probe_kind kind)
{
	struct probe *p = &vp->probes[vp->n++];
	const char *resource = vp->plan->resource ? vp->plan->resource : GPU_RESOURCE;
	static const char *const suffix[] = { [PROBE_SMOKE] = "", [PROBE_ISOLATION] = "-nogpu",
					      [PROBE_PRIVILEGED] = "-privileged", [PROBE_EXTENDED] = "-extended" };

	*p = (struct probe){ .name = xasprintf("openshell-verify-%x%s", tag, suffix[kind]), .kind = kind,
			     .check = plan_check(vp->plan, kind) };
	if (kind == PROBE_ISOLATION) {
		p->judge = verify_judge_isolation;
		cJSON_AddItemToArray(items, verify_pod_manifest(&(struct verify_pod_spec){
			.name = p->name, .node = vp->plan->node, .instance = vp->instance, .image = vp->plan->image,
			.isolation = 1 }));
		return;
	}
	p->resource = vp->plan->resource;
	p->judge = kind == PROBE_PRIVILEGED ? verify_judge_privileged : verify_judge_smoke;
	/* Under DRA the smoke pods ask by a claim; the extended one by count. */
	p->claim = vp->tmpl && kind != PROBE_EXTENDED;
	cJSON_AddItemToArray(items, verify_pod_manifest(&(struct verify_pod_spec){
		.name = p->name, .node = vp->plan->node, .instance = vp->instance, .image = vp->plan->image,
		.resource = p->claim ? NULL : resource, .privileged = kind == PROBE_PRIVILEGED,
		.claim_template = p->claim ? vp->tmpl : NULL }));
	if (p->claim)
		verify_claims_add(&vp->claims, p->name);
}

/* Agent K's smoke pod, on its node. */
static void add_node_probe(struct verify_pods *vp, cJSON *items, unsigned tag, size_t k)
{
	struct probe *p = &vp->probes[vp->n++];
	struct verify_node_pod *np = &vp->plan->nodes[k];

	*p = (struct probe){ .name = xasprintf("openshell-verify-%x-%s", tag, np->node), .kind = PROBE_SMOKE,
			     .np = np, .check = &np->check, .judge = verify_judge_smoke, .claim = vp->tmpl != NULL };
	/* Under DRA by a claim too, allocated from that node's slices. */
	cJSON_AddItemToArray(items, verify_pod_manifest(&(struct verify_pod_spec){
		.name = p->name, .node = np->node, .instance = vp->instance, .image = vp->plan->image,
		.resource = p->claim ? NULL : GPU_RESOURCE, .claim_template = p->claim ? vp->tmpl : NULL }));
	if (p->claim)
		verify_claims_add(&vp->claims, p->name);
}

struct verify_pods *verify_pods_start(const struct gateway *gw, const struct verify_pod_plan *plan, os_error *err)
{
	unsigned tag = ((unsigned)getpid() & 0xffff) << 16 | (unsigned)(clock_ms() & 0xffff);
	struct verify_pods *vp = xcalloc(1, sizeof(*vp));
	cJSON *list = cJSON_CreateObject();
	cJSON *items = (cJSON_AddStringToObject(list, "apiVersion", "v1"), cJSON_AddStringToObject(list, "kind", "List"),
			cJSON_AddArrayToObject(list, "items"));

	vp->plan = plan;
	vp->by = deadline_in(plan->timeout_ms, POD_WATCH_MAX_MS);
	vp->instance = xasprintf("openshell-verify-%x", tag);
	vp->selector = xasprintf("app.kubernetes.io/instance=%s", vp->instance);
	vp->watch = (struct kube_watch){ .resource = "pods", .ns = SMOKE_NAMESPACE, .selector = vp->selector };
	vp->create = verify_create_script(kube_request_s(deadline_call_ms(&vp->by)), plan->look);
	/* First in the List: kubectl creates its items in order, and a pod's
	 * claim is made from its template once both are there. */
	if (plan->dra) {
		vp->tmpl = xasprintf("%s-gpu", vp->instance);
		cJSON_AddItemToArray(items, verify_dra_template(vp->tmpl, vp->instance));
		verify_claims_init(&vp->claims, &gw->ctr, vp->selector, &vp->by);
	}
	if (plan->smoke)
		add_probe(vp, items, tag, PROBE_SMOKE);
	if (plan->isolation)
		add_probe(vp, items, tag, PROBE_ISOLATION);
	if (plan->privileged)
		add_probe(vp, items, tag, PROBE_PRIVILEGED);
	if (plan->extended)
		add_probe(vp, items, tag, PROBE_EXTENDED);
	for (size_t k = 0; k < plan->n_nodes && k < VERIFY_MAX_NODES; k++)
		add_node_probe(vp, items, tag, k);
	vp->manifest = print_manifest(list);
	vp->watch.then = vp->create;
	vp->watch.input = vp->manifest;
	/* The watch follows the create in its exec: it hears of the pods'
	 * end however soon it comes. */
	if (vp->n && watch_start(gw, vp, err) < 0) {
		verify_pods_drop(gw, vp);
		return NULL;
	}
	return vp;
}

int verify_pods(const struct gateway *gw, struct verify_pods *vp, const struct verify_pod_plan *plan, os_error *err)
{
	int rc = -1;

	if (!vp && !(vp = verify_pods_start(gw, plan, err)))
		return -1;
	/* The looks may have ruled a pod out (no GPU to schedule, no runtime
	 * to run it): it is neither waited for nor judged. */
	for (size_t i = 0; i < vp->n; i++)
		if (!vp->probes[i].np) {
			vp->probes[i].check = plan_check(plan, vp->probes[i].kind);
			vp->probes[i].device_gpus = plan->device_gpus;
		}
	vp->plan = plan;
	rc = watch_pods(gw, vp, err);
	verify_pods_drop(gw, vp);
	return rc;
}

/* Until THEN is done, or the exec ended without. */
static void await_then(struct verify_pods *vp)
{
	while (vp->watch.c && !vp->watch.then_done && !run_ended(vp->watch.c))
		run_wait_any(&vp->watch.c, 1);
}

const char *verify_pods_look(struct verify_pods *vp, os_error *err)
{
	await_then(vp);
	/* Ended without the mark: a create the API refused is the pods'
	 * verdict, not the look's; anything else is the exec's failure. */
	if (!vp->watch.then_done && vp->watch.c && kube_watch_end(&vp->watch, err) < 0 && !vp->watch.then_error)
		return NULL;
	os_error_clear(err);
	created_since(vp);
	return vp->watch.then_text ? vp->watch.then_text : "";
}

void verify_pods_drop(const struct gateway *gw, struct verify_pods *vp)
{
	os_error err = { 0 };
	int refused;

	if (!vp)
		return;
	/* The create must have ended for the delete to find the pods. */
	await_then(vp);
	if (vp->watch.c && run_ended(vp->watch.c))
		kube_watch_end(&vp->watch, &err);
	os_error_clear(&err);
	refused = vp->watch.then_error != NULL;
	kube_watch_free(&vp->watch);
	verify_claims_free(&vp->claims);
	/* After a failed create too: a List's create goes on past an item
	 * the API refused. */
	if (vp->created && !vp->plan->keep)
		delete_pods(&gw->ctr, vp);
	else if (vp->created && !refused)
		for (size_t k = 0; k < vp->n; k++)
			log_info("kept pod %s in namespace %s (--keep)", vp->probes[k].name, SMOKE_NAMESPACE);
	if (vp->created && vp->plan->keep && !refused && vp->tmpl)
		log_info("kept ResourceClaimTemplate %s in namespace %s (--keep)", vp->tmpl, SMOKE_NAMESPACE);
	for (size_t k = 0; k < vp->n; k++)
		free(vp->probes[k].name);
	free(vp->tmpl);
	free(vp->since);
	free(vp->manifest);
	free(vp->create);
	free(vp->instance);
	free(vp->selector);
	free(vp);
}
