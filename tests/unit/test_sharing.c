/* test_sharing.c - --gpu-sharing: parsing, the chart's values, reading them back. */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "tap.h"

/* What MPS may do on a V100 (7.0) and a MIG-enabled A100 (8.0). */
static void test_mps_on_gpus(void)
{
	struct host_gpus h;
	struct strv only_a100 = { 0 };
	struct sharing mps17 = { .replicas = 17, .mps = 1 }, mps16 = { .replicas = 16, .mps = 1 },
		       mps2 = { .replicas = 2, .mps = 1 }, ts32 = { .replicas = 32 };
	os_error err = { 0 };

	host_gpus_parse("GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-aaaa)\n"
			"GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-bbbb)\n"
			"  MIG 3g.20gb     Device  0: (UUID: MIG-3333)\n"
			GPUS_QUERY_MARK "\nGPU-aaaa, [N/A], 7.0\nGPU-bbbb, Enabled, 8.0\n", &h);
	ok(!sharing_needs_gpus(&mps16, MIG_NONE) && sharing_needs_gpus(&mps17, MIG_NONE) &&
		   sharing_needs_gpus(&mps2, MIG_SINGLE) && !sharing_needs_gpus(&ts32, MIG_SINGLE),
	   "the GPUs are looked at for MPS past 16 clients, or under the single strategy");
	ok(sharing_check_gpus(&mps17, MIG_NONE, &h, NULL, &err) < 0 && err.code == OS_EXIT_FAILURE &&
		   strstr(err.msg, "mps:17 is more than GPU GPU-aaaa (Tesla V100-SXM2-16GB, compute capability 7.0) serves by MPS: at most 16 clients"),
	   "17 clients on a V100 refused: %s", err.msg);
	os_error_clear(&err);
	is_int(sharing_check_gpus(&mps16, MIG_NONE, &h, NULL, &err), 0, "16 are fine");
	strv_push(&only_a100, "GPU-bbbb");
	is_int(sharing_check_gpus(&mps17, MIG_NONE, &h, &only_a100, &err), 0, "a selection without the V100 takes 17");
	ok(sharing_check_gpus(&mps2, MIG_SINGLE, &h, &only_a100, &err) < 0 && strstr(err.msg, "cannot share GPU GPU-bbbb: it has MIG enabled"),
	   "MPS on MIG devices refused under single: %s", err.msg);
	os_error_clear(&err);
	is_int(sharing_check_gpus(&ts32, MIG_SINGLE, &h, NULL, &err), 0, "time-slicing takes anything");
	strv_free(&only_a100);
	host_gpus_free(&h);
}

static void refused(const char *text);

/* Without a count: DRA's, each claim asking, the driver's gate on. */
static void test_per_claim(void)
{
	struct sharing s, back;
	os_error err = { 0 };
	char *yaml = NULL, *str;

	is_int(sharing_parse("time-slicing", &s, &err), 0, "time-slicing without a count parses");
	ok(s.per_claim && !s.mps && s.replicas == 1 && sharing_asked(&s), "per claim, asked, no replicas");
	str = sharing_string(&s);
	is_str(str, "time-slicing", "reads back as given");
	free(str);
	is_int(sharing_values(&s, &yaml, &err), 0, "the DRA driver's values are emitted");
	is_str(yaml, "featureGates:\n  TimeSlicingSettings: true\n", "its chart's featureGates, the gate on");
	sharing_from_values(yaml, &back);
	ok(back.per_claim && !back.mps && back.replicas == 1, "and read back per claim");
	is_str(sharing_mode_name(&back), "time-slicing", "named time-slicing");
	free(yaml);
	sharing_from_values("featureGates:\n  TimeSlicingSettings: false\n", &back);
	ok(!back.per_claim, "a gate off shares nothing");
	is_str(sharing_mode_name(&back), "none", "named none");
	is_int(sharing_parse("mps", &s, &err), 0, "mps without a count parses");
	ok(s.per_claim && s.mps, "per claim, by MPS");
	is_int(sharing_values(&s, &yaml, &err), 0, "its values are emitted");
	is_str(yaml, "featureGates:\n  MPSSupport: true\n", "the MPS gate on");
	free(yaml);
	refused("time-slicing:");
	refused("Time-Slicing");
	os_error_clear(&err);
}

static void refused(const char *text)
{
	struct sharing s;
	os_error err = { 0 };

	ok(sharing_parse(text, &s, &err) == -1 && err.code == OS_EXIT_USAGE, "'%s' is a usage error: %s", text,
	   err.msg ? err.msg : "(none)");
	os_error_clear(&err);
}

int main(void)
{
	struct sharing s, back;
	os_error err = { 0 };
	char *yaml = NULL, *json = NULL, *str;
	cJSON *m;

	xalloc_init();
	is_int(sharing_parse("none", &s, &err), 0, "none parses");
	is_int(s.replicas, 1, "none is one replica");
	is_int(sharing_parse("time-slicing:4", &s, &err), 0, "time-slicing:4 parses");
	is_int(s.replicas, 4, "four replicas");
	str = sharing_string(&s);
	is_str(str, "time-slicing:4", "reads back as given");
	free(str);
	refused("time-slicing:1");
	refused("time-slicing:0");
	refused("time-slicing:");
	refused("time-slicing:2x");
	refused("time-slicing:1025");
	refused("TIME-SLICING:2");
	refused("");
	refused("mps:1");
	refused("mps:");
	refused("mps:two");
	{
		struct sharing other;
		ok(sharing_parse("mps:49", &other, &err) < 0 && err.code == OS_EXIT_USAGE &&
			   strstr(err.msg, "MPS serves at most 48 clients on a GPU"),
		   "mps:49 is past MPS's own limit: %s", err.msg);
		os_error_clear(&err);
		is_int(sharing_parse("mps:48", &other, &err), 0, "mps:48 parses");
		is_int(sharing_parse("time-slicing:49", &other, &err), 0, "time-slicing has no such limit");
	}

	is_int(sharing_values(&s, &yaml, &err), 0, "values are emitted");
	is_str(yaml,
	       "config:\n"
	       "  map:\n"
	       "    openshell: |-\n"
	       "      version: v1\n"
	       "      sharing:\n"
	       "        timeSlicing:\n"
	       "          resources:\n"
	       "          - name: nvidia.com/gpu\n"
	       "            replicas: 4\n"
	       "  default: openshell\n",
	       "the chart's config.map with one entry, named as config.default");
	sharing_from_values(yaml, &back);
	is_int(back.replicas, 4, "and read back: 4 replicas");
	free(yaml);

	is_int(sharing_manifest(&s, "nvidia-device-plugin", &json, &err), 0, "the HelmChartConfig is made");
	m = cJSON_Parse(json);
	ok(m && !strcmp(cJSON_GetObjectItem(m, "kind")->valuestring, "HelmChartConfig") &&
		   !strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "metadata"), "namespace")->valuestring, "kube-system") &&
		   !strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "metadata"), "name")->valuestring, "nvidia-device-plugin"),
	   "a HelmChartConfig named as the HelmChart, in kube-system");
	sharing_from_values(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "spec"), "valuesContent")->valuestring, &back);
	is_int(back.replicas, 4, "whose valuesContent carries the replicas");
	cJSON_Delete(m);
	free(json);

	sharing_from_values("config:\n  map:\n    a: |-\n      version: v1\n    b: |-\n      sharing:\n        timeSlicing:\n          resources:\n          - name: nvidia.com/gpu\n            replicas: 6\n  default: b\n", &back);
	is_int(back.replicas, 6, "the default entry is the one that counts");
	sharing_from_values("gfd:\n  enabled: false\n", &back);
	is_int(back.replicas, 1, "values without a config share nothing");
	sharing_from_values(": : [", &back);
	is_int(back.replicas, 1, "unreadable values share nothing");

	is_int(sharing_parse("mps:3", &s, &err), 0, "mps:3 parses");
	ok(s.replicas == 3 && s.mps, "three replicas, by MPS");
	str = sharing_string(&s);
	is_str(str, "mps:3", "reads back as given");
	free(str);
	is_int(sharing_values(&s, &yaml, &err), 0, "MPS values are emitted");
	ok(yaml && strstr(yaml, "        mps:\n          resources:\n          - name: nvidia.com/gpu\n            replicas: 3\n") &&
		   !strstr(yaml, "timeSlicing"),
	   "the plugin's config shares by sharing.mps, not timeSlicing");
	sharing_from_values(yaml, &back);
	ok(back.replicas == 3 && back.mps, "and reads back as MPS with 3 replicas");
	is_str(sharing_mode_name(&back), "mps", "named mps");
	free(yaml);
	is_int(sharing_parse("time-slicing:2", &s, &err), 0, "time-slicing:2 after it");
	ok(!s.mps && !s.per_claim, "is not MPS, nor per claim");
	test_mps_on_gpus();
	test_per_claim();
	return tap_done();
}
