/* test_dra.c - DRA's pieces that read text: the driver's feature gates in a
 * DaemonSet, the published GPUs (whole or by MIG device), and verify's
 * create script with the resourceVersion its last line says. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
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

/* The GPUs a container's look (GPUS_LOOK_SCRIPT, as the fake docker
 * answers it with the text of OUT and STATUS) gives the DRA driver to
 * publish: what start and node add wait for. */
static int dra_gpus_of(const char *dir, const char *out, int status, struct strv *uuids, os_error *err)
{
	cleanup_free char *path = xasprintf("%s/look.out", dir), *rc = xasprintf("%s/look.rc", dir);
	cleanup_free char *code = xasprintf("%d", status);
	struct docker_ctr node = { NULL, "openshell-node-g" };

	if (write_file_atomic(path, out, strlen(out), 0644, err) < 0 ||
	    write_file_atomic(rc, code, strlen(code), 0644, err) < 0)
		return -2;
	return container_dra_gpus(&node, "node 'n'", 5000, uuids, err);
}

static void test_container_dra_gpus(void)
{
	char dir[] = "/tmp/openshell-dra-XXXXXX";
	cleanup_free char *docker = NULL, *script = NULL;
	struct strv uuids = { 0 };
	os_error err = { 0 };

	if (!mkdtemp(dir))
		abort();
	docker = xasprintf("%s/docker", dir);
	script = xasprintf("#!/bin/sh\ncat '%s/look.out'; exit $(cat '%s/look.rc')\n", dir, dir);
	if (write_file_atomic(docker, script, strlen(script), 0755, &err) < 0)
		abort();
	setenv("OPENSHELL_DOCKER", docker, 1);
	is_int(dra_gpus_of(dir, "GPU 0: A100 (UUID: GPU-a)\nGPU 1: A100 (UUID: GPU-b)\n"
			   GPUS_VERSION_MARK " NVRM version: 570.86\n" GPUS_QUERY_MARK "\n"
			   "GPU-a, Enabled, 8.0\nGPU-b, Enabled, 8.0\n" GPUS_ENV_MARK "\nall\n", 0, &uuids, &err),
	       -1, "every GPU MIG-enabled without a MIG device: refused");
	ok(err.code == OS_EXIT_NOGPU && strstr(err.msg, "every GPU of node 'n' has MIG enabled and no MIG device") &&
		   strstr(err.msg, "nvidia-smi mig -cgi"),
	   "naming the node and the fix (exit 7): %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	is_int(dra_gpus_of(dir, "GPU 0: A100 (UUID: GPU-a)\nGPU 1: A100 (UUID: GPU-b)\n"
			   "  MIG 1g.10gb     Device  0: (UUID: MIG-x)\n"
			   GPUS_VERSION_MARK " NVRM version: 570.86\n" GPUS_QUERY_MARK "\n"
			   "GPU-a, Enabled, 8.0\nGPU-b, Enabled, 8.0\n" GPUS_ENV_MARK "\nall\n", 0, &uuids, &err),
	       0, "one with a MIG device: published");
	cleanup_free char *got = strv_join(&uuids, ",");
	is_str(got, "GPU-b", "by its GPU's UUID, the other left out");
	strv_free(&uuids);
	is_int(dra_gpus_of(dir, "No devices were found\n", 6, &uuids, &err), -1, "no GPU at all: refused");
	ok(err.code == OS_EXIT_NOGPU && strstr(err.msg, "node 'n' sees no GPU in its container openshell-node-g"),
	   "naming the container: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	for (const char *const *f = (const char *const[]){ "docker", "look.out", "look.rc", NULL }; *f; f++) {
		cleanup_free char *path = xasprintf("%s/%s", dir, *f);
		unlink(path);
	}
	rmdir(dir);
	unsetenv("OPENSHELL_DOCKER");
}

int main(void)
{
	xalloc_init();
	test_gates();
	test_published();
	test_create_script();
	test_container_dra_gpus();
	return tap_done();
}
