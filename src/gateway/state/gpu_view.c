/* gateway/state/gpu_view.c - every GPU device of a gateway (see gateway/state/gpu_view.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/child_output.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "gateway/state/gpu_claims.h"
#include "gateway/state/gpu_ids.h"
#include "gateway/state/gpu_procs.h"
#include "gateway/state/gpu_view.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"
#include "kube/checkpoint.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define SMI_MARK "#openshell-gpus-smi"
#define QUERY_MARK "#openshell-gpus-query"
#define SICK_MARK "#openshell-gpus-sick"
#define END_MARK "#openshell-gpus-end"
/* A constant: nothing of the user's is in it. The checkpoint is missing
 * until a device plugin has registered; the plugin's reasons for an
 * unhealthy device are in its containers' logs, which the kubelet keeps
 * under /var/log/pods (NAMESPACE_POD_UID/CONTAINER/RESTART.log). */
#define NODE_SCRIPT                                                                                          \
	"cat " KUBELET_DEVICE_CHECKPOINT " 2>/dev/null; echo; echo '" SMI_MARK "'; nvidia-smi -L 2>&1; "      \
	"echo '" QUERY_MARK "'; nvidia-smi --query-gpu=uuid,memory.used,memory.total,utilization.gpu "         \
	"--format=csv,noheader,nounits 2>/dev/null; " GPU_PROCS_SCRIPT "; echo '" SICK_MARK "'; "                \
	"grep -h 'marking device as unhealthy' "                                                                  \
	"/var/log/pods/*/nvidia-device-plugin-ctr/*.log 2>/dev/null; echo '" END_MARK "'"
#define SERVER_TYPES "pods,nodes,helmchartconfigs"
/* Under DRA, who holds a GPU is a claim's (gateway/state/gpu_claims.h). */
#define SERVER_DRA_TYPES SERVER_TYPES "," GPU_CLAIMS_TYPES

/* One node asked: its exec, then what it said. */
struct node_ask {
	const char *name, *host;
	struct docker_ctr ctr;       /* the server's container, or an agent's on its record's daemon */
	int server;
	const char *types;           /* the server's: what its kubectl gets */
	int gpu;                     /* it has GPUs: rows of its own */
	struct run_child *c;
	char *why;                   /* it did not answer: why */
	struct device_checkpoint cp;
	int have_cp;
	char *cp_why;                /* a checkpoint there that does not read: why */
	struct host_gpus gpus;
	char *smi;                   /* nvidia-smi -L's output */
	char *query;                 /* nvidia-smi --query-gpu's lines */
	char *procs;                 /* the processes on its GPUs (gateway/state/gpu_procs.h) */
	char *sick;                  /* the plugin's log lines that mark a device unhealthy */
	cJSON *list;                 /* the server's: pods, nodes, HelmChartConfigs */
	char *pods_why;              /* the server's: why that list is missing */
};

const char *gpu_share_name(enum gpu_share s)
{
	static const char *const names[] = { "exclusive", "time-slicing", "mps", "mig" };

	return names[s];
}

static void ask_start(struct node_ask *a)
{
	struct strv argv = { 0 };
	struct run_spec spec = { 0 };
	os_error err = { 0 };

	strv_pushv(&argv, (const char *const[]){ "exec", a->ctr.name, "sh", "-c", NULL });
	if (a->server) {
		strv_push(&argv, NODE_SCRIPT "; exec \"$@\"");
		strv_pushv(&argv, (const char *const[]){ "openshell", "kubectl", NULL });
		strv_pushf(&argv, "--request-timeout=%ds", kube_request_s(docker_call_timeout_ms()));
		strv_pushv(&argv, (const char *const[]){ "get", a->types, "--all-namespaces", "--output=json", NULL });
	} else {
		strv_push(&argv, NODE_SCRIPT);
	}
	a->c = docker_start(a->ctr.on, strv_argv(&argv), &spec, &err);
	if (!a->c)
		a->why = xstrdup(err.msg ? err.msg : "docker did not start");
	os_error_clear(&err);
	strv_free(&argv);
}

char *gpu_view_part(const char *out, const char *mark)
{
	cleanup_free char *line = xasprintf("%s\n", mark);
	const char *at = strstr(out, line), *end;

	if (!at)
		return NULL;
	at += strlen(line);
	/* From the newline before: an empty section's next mark is at AT. */
	end = strstr(at - 1, "\n#openshell-gpus-");
	return xstrndup(at, end ? (size_t)(end + 1 - at) : strlen(at));
}

/* OUT, ERRS and STATUS: the exec's; its kubectl's failure (the server's)
 * leaves the nodes' own answers standing. */
static void ask_read(struct node_ask *a, const char *out, const char *errs, int status)
{
	const char *smi = strstr(out, SMI_MARK "\n"), *end = strstr(out, END_MARK "\n");
	os_error err = { 0 };

	a->smi = gpu_view_part(out, SMI_MARK);
	if (!smi || !end || !a->smi) {
		a->why = xstrdup("its exec ended before nvidia-smi had answered");
		return;
	}
	if (strspn(out, " \t\r\n") < (size_t)(smi - out)) {
		a->have_cp = device_checkpoint_parse(out, (size_t)(smi - out), &a->cp, &err) == 0;
		if (!a->have_cp)
			a->cp_why = xstrdup(err.msg);
		os_error_clear(&err);
	}
	host_gpus_parse(a->smi, &a->gpus);
	a->query = gpu_view_part(out, QUERY_MARK);
	a->procs = gpu_view_part(out, GPU_PROCS_MARK);
	a->sick = gpu_view_part(out, SICK_MARK);
	if (a->server && status == 0) {
		const char *json = end + strlen(END_MARK "\n");
		a->list = json_parse(json, strlen(json), "kubectl output", &err);
		if (!a->list)
			a->pods_why = xstrdup(err.msg);
		os_error_clear(&err);
	} else if (a->server) {
		cleanup_free char *line = run_first_line(errs);
		a->pods_why = xasprintf("kubectl get %s failed (exit status %d): %s", a->types, status, line);
	}
}

static void ask_finish(struct node_ask *a)
{
	struct run_result res = { 0 };
	os_error err = { 0 };

	if (!a->c)
		return;
	if (docker_await(a->c, &res, &err) < 0)
		a->why = xstrdup(err.msg ? err.msg : "docker failed");
	else if (res.status != 0 && !strstr(res.out, END_MARK "\n"))
		a->why = run_first_line(*res.err ? res.err : res.out);
	else
		ask_read(a, res.out, res.err, res.status);
	a->c = NULL;
	run_result_free(&res);
	os_error_clear(&err);
}

static void ask_free(struct node_ask *a)
{
	free(a->why);
	free(a->cp_why);
	device_checkpoint_free(&a->cp);
	host_gpus_free(&a->gpus);
	free(a->smi);
	free(a->query);
	free(a->procs);
	free(a->sick);
	free(a->pods_why);
	cJSON_Delete(a->list);
}

/* --- the rows ----------------------------------------------------------- */

static long long field_count(const char *s)
{
	char *end;
	long long v;

	s += strspn(s, " ");
	v = strtoll(s, &end, 10);
	return end == s || v < 0 ? -1 : v;
}

/* The query's line of the row's GPU: "GPU-…, 1, 81559, 0". */
static void read_use(const char *query, struct gpu_row *r)
{
	cleanup_free char *copy = xstrdup(query ? query : "");
	char *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { line }, *p = line;
		int n = 1;

		while (n < 4 && (p = strchr(p, ','))) {
			*p++ = '\0';
			f[n++] = p + strspn(p, " ");
		}
		if (n == 4 && strcmp(f[0], r->uuid) == 0) {
			r->mem_used = field_count(f[1]);
			r->mem_total = field_count(f[2]);
			r->util = field_count(f[3]);
			return;
		}
	}
}

/* WHO holds the row's device, named once (owned by the row then). */
static void add_holder(struct gpu_row *r, struct gpu_holder *who)
{
	for (size_t k = 0; k < r->n_holders; k++)
		if (gpu_holder_same(&r->holders[k], who)) {
			gpu_holder_free(who);
			return;
		}
	r->holders = xrealloc(r->holders, (r->n_holders + 1) * sizeof(*r->holders));
	r->holders[r->n_holders++] = *who;
}

/* The containers of live pods that hold the row's device; none are named
 * without the pods (the view says why). */
static void add_holders(const struct device_checkpoint *cp, const cJSON *pods, struct gpu_row *r)
{
	for (size_t i = 0; pods && i < cp->n; i++) {
		const struct checkpoint_entry *e = &cp->v[i];
		const cJSON *md = json_get(kube_live_pod(pods, e->pod_uid), "metadata", NULL);
		const char *ns = json_str(md, "namespace"), *name = json_str(md, "name");
		struct gpu_holder who = { 0 };
		int held = 0;

		if (!ns || !name || !kube_nvidia_resource(e->resource))
			continue;   /* ended, its entry not yet collected; or another plugin's */
		for (size_t k = 0; k < e->ids.n && !held; k++)
			held = gpu_id_names(e->ids.v[k], r);
		if (!held)
			continue;
		gpu_holder_set(&who, ns, name, e->container);
		add_holder(r, &who);
	}
}

static void hold_by_claim(void *ctx, const char *ns, const char *pod, const char *container)
{
	struct gpu_holder who = { 0 };

	gpu_holder_set(&who, ns, pod, container);
	add_holder(ctx, &who);
}

/* Has the node devices the kubelet counts unhealthy (capacity over
 * allocatable for a resource of NVIDIA's)? */
static int node_has_sick(const cJSON *list, const char *node)
{
	const cJSON *n = kube_find(list, "Node", node), *cap;

	cJSON_ArrayForEach(cap, json_get(n, "status", "capacity", NULL)) {
		const char *alloc;
		if (!cap->string || !cJSON_IsString(cap) || !kube_nvidia_resource(cap->string))
			continue;
		alloc = json_str(json_get(n, "status", "allocatable", NULL), cap->string);
		if (atoll(cap->valuestring) > (alloc ? atoll(alloc) : 0))
			return 1;
	}
	return 0;
}

struct judge {
	const struct node_ask *a;
	const cJSON *list;           /* the server's, or NULL */
	int dra;                     /* the gateway's GPUs go by DRA */
	struct sharing sharing;
	int sick;
};

/* Under DRA: a GPU the node's slices publish is the driver's to hand out
 * (it publishes the ones it can serve), and its holders are the claims'.
 * LEAF: a row no MIG device sits under. */
static void judge_claimed(const struct judge *j, struct gpu_row *r, int leaf)
{
	const char *strategy;

	if (r->mig_index >= 0 || !j->list)
		return;   /* no MIG device is published yet; without the list, the view says why */
	if (gpu_claims_published(j->list, j->a->name, r->uuid)) {
		r->health = "healthy";
	} else {
		r->health = "unknown";
		r->why = xstrdup("not published in the node's ResourceSlices (kubectl get resourceslices)");
	}
	gpu_claims_holders(j->list, r->uuid, hold_by_claim, r);
	/* No count: the claim's pods share it as its GpuConfig asks (a MIG
	 * GPU's claims are its devices'). */
	strategy = leaf ? gpu_claims_sharing(j->list, r->uuid) : NULL;
	if (strategy && strcmp(strategy, "MPS") == 0)
		r->share = SHARE_MPS;
	else if (strategy && strcmp(strategy, "TimeSlicing") == 0)
		r->share = SHARE_TIME_SLICING;
}

/* The row's sharing, health and holders. A device the plugin marked
 * unhealthy (its log says so, and the kubelet counts some unhealthy) is,
 * though replicas of it may still be registered: the plugin marks one. */
static void judge_row(const struct judge *j, struct gpu_row *r, int leaf)
{
	int ids;

	if (j->dra) {
		judge_claimed(j, r, leaf);
		return;
	}
	if (!j->a->have_cp) {
		r->health = "unknown";
		r->why = xstrdup(j->a->cp_why ? j->a->cp_why
					      : "the kubelet has written no device checkpoint: no device plugin has registered");
		return;
	}
	ids = gpu_ids_registered(&j->a->cp, r);
	r->why = j->sick ? gpu_sick_reason(&j->a->cp, j->a->sick, r) : NULL;
	if (ids > 1 || (r->why && j->sharing.replicas > 1)) {
		r->share = j->sharing.mps ? SHARE_MPS : SHARE_TIME_SLICING;
		r->replicas = j->sharing.replicas > 1 ? j->sharing.replicas : ids;
	}
	/* Without the plugin's word, a device is unhealthy only when the
	 * plugin has none healthy (it stopped: the kubelet keeps them all as
	 * unhealthy); a leaf it does not serve (a MIG-enabled card without MIG
	 * devices) is not one of its devices. */
	if (r->why || (!ids && leaf && j->sick && !j->a->cp.n_healthy))
		r->health = "unhealthy";
	else
		r->health = ids ? "healthy" : NULL;
	add_holders(&j->a->cp, j->list, r);
}

static struct gpu_row *new_row(struct gpu_view *v, const struct node_ask *a)
{
	struct gpu_row *r;

	v->v = xrealloc(v->v, (v->n + 1) * sizeof(*v->v));
	r = &v->v[v->n++];
	*r = (struct gpu_row){ .index = -1, .mig_index = -1, .mem_used = -1, .mem_total = -1, .util = -1 };
	strv_push(&v->names, a->name);
	r->node = v->names.v[v->names.n - 1];
	if (a->host) {
		strv_push(&v->names, a->host);
		r->host = v->names.v[v->names.n - 1];
	}
	return r;
}

/* The node's processes, each on its GPU's row (by UUID: a card's, as
 * nvidia-smi lists a MIG device's processes under it). */
static void node_procs(struct gpu_view *v, const struct node_ask *a, const cJSON *list)
{
	size_t from = v->procs.n;
	const char *node = v->v[v->n - 1].node;

	gpu_procs_read(a->procs, node, list, &v->procs);
	for (size_t i = from; i < v->procs.n; i++)
		for (size_t k = 0; k < v->n; k++)
			if (strcmp(v->v[k].node, node) == 0 && v->v[k].mig_index < 0 && v->v[k].uuid &&
			    strcmp(v->v[k].uuid, v->procs.v[i].uuid) == 0)
				v->procs.v[i].index = v->v[k].index;
}

static void node_rows(struct gpu_view *v, const struct node_ask *a, const cJSON *list, int dra)
{
	struct judge j = { .a = a, .list = list, .dra = dra, .sick = node_has_sick(list, a->name) };

	if (a->why || !a->gpus.n) {
		struct gpu_row *r = new_row(v, a);
		cleanup_free char *smi = a->why ? NULL : run_first_line(a->smi ? a->smi : "");
		r->health = "unknown";
		r->why = a->why ? xstrdup(a->why) : xasprintf("nvidia-smi -L in its container lists no GPU: %s", smi);
		return;
	}
	sharing_from_list(list, DEVICE_PLUGIN_RELEASE, &j.sharing);
	for (int i = 0; i < a->gpus.n; i++) {
		const struct host_gpu *g = &a->gpus.v[i];
		struct gpu_row *r = new_row(v, a);

		r->index = i;
		r->uuid = xstrdup(g->uuid);
		r->model = xstrdup(g->name);
		read_use(a->query, r);
		judge_row(&j, r, g->migs.n == 0);
		if (g->migs.n && !r->health)
			r->share = SHARE_MIG;   /* a card of MIG devices, served as those */
		for (size_t k = 0; k < g->migs.n; k++) {
			r = new_row(v, a);
			r->index = i;
			r->mig_index = (int)k;
			r->uuid = xstrdup(g->migs.v[k]);
			r->model = xstrdup(k < g->profiles.n ? g->profiles.v[k] : "MIG");
			r->share = SHARE_MIG;
			judge_row(&j, r, 1);
		}
	}
	node_procs(v, a, list);
}

/* --- asking ------------------------------------------------------------- */

/* The server always (its exec brings the pods), then each agent with GPUs. */
static void plan(const struct gateway *gw, const struct node_records *rs, struct node_ask **asks, size_t *n)
{
	*asks = xcalloc(rs->n + 1, sizeof(**asks));
	(*asks)[0] = (struct node_ask){ .server = 1, .gpu = gateway_wants_gpu(gw), .ctr = gw->ctr,
					.host = gw->has_metadata ? gw->md.docker.endpoint : NULL,
					.types = gw->allocation == GPU_ALLOCATION_DRA ? SERVER_DRA_TYPES : SERVER_TYPES };
	*n = 1;
	for (size_t i = 0; i < rs->n; i++) {
		struct node_ask *a;
		if (!rs->v[i].gpu)
			continue;
		a = &(*asks)[(*n)++];
		*a = (struct node_ask){ .gpu = 1, .name = rs->v[i].name, .host = rs->v[i].docker.endpoint,
					.ctr = { &rs->v[i].docker, rs->v[i].container } };
	}
}

int gateway_gpu_view(const char *name, struct gpu_view *view, os_error *err)
{
	struct gateway gw = { 0 };
	struct node_records rs = { 0 };
	struct node_ask *asks = NULL;
	cleanup_free char *own = gateway_hostname(name);
	const struct node_ask *server;
	size_t n = 0;
	int rc = -1;

	memset(view, 0, sizeof(*view));
	if (gateway_lookup(name, &gw, err) < 0 || gateway_require_running(&gw, err) < 0 ||
	    node_records_load(gw.state_dir, &rs, err) < 0)
		goto out;
	plan(&gw, &rs, &asks, &n);
	server = &asks[0];
	asks[0].name = own;
	for (size_t i = 0; i < n; i++)
		ask_start(&asks[i]);
	for (size_t i = 0; i < n; i++)
		ask_finish(&asks[i]);
	for (size_t i = 0; i < n; i++)
		view->nodes += asks[i].gpu;
	if (view->nodes && !server->list)   /* the pods come with the server's answer */
		view->holders_why = xstrdup(server->pods_why ? server->pods_why : server->why);
	for (size_t i = 0; i < n; i++)
		if (asks[i].gpu)
			node_rows(view, &asks[i], server->list, gw.allocation == GPU_ALLOCATION_DRA);
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		ask_free(&asks[i]);
	free(asks);
	node_records_free(&rs);
	gateway_free(&gw);
	return rc;
}

void gpu_view_free(struct gpu_view *view)
{
	for (size_t i = 0; i < view->n; i++) {
		free(view->v[i].uuid);
		free(view->v[i].model);
		free(view->v[i].why);
		for (size_t k = 0; k < view->v[i].n_holders; k++)
			gpu_holder_free(&view->v[i].holders[k]);
		free(view->v[i].holders);
	}
	free(view->v);
	free(view->holders_why);
	gpu_procs_free(&view->procs);
	strv_free(&view->names);
	memset(view, 0, sizeof(*view));
}
