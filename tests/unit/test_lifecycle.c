/* test_lifecycle.c - gateway names for `gateway list`, and the words and
 * JSON fields `status`, `list`, `verify` and `doctor` derive from what they
 * saw. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "base/xalloc.h"
#include "gateway/check/check.h"
#include "gateway/state/info.h"
#include "tap.h"

static void test_lines(void)
{
	struct strv names = { 0 };

	/* docker ps output: a container without the gateway label prints an
	 * empty line; hand-made labels can hold anything. */
	gateway_names_add_lines(&names, "t1\n\nBad_Name\nt2\n../etc\nx-\nt1");
	is_int(names.n, 3, "valid names kept, empty and invalid lines skipped");
	is_str(names.v[0], "t1", "first name");
	is_str(names.v[1], "t2", "second name");
	is_str(names.v[2], "t1", "last line without a newline");
	gateway_names_add_lines(&names, "");
	is_int(names.n, 3, "empty output adds nothing");
	strv_free(&names);
}

static void test_sort_unique(void)
{
	struct strv names = { 0 };

	gateway_names_sort_unique(&names);
	is_int(names.n, 0, "sorting nothing is fine");
	gateway_names_add_lines(&names, "zeta\nalpha\nmid\nalpha\nzeta\nalpha\n");
	gateway_names_sort_unique(&names);
	is_int(names.n, 3, "duplicates dropped");
	is_str(names.v[0], "alpha", "sorted 0");
	is_str(names.v[1], "mid", "sorted 1");
	is_str(names.v[2], "zeta", "sorted 2");
	ok(names.v[3] == NULL, "still NULL-terminated");
	strv_free(&names);
}

static void test_words(void)
{
	struct gateway gw = { .name = (char *)"g", .container = (char *)"openshell-cluster-g" };

	is_str(gateway_state_word(&gw), "missing", "no container: missing");
	is_str(gateway_metadata_problem(&gw), "metadata.json is missing", "no metadata is a problem");
	ok(!gateway_wants_gpu(&gw), "nothing known: no GPU");
	gw.has_metadata = 1;
	gw.md.gpu = 1;
	ok(gateway_wants_gpu(&gw), "without a container the metadata tells the GPU request");
	ok(gateway_metadata_problem(&gw) == NULL, "good metadata: no problem");
	gw.c.exists = 1;
	gw.c.status = (char *)"exited";
	gw.c.gpu_request = 0;
	is_str(gateway_state_word(&gw), "exited", "the container's state");
	ok(!gateway_wants_gpu(&gw), "the container's request wins over the metadata");
	gw.metadata_error = (char *)"metadata.json is corrupt";
	is_str(gateway_metadata_problem(&gw), "metadata.json is corrupt", "the lookup's complaint");
}

static void test_json(void)
{
	struct gateway gw = { .name = (char *)"g", .container = (char *)"openshell-cluster-g" };
	cJSON *o = cJSON_CreateObject();

	gateway_json_common(o, &gw);
	is_str(json_str(o, "state"), "missing", "json state");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "server")), "no metadata: server null");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "kubeconfig")), "no metadata: kubeconfig null");
	is_str(json_str(o, "metadata_error"), "metadata.json is missing", "json metadata_error");
	is_int(json_bool(o, "gpu"), 0, "json gpu false");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "gpus")), "no GPUs: gpus null");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "node_network")), "no container: node_network null");
	cJSON_Delete(o);

	o = cJSON_CreateObject();
	gw.has_metadata = 1;
	gw.md.server = (char *)"https://127.0.0.1:6443";
	gw.md.kubeconfig = (char *)"/c/kubeconfig";
	gw.c.exists = 1;
	gw.c.status = (char *)"running";
	gw.c.gpu_request = 1;
	gw.c.gpu_count = -1;   /* Docker's count=all */
	gateway_read_container(&gw);   /* as a lookup does */
	gateway_json_common(o, &gw);
	is_str(json_str(o, "name"), "g", "json name");
	is_str(json_str(o, "container"), "openshell-cluster-g", "json container");
	is_str(json_str(o, "state"), "running", "json running");
	is_str(json_str(o, "server"), "https://127.0.0.1:6443", "json server");
	is_str(json_str(o, "kubeconfig"), "/c/kubeconfig", "json kubeconfig");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "metadata_error")), "good metadata: null error");
	is_int(json_bool(o, "gpu"), 1, "json gpu true");
	is_int(json_bool(json_get(o, "gpus", NULL), "all"), 1, "json gpus: the selection as an object, {\"all\": true}");
	is_int(cJSON_GetArraySize(json_get(o, "gpus", NULL)), 1, "and that alone");
	is_str(json_str(o, "gpu_mode"), "legacy", "json gpu_mode: Docker's --gpus");
	is_str(json_str(o, "mig_strategy"), "none", "json mig_strategy: none without the entrypoint's variable");
	is_str(json_str(o, "node_network"), "vxlan", "json node_network: vxlan, k3s's own, without the label");
	is_str(json_str(o, "gpu_allocation"), "device-plugin", "json gpu_allocation: the device plugin without the entrypoint's variable");
	is_int(cJSON_GetArraySize(o), 12, "exactly the twelve shared keys");
	cJSON_Delete(o);

	o = cJSON_CreateObject();
	gw.c.node_network = (char *)"wireguard";
	gateway_json_common(o, &gw);
	is_str(json_str(o, "node_network"), "wireguard", "json node_network: the container's label");
	gw.c.node_network = NULL;
	cJSON_Delete(o);

	o = cJSON_CreateObject();
	gw.c.gpu_count = 0;
	gw.c.gpu_devices = (char *)"1";   /* one index alone: a device, not a count */
	gateway_read_container(&gw);
	gateway_json_common(o, &gw);
	ok(cJSON_GetArraySize(json_get(o, "gpus", "devices", NULL)) == 1 &&
	   strcmp(cJSON_GetArrayItem(json_get(o, "gpus", "devices", NULL), 0)->valuestring, "1") == 0,
	   "json gpus of device 1: {\"devices\": [\"1\"]}");
	cJSON_Delete(o);

	/* A request that does not read: gpus null, the mode still said. */
	o = cJSON_CreateObject();
	gw.c.gpu_devices = (char *)"";
	gateway_read_container(&gw);
	gateway_json_common(o, &gw);
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "gpus")) && gw.gpus_error &&
	   strcmp(json_str(o, "gpu_mode"), "legacy") == 0, "a selection that does not read: gpus null, gpu_mode kept");
	cJSON_Delete(o);
	gpus_free(&gw.gpus);
	free(gw.gpus_error);
}

/* verify's and doctor's checks, and their counts, in one shape. */
static void test_checks(void)
{
	int counts[CHECK_NSTATUS] = { [CHECK_PASS] = 3, [CHECK_SKIP] = 1 };
	cJSON *c = check_json("smoke-pod", CHECK_SKIP, "not run", NULL, NULL);
	cJSON *n = check_counts_json(counts);
	char *text = cJSON_PrintUnformatted(c);

	is_str(text, "{\"name\":\"smoke-pod\",\"status\":\"skip\",\"evidence\":\"not run\",\"detail\":null,\"fix\":null}",
	       "a check: name, status, evidence, detail and fix, absent ones null");
	free(text);
	text = cJSON_PrintUnformatted(n);
	is_str(text, "{\"pass\":3,\"warn\":0,\"fail\":0,\"skip\":1}", "counts of every status, none left out");
	free(text);
	is_str(check_status_name(CHECK_WARN), "warn", "doctor's warn is one of the statuses");
	cJSON_Delete(c);
	cJSON_Delete(n);
	c = json_document();
	text = cJSON_PrintUnformatted(c);
	is_str(text, "{\"schema\":1}", "every document starts with its schema version");
	free(text);
	cJSON_Delete(c);
}

static void test_json_helpers(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr = cJSON_Parse("[\"a\", 1, [\"b\", \"\"], \"c\"]");
	long long n = -1;
	char *joined;

	json_add_count_or_null(o, "zero", 0);
	json_add_count_or_null(o, "two", 2);
	json_add_count_or_null(o, "unknown", -1);
	json_add_string_or_null(o, "s", "x");
	json_add_string_or_null(o, "none", NULL);
	ok(json_int(cJSON_GetObjectItemCaseSensitive(o, "zero"), 0, 10, &n) == 0 && n == 0,
	   "a count of 0 is the number 0");
	ok(json_int(cJSON_GetObjectItemCaseSensitive(o, "two"), 0, 10, &n) == 0 && n == 2, "count 2");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "unknown")), "an unknown count is null");
	is_str(json_str(o, "s"), "x", "a string");
	ok(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "none")), "no string is null");
	cJSON_Delete(o);

	joined = json_join_strings(arr, ", ");
	is_str(joined, "a, b, c", "strings joined, nested flattened, others skipped");
	free(joined);
	joined = json_join_strings(NULL, ", ");
	is_str(joined, "", "nothing joins to the empty string");
	free(joined);
	cJSON_Delete(arr);
}

int main(void)
{
	xalloc_init();
	test_lines();
	test_sort_unique();
	test_words();
	test_json();
	test_json_helpers();
	test_checks();
	return tap_done();
}
