/* test_dra.c - DRA's pieces that read text: the driver's feature gates in a
 * DaemonSet, the published GPUs (whole or by MIG device), and verify's
 * create script with the resourceVersion its last line says. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/verify/verify_checks.h"
#include "tap.h"

/* A DaemonSet whose gpus container has FEATURE_GATES=V (NULL: none). */
static cJSON *daemonset(const char *v)
{
	cleanup_free char *text = xasprintf(
		"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"compute-domains\",\"env\":[{\"name\":"
		"\"FEATURE_GATES\",\"value\":\"TimeSlicingSettings=true\"}]},{\"name\":\"gpus\",\"env\":[%s%s%s]}]}}}}",
		v ? "{\"name\":\"FEATURE_GATES\",\"value\":\"" : "", v ? v : "", v ? "\"}" : "");

	return cJSON_Parse(text);
}

static int gate(const char *v, const char *name)
{
	cJSON *ds = daemonset(v);
	int on = dra_gate_on(ds, name);

	cJSON_Delete(ds);
	return on;
}

static void test_gates(void)
{
	ok(gate("TimeSlicingSettings=true,", "TimeSlicingSettings"), "the chart's rendering, its trailing comma");
	ok(gate("MPSSupport=false,TimeSlicingSettings=true", "TimeSlicingSettings"), "among others");
	ok(!gate("MPSSupport=false,TimeSlicingSettings=true", "MPSSupport"), "one off is off");
	ok(!gate("TimeSlicingSettingsX=true", "TimeSlicingSettings") && !gate("XTimeSlicingSettings=true", "TimeSlicingSettings"),
	   "a gate is its whole name");
	ok(!gate(NULL, "TimeSlicingSettings"), "only the gpus container's count, not another's");
	ok(gate(" TimeSlicingSettings = True ", "TimeSlicingSettings"), "spaces trimmed, a boolean as Go parses one");
	ok(!gate("TimeSlicingSettings=true,TimeSlicingSettings=false", "TimeSlicingSettings"), "the last word wins");
}

static void test_published(void)
{
	cJSON *list = cJSON_Parse(
		"{\"items\":[{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n\","
		"\"pool\":{\"name\":\"n\"},\"devices\":["
		"{\"name\":\"gpu-0\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"GPU-a\"}}},"
		"{\"name\":\"gpu-1-mig-1g10gb-19-0\",\"attributes\":{\"type\":{\"string\":\"mig\"},\"uuid\":{\"string\":\"MIG-x\"},"
		"\"parentUUID\":{\"string\":\"GPU-b\"}}},"
		"{\"name\":\"gpu-1-mig-1g10gb-19-1\",\"attributes\":{\"type\":{\"string\":\"mig\"},\"uuid\":{\"string\":\"MIG-y\"},"
		"\"parentUUID\":{\"string\":\"GPU-b\"}}}]}}]}");
	struct strv pub = { 0 };
	cleanup_free char *joined = NULL;

	dra_published_uuids(list, "n", &pub, NULL);
	joined = strv_join(&pub, ",");
	is_str(joined, "GPU-a,GPU-b", "a GPU published whole or by its MIG devices, once");
	is_int((int)dra_published_whole(list, "n"), 1, "one of them whole");
	is_str(dra_device_uuid(list, "n", "gpu-1-mig-1g10gb-19-1"), "MIG-y", "a MIG device's own UUID");
	is_str(dra_device_gpu(list, "n", "gpu-1-mig-1g10gb-19-1"), "GPU-b", "and its GPU's");
	ok(!dra_device_gpu(list, "n", "gpu-9"), "none for a device not published");
	strv_free(&pub);
	cJSON_Delete(list);
}

static void test_create_script(void)
{
	cleanup_free char *plain = verify_create_script(9, NULL), *looked = verify_create_script(9, "nvidia-smi -L");
	cleanup_free char *again = verify_create_again_script(9, "run-gpu"), *bare = verify_create_again_script(9, NULL);
	char text[] = "GPU 0: A\n#mark\nopenshell-created-since 412\n", none[] = "GPU 0: A\n";
	char empty[] = "openshell-created-since \n";
	cleanup_free char *rv = NULL;

	ok(strstr(plain, "kubectl --request-timeout=9s create --validate=false -f - -o 'jsonpath={.metadata.resourceVersion} '") &&
		   strstr(plain, "echo \"openshell-created-since ${1-}\""),
	   "the create says each object's version, the first on the last line");
	ok(strstr(looked, "{ nvidia-smi -L; } </dev/null & l=$!;") && strstr(looked, "[ $s = 0 ] || exit $s"),
	   "the look beside it, without the manifest; the status the create's");
	ok(strstr(again, "get resourceclaimtemplates.resource.k8s.io 'run-gpu' --namespace default") &&
		   strstr(again, "|| exit 1; echo \"openshell-created-since $("),
	   "made again, the template's version is read after it");
	ok(!strstr(bare, "openshell-created-since"), "without a template, none");
	rv = verify_created_since(text);
	is_str(rv, "412", "the version is the mark line's");
	is_str(text, "GPU 0: A\n#mark\n", "taken off what the look said");
	ok(!verify_created_since(none) && !strcmp(none, "GPU 0: A\n"), "no mark: no version, the text kept");
	ok(!verify_created_since(empty) && !*empty, "an empty version is none");
	ok(!verify_created_since(NULL), "nor is there one without text");
}

int main(void)
{
	xalloc_init();
	test_gates();
	test_published();
	test_create_script();
	return tap_done();
}
