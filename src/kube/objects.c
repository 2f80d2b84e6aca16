/* kube/objects.c - what the cluster's objects say (see kube/objects.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/xalloc.h"
#include "kube/objects.h"

/* Quantities are strings ("2"); a GPU count is a plain integer. */
static int parse_count(const cJSON *q, long long *out)
{
	char *end;
	long long v;

	if (!cJSON_IsString(q) || !*q->valuestring)
		return -1;
	v = strtoll(q->valuestring, &end, 10);
	if (*end || v < 0 || v > 1 << 20)
		return -1;
	*out = v;
	return 0;
}

/* In a List of several types, is ITEM of KIND? Items without a kind
 * (a typed list's) are taken as the list's own. */
static int of_kind(const cJSON *item, const char *kind)
{
	const char *k = json_str(item, "kind");

	return !k || strcmp(k, kind) == 0;
}

const cJSON *kube_find(const cJSON *list, const char *kind, const char *name)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, json_get(list, "items", NULL)) {
		const char *n = json_str(json_get(item, "metadata", NULL), "name");
		if (of_kind(item, kind) && n && strcmp(n, name) == 0)
			return item;
	}
	return NULL;
}

const cJSON *kube_live_pod(const cJSON *list, const char *uid)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, json_get(list, "items", NULL)) {
		const char *u = json_str(json_get(item, "metadata", NULL), "uid"),
			   *phase = json_str(json_get(item, "status", NULL), "phase");
		if (of_kind(item, "Pod") && json_str(item, "kind") && u && strcmp(u, uid) == 0)
			return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0) ? NULL : item;
	}
	return NULL;
}

int kube_nvidia_resource(const char *resource)
{
	return strncmp(resource, "nvidia.com/", 11) == 0;
}

const cJSON *kube_node_ready_condition(const cJSON *list, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_get(kube_find(list, "Node", name), "status", "conditions", NULL))
		if (json_str(c, "type") && strcmp(json_str(c, "type"), "Ready") == 0)
			return c;
	return NULL;
}

const char *kube_node_ready(const cJSON *list, const char *name)
{
	const char *status = json_str(kube_node_ready_condition(list, name), "status");

	if (!kube_find(list, "Node", name))
		return NULL;
	return !status ? "Unknown" : strcmp(status, "True") == 0 ? "Ready" : strcmp(status, "False") == 0 ? "NotReady" : "Unknown";
}

const char *kube_node_state(const cJSON *list, const char *name, long long *gpus)
{
	const cJSON *node = kube_find(list, "Node", name);
	const char *ready = kube_node_ready(list, name);

	*gpus = node ? kube_nodes_allocatable_gpus(node) : -1;
	return !list ? "unknown" : ready ? ready : "absent";
}

void kube_keep_node(cJSON *list, const char *name)
{
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *item = items ? items->child : NULL;

	if (!kube_find(list, "Node", name))
		return;
	while (item) {
		cJSON *next = item->next;
		const char *n = json_str(json_get(item, "metadata", NULL), "name");

		if (of_kind(item, "Node") && json_str(item, "kind") && (!n || strcmp(n, name) != 0))
			cJSON_Delete(cJSON_DetachItemViaPointer(items, item));
		item = next;
	}
}

cJSON *kube_list_of_kind(const cJSON *list, const char *kind)
{
	cJSON *out = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(out, "items");
	const cJSON *item;

	cJSON_ArrayForEach(item, json_get(list, "items", NULL))
		if (of_kind(item, kind))
			cJSON_AddItemToArray(items, cJSON_Duplicate(item, 1));
	return out;
}

int kube_count_kind(const cJSON *list, const char *kind)
{
	const cJSON *item;
	int n = 0;

	cJSON_ArrayForEach(item, json_get(list, "items", NULL))
		n += of_kind(item, kind);
	return n;
}

char *kube_nodes_heartbeat(const cJSON *list)
{
	const cJSON *item, *cond;
	const char *oldest = NULL;

	cJSON_ArrayForEach(item, json_get(list, "items", NULL)) {
		if (!of_kind(item, "Node"))
			continue;
		cJSON_ArrayForEach(cond, json_get(item, "status", "conditions", NULL)) {
			const char *type = json_str(cond, "type"), *t = json_str(cond, "lastHeartbeatTime");
			if (type && t && strcmp(type, "Ready") == 0 && (!oldest || strcmp(t, oldest) < 0))
				oldest = t;
		}
	}
	return oldest ? xstrdup(oldest) : NULL;
}

int kube_status_predates(const char *heartbeat, const char *started)
{
	if (!heartbeat || !started || strlen(started) < 19 || strlen(heartbeat) < 19)
		return 0;
	return strncmp(heartbeat, started, 19) <= 0;
}

static long long nodes_gpus(const cJSON *nodes, const char *field)
{
	const cJSON *items = json_get(nodes, "items", NULL);
	const cJSON *node;
	long long total = -1, n;

	if (!items && cJSON_IsObject(nodes)) {   /* a single Node */
		const cJSON *q = json_get(nodes, "status", field, GPU_RESOURCE, NULL);
		return parse_count(q, &n) == 0 ? n : -1;
	}
	cJSON_ArrayForEach(node, items) {
		const cJSON *q = json_get(node, "status", field, GPU_RESOURCE, NULL);
		if (of_kind(node, "Node") && parse_count(q, &n) == 0)
			total = (total < 0 ? 0 : total) + n;
	}
	return total;
}

long long kube_nodes_allocatable_gpus(const cJSON *nodes)
{
	return nodes_gpus(nodes, "allocatable");
}

long long kube_nodes_capacity_gpus(const cJSON *nodes)
{
	return nodes_gpus(nodes, "capacity");
}

/* The plugin's health check (internal/rm/health.go) marks a device
 * unhealthy; the kubelet keeps it in capacity, not in allocatable. */
char *kube_gpus_unhealthy(long long allocatable, long long capacity)
{
	long long sick = capacity - allocatable;

	if (allocatable <= 0 || sick <= 0)   /* none healthy: kube_gpus_zero_why() */
		return NULL;
	return xasprintf("%lld of the node's %lld nvidia.com/gpu devices %s unhealthy: the device plugin marked %s (its log names the Xid error or the lost device)",
			 sick, capacity, sick == 1 ? "is" : "are", sick == 1 ? "it" : "them");
}

/* The kubelet's device manager (pkg/kubelet/cm/devicemanager/manager.go):
 * when a plugin's socket goes, its devices turn unhealthy (capacity kept,
 * allocatable 0) for a 5-minute grace period, then the resource is set to
 * 0; after a kubelet restart it is 0 until the plugin registers again. */
const char *kube_gpus_zero_why(long long capacity)
{
	return capacity > 0 ? "the device plugin registered its GPUs, and the kubelet now counts none healthy: the plugin stopped serving them or found them unhealthy (its log says which)"
			    : "the kubelet has the resource from an earlier registration, and the device plugin has not registered its GPUs again since";
}

const cJSON *kube_find_device_plugin(const cJSON *daemonsets)
{
	const cJSON *ds;

	/* The chart renders two DaemonSets with the same name and instance
	 * labels (the plugin and <release>-mps-control-daemon): the plugin is
	 * the one named after the release. */
	cJSON_ArrayForEach(ds, json_get(daemonsets, "items", NULL)) {
		const cJSON *md = json_get(ds, "metadata", NULL);
		const char *v = json_str(json_get(md, "labels", NULL), DEVICE_PLUGIN_LABEL);
		const char *name = json_str(md, "name");
		if (of_kind(ds, "DaemonSet") && v && strcmp(v, DEVICE_PLUGIN_NAME) == 0 && name && strcmp(name, DEVICE_PLUGIN_RELEASE) == 0)
			return ds;
	}
	return NULL;
}

static long long counter(const cJSON *status, const char *key)
{
	long long v;

	return json_int(json_get(status, key, NULL), 0, 1LL << 40, &v) == 0 ? v : 0;
}

void kube_daemonset_status(const cJSON *ds, struct ds_status *st)
{
	const cJSON *status = json_get(ds, "status", NULL);

	st->desired = counter(status, "desiredNumberScheduled");
	st->ready = counter(status, "numberReady");
	st->available = counter(status, "numberAvailable");
	st->updated = counter(status, "updatedNumberScheduled");
	st->rolled = ds && counter(status, "observedGeneration") >= counter(json_get(ds, "metadata", NULL), "generation");
}

/* The first status of LIST that waits for a reason other than being made. */
static char *first_stuck(const cJSON *list)
{
	const cJSON *cs;

	cJSON_ArrayForEach(cs, list) {
		const cJSON *w = json_get(cs, "state", "waiting", NULL);
		const char *reason = json_str(w, "reason"), *msg = json_str(w, "message");

		if (!reason || strcmp(reason, "ContainerCreating") == 0 || strcmp(reason, "PodInitializing") == 0)
			continue;
		return xasprintf("%s%s%s", reason, msg ? ": " : "", msg ? msg : "");
	}
	return NULL;
}

char *kube_pod_stuck(const cJSON *pod)
{
	/* An init container that cannot run keeps the others PodInitializing. */
	char *why = first_stuck(json_get(pod, "status", "initContainerStatuses", NULL));

	return why ? why : first_stuck(json_get(pod, "status", "containerStatuses", NULL));
}

char *kube_pods_stuck(const cJSON *pods, const char *key, const char *value)
{
	const cJSON *pod;

	cJSON_ArrayForEach(pod, json_get(pods, "items", NULL)) {
		const char *v = json_str(json_get(pod, "metadata", "labels", NULL), key);
		cleanup_free char *why = v && strcmp(v, value) == 0 ? kube_pod_stuck(pod) : NULL;

		if (why) {
			const char *ns = json_str(json_get(pod, "metadata", NULL), "namespace");
			const char *name = json_str(json_get(pod, "metadata", NULL), "name");
			return xasprintf("pod %s/%s: %s", ns ? ns : "?", name ? name : "?", why);
		}
	}
	return NULL;
}

char *kube_pod_warning(const cJSON *events, const char *pod)
{
	const cJSON *ev, *last = NULL;

	cJSON_ArrayForEach(ev, json_get(events, "items", NULL)) {
		const char *type = json_str(ev, "type"), *name = json_str(json_get(ev, "involvedObject", NULL), "name");
		if (type && strcmp(type, "Warning") == 0 && name && strcmp(name, pod) == 0)
			last = ev;
	}
	if (!last)
		return NULL;
	const char *reason = json_str(last, "reason"), *msg = json_str(last, "message");
	return xasprintf("%s%s%s", reason ? reason : "Warning", msg ? ": " : "", msg ? msg : "");
}

char *kube_last_error_line(const char *text)
{
	const char *found = NULL;

	for (const char *p = text; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		const char *q = p + strspn(p, " |");
		if (strncmp(q, "Error:", 6) == 0)
			found = q;
	}
	return found ? xstrndup(found, strcspn(found, "\n")) : NULL;
}

/* One `kubectl logs -l`; NULL with *why set when it says nothing. */
