/* gateway/gpu/allocation.c - the GPU allocation mode (see gateway/gpu/allocation.h). */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "kube/objects.h"

static const char *const allocation_names[] = { [GPU_ALLOCATION_DEVICE_PLUGIN] = "device-plugin",
						[GPU_ALLOCATION_DRA] = "dra" };

#define N_ALLOCATIONS ((int)(sizeof(allocation_names) / sizeof(allocation_names[0])))

static const struct gpu_allocator allocators[] = {
	[GPU_ALLOCATION_DEVICE_PLUGIN] = {
		.mode = GPU_ALLOCATION_DEVICE_PLUGIN,
		.title = "the NVIDIA device plugin",
		.daemonset = DEVICE_PLUGIN_RELEASE,
		.ns = DEVICE_PLUGIN_NAMESPACE,
		.pod_label = DEVICE_PLUGIN_LABEL,
		.pod_value = DEVICE_PLUGIN_NAME,
		.container = DEVICE_PLUGIN_CONTAINER,
		.helmchart = DEVICE_PLUGIN_HELMCHART,
		.helm_job = DEVICE_PLUGIN_HELM_JOB,
	},
	/* The chart's kubelet plugin (templates/kubeletplugin.yaml): its pods'
	 * selector label, its "gpus" container running gpu-kubelet-plugin. */
	[GPU_ALLOCATION_DRA] = {
		.mode = GPU_ALLOCATION_DRA,
		.title = "NVIDIA's DRA driver",
		.daemonset = DRA_KUBELET_PLUGIN,
		.ns = DRA_DRIVER_NAMESPACE,
		.pod_label = DRA_DRIVER_RELEASE "-component",
		.pod_value = "kubelet-plugin",
		.container = "gpus",
		.helmchart = DRA_DRIVER_RELEASE,
		.helm_job = "helm-install-" DRA_DRIVER_RELEASE,
	},
};

const struct gpu_allocator *gpu_allocator(enum gpu_allocation a)
{
	return &allocators[a == GPU_ALLOCATION_DRA ? GPU_ALLOCATION_DRA : GPU_ALLOCATION_DEVICE_PLUGIN];
}

const cJSON *gpu_allocator_daemonset(const struct gpu_allocator *by, const cJSON *list)
{
	/* The device plugin's chart renders its MPS daemon with its labels:
	 * kube_find_device_plugin tells them apart. */
	return by->mode == GPU_ALLOCATION_DEVICE_PLUGIN ? kube_find_device_plugin(list)
							: kube_find(list, "DaemonSet", by->daemonset);
}

/* SLICE, if it is one of the DRA driver's (on NODE, unless NULL): its spec. */
static const cJSON *driver_slice(const cJSON *slice, const char *node)
{
	const cJSON *spec = json_get(slice, "spec", NULL);
	const char *driver = json_str(spec, "driver"), *on = json_str(spec, "nodeName");
	const char *kind = json_str(slice, "kind");

	if ((kind && strcmp(kind, "ResourceSlice") != 0) || !driver || strcmp(driver, DRA_DRIVER_NAME) != 0)
		return NULL;
	if (node && (!on || strcmp(on, node) != 0))
		return NULL;
	return spec;
}

static const char *device_string(const cJSON *dev, const char *attr)
{
	return json_str(json_get(dev, "attributes", attr, NULL), "string");
}

/* The GPU a device of the driver's is or is part of: a whole GPU's uuid,
 * a MIG device's parentUUID; NULL for other types (vfio). */
static const char *device_gpu(const cJSON *dev)
{
	const char *type = device_string(dev, "type");

	if (type && strcmp(type, "gpu") == 0)
		return device_string(dev, "uuid");
	if (type && strcmp(type, "mig") == 0)
		return device_string(dev, "parentUUID");
	return NULL;
}

void dra_published_uuids(const cJSON *list, const char *node, struct strv *out, char **oldest)
{
	const cJSON *slice, *dev, *spec;

	cJSON_ArrayForEach(slice, json_get(list, "items", NULL)) {
		if (!(spec = driver_slice(slice, node)) || !json_str(spec, "nodeName"))
			continue;
		const char *made = json_str(json_get(slice, "metadata", NULL), "creationTimestamp");
		if (oldest && made && (!*oldest || strcmp(made, *oldest) < 0)) {
			free(*oldest);
			*oldest = xstrdup(made);
		}
		cJSON_ArrayForEach(dev, json_get(spec, "devices", NULL)) {
			const char *uuid = device_gpu(dev);
			if (uuid && !strv_has(out, uuid))
				strv_push(out, uuid);
		}
	}
}

long long dra_published_whole(const cJSON *list, const char *node)
{
	const cJSON *slice, *dev, *spec;
	struct strv seen = { 0 };
	long long n;

	cJSON_ArrayForEach(slice, json_get(list, "items", NULL)) {
		if (!(spec = driver_slice(slice, node)))
			continue;
		cJSON_ArrayForEach(dev, json_get(spec, "devices", NULL)) {
			const char *uuid = device_string(dev, "uuid"), *type = device_string(dev, "type");
			if (uuid && type && strcmp(type, "gpu") == 0 && !strv_has(&seen, uuid))
				strv_push(&seen, uuid);
		}
	}
	n = (long long)seen.n;
	strv_free(&seen);
	return n;
}

long long dra_node_gpus(const cJSON *list, const char *node, const char *since)
{
	struct strv pub = { 0 };
	char *oldest = NULL;
	long long n;

	dra_published_uuids(list, node, &pub, &oldest);
	n = pub.n && !kube_status_predates(oldest, since) ? (long long)pub.n : -1;
	strv_free(&pub);
	free(oldest);
	return n;
}

static const cJSON *find_device(const cJSON *list, const char *pool, const char *device)
{
	const cJSON *slice, *dev, *spec;

	cJSON_ArrayForEach(slice, json_get(list, "items", NULL)) {
		const char *p = json_str(json_get(slice, "spec", "pool", NULL), "name");
		if (!(spec = driver_slice(slice, NULL)) || !p || strcmp(p, pool) != 0)
			continue;
		cJSON_ArrayForEach(dev, json_get(spec, "devices", NULL)) {
			const char *name = json_str(dev, "name");
			if (name && strcmp(name, device) == 0)
				return dev;
		}
	}
	return NULL;
}

const char *dra_device_uuid(const cJSON *list, const char *pool, const char *device)
{
	return device_string(find_device(list, pool, device), "uuid");
}

const char *dra_device_gpu(const cJSON *list, const char *pool, const char *device)
{
	const cJSON *dev = find_device(list, pool, device);

	return dev ? device_gpu(dev) : NULL;
}

int gpu_allocation_parse(const char *text, enum gpu_allocation *a, os_error *err)
{
	int i;

	if (parse_option_word("--gpu-allocation", text, allocation_names, N_ALLOCATIONS, &i, err) < 0)
		return -1;
	*a = (enum gpu_allocation)i;
	return 0;
}

const char *gpu_allocation_name(enum gpu_allocation a)
{
	return a == GPU_ALLOCATION_UNSET ? "unset" : allocation_names[a];
}

int gpu_allocation_check_driver(enum gpu_allocation a, const char *driver, const char *node, os_error *err)
{
	char *end;
	long major = driver ? strtol(driver, &end, 10) : 0;

	if (a != GPU_ALLOCATION_DRA || !driver || end == driver || major >= DRA_MIN_DRIVER_MAJOR)
		return 0;
	if (node)
		return os_error_set(err, OS_EXIT_NOGPU,
				    "node '%s''s host has NVIDIA driver %s, and NVIDIA's DRA driver, which a node of a gateway with --gpu-allocation dra runs, needs %d or later: upgrade that host's driver, or remake the gateway with --gpu-allocation device-plugin",
				    node, driver, DRA_MIN_DRIVER_MAJOR);
	return os_error_set(err, OS_EXIT_NOGPU,
			    "--gpu-allocation dra needs NVIDIA driver %d or later on the Docker host (NVIDIA's DRA driver does), and it has %s: upgrade the driver, or use --gpu-allocation device-plugin",
			    DRA_MIN_DRIVER_MAJOR, driver);
}

const char *gpu_allocation_sharing_refused(enum gpu_allocation a, const struct sharing *s)
{
	if (!sharing_asked(s))
		return NULL;
	if (a == GPU_ALLOCATION_DRA && s->replicas > 1 && s->mps)
		return "under --gpu-allocation dra pods share a GPU by using one ResourceClaim, whose GpuConfig asks the DRA driver for MPS, and there is no count of replicas: give --gpu-sharing mps, without :N";
	if (a == GPU_ALLOCATION_DRA && s->replicas > 1)
		return "under --gpu-allocation dra pods share a GPU by using one ResourceClaim, whose GpuConfig asks the DRA driver for time-slicing, and there is no count of replicas: give --gpu-sharing time-slicing, without :N";
	/* Unasked, the allocation is the device plugin's, or a kept gateway's:
	 * the per-claim form names dra, so that it is judged before anything. */
	if (a != GPU_ALLOCATION_DRA && s->per_claim)
		return "--gpu-sharing without a count is for --gpu-allocation dra, where each claim asks for it; NVIDIA's device plugin shares each GPU as a count of replicas: give --gpu-sharing time-slicing:N or mps:N, or add --gpu-allocation dra";
	return NULL;
}

int gpu_allocation_check(enum gpu_allocation a, const struct sharing *s, enum mig_strategy m, os_error *err)
{
	const char *refused = gpu_allocation_sharing_refused(a, s);

	if (refused)
		return os_error_set(err, OS_EXIT_USAGE, "%s", refused);
	if (a == GPU_ALLOCATION_DRA && m != MIG_UNSET)
		return os_error_set(err, OS_EXIT_USAGE,
				    "--mig-strategy configures NVIDIA's device plugin, and --gpu-allocation dra runs its DRA driver instead, which publishes each GPU as it finds it: leave out --mig-strategy, or use --gpu-allocation device-plugin");
	return 0;
}

enum gpu_allocation gpu_allocation_of_env(const char *value)
{
	int i;

	if (value && parse_keyword(value, allocation_names, N_ALLOCATIONS, &i) == 0)
		return (enum gpu_allocation)i;
	return GPU_ALLOCATION_DEVICE_PLUGIN;
}

/* strconv.ParseBool's true, of the N characters at V. */
static int go_true(const char *v, size_t n)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (strlen(yes[i]) == n && strncmp(v, yes[i], n) == 0)
			return 1;
	return 0;
}

/* The N characters at *S, spaces trimmed: *S moved past them, the length left. */
static size_t trim(const char **s, size_t n)
{
	while (n && isspace((unsigned char)**s))
		(*s)++, n--;
	while (n && isspace((unsigned char)(*s)[n - 1]))
		n--;
	return n;
}

/* Is GATE on in V, "A=true,B=false," as component-base's feature gate
 * flag reads it (pkg/flags/featuregates.go): KEY=VALUE parts, trimmed, a
 * Go boolean each, the last of a key winning? */
static int gates_say_on(const char *v, const char *gate)
{
	int on = 0;

	for (const char *at = v; at && *at;) {
		size_t len = strcspn(at, ","), eq = strcspn(at, "=");
		const char *key = at, *val = at + eq + 1;
		if (eq < len) {
			size_t klen = trim(&key, eq), vlen = trim(&val, len - eq - 1);
			if (klen == strlen(gate) && strncmp(key, gate, klen) == 0)
				on = go_true(val, vlen);
		}
		at += len + (at[len] == ',');
	}
	return on;
}

int dra_gate_on(const cJSON *ds, const char *gate)
{
	const cJSON *c, *e;

	cJSON_ArrayForEach(c, json_get(ds, "spec", "template", "spec", "containers", NULL)) {
		const char *name = json_str(c, "name");
		if (!name || strcmp(name, "gpus") != 0)
			continue;
		cJSON_ArrayForEach(e, json_get(c, "env", NULL)) {
			const char *key = json_str(e, "name");
			if (key && strcmp(key, "FEATURE_GATES") == 0 && gates_say_on(json_str(e, "value"), gate))
				return 1;
		}
	}
	return 0;
}

int dra_gates_rolled(const cJSON *ds, const struct ds_status *st, const char *gate)
{
	const char *const gates[] = { DRA_GATE_TIME_SLICING, DRA_GATE_MPS };

	for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++)
		if (dra_gate_on(ds, gates[i]) != (strcmp(gate, gates[i]) == 0))
			return 0;
	return st->rolled && st->updated == st->desired;
}

int host_gpu_dra_published(const struct host_gpu *g)
{
	return !g->mig_enabled || g->migs.n;
}

void host_gpus_dra_published(const struct host_gpus *h, struct strv *uuids)
{
	for (int i = 0; i < h->n; i++)
		if (host_gpu_dra_published(&h->v[i]))
			strv_push(uuids, h->v[i].uuid);
}

int container_dra_gpus(const struct docker_ctr *ctr, const char *what, int timeout_ms,
		       struct strv *uuids, os_error *err)
{
	struct host_gpus h = { 0 };
	int rc = container_gpus(ctr, timeout_ms, &h, err);

	for (int i = 0; rc == 0 && i < h.n; i++)
		if (!host_gpu_dra_published(&h.v[i]))
			log_warn("GPU %s has MIG enabled and no MIG device: NVIDIA's DRA driver publishes nothing of it (create MIG devices with nvidia-smi mig, or disable MIG)",
				 h.v[i].uuid);
	if (rc == 0)
		host_gpus_dra_published(&h, uuids);
	if (rc == 0 && !h.n)
		rc = os_error_set(err, OS_EXIT_NOGPU,
				  "%s sees no GPU in its container %s (nvidia-smi -L lists none), so NVIDIA's DRA driver has nothing to publish: check the host's driver and toolkit ('openshell doctor')",
				  what, ctr->name);
	else if (rc == 0 && !uuids->n)
		rc = os_error_set(err, OS_EXIT_NOGPU,
				  "every GPU of %s has MIG enabled and no MIG device, and NVIDIA's DRA driver publishes none of them: create MIG devices (nvidia-smi mig -cgi PROFILE -C), or disable MIG",
				  what);
	host_gpus_free(&h);
	return rc;
}
