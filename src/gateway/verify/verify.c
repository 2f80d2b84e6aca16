/* gateway/verify/verify.c - the GPU checks, one per enum verify_check (see gateway/verify/verify.h). */
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
#include "base/names.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/verify/verify.h"
#include "gateway/verify/verify_checks.h"
#include "gateway/wait/wait.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* One call for what the cluster checks read: the node, the DaemonSets,
 * the RuntimeClasses, the HelmChartConfigs and k3s's Addons, in one
 * List. */
#define VERIFY_STATE_TYPES "nodes,daemonsets,runtimeclasses,helmchartconfigs,addons.k3s.cattle.io"
/* Under DRA, the ResourceSlices too. */
#define VERIFY_DRA_STATE_TYPES VERIFY_STATE_TYPES ",resourceslices.resource.k8s.io"

static const char *state_types(const struct gateway *gw)
{
	return gw->allocation == GPU_ALLOCATION_DRA ? VERIFY_DRA_STATE_TYPES : VERIFY_STATE_TYPES;
}

/* The Addon by which k3s's deploy controller records its runtimes.yaml,
 * the file of RuntimeClasses it stages (pkg/deploy/stage.go). */
#define K3S_RUNTIMES_ADDON "runtimes"

/* The get of the cluster's objects, with the GPU look (BEFORE) when
 * there is one, and containerd's config read in the same exec. */
static struct run_child *state_start(const struct gateway *gw, const char *before, int timeout_ms, os_error *err)
{
	return kube_get_start(&gw->ctr, before, K3S_CONTAINERD_CONFIG, state_types(gw), NULL, 1, timeout_ms, err);
}

/* Is the RuntimeClass still to come? k3s's deploy controller applies
 * runtimes.yaml once it starts: it makes the Addon, then the objects,
 * then writes the Addon's checksum (pkg/deploy/controller.go: deploy).
 * With --disable=runtimes it deletes them instead, and they never come. */
static int runtimes_pending(const struct gateway *gw, const cJSON *list)
{
	const cJSON *addon = kube_find(list, "Addon", K3S_RUNTIMES_ADDON);
	const char *sum = json_str(json_get(addon, "spec", NULL), "checksum");

	return !gw->c.runtimes_disabled && !kube_find(list, "RuntimeClass", NVIDIA_RUNTIME_CLASS) && !(sum && *sum);
}

/* Is the cluster too young for the get's answer (FOUND, LIST or ERR)? */
static int state_pending(const struct gateway *gw, int found, const cJSON *list, const os_error *err)
{
	if (found >= 0)
		return runtimes_pending(gw, list);
	return kube_api_starting(err) || kube_get_type_unknown(err, "helmchartconfigs") ||
	       kube_get_type_unknown(err, "addons");
}

/* In a cluster's first seconds (as after start --no-wait) k3s answers 503
 * "apiserver not ready" until its API server runs; then it has not
 * registered its own types yet, and kubectl refuses the whole get; nor
 * has its deploy controller, which waits for those types, made the
 * RuntimeClasses (pkg/server/server.go: startOnAPIServerReady). So the
 * get is tried again, after a growing step, until they come, within the
 * --timeout. A try the deadline cuts short says nothing new, nor does
 * one that fails after an answer (kubectl's own request timeout, a
 * moment before the deadline): the try before stands, its answer or its
 * error (an interrupt is no such failure). *FIRST is what the exec printed
 * before kubectl (the look, then containerd's config), also when kubectl
 * failed. */
struct state_try {
	int found;
	cJSON *list;
	char *first;
	os_error err;
};

static void state_try_free(struct state_try *t)
{
	cJSON_Delete(t->list);
	free(t->first);
	os_error_clear(&t->err);
	*t = (struct state_try){ 0 };
}

static int get_state(const struct gateway *gw, const struct deadline *by, const char *before,
		     struct run_child *call, cJSON **list, char **first, os_error *err)
{
	struct backoff b = { 0 };
	struct state_try prev = { 0 };
	int tried = 0, found;

	for (;;) {
		found = call ? kube_get_finish(call, state_types(gw), list, first, err) : -1;
		if (found < 0 && tried && (deadline_cut(by, err) || (prev.found >= 0 && !signals_pending()))) {
			os_error_clear(err);
			free(*first);
			*list = prev.list;
			*first = prev.first;
			*err = prev.err;
			return prev.found;
		}
		state_try_free(&prev);
		if (!state_pending(gw, found, *list, err) || !backoff_wait(&b, by->at_ms))
			return found;
		prev = (struct state_try){ .found = found, .list = *list, .first = *first, .err = *err };
		*list = NULL;
		*first = NULL;
		*err = (os_error){ 0 };
		tried = 1;
		call = state_start(gw, before, deadline_call_ms(by), err);
	}
}

/* k3s makes RuntimeClass nvidia whatever is installed: the proof is the
 * runtime in its containerd config (kube/containerd.h). */
static void check_runtime_class(const struct gateway *gw, const cJSON *list, const struct runtime_fact *rt, struct check *c)
{
	const cJSON *rc = kube_find(list, "RuntimeClass", NVIDIA_RUNTIME_CLASS);
	const char *handler = json_str(rc, "handler");

	if (!rc && gw->c.runtimes_disabled)
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia not found: k3s runs with --disable=runtimes, which deletes them"));
	else if (!rc && runtimes_pending(gw, list))
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia not found: k3s's deploy controller has not applied its runtimes.yaml yet (kubectl get addon -n kube-system " K3S_RUNTIMES_ADDON ")"));
	else if (!rc)
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia not found, though k3s applied its runtimes.yaml: it was deleted since (restart the gateway to apply it again)"));
	else if (!handler || strcmp(handler, "nvidia") != 0)
		check_set(c, CHECK_FAIL, xasprintf("RuntimeClass nvidia has handler '%s', not 'nvidia'", handler ? handler : ""));
	else if (!rt->nvidia)
		check_set(c, CHECK_FAIL, xstrdup("RuntimeClass nvidia exists (k3s always makes it), but containerd has no nvidia runtime: the image lacks nvidia-container-runtime (" K3S_CONTAINERD_CONFIG ")"));
	else
		check_set(c, CHECK_PASS, xasprintf("RuntimeClass nvidia, handler nvidia; containerd runs it with %s",
					     rt->binary ? rt->binary : "nvidia-container-runtime"));
}

/* Under DRA, a sharing its HelmChartConfig turns on (--gpu-sharing
 * time-slicing or mps): the driver's pods run with its gate, so that a claim's
 * GpuConfig may ask for it. */
static void check_dra_sharing(const cJSON *list, const cJSON *ds, const struct ds_status *st, struct check *c)
{
	struct sharing sh;
	const char *gate, *mode;
	cleanup_free char *was = NULL;

	sharing_from_list(list, DRA_DRIVER_RELEASE, &sh);
	if (!sh.per_claim || c->status != CHECK_PASS)
		return;
	gate = sharing_dra_gate(&sh);
	mode = sharing_mode_name(&sh);
	was = c->evidence ? xstrdup(c->evidence) : xstrdup("");
	if (dra_gates_rolled(ds, st, gate))
		check_set(c, CHECK_PASS, xasprintf("%s; %s on: its pods run with feature gate %s, so a claim's GpuConfig may ask for it", was, mode, gate));
	else if (st->rolled && st->updated == st->desired)   /* rolled out without it: a render to come, or a hand's */
		check_set(c, CHECK_FAIL, xasprintf("%s, but --gpu-sharing %s asks for feature gate %s, which its pods do not run with (all %lld updated): job helm-install-%s in kube-system has not rendered the chart again yet, or the DaemonSet was changed by hand; once that job is done, 'openshell gateway start --gpu-sharing none', then '--gpu-sharing %s', renders it again", was, mode, gate, st->updated, DRA_DRIVER_RELEASE, mode));
	else
		check_set(c, CHECK_FAIL, xasprintf("%s, but --gpu-sharing %s asks for feature gate %s, which its pods do not run with yet (%lld of %lld updated; job helm-install-%s in kube-system upgrades the chart)", was, mode, gate, st->updated, st->desired, DRA_DRIVER_RELEASE));
}

/* The DaemonSet that serves the node's GPUs: the device plugin's, or
 * under DRA the driver's kubelet plugin. */
static void check_allocator(const struct gateway *gw, const cJSON *list, struct check *c)
{
	const struct gpu_allocator *by = gpu_allocator(gw->allocation);
	const cJSON *ds = gpu_allocator_daemonset(by, list);
	struct ds_status st;

	kube_daemonset_status(ds, &st);
	/* The device plugin's is looked for by the chart's label, the DRA
	 * driver's by its name (gpu_allocator_daemonset()). */
	if (!ds && by->mode == GPU_ALLOCATION_DEVICE_PLUGIN) {
		check_set(c, CHECK_FAIL, xasprintf("no DaemonSet labelled %s=%s (was the Helm chart installed? see job %s)",
						   by->pod_label, by->pod_value, by->helm_job));
		return;
	}
	if (!ds) {
		check_set(c, CHECK_FAIL, xasprintf("no DaemonSet %s of %s (was its Helm chart installed? see job %s in kube-system)",
						   by->daemonset, by->title, by->helm_job));
		return;
	}
	const char *ns = json_str(json_get(ds, "metadata", NULL), "namespace");
	const char *name = json_str(json_get(ds, "metadata", NULL), "name");
	if (st.desired == 0)
		check_set(c, CHECK_FAIL, xasprintf("DaemonSet %s/%s schedules 0 pods: its node affinity matches no node",
					     ns ? ns : "?", name ? name : "?"));
	else
		check_set(c, st.ready == st.desired ? CHECK_PASS : CHECK_FAIL,
			  xasprintf("DaemonSet %s/%s: %lld/%lld pods ready", ns ? ns : "?", name ? name : "?", st.ready,
				    st.desired));
	if (by->mode == GPU_ALLOCATION_DRA)
		check_dra_sharing(list, ds, &st, c);
	if (c->status == CHECK_FAIL)
		c->detail = kube_container_logs_tail(&gw->ctr, ns ? ns : by->ns, NULL, by->container, 20, 0);
}

/* The cluster checks from one look at it (LIST) and the containerd fact;
 * the smoke pod when a GPU can be scheduled, the isolation pod when
 * containerd has the nvidia runtime that pods of both run under (VP: the
 * pods applied before the looks, or NULL). */
static int check_cluster(const struct gateway *gw, const cJSON *list, const struct runtime_fact *rt, int devices,
			 const struct strv *seen, struct check checks[VERIFY_NCHECKS], struct verify_pod_plan *plan,
			 struct verify_pods *vp, int *smoked, os_error *err)
{
	int schedulable = 0, dra = gw->allocation == GPU_ALLOCATION_DRA;
	const char *none = dra ? "not run: the node publishes no GPU" : "not run: no allocatable GPU";

	plan->runtime_class = kube_find(list, "RuntimeClass", NVIDIA_RUNTIME_CLASS) != NULL;
	check_runtime_class(gw, list, rt, &checks[VC_RUNTIME_CLASS]);
	check_allocator(gw, list, &checks[VC_DEVICE_PLUGIN]);
	if (dra)
		verify_dra_slices(list, plan->node, seen, &checks[VC_ALLOCATABLE], &schedulable);
	else
		verify_allocatable(gw, devices, plan->device_gpus, list, &checks[VC_ALLOCATABLE], (char **)&plan->resource,
				   &schedulable);
	plan->slices = list;
	/* Without a schedulable GPU the smoke pod could only wait for nothing;
	 * with some (an unhealthy one beside, a count off) it proves those. */
	if (schedulable) {
		plan->smoke = &checks[VC_SMOKE_POD];
		plan->privileged = &checks[VC_PRIVILEGED_POD];
		plan->extended = dra ? &checks[VC_EXTENDED_POD] : NULL;
		*smoked = 1;
		/* nvidia.com/gpu is the whole GPUs' class's: on a node of MIG
		 * devices alone the check has no place, as under the device plugin. */
		if (dra && !dra_published_whole(list, plan->node)) {
			plan->extended = NULL;
			checks[VC_EXTENDED_POD].name = NULL;
		}
	} else {
		check_set(&checks[VC_SMOKE_POD], CHECK_SKIP, xstrdup(none));
		check_set(&checks[VC_PRIVILEGED_POD], CHECK_SKIP, xstrdup(none));
		check_set(&checks[VC_EXTENDED_POD], CHECK_SKIP, xstrdup(none));
	}
	if (rt->nvidia)
		plan->isolation = &checks[VC_POD_ISOLATION];
	else
		check_set(&checks[VC_POD_ISOLATION], CHECK_SKIP, xstrdup("not run: containerd has no nvidia runtime"));
	return verify_pods(gw, vp, plan, err);
}

/* A cluster that does not answer, or was still starting when the
 * --timeout ran out (WHY, or NULL), fails the cluster checks, with that
 * as their evidence, rather than ending verify without a report; its pods
 * are not run. */
static void api_silent(struct check checks[VERIFY_NCHECKS], const char *why)
{
	for (int i = VC_RUNTIME_CLASS; i <= VC_ALLOCATABLE; i++)
		check_set(&checks[i], CHECK_FAIL, why ? xstrdup(why) : xstrdup("the k3s API does not answer (kubectl get --raw /readyz)"));
	for (int i = VC_SMOKE_POD; i < VERIFY_NCHECKS; i++)
		check_set(&checks[i], CHECK_SKIP, why ? xstrdup("not run: k3s was still starting")
						  : xstrdup("not run: the k3s API does not answer"));
}

static const char *const check_names[VERIFY_NCHECKS] = {
	[VC_DEVICE_REQUEST] = "device-request", [VC_RUNTIME_CLASS] = "runtime-class",
	[VC_DEVICE_PLUGIN] = "device-plugin",   [VC_ALLOCATABLE] = "allocatable",
	[VC_SMOKE_POD] = "smoke-pod",           [VC_POD_ISOLATION] = "pod-isolation",
	[VC_PRIVILEGED_POD] = "privileged-pod", [VC_EXTENDED_POD] = "extended-pod",
	[VC_NODE_GPUS] = "node-gpus",
};

/* One verify: what its looks and pods hold while they run, from the start
 * (pods and looks in flight) to the judgement of the checks. */
struct verify_run {
	const struct gateway *gw;
	const struct verify_opts *vo;
	struct check *checks;
	/* The gateway's own node: its agents' on other hosts have GPUs of
	 * their own, which this container's looks do not see. */
	char *own;
	struct verify_pod_plan plan;   /* the pods as the looks decide */
	/* As they are applied before the looks: VP holds its address until
	 * verify_pods() hands it PLAN, so it lives as long as the run. */
	struct verify_pod_plan early;
	struct verify_pods *vp;        /* the pods applied before the looks */
	struct verify_nodes vn;
	struct gpu_looks looks;
	struct run_child *state_call;
	const char *look;          /* the GPU look, when the request holds */
	const char *state_look;    /* the look in the get's exec, or NULL */
	struct strv seen;          /* the GPUs the gateway's container sees */
	int devices;               /* what the plugin advertises for them */
	char *first;               /* the get exec's text before kubectl's */
	struct runtime_fact rt;    /* containerd's nvidia runtime, in it */
	cJSON *list;               /* the cluster's objects, or NULL */
	struct deadline by;        /* the --timeout, for the get's tries again */
	os_error api_err;          /* why the get found none */
	char *silent;              /* the cluster was still starting at the --timeout: why */
	int looked;                /* the GPU look was read (the --timeout may cut it short) */
	int smoked;
};

/* Every check named and skipped; without a GPU request, not applicable. */
static void verify_run_init(struct verify_run *v)
{
	for (int i = 0; i < VERIFY_NCHECKS; i++)
		v->checks[i] = (struct check){ .name = check_names[i], .status = CHECK_SKIP };
	v->checks[VC_NODE_GPUS].name = NULL;   /* until there are nodes to check */
	/* Under DRA the driver's kubelet plugin and its ResourceSlices stand
	 * for the device plugin and the node's allocatable. */
	if (v->gw->allocation == GPU_ALLOCATION_DRA) {
		v->checks[VC_DEVICE_PLUGIN].name = "dra-driver";
		v->checks[VC_ALLOCATABLE].name = "resource-slices";
	} else {
		v->checks[VC_EXTENDED_POD].name = NULL;
	}
	if (!v->gw->c.gpu_request)
		for (int i = 0; i < VERIFY_NCHECKS; i++)
			check_set(&v->checks[i], CHECK_SKIP, xstrdup("not applicable: the gateway was started without --gpu"));
}

/* The pods go in first, so that they run while the looks do; only the
 * mixed MIG strategy's smoke pod must know the node's MIG profiles first.
 * Then every look the checks need in one docker exec: the container's
 * GPUs with the driver's list of the host's (gateway/gpu/gpu_driver.h),
 * containerd's config, and the cluster's objects in one kubectl get. */
static int verify_run_start(struct verify_run *v, os_error *err)
{
	struct verify_pod_plan *early = &v->early;

	verify_device_request(v->gw, &v->checks[VC_DEVICE_REQUEST]);
	v->plan = (struct verify_pod_plan){ .node = v->own, .image = v->vo->smoke_image,
					    .timeout_ms = v->vo->timeout_ms, .keep = v->vo->keep };
	if (verify_nodes_start(v->gw, &v->vn, err) < 0)
		return -1;
	v->plan.nodes = v->vn.pods;
	v->plan.n_nodes = v->vn.n;
	if (v->vn.n)
		v->checks[VC_NODE_GPUS].name = check_names[VC_NODE_GPUS];
	if (v->checks[VC_DEVICE_REQUEST].status == CHECK_PASS)
		v->look = GPUS_LOOK_BEFORE;
	/* The look rides with the pods' create, while they start; without
	 * pods yet, with the get. */
	*early = v->plan;
	early->look = v->look;
	early->smoke = &v->checks[VC_SMOKE_POD];
	early->isolation = &v->checks[VC_POD_ISOLATION];
	early->privileged = &v->checks[VC_PRIVILEGED_POD];
	early->dra = v->plan.dra = v->gw->allocation == GPU_ALLOCATION_DRA;
	early->extended = early->dra ? &v->checks[VC_EXTENDED_POD] : NULL;
	if (v->gw->mig != MIG_MIXED && !(v->vp = verify_pods_start(v->gw, early, err)))
		return -1;
	v->state_look = v->vp ? NULL : v->look;
	v->state_call = state_start(v->gw, v->state_look, 0, err);
	return v->state_call ? 0 : -1;
}

/* The looks' answers: the GPUs seen (from the pods' exec or the get's),
 * containerd's config and the cluster's objects. 1: the cluster answered,
 * 0: it did not, and the API says it is down, or k3s was still starting
 * when the --timeout ran out (the checks say so). */
static int verify_run_collect(struct verify_run *v, os_error *err)
{
	const char *config, *looked = NULL, *rest;
	int found;

	if (v->vp && v->look && !(looked = verify_pods_look(v->vp, err))) {
		/* Cut by the deadline, as on a slow host: no answer (below). */
		if (!deadline_cut(&v->by, err))
			return -1;
		v->api_err = *err;
		*err = (os_error){ 0 };
		goto no_answer;
	}
	if (v->vp && v->look) {
		if (verify_gpus_seen(v->gw, &v->looks, looked, &rest, &v->seen, &v->devices, err) < 0)
			return -1;
		v->looked = 1;
	}
	found = get_state(v->gw, &v->by, v->state_look, v->state_call, &v->list, &v->first, &v->api_err);
	v->state_call = NULL;
	config = v->first;
	/* The exec itself failed: neither the look nor the get ran. Cut by
	 * the deadline (a slow host), that is no answer, which /readyz then
	 * explains; any other failure is the error. */
	if (v->state_look && !v->first && found < 0) {
		if (!deadline_cut(&v->by, &v->api_err))
			goto api_error;
		goto no_answer;
	}
	if (v->state_look) {
		if (verify_gpus_seen(v->gw, &v->looks, v->first, &config, &v->seen, &v->devices, err) < 0)
			return -1;
		v->looked = 1;
	}
	/* WSL2: the plugin's one device is every GPU the gateway sees. */
	v->plan.device_gpus = v->looks.mine.dxg ? v->looks.mine.n : 1;
	if (config && config[strspn(config, " \t\r\n")])
		containerd_parse_nvidia(config, &v->rt);
	if (found >= 0)
		return 1;
no_answer:
	/* No answer: an API that is down (/readyz says so), one up but k3s
	 * still starting its own parts, or a failure of its own. */
	found = kube_readyz(&v->gw->ctr, 0, err);
	if (found <= 0)
		return found;
	if (state_pending(v->gw, -1, NULL, &v->api_err)) {
		v->silent = xasprintf("k3s was still starting when the --timeout ran out: %s", v->api_err.msg);
		return 0;
	}
api_error:
	*err = v->api_err;
	v->api_err = (os_error){ 0 };
	return -1;
}

/* The checks, from what was collected (ANSWERED: the cluster did). */
static int verify_run_judge(struct verify_run *v, int answered, os_error *err)
{
	if (!answered) {
		api_silent(v->checks, v->silent);
	} else {
		struct strv publishable = { 0 };
		kube_keep_node(v->list, v->own);
		/* Under DRA a MIG-enabled GPU without MIG devices is published not at all. */
		if (v->gw->allocation == GPU_ALLOCATION_DRA)
			host_gpus_dra_published(&v->looks.mine, &publishable);
		int rc = check_cluster(v->gw, v->list, &v->rt, v->devices,
				       v->gw->allocation == GPU_ALLOCATION_DRA ? &publishable : &v->seen, v->checks, &v->plan,
				       v->vp, &v->smoked, err);
		strv_free(&publishable);
		v->vp = NULL;   /* verify_pods() has done with it */
		if (rc < 0)
			return -1;
		verify_nodes_judge(&v->vn, &v->checks[VC_NODE_GPUS]);
	}
	/* A look the --timeout cut short saw nothing: no evidence either way. */
	if (v->look && !v->looked)
		check_set(&v->checks[VC_DEVICE_REQUEST], CHECK_SKIP,
			  xasprintf("%s; not looked at: the --timeout ran out before the gateway's GPUs were read",
				    v->checks[VC_DEVICE_REQUEST].evidence ? v->checks[VC_DEVICE_REQUEST].evidence : "?"));
	else if (v->look && verify_gpus_judge(v->gw, &v->looks, &v->seen, &v->checks[VC_DEVICE_REQUEST], err) < 0)
		return -1;
	if (v->smoked) {
		verify_smoke_gpu(&v->seen, &v->checks[VC_SMOKE_POD]);
		verify_smoke_gpu(&v->seen, &v->checks[VC_EXTENDED_POD]);
	}
	return 0;
}

static void verify_run_free(struct verify_run *v)
{
	verify_pods_drop(v->gw, v->vp);
	verify_gpus_free(&v->looks);
	verify_nodes_free(&v->vn);
	docker_drop(&v->state_call);
	runtime_fact_free(&v->rt);
	cJSON_Delete(v->list);
	free(v->first);
	free((char *)v->plan.resource);
	free(v->own);
	strv_free(&v->seen);
	os_error_clear(&v->api_err);
	free(v->silent);
}

int verify_gateway(const struct gateway *gw, const struct verify_opts *vo,
		   struct check checks[VERIFY_NCHECKS], os_error *err)
{
	struct verify_run v = { .gw = gw, .vo = vo, .checks = checks, .by = deadline_in(vo->timeout_ms, 0) };
	int answered, rc = 0;

	verify_run_init(&v);
	if (!gw->c.gpu_request)
		return 0;
	v.own = gateway_hostname(gw->name);
	if (verify_run_start(&v, err) < 0 || (answered = verify_run_collect(&v, err)) < 0 ||
	    verify_run_judge(&v, answered, err) < 0)
		rc = -1;
	verify_run_free(&v);
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
