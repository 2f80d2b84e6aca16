/* fuzz_kube.c - the readers of `kubectl get -o json` output.
 *
 * Follows gateway start's read_gpu_state(): parse with json_parse(), find
 * the device plugin DaemonSet, read its counters, sum the nodes'
 * allocatable nvidia.com/gpu. The same bytes are also read as a single
 * Node, a single DaemonSet and a RuntimeClass lookup, since kubectl answers
 * each of those with one object.
 */
#include "config.h"

#include "base/error.h"
#include "base/json.h"
#include "fuzz.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define COUNTER_MAX (1LL << 40)

static void check_status(const cJSON *ds)
{
	struct ds_status st = { -1, -1, -1 };

	kube_daemonset_status(ds, &st);
	FUZZ_ASSERT(st.desired >= 0 && st.desired <= COUNTER_MAX);
	FUZZ_ASSERT(st.ready >= 0 && st.ready <= COUNTER_MAX);
	FUZZ_ASSERT(st.available >= 0 && st.available <= COUNTER_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_bytes(data, size);
	os_error err = { 0 };
	cJSON *root = json_parse(buf, size, "kubectl output", &err);
	const cJSON *ds, *item;
	long long gpus, v;

	if (!root) {
		FUZZ_ASSERT(err.msg != NULL && fuzz_one_line(err.msg));
		goto out;
	}
	FUZZ_ASSERT(err.msg == NULL);

	ds = kube_find_device_plugin(root);
	if (ds) {
		const char *label = json_str(json_get(ds, "metadata", "labels", NULL), DEVICE_PLUGIN_LABEL);
		FUZZ_ASSERT(label && strcmp(label, DEVICE_PLUGIN_NAME) == 0);
	}
	check_status(ds);     /* NULL when absent, as read_gpu_state() passes it */
	check_status(root);

	gpus = kube_nodes_allocatable_gpus(root);
	FUZZ_ASSERT(gpus >= -1);

	cJSON_ArrayForEach(item, json_get(root, "items", NULL)) {
		check_status(item);
		FUZZ_ASSERT(kube_nodes_allocatable_gpus(item) >= -1);
	}

	/* the generic readers, on what a RuntimeClass answer holds */
	(void)json_str(root, "handler");
	(void)json_str(json_get(root, "metadata", NULL), "name");
	(void)json_bool(root, "kind");
	if (json_int(json_get(root, "metadata", "generation", NULL), 0, COUNTER_MAX, &v) == 0)
		FUZZ_ASSERT(v >= 0 && v <= COUNTER_MAX);
	cJSON_Delete(root);
out:
	os_error_clear(&err);
	free(buf);
	return 0;
}
