/* gateway/gpu/sharing.c - GPU sharing through the device plugin's values (see gateway/gpu/sharing.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "base/yaml_doc.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "kube/kubectl.h"

#define SHARING_FORMS "give none, time-slicing:N with N from 2 to 1024, or mps:N with N from 2 to 48 (under --gpu-allocation dra: time-slicing or mps, without N)"

int sharing_parse(const char *text, struct sharing *s, os_error *err)
{
	cleanup_free char *shown = printable(text, 64);
	int mps = strncmp(text, "mps:", 4) == 0;
	const char *n = strncmp(text, "time-slicing:", 13) == 0 ? text + 13 : mps ? text + 4 : NULL;
	char *end = NULL;
	long v = n && *n ? strtol(n, &end, 10) : 0;

	*s = (struct sharing){ .replicas = 1 };
	if (strcmp(text, "none") == 0)
		return 0;
	/* Each claim asks (DRA's): no count. */
	if (strcmp(text, "time-slicing") == 0 || strcmp(text, "mps") == 0) {
		s->per_claim = 1;
		s->mps = text[0] == 'm';
		return 0;
	}
	if (!n || !end || *end || v < 2 || v > SHARING_MAX_REPLICAS)
		return os_error_set(err, OS_EXIT_USAGE, "invalid --gpu-sharing '%s': %s (N 1 shares nothing)", shown,
				    SHARING_FORMS);
	if (mps && v > MPS_MAX_REPLICAS)
		return os_error_set(err, OS_EXIT_USAGE,
				    "invalid --gpu-sharing '%s': MPS serves at most %d clients on a GPU (16 before compute capability 7.5); give mps:2 to mps:%d, or time-slicing:N for more",
				    shown, MPS_MAX_REPLICAS, MPS_MAX_REPLICAS);
	s->replicas = (int)v;
	s->mps = mps;
	return 0;
}

const char *sharing_dra_gate(const struct sharing *s)
{
	return !s->per_claim ? "" : s->mps ? DRA_GATE_MPS : DRA_GATE_TIME_SLICING;
}

const struct sharing *sharing_asked(const struct sharing *s)
{
	return s->replicas != SHARING_UNSET ? s : NULL;
}

int sharing_needs_gpus(const struct sharing *s, enum mig_strategy m)
{
	return s->mps && s->replicas > 1 && (m == MIG_SINGLE || s->replicas > MPS_MAX_REPLICAS_OLD);
}

int mps_with_mixed(const struct sharing *s, enum mig_strategy m)
{
	return s->mps && s->replicas > 1 && m == MIG_MIXED;
}

int sharing_check_gpus(const struct sharing *s, enum mig_strategy m, const struct host_gpus *h,
		       const struct strv *uuids, os_error *err)
{
	if (!sharing_needs_gpus(s, m))
		return 0;
	for (int i = 0; i < h->n; i++) {
		const struct host_gpu *g = &h->v[i];
		int cc = g->compute_cap;

		if (uuids && !strv_has(uuids, g->uuid))
			continue;
		if (m == MIG_SINGLE && g->migs.n)
			return os_error_set(err, OS_EXIT_FAILURE,
					    "--gpu-sharing mps:%d cannot share GPU %s: it has MIG enabled, and under --mig-strategy single the device plugin shares no MIG device by MPS; use time-slicing:N, or GPUs without MIG",
					    s->replicas, g->uuid);
		if (s->replicas > MPS_MAX_REPLICAS_OLD && cc > 0 && cc < MPS_FULL_CLIENTS_CC)
			return os_error_set(err, OS_EXIT_FAILURE,
					    "--gpu-sharing mps:%d is more than GPU %s (%s, compute capability %d.%d) serves by MPS: at most %d clients before compute capability 7.5; give mps:%d or fewer, or time-slicing:N",
					    s->replicas, g->uuid, g->name, cc / 10, cc % 10, MPS_MAX_REPLICAS_OLD,
					    MPS_MAX_REPLICAS_OLD);
	}
	return 0;
}

/* Does S share at all (replicas, or per claim)? */
static int shares(const struct sharing *s)
{
	return s->replicas > 1 || s->per_claim;
}

const char *sharing_mode_name(const struct sharing *s)
{
	return !shares(s) ? "none" : s->mps ? "mps" : "time-slicing";
}

char *sharing_string(const struct sharing *s)
{
	return s->replicas > 1 ? xasprintf("%s:%d", sharing_mode_name(s), s->replicas) : xstrdup(sharing_mode_name(s));
}

static int scalar(yaml_document_t *d, const char *v, yaml_scalar_style_t style)
{
	return yaml_document_add_scalar(d, NULL, (yaml_char_t *)v, (int)strlen(v), style);
}

/* KEY: VALUE into the mapping MAP; 0 when libyaml refused. */
static int pair(yaml_document_t *d, int map, const char *key, int value)
{
	int k = scalar(d, key, YAML_PLAIN_SCALAR_STYLE);

	return k && value && yaml_document_append_mapping_pair(d, map, k, value);
}

static int mapping(yaml_document_t *d)
{
	return yaml_document_add_mapping(d, NULL, YAML_BLOCK_MAPPING_STYLE);
}

/* The plugin's own config file (config.map's entry):
 *   version: v1
 *   sharing: {timeSlicing|mps: {resources: [{name: nvidia.com/gpu, replicas: N}]}} */
static int plugin_config(const struct sharing *s, char **out, size_t *len, os_error *err)
{
	yaml_document_t d;
	char n[16];
	int root, sharing, ts, list, res, ok;

	snprintf(n, sizeof(n), "%d", s->replicas);
	if (!yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1))
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the device plugin's config: out of memory");
	ok = (root = mapping(&d)) && pair(&d, root, "version", scalar(&d, "v1", YAML_PLAIN_SCALAR_STYLE)) &&
	     (sharing = mapping(&d)) && pair(&d, root, "sharing", sharing) && (ts = mapping(&d)) &&
	     pair(&d, sharing, s->mps ? "mps" : "timeSlicing", ts) &&
	     (list = yaml_document_add_sequence(&d, NULL, YAML_BLOCK_SEQUENCE_STYLE)) &&
	     pair(&d, ts, "resources", list) && (res = mapping(&d)) &&
	     yaml_document_append_sequence_item(&d, list, res) &&
	     pair(&d, res, "name", scalar(&d, "nvidia.com/gpu", YAML_PLAIN_SCALAR_STYLE)) &&
	     pair(&d, res, "replicas", scalar(&d, n, YAML_PLAIN_SCALAR_STYLE));
	if (!ok) {
		yaml_document_delete(&d);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the device plugin's config: out of memory");
	}
	return yaml_emit_document(&d, "device plugin config", out, len, err);
}

/* The DRA driver's: featureGates: {TimeSlicingSettings|MPSSupport: true}
 * (its chart's values.yaml; the kubelet plugin gets them as FEATURE_GATES). */
static int dra_values(const struct sharing *s, char **yaml, os_error *err)
{
	yaml_document_t d;
	size_t len;
	int root, gates, ok;

	if (!yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1))
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the DRA driver's values: out of memory");
	ok = (root = mapping(&d)) && (gates = mapping(&d)) && pair(&d, root, "featureGates", gates) &&
	     pair(&d, gates, s->mps ? DRA_GATE_MPS : DRA_GATE_TIME_SLICING, scalar(&d, "true", YAML_PLAIN_SCALAR_STYLE));
	if (!ok) {
		yaml_document_delete(&d);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the DRA driver's values: out of memory");
	}
	return yaml_emit_document(&d, "DRA driver values", yaml, &len, err);
}

/* config: {map: {openshell: |-CONFIG}, default: openshell} */
int sharing_values(const struct sharing *s, char **yaml, os_error *err)
{
	cleanup_free char *inner = NULL;
	yaml_document_t d;
	size_t len, ilen;
	int root, config, map, ok;

	if (s->per_claim)
		return dra_values(s, yaml, err);
	if (plugin_config(s, &inner, &ilen, err) < 0)
		return -1;
	while (ilen > 0 && inner[ilen - 1] == '\n')
		inner[--ilen] = '\0';
	if (!yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1))
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the device plugin's values: out of memory");
	ok = (root = mapping(&d)) && (config = mapping(&d)) && pair(&d, root, "config", config) &&
	     (map = mapping(&d)) && pair(&d, config, "map", map) &&
	     pair(&d, map, SHARING_CONFIG_NAME, scalar(&d, inner, YAML_LITERAL_SCALAR_STYLE)) &&
	     pair(&d, config, "default", scalar(&d, SHARING_CONFIG_NAME, YAML_PLAIN_SCALAR_STYLE));
	if (!ok) {
		yaml_document_delete(&d);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make the device plugin's values: out of memory");
	}
	return yaml_emit_document(&d, "device plugin values", yaml, &len, err);
}

int sharing_manifest(const struct sharing *s, const char *release, char **json, os_error *err)
{
	cleanup_free char *values = NULL;
	cJSON *m, *md;

	if (sharing_values(s, &values, err) < 0)
		return -1;
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "apiVersion", "helm.cattle.io/v1");
	cJSON_AddStringToObject(m, "kind", "HelmChartConfig");
	md = cJSON_AddObjectToObject(m, "metadata");
	cJSON_AddStringToObject(md, "name", release);
	cJSON_AddStringToObject(md, "namespace", "kube-system");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "labels"), "app.kubernetes.io/managed-by", "openshell");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "spec"), "valuesContent", values);
	*json = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	return 0;
}

static const char *text_of(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The values as a document; unreadable ones (or no mapping) share nothing. */
static int load(const char *yaml, yaml_document_t *d)
{
	os_error err = { 0 };
	int ok = yaml_doc_load(yaml, strlen(yaml), "Helm values", d, &err) == 0;

	os_error_clear(&err);
	return ok;
}

/* The sharing of the plugin's config text: sharing.timeSlicing (or .mps)
 * .resources[0].replicas. */
static void config_sharing(const char *text, struct sharing *s)
{
	yaml_document_t d;
	yaml_node_t *sharing, *list, *mps;
	int r = 1;

	if (!text || !load(text, &d))
		return;
	sharing = yaml_map_get(&d, yaml_document_get_root_node(&d), "sharing");
	mps = yaml_map_get(&d, sharing, "mps");
	s->mps = mps != NULL;
	list = yaml_map_get(&d, mps ? mps : yaml_map_get(&d, sharing, "timeSlicing"), "resources");
	if (list && list->type == YAML_SEQUENCE_NODE && list->data.sequence.items.top > list->data.sequence.items.start) {
		const char *v = text_of(yaml_map_get(&d, yaml_document_get_node(&d, *list->data.sequence.items.start), "replicas"));
		r = v && atoi(v) > 1 ? atoi(v) : 1;
	}
	s->replicas = r;
	s->mps = s->mps && r > 1;
	yaml_document_delete(&d);
}

/* A gate of the DRA driver's values on? */
static int gate_on(yaml_document_t *d, yaml_node_t *gates, const char *name)
{
	const char *v = text_of(yaml_map_get(d, gates, name));

	return v && strcmp(v, "true") == 0;
}

int sharing_from_values(const char *yaml, struct sharing *s)
{
	yaml_document_t d;
	yaml_node_t *config, *gates;
	const char *name;

	*s = (struct sharing){ .replicas = 1 };
	if (!yaml || !load(yaml, &d))
		return 0;
	gates = yaml_map_get(&d, yaml_document_get_root_node(&d), "featureGates");
	if (gates) {
		s->mps = gate_on(&d, gates, DRA_GATE_MPS);
		s->per_claim = s->mps || gate_on(&d, gates, DRA_GATE_TIME_SLICING);
		yaml_document_delete(&d);
		return 0;
	}
	config = yaml_map_get(&d, yaml_document_get_root_node(&d), "config");
	name = text_of(yaml_map_get(&d, config, "default"));
	config_sharing(text_of(yaml_map_get(&d, yaml_map_get(&d, config, "map"), name ? name : SHARING_CONFIG_NAME)), s);
	yaml_document_delete(&d);
	return 0;
}

/* The sharing a HelmChartConfig OBJ sets (replicas 1 when NULL). */
static void sharing_of(const cJSON *obj, struct sharing *s)
{
	*s = (struct sharing){ .replicas = 1 };
	if (obj)
		sharing_from_values(json_str(json_get(obj, "spec", NULL), "valuesContent"), s);
}

int sharing_read(const struct docker_ctr *ctr, const char *release, int timeout_ms, struct sharing *s, os_error *err)
{
	cJSON *obj = NULL;
	int found = kube_get(ctr, "helmchartconfigs", release, "kube-system", 0, timeout_ms, &obj, err);

	sharing_of(found > 0 ? obj : NULL, s);
	cJSON_Delete(obj);
	return found < 0 ? -1 : 0;
}

void sharing_from_list(const cJSON *list, const char *release, struct sharing *s)
{
	const cJSON *item, *found = NULL;

	/* The Helm controller reads the HelmChartConfig of the chart's own
	 * namespace (kube-system), none of another. */
	cJSON_ArrayForEach(item, json_get(list, "items", NULL)) {
		const cJSON *md = json_get(item, "metadata", NULL);
		const char *kind = json_str(item, "kind"), *name = json_str(md, "name"), *ns = json_str(md, "namespace");
		if (kind && name && ns && !strcmp(kind, "HelmChartConfig") && !strcmp(name, release) &&
		    !strcmp(ns, "kube-system"))
			found = item;
	}
	sharing_of(found, s);
}

static int apply(const struct docker_ctr *ctr, const struct sharing *s, const char *release, const struct deadline *by,
		 os_error *err)
{
	const char *apply[] = { "apply", "-f", "-", NULL };
	const char *del[] = { "delete", "helmchartconfig", release, "--namespace", "kube-system", "--ignore-not-found", NULL };
	const char *verb = shares(s) ? "apply" : "delete";
	cleanup_free char *manifest = NULL;
	struct run_result res = { 0 };
	int rc;

	if (shares(s) && sharing_manifest(s, release, &manifest, err) < 0)
		return -1;
	rc = kube_exec_k3s_type(ctr, "HelmChartConfig", shares(s) ? apply : del, manifest, by, &res, err);
	if (rc == 0 && res.status != 0)
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "kubectl %s of HelmChartConfig %s failed", verb, release);
	run_result_free(&res);
	return rc;
}

/* The names of the cluster's nodes, once it has one (k3s registers its
 * node a moment after its API answers), before BY passes. */
static int node_names(const struct docker_ctr *ctr, const struct deadline *by, struct strv *names, os_error *err)
{
	struct backoff b = { 0 };
	const cJSON *node;

	for (;;) {
		cJSON *list = NULL;

		if (kube_get(ctr, "nodes", NULL, NULL, 0, deadline_call_ms(by), &list, err) < 0)
			return -1;
		cJSON_ArrayForEach(node, json_get(list, "items", NULL)) {
			const char *name = json_str(json_get(node, "metadata", NULL), "name");
			if (name)
				strv_push(names, name);
		}
		cJSON_Delete(list);
		if (names->n)
			return 0;
		if (!backoff_wait(&b, by->at_ms))
			return os_error_set(err, OS_EXIT_TIMEOUT,
					    "gateway container %s has no node yet, whose MPS label the sharing sets", ctr->name);
	}
}

/* The chart runs its MPS control daemon only on nodes labelled
 * nvidia.com/mps.capable=true, which GPU Feature Discovery would set and
 * the gateway (which runs no GFD) sets itself; other sharing removes it. */
static int label_mps(const struct docker_ctr *ctr, int mps, const struct deadline *by, os_error *err)
{
	struct strv args = { 0 };
	struct run_result res = { 0 };
	int rc;

	strv_pushv(&args, (const char *const[]){ "label", "nodes", NULL });
	if ((rc = node_names(ctr, by, &args, err)) == 0) {
		strv_pushv(&args, (const char *const[]){ mps ? MPS_NODE_LABEL "=true" : MPS_NODE_LABEL "-", "--overwrite", NULL });
		rc = kube_exec(ctr, strv_argv(&args), NULL, deadline_call_ms(by), &res, err);
	}
	if (rc == 0 && res.status != 0)
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "kubectl label of the node (%s) failed", MPS_NODE_LABEL);
	run_result_free(&res);
	strv_free(&args);
	return rc;
}

static long long mig_devices(const struct host_gpus *h)
{
	long long n = 0;

	for (int i = 0; i < h->n; i++)
		n += (long long)h->v[i].migs.n;
	return n;
}

/* Under mixed the plugin registers each MIG profile as a resource of its
 * own, after nvidia.com/gpu, and the kubelet may post them in separate
 * status updates: the node is ready once it holds every MIG device of
 * the container's GPUs. */
static int want_mig(const struct docker_ctr *ctr, int timeout_ms, struct sharing_want *want)
{
	struct host_gpus h = { 0 };
	os_error e = { 0 };

	/* Without the count the wait is as before: any MIG device will do. */
	if (container_gpus(ctr, timeout_ms, &h, &e) == 0)
		want->mig = mig_devices(&h);
	else
		log_verbose("the gateway's MIG devices are not known, so the start waits for any of them: %s", e.msg);
	host_gpus_free(&h);
	os_error_clear(&e);
	return 0;
}

int sharing_configure_dra(const struct docker_ctr *ctr, const struct sharing *s, const char *release,
			  const struct deadline *by, os_error *err)
{
	cleanup_free char *what = NULL;

	if (!s)
		return 0;
	what = sharing_string(s);
	log_step("setting GPU sharing to %s (the DRA driver's feature gate)", what);
	if (apply(ctr, s, release, by, err) < 0)
		return -1;
	if (s->mps)
		log_warn("a claim that asks for MPS puts its GPUs in compute mode EXCLUSIVE_PROCESS on the host (NVIDIA's DRA driver does), and they stay so after it: no process outside that claim's pods can use them until the mode is set back (nvidia-smi -c DEFAULT)");
	log_step_done(1);
	return 0;
}

int sharing_configure(const struct docker_ctr *ctr, const struct sharing *s, enum mig_strategy mig, const char *release,
		      const struct deadline *by, struct sharing_want *want, os_error *err)
{
	struct host_gpus h = { 0 };
	cleanup_free char *what = NULL;
	int rc = -1;

	memset(want, 0, sizeof(*want));
	if (!s)
		return mig == MIG_MIXED ? want_mig(ctr, deadline_call_ms(by), want) : 0;
	what = sharing_string(s);
	log_step("setting GPU sharing to %s", what);
	/* The container's GPUs first: what MPS cannot share is refused before
	 * anything of the sharing changes. */
	if (container_gpus(ctr, deadline_call_ms(by), &h, err) < 0 || sharing_check_gpus(s, mig, &h, NULL, err) < 0 ||
	    apply(ctr, s, release, by, err) < 0 || label_mps(ctr, s->mps, by, err) < 0)
		goto out;
	if (s->mps)
		log_warn("MPS puts the gateway's GPUs in compute mode EXCLUSIVE_PROCESS on the host: while it shares them, no process outside the gateway can use them");
	want->changed = 1;
	want->allocatable = (long long)gpus_plugin_devices(&h, mig) * s->replicas;
	want->mps = s->mps;
	want->mig = mig == MIG_MIXED ? mig_devices(&h) : 0;
	log_step_done(1);
	rc = 0;
out:
	host_gpus_free(&h);
	return rc;
}
