/* test_parsers.c - readers of docker inspect and kubectl JSON, and base/json.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/inspect_any.h"
#include "gateway/gpu/allocation.h"
#include "gateway/state/gpu_claims.h"
#include "gateway/state/gpu_ids.h"
#include "gateway/state/gpu_procs.h"
#include "gateway/state/gpu_use.h"
#include "gateway/state/gpu_view.h"
#include "gateway/verify/verify_checks.h"
#include "gateway/wait/gpu_state.h"
#include "kube/checkpoint.h"
#include "kube/kubectl.h"
#include "kube/objects.h"
#include "kube/pod_cgroup.h"
#include "tap.h"

/* ---- docker inspect ----------------------------------------------------- */

/* `docker inspect --type=container openshell-cluster-x` of a GPU gateway,
 * trimmed to the fields around the ones read, in docker's own layout. */
static const char inspect_gpu[] =
	"[\n"
	"    {\n"
	"        \"Id\": \"4f0c3d2a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a\",\n"
	"        \"Created\": \"2026-11-29T14:31:43.123456789Z\",\n"
	"        \"Path\": \"/bin/k3s\",\n"
	"        \"Args\": [\"server\", \"--disable=traefik\"],\n"
	"        \"State\": {\n"
	"            \"Status\": \"running\",\n"
	"            \"Running\": true,\n"
	"            \"Paused\": false,\n"
	"            \"Restarting\": false,\n"
	"            \"OOMKilled\": false,\n"
	"            \"Dead\": false,\n"
	"            \"Pid\": 4242,\n"
	"            \"ExitCode\": 0,\n"
	"            \"Error\": \"\",\n"
	"            \"StartedAt\": \"2026-11-29T14:31:44.5Z\",\n"
	"            \"FinishedAt\": \"0001-01-01T00:00:00Z\",\n"
	"            \"Health\": {\n"
	"                \"Status\": \"healthy\",\n"
	"                \"FailingStreak\": 0,\n"
	"                \"Log\": [\n"
	"                    {\"Start\": \"2026-11-29T14:31:50Z\", \"End\": \"2026-11-29T14:31:50Z\", \"ExitCode\": 1, \"Output\": \"k3s API not ready\\n\"},\n"
	"                    {\"Start\": \"2026-11-29T14:32:00Z\", \"End\": \"2026-11-29T14:32:00Z\", \"ExitCode\": 0, \"Output\": \"ok\\n\"}\n"
	"                ]\n"
	"            }\n"
	"        },\n"
	"        \"Image\": \"sha256:0123456789abcdef\",\n"
	"        \"Name\": \"/openshell-cluster-x\",\n"
	"        \"RestartCount\": 2,\n"
	"        \"HostConfig\": {\n"
	"            \"Privileged\": true,\n"
	"            \"RestartPolicy\": {\"Name\": \"unless-stopped\", \"MaximumRetryCount\": 0},\n"
	"            \"DeviceRequests\": [\n"
	"                {\"Driver\": \"nvidia\", \"Count\": -1, \"DeviceIDs\": null,\n"
	"                 \"Capabilities\": [[\"utility\", \"compute\", \"gpu\"]], \"Options\": {}}\n"
	"            ]\n"
	"        },\n"
	"        \"Config\": {\n"
	"            \"Hostname\": \"openshell-x\",\n"
	"            \"Env\": [\"GPU_ENABLED=true\", \"PATH=/bin\"],\n"
	"            \"Image\": \"ghcr.io/openshell/cluster:0.1.0\",\n"
	"            \"Healthcheck\": {\"Test\": [\"CMD\", \"/usr/local/bin/cluster-healthcheck.sh\"],\n"
	"                            \"Interval\": 5000000000, \"StartPeriod\": 30000000000},\n"
	"            \"Labels\": {\n"
	"                \"org.openshell.gateway\": \"x\",\n"
	"                \"org.openshell.gpu\": \"true\",\n"
	"                \"org.openshell.managed-by\": \"openshell\"\n"
	"            }\n"
	"        }\n"
	"    }\n"
	"]\n";

static int parse_inspect(const char *json, struct gw_container *c, os_error *err)
{
	return container_parse_inspect(json, strlen(json), c, err);
}

static void test_inspect_full(void)
{
	struct gw_container c;
	os_error err = { 0 };

	is_int(parse_inspect(inspect_gpu, &c, &err), 0, "docker inspect of a GPU gateway parses");
	is_int(c.exists, 1, "exists");
	is_str(c.id, "4f0c3d2a9b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a", "Id");
	is_str(c.status, "running", "State.Status");
	is_int(c.running, 1, "State.Running");
	is_int(c.restarting, 0, "State.Restarting");
	is_int(c.exit_code, 0, "State.ExitCode");
	is_int(c.restart_count, 2, "RestartCount");
	is_str(c.state_error, "", "State.Error (empty)");
	is_str(c.health, "healthy", "State.Health.Status");
	is_str(c.health_line, "ok", "the last health log entry's Output, its last line");
	is_int(c.gpu_request, 1, "DeviceRequests to nvidia: gpu_request");
	is_str(c.managed_by, "openshell", "label org.openshell.managed-by");
	is_str(c.gateway, "x", "label org.openshell.gateway");
	is_str(c.image, "ghcr.io/openshell/cluster:0.1.0", "Config.Image, not the image id");
	is_str(c.started_at, "2026-11-29T14:31:44.5Z", "State.StartedAt, as the daemon wrote it");
	is_int((int)c.health_test.n, 1, "the healthcheck's CMD form is its argv");
	is_int(c.runtimes_disabled, 0, "--disable=traefik leaves k3s's RuntimeClasses");
	is_str(c.health_test.n ? c.health_test.v[0] : NULL, "/usr/local/bin/cluster-healthcheck.sh", "argv[0]");
	container_free(&c);
	ok(c.id == NULL && c.status == NULL && c.exists == 0, "container_free clears the struct");

	/* len bounds the input: only the bytes given are read. */
	is_int(container_parse_inspect(inspect_gpu, strlen(inspect_gpu) - 3, &c, &err), -1,
	       "docker inspect output cut short is refused");
	os_error_clear(&err);
	container_free(&c);
}

/* k3s's --disable, in each form urfave/cli takes, disables runtimes only
 * where it names them whole. */
static void test_inspect_disable(void)
{
	static const struct {
		const char *args;
		int disabled;
	} cases[] = {
		{ "\"server\",\"--disable=traefik,runtimes\"", 1 },
		{ "\"server\",\"--disable=traefik\",\"--disable\",\"metrics-server,runtimes\"", 1 },
		{ "\"server\",\"-disable=runtimes\"", 1 },
		{ "\"server\",\"--disable=traefik, runtimes \"", 1 },
		{ "\"server\",\"--disable=runtimes.yaml\"", 1 },
		{ "\"server\",\"--disable=runtimes-extra,traefik\"", 0 },
		{ "\"server\",\"--disable\",\"traefik\",\"runtimes\"", 0 },
		{ "\"server\",\"--disabled=runtimes\"", 0 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct gw_container c;
		os_error err = { 0 };
		char *json = xasprintf("[{\"State\":{\"Status\":\"running\"},\"Args\":[%s]}]", cases[i].args);

		ok(parse_inspect(json, &c, &err) == 0 && c.runtimes_disabled == cases[i].disabled,
		   "args [%s]: runtimes disabled %d", cases[i].args, cases[i].disabled);
		container_free(&c);
		free(json);
	}
}

/* An exited container without GPUs, healthcheck or labels, and a failed one. */
static void test_inspect_variants(void)
{
	struct gw_container c;
	os_error err = { 0 };

	is_int(parse_inspect("[{\"State\":{\"Status\":\"running\"},\"Config\":{\"Healthcheck\":"
			     "{\"Test\":[\"CMD-SHELL\",\"kubectl get --raw /readyz\"]}}}]", &c, &err),
	       0, "a CMD-SHELL healthcheck parses");
	ok(c.health_test.n == 3 && !strcmp(c.health_test.v[0], "/bin/sh") && !strcmp(c.health_test.v[1], "-c") &&
		   !strcmp(c.health_test.v[2], "kubectl get --raw /readyz"),
	   "CMD-SHELL runs through /bin/sh -c, as Docker runs it");
	container_free(&c);
	is_int(parse_inspect("[{\"State\":{\"Status\":\"running\"},\"Config\":{\"Healthcheck\":"
			     "{\"Test\":[\"NONE\"]}}}]", &c, &err),
	       0, "a disabled healthcheck parses");
	is_int((int)c.health_test.n, 0, "NONE: no probe to run");
	container_free(&c);

	is_int(parse_inspect("[{\"Id\":\"a\",\"State\":{\"Status\":\"exited\",\"Running\":false,"
			     "\"Restarting\":false,\"ExitCode\":137,\"Error\":\"\"},\"RestartCount\":0,"
			     "\"HostConfig\":{\"DeviceRequests\":null},\"Config\":{\"Image\":\"img\",\"Labels\":{}}}]",
			     &c, &err),
	       0, "exited container without healthcheck parses");
	is_str(c.status, "exited", "status exited");
	is_int(c.running, 0, "not running");
	is_int(c.exit_code, 137, "ExitCode 137");
	is_int(c.gpu_request, 0, "DeviceRequests null: no GPU request");
	ok(c.health == NULL && c.health_line == NULL, "no Health: health NULL");
	ok(c.managed_by == NULL && c.gateway == NULL, "no labels: NULL");
	container_free(&c);

	is_int(parse_inspect("[{\"Id\":\"b\",\"State\":{\"Status\":\"created\",\"Running\":false,"
			     "\"ExitCode\":128,\"Error\":\"failed to create task for container: unable to apply caps: "
			     "operation not permitted\"},\"HostConfig\":{\"DeviceRequests\":[{\"Driver\":\"\","
			     "\"Count\":-1,\"DeviceIDs\":null,\"Capabilities\":[[\"gpu\"]],\"Options\":{}}]},"
			     "\"Config\":{\"Image\":\"img\",\"Labels\":null}}]",
			     &c, &err),
	       0, "a container that failed to start parses");
	is_int(c.gpu_request, 1, "Driver \"\" with capability gpu: GPU request");
	is_int(c.exit_code, 128, "ExitCode 128");
	is_str(c.state_error, "failed to create task for container: unable to apply caps: operation not permitted",
	       "State.Error carries the runtime's complaint");
	is_int(c.restart_count, 0, "absent RestartCount reads 0");
	container_free(&c);

	is_int(parse_inspect("[{\"State\":{\"Status\":\"running\",\"Health\":{\"Status\":\"starting\",\"Log\":[]}},"
			     "\"HostConfig\":{\"DeviceRequests\":[{\"Driver\":\"\",\"Capabilities\":[[\"compute\"]]},"
			     "{\"Driver\":\"other\",\"Capabilities\":null}]}}]",
			     &c, &err),
	       0, "starting container with empty health log parses");
	is_str(c.health, "starting", "health starting");
	ok(c.health_line == NULL, "empty health log: no output");
	is_int(c.gpu_request, 0, "requests without nvidia or gpu: no GPU request");
	ok(c.id == NULL && c.image == NULL, "absent Id and Config read NULL");
	container_free(&c);

	is_int(parse_inspect("[{\"State\":{\"Status\":\"restarting\",\"Running\":true,\"Restarting\":true,"
			     "\"ExitCode\":\"1\",\"Health\":{\"Status\":\"unhealthy\",\"Log\":[{\"Output\":\"a\"},"
			     "{\"ExitCode\":1}]}},\"RestartCount\":\"3\"}]",
			     &c, &err),
	       0, "mistyped numbers still parse");
	is_int(c.restarting, 1, "Restarting true");
	is_int(c.exit_code, 0, "ExitCode as a string reads 0");
	is_int(c.restart_count, 0, "RestartCount as a string reads 0");
	is_str(c.health, "unhealthy", "health unhealthy");
	ok(c.health_line == NULL, "last log entry without Output: NULL, not an earlier one");
	container_free(&c);

	is_int(parse_inspect("[{\"State\":{\"Status\":\"running\",\"Health\":{\"Status\":\"starting\",\"Log\":["
			     "{\"Output\":\"a warning\\nHEALTHCHECK_FAIL k3s-not-ready\\n\\n\"}]}}}]", &c, &err),
	       0, "a probe that printed more than its marker");
	is_str(c.health_line, "HEALTHCHECK_FAIL k3s-not-ready", "its last line is the marker");
	container_free(&c);

	is_int(parse_inspect("[{\"State\":{\"Status\":\"running\",\"Running\":\"yes\",\"ExitCode\":1e300},"
			     "\"RestartCount\":99999999999999999999999}]",
			     &c, &err),
	       0, "huge numbers still parse");
	is_int(c.exit_code, 0, "ExitCode 1e300 reads 0");
	is_int(c.restart_count, 0, "RestartCount 1e23 reads 0");
	is_int(c.running, 0, "Running as a string reads false");
	container_free(&c);

	is_int(parse_inspect("[{\"State\":{\"Status\":\"exited\",\"ExitCode\":-1}},{\"State\":{\"Status\":\"running\"}}]",
			     &c, &err),
	       0, "two objects: the first is read");
	is_str(c.status, "exited", "first object's status");
	is_int(c.exit_code, -1, "ExitCode -1");
	container_free(&c);
	os_error_clear(&err);
}

static void malformed(const char *json, const char *want_in, const char *what)
{
	struct gw_container c;
	os_error err = { 0 };

	memset(&c, 0x5a, sizeof(c));
	is_int(parse_inspect(json, &c, &err), -1, what);
	ok(err.msg && strstr(err.msg, want_in), "%s: message has '%s'", what, want_in);
	if (err.msg && !strstr(err.msg, want_in))
		printf("#   message: %s\n", err.msg);
	ok(c.id == NULL && c.status == NULL && c.image == NULL && c.exists == 0, "%s: struct left empty", what);
	os_error_clear(&err);
	container_free(&c);
}

static void test_inspect_malformed(void)
{
	malformed("Error: No such object: x", "not valid JSON", "not JSON");
	malformed("", "not valid JSON", "empty output");
	malformed("[]", "not an array of objects", "empty array");
	malformed("{}", "not an array of objects", "an object, not an array");
	malformed("[1]", "not an array of objects", "array of numbers");
	malformed("[null]", "not an array of objects", "array of null");
	malformed("[{\"Id\":\"a\",\"State\":{\"Running\":true}}]", "State.Status", "missing State.Status");
	malformed("[{\"Id\":\"a\",\"State\":{\"Status\":5}}]", "State.Status", "State.Status as a number");
	malformed("[{\"Id\":\"a\",\"State\":\"running\"}]", "State.Status", "State as a string");
	malformed("[{\"Id\":\"a\"}]", "State.Status", "no State");
}

static void test_says_missing(void)
{
	ok(docker_says_missing("Error: No such container: openshell-cluster-x\n"), "No such container");
	ok(docker_says_missing("Error response from daemon: No such object: openshell-cluster-x\n"),
	   "No such object");
	ok(docker_says_missing("Error: No such image: ghcr.io/openshell/cluster:0.1.0\n"), "No such image");
	ok(docker_says_missing("Error: No such network: openshell-cluster-x\n"), "No such network");
	ok(docker_says_missing("Error response from daemon: get openshell-cluster-x: no such volume\n"),
	   "no such volume");
	ok(!docker_says_missing("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
				"Is the docker daemon running?\n"),
	   "daemon unreachable is not 'missing'");
	ok(!docker_says_missing("permission denied while trying to connect to the Docker daemon socket\n"),
	   "permission denied is not 'missing'");
	ok(!docker_says_missing(""), "empty stderr is not 'missing'");
	ok(docker_says_missing("error: no such object: openshell-cluster-x\n"), "no such object (the v29 CLI)");
}

/* ---- untyped docker inspect ---------------------------------------------- */

/* Each type's answer trimmed to a few of its fields, in docker's layout. */
#define OBJ_CONTAINER "{\"Id\":\"4f0c3d2a\",\"Name\":\"/openshell-cluster-x\",\"State\":{\"Status\":\"exited\"," \
	"\"Running\":false},\"HostConfig\":{\"Privileged\":true},\"Config\":{\"Image\":\"openshell-cluster:sim\"}}"
#define OBJ_IMAGE "{\"Id\":\"sha256:dbc6b239\",\"RepoTags\":[\"openshell-cluster:sim\"],\"Config\":{\"Labels\":null}," \
	"\"RootFS\":{\"Type\":\"layers\",\"Layers\":[]}}"
#define OBJ_NETWORK "{\"Name\":\"openshell-cluster-x\",\"Id\":\"9e1b\",\"Scope\":\"local\",\"Driver\":\"bridge\"," \
	"\"IPAM\":{\"Driver\":\"default\",\"Config\":[]},\"Labels\":{\"org.openshell.gateway\":\"x\"}}"
#define OBJ_VOLUME "{\"CreatedAt\":\"2026-12-03T22:30:00Z\",\"Driver\":\"local\",\"Labels\":null," \
	"\"Mountpoint\":\"/var/lib/docker/volumes/openshell-cluster-x/_data\",\"Name\":\"openshell-cluster-x\"," \
	"\"Options\":null,\"Scope\":\"local\"}"

static const char *const two[] = { "openshell-cluster-x", "openshell-cluster:sim" };

static void found(const char *out, const char *errtext, enum docker_kind k0, enum docker_kind k1, const char *what)
{
	struct docker_found f[2];
	os_error err = { 0 };
	int rc = docker_found_parse(two, 2, out, strlen(out), errtext, f, &err);

	is_int(rc, 0, what);
	if (rc < 0)
		printf("#   %s\n", err.msg);
	is_int(f[0].kind, k0, "  the gateway's name");
	is_int(f[1].kind, k1, "  the image's");
	ok((f[0].obj != NULL) == (k0 != DOCKER_MISSING) && (f[1].obj != NULL) == (k1 != DOCKER_MISSING),
	   "  an object for each name found, none for the missing");
	docker_found_free(f, 2);
	os_error_clear(&err);
}

static void unmatched(const char *out, const char *errtext, const char *want_in, const char *what)
{
	struct docker_found f[2];
	os_error err = { 0 };

	is_int(docker_found_parse(two, 2, out, strlen(out), errtext, f, &err), -1, what);
	ok(err.msg && strstr(err.msg, want_in), "  says: %s", want_in);
	ok(!f[0].obj && !f[1].obj, "  and holds no object");
	docker_found_free(f, 2);
	os_error_clear(&err);
}

static void test_inspect_any(void)
{
	found("[" OBJ_IMAGE "]", "Error: No such object: openshell-cluster-x\n", DOCKER_MISSING, DOCKER_IMAGE,
	      "no container, the image here");
	found("[]", "error: no such object: openshell-cluster-x\nerror: no such object: openshell-cluster:sim\n",
	      DOCKER_MISSING, DOCKER_MISSING, "neither, as the v29 CLI words it");
	found("", "Error: No such object: openshell-cluster-x\nError: No such object: openshell-cluster:sim\n",
	      DOCKER_MISSING, DOCKER_MISSING, "neither, nothing on stdout");
	found("[" OBJ_CONTAINER "," OBJ_IMAGE "]", "", DOCKER_CONTAINER, DOCKER_IMAGE, "container and image");
	found("[" OBJ_NETWORK "]", "Error: No such object: openshell-cluster:sim\n", DOCKER_NETWORK, DOCKER_MISSING,
	      "a network of the name, no image");
	found("[" OBJ_VOLUME "," OBJ_CONTAINER "]", "", DOCKER_VOLUME, DOCKER_CONTAINER,
	      "a volume of the name; a container where the image was asked for");
	found("[" OBJ_IMAGE ",{\"Name\":\"p\",\"Enabled\":true}]", "", DOCKER_IMAGE, DOCKER_OTHER,
	      "an image of the gateway's name; a plugin");
	unmatched("[" OBJ_IMAGE "]", "", "1 object(s) for 2 name(s)", "one object for two names found");
	unmatched("[" OBJ_IMAGE "," OBJ_IMAGE "]", "Error: No such object: openshell-cluster-x\n",
		  "2 object(s) for 1 name(s)", "two objects where one name was missing");
	unmatched("{}", "", "-1 object(s)", "not an array");
	unmatched("[{", "", "docker inspect output", "cut short");

	/* The same name twice, missing: docker says so twice. */
	const char *const same[] = { "openshell-cluster-x", "openshell-cluster-x" };
	struct docker_found f[2];
	os_error err = { 0 };
	is_int(docker_found_parse(same, 2, "[]", 2, "Error: No such object: openshell-cluster-x\n"
			"Error: No such object: openshell-cluster-x\n", f, &err), 0, "one name twice, missing");
	ok(f[0].kind == DOCKER_MISSING && f[1].kind == DOCKER_MISSING, "  missing both times");
	docker_found_free(f, 2);
	os_error_clear(&err);
}

/* ---- kubectl JSON -------------------------------------------------------- */

static cJSON *J(const char *text)
{
	cJSON *j = cJSON_Parse(text);

	if (!j)
		printf("# fixture does not parse: %s\n", text);
	return j;
}

#define NODE(alloc) \
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"openshell-x\"}," \
	"\"status\":{\"allocatable\":{" alloc "},\"capacity\":{\"cpu\":\"16\"}}}"
#define NODELIST(items) "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" items "]}"
#define ALLOC_BASE "\"cpu\":\"16\",\"memory\":\"131811748Ki\",\"pods\":\"110\""

static void gpus(const char *text, long long want, const char *what)
{
	cJSON *j = J(text);

	is_int(kube_nodes_allocatable_gpus(j), want, what);
	cJSON_Delete(j);
}

static void test_nodes(void)
{
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"")), 2, "allocatable \"2\" is 2");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"0\"")), 0, "allocatable \"0\" is 0");
	gpus(NODELIST(NODE(ALLOC_BASE)), -1, "key absent: -1 (plugin not registered)");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":2")), -1, "a number, not a quantity string: -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"abc\"")), -1, "\"abc\": -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"-1\"")), -1, "\"-1\": -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"\"")), -1, "\"\": -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2x\"")), -1, "\"2x\": -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"99999999999999999999\"")), -1, "overflowing count: -1");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"1\"") "," NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"")),
	     3, "two nodes \"1\" + \"2\" is 3");
	gpus(NODELIST(NODE(ALLOC_BASE) "," NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"4\"")), 4,
	     "a node without the key and one with \"4\" is 4");
	gpus(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"0\"") "," NODE(ALLOC_BASE)), 0,
	     "a node with \"0\" and one without is 0");
	gpus(NODELIST(""), -1, "no nodes: -1");
	gpus(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"8\""), 8, "a single Node object");
	gpus(NODE(ALLOC_BASE), -1, "a single Node without the key: -1");
	gpus("{\"kind\":\"List\",\"items\":null}", -1, "items null: -1");
	gpus("[1,2]", -1, "an array: -1");
	is_int(kube_nodes_allocatable_gpus(NULL), -1, "NULL: -1");
}

static void unhealthy(long long alloc, long long cap, const char *want, const char *what)
{
	cleanup_free char *got = kube_gpus_unhealthy(alloc, cap);

	if (want)
		ok(got && strncmp(got, want, strlen(want)) == 0, "unhealthy %s: %s", what, got ? got : "(null)");
	else
		ok(!got, "unhealthy %s", what);
}

#define NODE_SPLIT(alloc, cap) \
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"openshell-x\"}," \
	"\"status\":{\"allocatable\":{" alloc "},\"capacity\":{" cap "}}}"

/* A stopped plugin's devices: the kubelet keeps them in capacity with none
 * allocatable (pkg/kubelet/cm/devicemanager). */
static void test_nodes_capacity(void)
{
	cJSON *j = J(NODELIST(NODE_SPLIT(ALLOC_BASE ",\"nvidia.com/gpu\":\"0\"", ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"")));

	is_int(kube_nodes_allocatable_gpus(j), 0, "unhealthy devices: allocatable 0");
	is_int(kube_nodes_capacity_gpus(j), 2, "and capacity 2");
	cJSON_Delete(j);
	j = J(NODE_SPLIT(ALLOC_BASE, ALLOC_BASE));
	is_int(kube_nodes_capacity_gpus(j), -1, "never registered: no capacity either");
	cJSON_Delete(j);
	ok(strstr(kube_gpus_zero_why(2), "none healthy") != NULL, "0 of a capacity: the kubelet counts none healthy");
	ok(strstr(kube_gpus_zero_why(0), "has not registered its GPUs again") != NULL,
	   "0 of 0: a registration of an earlier run, none since");
	unhealthy(1, 2, "1 of the node's 2 nvidia.com/gpu devices is unhealthy: the device plugin marked it", "1 of 2");
	unhealthy(1, 3, "2 of the node's 3 nvidia.com/gpu devices are unhealthy: the device plugin marked them", "2 of 3");
	unhealthy(2, 2, NULL, "all healthy: none");
	unhealthy(0, 2, NULL, "none healthy: the 0 has its own reason");
	unhealthy(-1, -1, NULL, "never registered: none");
	unhealthy(2, -1, NULL, "no capacity read: none");
}

/* One `kubectl get nodes,daemonsets,runtimeclasses -A -o json`: a List of
 * every kind, each item with its own kind. */
static void test_mixed_list(void)
{
	cJSON *j = J(NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"") ","
			      "{\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"nvidia-device-plugin\","
			      "\"labels\":{\"app.kubernetes.io/name\":\"nvidia-device-plugin\"}},"
			      "\"status\":{\"desiredNumberScheduled\":1,\"numberReady\":1},"
			      "\"spec\":{\"template\":{}}},"
			      "{\"kind\":\"RuntimeClass\",\"handler\":\"crun\",\"metadata\":{\"name\":\"crun\"}},"
			      "{\"kind\":\"RuntimeClass\",\"handler\":\"nvidia\",\"metadata\":{\"name\":\"nvidia\"},"
			      "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"5\"}}}"));
	struct ds_status st;

	is_int(kube_nodes_allocatable_gpus(j), 2, "only Nodes count towards allocatable GPUs");
	is_int(kube_count_kind(j, "Node"), 1, "one Node in the List");
	is_int(kube_count_kind(j, "RuntimeClass"), 2, "two RuntimeClasses");
	ok(kube_find(j, "RuntimeClass", "nvidia") != NULL, "RuntimeClass nvidia is found by kind and name");
	ok(kube_find(j, "Node", "nvidia") == NULL, "a name of another kind is not a Node");
	kube_daemonset_status(kube_find_device_plugin(j), &st);
	ok(st.desired == 1 && st.ready == 1, "the plugin's DaemonSet is found among other kinds");
	cJSON_Delete(j);
}

/* Start's facts, read from the one List `gateway status` gets: ready
 * only with the runtime, the plugin's pods all ready and GPUs on a node. */
static void test_facts_of_list(void)
{
#define PLUGIN_DS(ready)                                                                              \
	"{\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"nvidia-device-plugin\","                      \
	"\"labels\":{\"app.kubernetes.io/name\":\"nvidia-device-plugin\"}},"                              \
	"\"status\":{\"desiredNumberScheduled\":1,\"numberReady\":" ready "},"                              \
	"\"spec\":{\"template\":{\"spec\":{\"runtimeClassName\":\"nvidia\"}}}}"
	static const char *const lists[] = {
		NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"") "," PLUGIN_DS("1")),
		NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"") "," PLUGIN_DS("0")),
		NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"0\"") "," PLUGIN_DS("1")),
		NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/mig-1g.10gb\":\"4\"") "," PLUGIN_DS("1")),
		NODELIST(NODE(ALLOC_BASE ",\"nvidia.com/gpu\":\"2\"")),
	};
	static const int ready[] = { 1, 0, 0, 1, 0 };
	static const char *const what[] = {
		"ready: the plugin's ready pods prove RuntimeClass nvidia, 2 GPUs",
		"not ready: the plugin's pod is not",
		"not ready: no GPU allocatable",
		"ready: MIG devices alone (mixed)",
		"not ready: no device plugin",
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		cJSON *j = J(lists[i]);
		struct gpu_state g = { .allocatable = -1, .runtime_class = -1 };

		g.rt.config_read = g.rt.nvidia = 1;
		gpu_state_read_nodes(&g, j);
		gpu_state_read_sets(&g, j);
		is_int(gpu_state_ready(&g), ready[i], what[i]);
		if (i == 0) {
			g.rt.nvidia = 0;
			is_int(gpu_state_ready(&g), 0, "not ready: containerd has no nvidia runtime");
		}
		gpu_state_free(&g);
		cJSON_Delete(j);
	}
#undef PLUGIN_DS
}

/* Under DRA the same List read with the slices: the driver's kubelet
 * plugin ready and the node's ResourceSlices publishing exactly the
 * gateway's GPUs, by the attribute uuid (GpuInfo.Attributes()). */
static void test_dra_facts(void)
{
#define DRA_DS(ready)                                                                                 \
	"{\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"dra-driver-nvidia-gpu-kubelet-plugin\","     \
	"\"namespace\":\"nvidia-dra-driver-gpu\"},"                                                        \
	"\"status\":{\"desiredNumberScheduled\":1,\"numberReady\":" ready "}}"
#define DEVT(type, uuid) "{\"name\":\"d\",\"attributes\":{\"type\":{\"string\":\"" type "\"},\"uuid\":{\"string\":\"" uuid "\"}}}"
#define DEV(uuid) DEVT("gpu", uuid)
#define SLICE(driver, node, devs)                                                                      \
	"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"" driver "\",\"nodeName\":\"" node "\","        \
	"\"pool\":{\"name\":\"" node "\"},\"devices\":[" devs "]}}"
	static const char *const lists[] = {
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEV("GPU-b"))),
		NODELIST(DRA_DS("0") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEV("GPU-b"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEV("GPU-c"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a")) "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-b"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n2", DEV("GPU-a") "," DEV("GPU-b"))),
		NODELIST(DRA_DS("1") "," SLICE("other.example.com", "n1", DEV("GPU-a") "," DEV("GPU-b"))),
		NODELIST(SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEV("GPU-b"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEVT("mig", "MIG-x") "," DEV("GPU-b"))),
		NODELIST(DRA_DS("1") "," SLICE("gpu.nvidia.com", "n1", DEV("GPU-a") "," DEV("GPU-b")) ","
			 SLICE("gpu.nvidia.com", "n1", DEV("GPU-b"))),
	};
	static const int ready[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 1 };
	static const char *const what[] = {
		"ready: the plugin's pods ready, the node publishes both GPUs",
		"not ready: the kubelet plugin's pod is not",
		"not ready: one of the two GPUs published",
		"not ready: another GPU than the gateway's published",
		"ready: the node's devices over two slices of its pool",
		"not ready: another node publishes them",
		"not ready: another driver's slice",
		"not ready: no kubelet plugin DaemonSet",
		"ready: a GPU's MIG device (type mig) is not a GPU of its own",
		"ready: a GPU two slices list counts once",
	};
	struct strv want = { 0 };

	strv_push(&want, "GPU-b");
	strv_push(&want, "GPU-a");
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		cJSON *j = J(lists[i]);
		struct gpu_state g = { .by = gpu_allocator(GPU_ALLOCATION_DRA), .allocatable = -1, .runtime_class = 0,
				       .want_node = "n1", .want_uuids = &want };

		g.rt.config_read = g.rt.nvidia = 1;
		gpu_state_read_nodes(&g, j);
		gpu_state_read_sets(&g, j);
		gpu_state_read_slices(&g, j);
		is_int(gpu_state_ready(&g), ready[i], what[i]);
		if (i == 0)
			ok(gpu_allocator_daemonset(gpu_allocator(GPU_ALLOCATION_DRA), j) &&
				   !gpu_allocator_daemonset(gpu_allocator(GPU_ALLOCATION_DEVICE_PLUGIN), j),
			   "the DRA driver's DaemonSet is found by its name, and is not the device plugin's");
		if (i == 0) {
			is_int((long long)g.published.n, 2, "two GPUs published, though no RuntimeClass was seen");
			g.want_uuids = NULL;
			is_int(gpu_state_ready(&g), 1, "no UUIDs wanted: any GPU will do");
			g.rt.nvidia = 0;
			is_int(gpu_state_ready(&g), 0, "not ready: containerd has no nvidia runtime");
		}
		gpu_state_free(&g);
		cJSON_Delete(j);
	}
	strv_free(&want);
	{
		/* A slice made before the container's start is the last run's. */
		cJSON *j = J(NODELIST("{\"kind\":\"ResourceSlice\",\"metadata\":{\"creationTimestamp\":\"2026-12-01T10:00:09Z\"},"
				      "\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n1\",\"devices\":[" DEV("GPU-a") "]}},"
				      "{\"kind\":\"ResourceSlice\",\"metadata\":{\"creationTimestamp\":\"2026-12-01T10:00:03Z\"},"
				      "\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n1\",\"devices\":[" DEV("GPU-b") "]}}"));
		struct gpu_state g = { .by = gpu_allocator(GPU_ALLOCATION_DRA), .want_node = "n1" };

		gpu_state_read_slices(&g, j);
		is_str(g.slices_created, "2026-12-01T10:00:03Z", "the oldest slice's creationTimestamp");
		gpu_state_mark_stale(&g, "2026-12-01T10:00:05Z");
		ok(g.stale && g.stale_slices, "a slice older than the start: stale");
		gpu_state_mark_stale(&g, "2026-12-01T10:00:01Z");
		ok(!g.stale && !g.stale_slices, "all made since the start: not stale");
		gpu_state_mark_stale(&g, NULL);
		ok(!g.stale, "the start unknown: not stale");
		g.by = gpu_allocator(GPU_ALLOCATION_DEVICE_PLUGIN);
		gpu_state_mark_stale(&g, "2026-12-01T10:00:05Z");
		ok(!g.stale && !g.stale_slices, "the device plugin's facts are the node's alone");
		gpu_state_free(&g);
		cJSON_Delete(j);
	}
#undef DRA_DS
#undef DEV
#undef DEVT
#undef SLICE
}

/* ---- verify under DRA --------------------------------------------------- */

#define CLAIM(reserved, driver, device)                                                                    \
	"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"p-gpu-x1\"},\"status\":{"                       \
	"\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"" driver "\","           \
	"\"pool\":\"n1\",\"device\":\"" device "\"}]}},"                                                      \
	"\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"" reserved "\",\"uid\":\"u\"}]}}"
#define VSLICE(driver, node, devs)                                                                         \
	"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"" driver "\",\"nodeName\":\"" node "\","          \
	"\"pool\":{\"name\":\"" node "\"},\"devices\":[" devs "]}}"
#define NAMED_DEV(name, uuid)                                                                              \
	"{\"name\":\"" name "\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"" uuid "\"}}}"

static void verify_claim_case(const char *claim_text, int want_read, const char *sees, enum check_status want,
			      const char *what)
{
	cJSON *claim = cJSON_Parse(claim_text);
	cJSON *slices = cJSON_Parse(NODELIST(VSLICE("gpu.nvidia.com", "n1", NAMED_DEV("gpu-0", "GPU-a") ","
							  NAMED_DEV("gpu-1", "GPU-b"))));
	struct verify_claim got = { 0 };
	struct check c = { .name = "smoke-pod" };

	is_int(verify_dra_claim_read(claim, "p", &got), want_read, what);
	check_set(&c, CHECK_PASS, xasprintf("pod p Succeeded: GPU 0: NVIDIA H100 (UUID: %s)", sees));
	verify_dra_judge_claim("p", &got, NULL, slices, &c);
	is_int(c.status, want, what);
	verify_claim_free(&got);
	free(c.evidence);
	cJSON_Delete(claim);
	cJSON_Delete(slices);
}

static void test_verify_dra(void)
{
	struct strv seen = { 0 };
	struct check c = { .name = "resource-slices" };
	int schedulable;
	cJSON *list = cJSON_Parse(NODELIST(VSLICE("gpu.nvidia.com", "n1", NAMED_DEV("gpu-0", "GPU-a") ","
							 NAMED_DEV("gpu-1", "GPU-b"))));
	cJSON *pod;

	verify_claim_case(CLAIM("p", "gpu.nvidia.com", "gpu-1"), 1, "GPU-b", CHECK_PASS,
			  "claim: reserved for the pod, its device the GPU the pod sees");
	verify_claim_case(CLAIM("p", "gpu.nvidia.com", "gpu-0"), 1, "GPU-b", CHECK_FAIL,
			  "claim: its device another GPU than the pod sees");
	verify_claim_case(CLAIM("p", "gpu.nvidia.com", "gpu-7"), 1, "GPU-b", CHECK_FAIL,
			  "claim: a device no slice publishes");
	verify_claim_case(CLAIM("q", "gpu.nvidia.com", "gpu-1"), 0, "GPU-b", CHECK_FAIL,
			  "claim: reserved for another pod, none seen for this one");
	verify_claim_case(CLAIM("p", "other.example.com", "gpu-1"), 0, "GPU-b", CHECK_FAIL,
			  "claim: allocated by another driver");

	strv_push(&seen, "GPU-b");
	strv_push(&seen, "GPU-a");
	verify_dra_slices(list, "n1", &seen, &c, &schedulable);
	ok(c.status == CHECK_PASS && schedulable, "slices: the node publishes the GPUs the gateway sees");
	strv_push(&seen, "GPU-c");
	verify_dra_slices(list, "n1", &seen, &c, &schedulable);
	ok(c.status == CHECK_FAIL && schedulable, "slices: one the gateway sees is not published");
	verify_dra_slices(list, "n2", &seen, &c, &schedulable);
	ok(c.status == CHECK_FAIL && !schedulable, "slices: another node's are not this one's");
	free(c.evidence);

	/* A node's count, as node list and a node's join wait read it: the
	 * last run's slices (made before the agent started) are none. */
	cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0), "metadata"),
				"creationTimestamp", "2026-12-07T10:00:00Z");
	is_int((int)dra_node_gpus(list, "n1", NULL), 2, "node count: both GPUs its slices publish");
	is_int((int)dra_node_gpus(list, "n1", "2026-12-07T09:59:00Z"), 2, "made after the agent started: counted");
	is_int((int)dra_node_gpus(list, "n1", "2026-12-07T10:30:00Z"), -1, "made before it: the last run's, none");
	is_int((int)dra_node_gpus(list, "n2", NULL), -1, "another node's: none");

	pod = cJSON_Parse("{\"status\":{\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"e-extended-resources-x\"}}}");
	c = (struct check){ .name = "extended-pod" };
	check_set(&c, CHECK_PASS, xstrdup("pod e Succeeded: GPU 0: …"));
	verify_dra_judge_extended(pod, &c);
	ok(c.status == CHECK_PASS && strstr(c.evidence, "by claim e-extended-resources-x"),
	   "extended: served by DRA's special claim");
	cJSON_DeleteItemFromObject(pod, "status");
	check_set(&c, CHECK_PASS, xstrdup("pod e Succeeded: GPU 0: …"));
	verify_dra_judge_extended(pod, &c);
	is_int(c.status, CHECK_FAIL, "extended: a GPU without DRA's claim is something else's");
	free(c.evidence);
	cJSON_Delete(pod);
	cJSON_Delete(list);
	strv_free(&seen);
}

/* Under DRA, a GPU's holders are the containers of live pods that use a
 * claim allocated it: by the pod's claim name, or by the scheduler's
 * mapping of an extended resource's request. */
static void note_holder(void *ctx, const char *ns, const char *pod, const char *container)
{
	struct strv *got = ctx;

	strv_pushf(got, "%s/%s/%s", ns, pod, container);
}

static void test_gpu_claims(void)
{
#define GC_CLAIM(name, device, request, pods)                                                                 \
	"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"},\"status\":{"  \
	"\"allocation\":{\"devices\":{\"results\":[{\"request\":\"" request "\",\"driver\":\"gpu.nvidia.com\","  \
	"\"pool\":\"n1\",\"device\":\"" device "\"}]}},\"reservedFor\":[" pods "]}}"
#define GC_FOR(pod) "{\"resource\":\"pods\",\"name\":\"" pod "\",\"uid\":\"u-" pod "\"}"
#define GC_POD(name, phase, spec, status)                                                                     \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"u-" name "\"},"  \
	"\"spec\":" spec ",\"status\":{\"phase\":\"" phase "\"" status "}}"
#define GC_DEV(name, uuid) "{\"name\":\"" name "\",\"attributes\":{\"type\":{\"string\":\"gpu\"},\"uuid\":{\"string\":\"" uuid "\"}}}"
	static const char text[] =
		"{\"kind\":\"List\",\"items\":["
		"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\"},"
		"\"devices\":[" GC_DEV("gpu-0", "GPU-a") "," GC_DEV("gpu-1", "GPU-b") "," GC_DEV("gpu-2", "GPU-c") ","
		GC_DEV("gpu-3", "GPU-d") "]}},"
		GC_CLAIM("p1-gpu-x", "gpu-0", "gpu", GC_FOR("p1")) ","
		GC_CLAIM("p2-extended-resources-y", "gpu-1", "container-0-request-0", GC_FOR("p2")) ","
		GC_CLAIM("p3-gpu-z", "gpu-1", "gpu", GC_FOR("p3")) ","
		GC_CLAIM("shared", "gpu-2", "gpu", GC_FOR("p4") "," GC_FOR("p5")) ","
		GC_CLAIM("p6-two", "gpu-3", "b", GC_FOR("p6")) ","
		GC_POD("p1", "Running", "{\"containers\":[{\"name\":\"cuda\",\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}},{\"name\":\"side\"}]}",
		       ",\"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":\"p1-gpu-x\"}]") ","
		GC_POD("p2", "Running", "{\"containers\":[{\"name\":\"main\"}]}",
		       ",\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"p2-extended-resources-y\",\"requestMappings\":"
		       "[{\"containerName\":\"main\",\"resourceName\":\"nvidia.com/gpu\",\"requestName\":\"container-0-request-0\"}]}") ","
		GC_POD("p3", "Succeeded", "{\"containers\":[{\"name\":\"c\",\"resources\":{\"claims\":[{\"name\":\"gpu\"}]}}]}",
		       ",\"resourceClaimStatuses\":[{\"name\":\"gpu\",\"resourceClaimName\":\"p3-gpu-z\"}]") ","
		GC_POD("p4", "Running", "{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"shared\"}],"
		       "\"containers\":[{\"name\":\"c\",\"resources\":{\"claims\":[{\"name\":\"g\"}]}}]}", "") ","
		GC_POD("p5", "Pending", "{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"shared\"}],"
		       "\"initContainers\":[{\"name\":\"sidecar\",\"restartPolicy\":\"Always\",\"resources\":{\"claims\":[{\"name\":\"g\"}]}}],"
		       "\"containers\":[{\"name\":\"c\"}]}", "") ","
		GC_POD("p6", "Running", "{\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"p6-two\"}],"
		       "\"containers\":[{\"name\":\"wants-a\",\"resources\":{\"claims\":[{\"name\":\"g\",\"request\":\"a\"}]}},"
		       "{\"name\":\"wants-b\",\"resources\":{\"claims\":[{\"name\":\"g\",\"request\":\"b\"}]}}]}", "")
		"]}";
	static const struct {
		const char *uuid, *holders, *what;
	} cases[] = {
		{ "GPU-a", "default/p1/cuda", "a claim from a template: the container that names it, not its sidecar" },
		{ "GPU-b", "default/p2/main", "an extended resource's claim: the container its request is mapped to; a done pod none" },
		{ "GPU-c", "default/p4/c default/p5/sidecar", "a claim two pods share, named in their specs; an init sidecar" },
		{ "GPU-d", "default/p6/wants-b", "a container that names another request of the claim does not hold it" },
		{ "GPU-x", "", "a GPU no claim has: no holder" },
	};
	cJSON *list = cJSON_Parse(text);

	ok(gpu_claims_published(list, "n1", "GPU-a") && !gpu_claims_published(list, "n2", "GPU-a") &&
	   !gpu_claims_published(list, "n1", "GPU-x"), "published: by the node's slices of the driver");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strv got = { 0 };
		gpu_claims_holders(list, cases[i].uuid, note_holder, &got);
		cleanup_free char *s = strv_join(&got, " ");
		is_str(s, cases[i].holders, cases[i].what);
		strv_free(&got);
	}
	{
		struct gpu_use use;
		gpu_claims_use(list, "n1", &use);
		ok(use.devices == 4 && use.in_use == 3 && use.shared == 1 && use.shared_by == 2 && use.free == 0,
		   "status's use: 4 published; 3 held by one pod each (a done pod's claim none); 1 shared by 2 pods");
	}
	cJSON_Delete(list);
#undef GC_CLAIM
#undef GC_FOR
#undef GC_POD
}

/* How a claim asks the driver to share its GPU: the GpuConfig the driver
 * applies to the result (device_state.go's precedence). The slice's
 * devices are test_gpu_claims()'s GC_DEV. */
static void test_gpu_claims_sharing(void)
{
#define GS_CFG(source, requests, driver, kind, strategy)                                                       \
	"{\"source\":\"" source "\",\"requests\":[" requests "],\"opaque\":{\"driver\":\"" driver "\","             \
	"\"parameters\":{\"kind\":\"" kind "\",\"sharing\":{\"strategy\":\"" strategy "\"}}}}"
#define GS_CLAIM(device, request, configs)                                                                     \
	"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c-" device "\"},\"status\":{\"allocation\":"          \
	"{\"devices\":{\"results\":[{\"request\":\"" request "\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"n1\","   \
	"\"device\":\"" device "\"}],\"config\":[" configs "]}}}}"
	static const char text[] =
		"{\"kind\":\"List\",\"items\":["
		"{\"kind\":\"ResourceSlice\",\"spec\":{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":\"n1\"},"
		"\"devices\":[" GC_DEV("gpu-0", "GPU-a") "," GC_DEV("gpu-1", "GPU-b") "," GC_DEV("gpu-2", "GPU-c") ","
		GC_DEV("gpu-3", "GPU-d") "]}},"
		/* the claim's config over the class's, whatever their order in the list */
		GS_CLAIM("gpu-0", "gpu", GS_CFG("FromClaim", "", "gpu.nvidia.com", "GpuConfig", "MPS") ","
			 GS_CFG("FromClass", "", "gpu.nvidia.com", "GpuConfig", "TimeSlicing")) ","
		/* one naming another request, or of another driver, does not apply */
		GS_CLAIM("gpu-1", "gpu", GS_CFG("FromClaim", "\"other\"", "gpu.nvidia.com", "GpuConfig", "MPS") ","
			 GS_CFG("FromClaim", "", "example.com", "GpuConfig", "MPS")) ","
		/* the last that names the request */
		GS_CLAIM("gpu-2", "gpu", GS_CFG("FromClaim", "", "gpu.nvidia.com", "GpuConfig", "MPS") ","
			 GS_CFG("FromClaim", "\"gpu\"", "gpu.nvidia.com", "GpuConfig", "TimeSlicing")) ","
		/* a MIG device's config is not a whole GPU's */
		GS_CLAIM("gpu-3", "gpu", GS_CFG("FromClaim", "", "gpu.nvidia.com", "MigDeviceConfig", "MPS"))
		"]}";
	cJSON *list = cJSON_Parse(text);
	const char *s;

	is_str((s = gpu_claims_sharing(list, "GPU-a")) ? s : "(none)", "MPS", "the claim's config over the class's");
	is_str((s = gpu_claims_sharing(list, "GPU-b")) ? s : "(none)", "(none)",
	       "a config of another request or another driver: none");
	is_str((s = gpu_claims_sharing(list, "GPU-c")) ? s : "(none)", "TimeSlicing", "the last config that applies");
	is_str((s = gpu_claims_sharing(list, "GPU-d")) ? s : "(none)", "(none)", "a MigDeviceConfig: not a GPU's");
	is_str((s = gpu_claims_sharing(list, "GPU-x")) ? s : "(none)", "(none)", "a GPU no claim holds");
	cJSON_Delete(list);
#undef GS_CFG
#undef GS_CLAIM
#undef GC_DEV   /* test_gpu_claims()'s, shared */
}

/* The kubelet's device checkpoint, as checkpoint.go's Data marshals it. */
static void test_device_checkpoint(void)
{
	static const char real[] =
		"{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"u1\",\"ContainerName\":\"cuda\",\"ResourceName\":\"nvidia.com/gpu\","
		"\"DeviceIDs\":{\"0\":[\"GPU-a::1\"],\"1\":[\"GPU-b::0\"]},\"AllocResp\":\"CgQKAkFB\"}],"
		"\"RegisteredDevices\":{\"nvidia.com/gpu\":[\"GPU-a::0\",\"GPU-a::1\"],\"nvidia.com/mig-1g.10gb\":[]}},"
		"\"Checksum\":1083090442,\"BootID\":\"b\"}";
	static const char empty[] = "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":null},\"Checksum\":0}";
	static const char *const bad[] = {
		"{\"Checksum\":1}",
		"{\"Data\":{\"PodDeviceEntries\":{}}}",
		"{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"u\",\"ContainerName\":\"c\",\"ResourceName\":\"r\",\"DeviceIDs\":[\"x\"]}]}}",
		"{\"Data\":{\"PodDeviceEntries\":[{\"ContainerName\":\"c\",\"ResourceName\":\"r\",\"DeviceIDs\":{}}]}}",
		"{\"Data\":{\"RegisteredDevices\":{\"r\":[1]}}}",
		"not json",
	};
	struct device_checkpoint cp;
	os_error err = { 0 };

	ok(device_checkpoint_parse(real, strlen(real), &cp, &err) == 0, "a real checkpoint parses");
	ok(cp.n == 1 && strcmp(cp.v[0].pod_uid, "u1") == 0 && strcmp(cp.v[0].container, "cuda") == 0 &&
		   strcmp(cp.v[0].resource, "nvidia.com/gpu") == 0, "its entry: pod UID, container, resource");
	ok(cp.v[0].ids.n == 2 && strcmp(cp.v[0].ids.v[0], "GPU-a::1") == 0 && strcmp(cp.v[0].ids.v[1], "GPU-b::0") == 0,
	   "device IDs of every NUMA node");
	ok(cp.n_healthy == 2 && strcmp(cp.healthy[1].resource, "nvidia.com/gpu") == 0 &&
		   strcmp(cp.healthy[1].id, "GPU-a::1") == 0,
	   "registered devices by resource and ID; a resource with none adds none");
	device_checkpoint_free(&cp);
	ok(device_checkpoint_parse(empty, strlen(empty), &cp, &err) == 0 && cp.n == 0 && cp.n_healthy == 0,
	   "Go's nil slices and maps (null): nothing held, nothing registered");
	device_checkpoint_free(&cp);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(device_checkpoint_parse(bad[i], strlen(bad[i]), &cp, &err) < 0 && err.msg, "refused: %s", bad[i]);
		os_error_clear(&err);
	}
	is_int((long long)device_id_base("GPU-a::3"), 5, "a replica's device: its UUID");
	is_int((long long)device_id_base("MIG-x"), 5, "an ID without a replica: itself");
}

/* status's GPU use line: the checkpoint against the pods that live. Pods
 * p and q share GPU-a and GPU-b (two pods, not four); r ended; a device
 * of another plugin is no GPU. */
static void test_gpu_use(void)
{
	static const char text[] =
		"{\"Data\":{\"PodDeviceEntries\":["
		"{\"PodUID\":\"p\",\"ContainerName\":\"c\",\"ResourceName\":\"nvidia.com/gpu\",\"DeviceIDs\":{\"-1\":[\"GPU-a::0\",\"GPU-b::0\"]}},"
		"{\"PodUID\":\"q\",\"ContainerName\":\"c\",\"ResourceName\":\"nvidia.com/gpu\",\"DeviceIDs\":{\"-1\":[\"GPU-a::1\",\"GPU-b::1\"]}},"
		"{\"PodUID\":\"r\",\"ContainerName\":\"c\",\"ResourceName\":\"nvidia.com/gpu\",\"DeviceIDs\":{\"-1\":[\"GPU-c::0\"]}},"
		"{\"PodUID\":\"p\",\"ContainerName\":\"c\",\"ResourceName\":\"example.com/fpga\",\"DeviceIDs\":{\"-1\":[\"fpga0\"]}}],"
		"\"RegisteredDevices\":{\"nvidia.com/gpu\":[\"GPU-a::0\",\"GPU-a::1\",\"GPU-b::0\",\"GPU-b::1\",\"GPU-c::0\",\"GPU-d::0\"],"
		"\"example.com/fpga\":[\"fpga0\"]}}}\n#openshell-gpu-use\nREST";
	cJSON *pods = J("{\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"p\"},\"status\":{\"phase\":\"Running\"}},"
			"{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"q\"},\"status\":{\"phase\":\"Running\"}},"
			"{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"r\"},\"status\":{\"phase\":\"Succeeded\"}}]}");
	struct gpu_use use;
	const char *rest;

	is_int(gpu_use_read(text, pods, &use, &rest), 1, "a checkpoint and the pods: read");
	ok(strcmp(rest, "REST") == 0, "what follows the mark is the rest");
	ok(use.devices == 4 && use.shared == 2 && use.shared_by == 2 && use.in_use == 0 && use.free == 2,
	   "4 GPUs: 2 shared by 2 pods, the ended pod's and the unheld one free; the FPGA is none");
	is_int(gpu_use_read(text, NULL, &use, &rest), 0, "without the pods, no line: who holds what is unknown");
	is_int(gpu_use_read("\n#openshell-gpu-use\nREST", pods, &use, &rest), 0, "no checkpoint: no line");
	ok(strcmp(rest, "REST") == 0, "and the rest still found");
	cJSON_Delete(pods);
}

#define UID1 "0b6f2a3c-1d4e-4f5a-8b6c-7d8e9f0a1b2c"
#define CID2 "9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
#define CID1 "4f1c0e8a9b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e"

/* A process's cgroup line, as each driver of the kubelet writes it. */
static void test_pod_cgroup(void)
{
	static const char *const named[] = {
		"8:pids:/kubepods/besteffort/pod" UID1 "/" CID1,
		"0::/kubepods/burstable/pod" UID1 "/" CID1,
		"4:memory:/kubepods/pod" UID1 "/" CID1 "\n",
		"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0b6f2a3c_1d4e_4f5a_8b6c_7d8e9f0a1b2c.slice/"
		"cri-containerd-" CID1 ".scope",
		/* a gateway's own cgroup above the pods' (--cgroupns=host) */
		"0::/docker/3f2e/kubepods/besteffort/pod" UID1 "/" CID1,
		/* a node in another cluster's pod: that pod further up */
		"0::/kubepods/besteffort/pod11111111-2222-3333-4444-555555555555/" CID1 "/kubepods/besteffort/pod" UID1 "/" CID1,
	};
	static const char *const unnamed[] = {
		"0::/", "8:pids:/docker/3f2e", "0::/kubepods/besteffort/pod" UID1,
		"0::/kubepods/besteffort/pod" UID1 "/short", "0::/kubepods/besteffort/podnot-a-uid/" CID1, "kubepods", "",
		"0::/kubepods/besteffort/pod" UID1 "0/" CID1, "0::/kubepods/pod" UID1 "/x/" CID1,
	};
	struct pod_cgroup cg;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		ok(pod_cgroup_parse(named[i], &cg) == 1 && strcmp(cg.pod_uid, UID1) == 0 &&
		   strcmp(cg.container_id, CID1) == 0, "pod and container of %s", named[i]);
	for (size_t i = 0; i < sizeof(unnamed) / sizeof(unnamed[0]); i++)
		ok(pod_cgroup_parse(unnamed[i], &cg) == 0, "no pod's container: '%s'", unnamed[i]);
}

/* nvidia-smi's processes named by their cgroups and the pods. */
static void test_gpu_procs(void)
{
	cJSON *pods = J("{\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"" UID1 "\",\"namespace\":\"ml\","
			"\"name\":\"train\"},\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
			"{\"name\":\"side\",\"containerID\":\"containerd://0000\"},"
			"{\"name\":\"main\",\"containerID\":\"containerd://" CID1 "\"}],"
			"\"initContainerStatuses\":[{\"name\":\"warm\",\"containerID\":\"containerd://" CID2 "\"}]}}]}");
	struct gpu_procs p = { 0 };

	gpu_procs_read("41 GPU-a 512 8:pids:/kubepods/besteffort/pod" UID1 "/" CID1 "\n"
		       "42 GPU-b [N/A] \n"
		       "43 GPU-a 7 0::/kubepods/besteffort/pod0b6f2a3c-0000-4f5a-8b6c-7d8e9f0a1b2c/" CID1 "\n"
		       "not a line\n"
		       "45 GPU-b 3 0::/kubepods/besteffort/pod" UID1 "/" CID2 "\n",
		       "node-a", pods, &p);
	is_int((int)p.n, 4, "four processes, the line that is none left out");
	ok(p.v[3].holder.pod && strcmp(p.v[3].holder.ns, "ml") == 0 && strcmp(p.v[3].holder.pod, "train") == 0 &&
	   strcmp(p.v[3].holder.container, "warm") == 0, "an init container's process, named");
	ok(p.v[0].pid == 41 && p.v[0].mem_mib == 512 && strcmp(p.v[0].uuid, "GPU-a") == 0 && p.v[0].holder.pod &&
	   strcmp(p.v[0].holder.container, "main") == 0 && strcmp(p.v[0].node, "node-a") == 0 && p.v[0].index == -1,
	   "a pod's process: its container by ID, its memory");
	{
		char *text = gpu_holder_text(&p.v[0].holder);
		ok(strcmp(text, "ml/train/main") == 0, "shown as namespace/pod/container");
		free(text);
	}
	ok(gpu_holder_same(&p.v[0].holder, &p.v[0].holder) && !gpu_holder_same(&p.v[0].holder, &p.v[3].holder),
	   "the same container is the same holder; another is not");
	ok(p.v[1].pid == 42 && p.v[1].mem_mib == -1 && !p.v[1].holder.pod, "no cgroup and memory not known: unnamed, -1");
	ok(!p.v[1].pod_uid, "and no pod");
	ok(!p.v[2].holder.pod && p.v[2].pod_uid && strcmp(p.v[2].pod_uid, "0b6f2a3c-0000-4f5a-8b6c-7d8e9f0a1b2c") == 0,
	   "the cgroup of a pod that is not there: unnamed, its pod's UID kept");
	gpu_procs_read("44 GPU-a 9 8:pids:/kubepods/besteffort/pod" UID1 "/" CID1 "\n", "node-b", NULL, &p);
	ok(p.n == 5 && !p.v[4].holder.pod && p.v[4].pod_uid, "without the pods, appended unnamed, with its pod's UID");
	gpu_procs_free(&p);
	ok(p.n == 0 && !p.v, "freed");
	cJSON_Delete(pods);
}

/* A node's answer to gateway gpus, section by section. */
static void test_gpu_view_part(void)
{
	static const char out[] = "{}\n#openshell-gpus-smi\n#openshell-gpus-query\nq1\nq2\n#openshell-gpus-end\ntail\n";
	char *p;

	ok((p = gpu_view_part(out, "#openshell-gpus-smi")) && strcmp(p, "") == 0,
	   "an empty section is empty, not the next mark's");
	free(p);
	ok((p = gpu_view_part(out, "#openshell-gpus-query")) && strcmp(p, "q1\nq2\n") == 0, "a section's lines");
	free(p);
	ok((p = gpu_view_part(out, "#openshell-gpus-end")) && strcmp(p, "tail\n") == 0, "the last: to the end");
	free(p);
	ok(!gpu_view_part(out, "#openshell-gpus-sick"), "a missing mark: NULL");
}

/* The plugin's IDs against the rows, under each ID strategy. */
static void test_gpu_ids(void)
{
	struct gpu_row gpu = { .index = 1, .mig_index = -1, .uuid = "GPU-b" };
	struct gpu_row mig = { .index = 1, .mig_index = 0, .uuid = "MIG-x" };
	static const char cp_text[] =
		"{\"Data\":{\"PodDeviceEntries\":[],\"RegisteredDevices\":{\"nvidia.com/gpu\":[\"GPU-b::0\",\"GPU-b::1\",\"1:0\"],"
		"\"example.com/fpga\":[\"1\"]}}}";
	static const char lines[] =
		"I1206 10:00:00.000001       1 health.go:1] XidCriticalError: Xid=79 on Device=GPU-a::2; marking device as unhealthy.\n"
		"I1206 10:00:01.000001       1 health.go:1] XidCriticalError: Xid=48 on Device=GPU-b::2; marking device as unhealthy.\n";
	struct device_checkpoint cp;
	os_error err = { 0 };
	char *why;

	ok(gpu_id_names("GPU-b", &gpu) && gpu_id_names("GPU-b::3", &gpu) && gpu_id_names("1", &gpu),
	   "a GPU: its UUID, a replica's, its index");
	ok(!gpu_id_names("GPU-bb", &gpu) && !gpu_id_names("1:0", &gpu) && !gpu_id_names("0", &gpu),
	   "not another UUID, its MIG device's index, another index");
	ok(gpu_id_names("1:0", &mig) && gpu_id_names("MIG-x", &mig) && !gpu_id_names("1", &mig) && !gpu_id_names("1:1", &mig),
	   "a MIG device: I:K under the index strategy, its UUID; not its GPU's index or a sibling's");
	ok(gpu_id_names("all", &gpu) && gpu_id_names("all::3", &gpu) && !gpu_id_names("all", &mig) &&
	   !gpu_id_names("allx", &gpu),
	   "WSL2's one device 'all' (and its replicas) is every GPU, no MIG device; not a name that begins so");
	ok(device_checkpoint_parse(cp_text, strlen(cp_text), &cp, &err) == 0, "a checkpoint");
	is_int(gpu_ids_registered(&cp, &gpu), 2, "the GPU's two replicas registered; the FPGA's '1' is not NVIDIA's");
	is_int(gpu_ids_registered(&cp, &mig), 1, "the MIG device by index");
	why = gpu_sick_reason(&cp, lines, &gpu);
	ok(why && strcmp(why, "XidCriticalError: Xid=48 on Device=GPU-b::2; marking device as unhealthy.") == 0,
	   "the last line naming the GPU, after klog's header");
	free(why);
	ok(!gpu_sick_reason(&cp, "x] Xid=1 on Device=GPU-b::1; marking device as unhealthy.\n", &gpu),
	   "a line of a replica registered healthy again: none");
	ok(!gpu_sick_reason(&cp, lines, &mig), "no line names the MIG device");
	device_checkpoint_free(&cp);
	os_error_clear(&err);
}

/* A node status is the last run's when posted before the container's
 * start, or in its very second (the API's stamps have whole seconds). */
static void test_status_predates(void)
{
	const char *started = "2026-12-01T10:00:05.912345678Z";

	ok(kube_status_predates("2026-12-01T10:00:04Z", started), "a status of the second before predates the start");
	ok(kube_status_predates("2026-12-01T10:00:05Z", started), "a status of the start's own second counts as the last run's");
	ok(!kube_status_predates("2026-12-01T10:00:06Z", started), "a status of the second after is this run's");
	ok(!kube_status_predates(NULL, started) && !kube_status_predates("2026-12-01T10:00:04Z", NULL),
	   "unknown either way: not stale");
	ok(!kube_status_predates("2026-12-01", started), "a stamp too short to compare: not stale");
}

#define DS(name, ns, labels, status) \
	"{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"" name "\"," \
	"\"namespace\":\"" ns "\",\"labels\":{" labels "}},\"status\":{" status "}}"

static void test_daemonsets(void)
{
	cJSON *j;
	const cJSON *ds;
	struct ds_status st;

	/* The chart's MPS control daemon carries the same labels, and comes
	 * first here: the plugin is found by the release's name, not by order. */
	j = J(NODELIST(DS("svclb-traefik", "kube-system", "\"app\":\"svclb-traefik\"", "\"numberReady\":1") ","
		       DS("nvidia-device-plugin-mps-control-daemon", "nvidia-device-plugin",
			  "\"app.kubernetes.io/instance\":\"nvidia-device-plugin\","
			  "\"app.kubernetes.io/name\":\"nvidia-device-plugin\"",
			  "\"currentNumberScheduled\":0,\"desiredNumberScheduled\":0,\"numberReady\":0") ","
		       DS("nvidia-device-plugin", "nvidia-device-plugin",
			  "\"app.kubernetes.io/instance\":\"nvidia-device-plugin\","
			  "\"app.kubernetes.io/name\":\"nvidia-device-plugin\"",
			  "\"currentNumberScheduled\":1,\"desiredNumberScheduled\":1,\"numberAvailable\":1,"
			  "\"numberMisscheduled\":0,\"numberReady\":1,\"observedGeneration\":1,\"updatedNumberScheduled\":1") ","
		       DS("other", "default", "\"app.kubernetes.io/name\":\"something-else\"", "")));
	ds = kube_find_device_plugin(j);
	ok(ds != NULL, "the device plugin is found among four DaemonSets");
	is_str(json_str(json_get(ds, "metadata", NULL), "name"), "nvidia-device-plugin",
	       "it is the release's own, not the MPS control daemon listed before it");
	kube_daemonset_status(ds, &st);
	is_int(st.desired, 1, "desiredNumberScheduled");
	is_int(st.ready, 1, "numberReady");
	is_int(st.available, 1, "numberAvailable");
	cJSON_Delete(j);

	j = J(NODELIST(DS("nvidia-device-plugin", "kube-system", "\"app\":\"nvidia-device-plugin\"", "") ","
		       DS("x", "y", "\"app.kubernetes.io/name\":\"nvidia-device-plugin-x\"", "")));
	ok(kube_find_device_plugin(j) == NULL, "absent: a name or another label key is not enough");
	cJSON_Delete(j);

	j = J("{\"kind\":\"List\"}");
	ok(kube_find_device_plugin(j) == NULL, "items missing: NULL");
	cJSON_Delete(j);
	j = J(NODELIST(""));
	ok(kube_find_device_plugin(j) == NULL, "no items: NULL");
	cJSON_Delete(j);
	j = J("{\"items\":[{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":7}}},{\"metadata\":null}]}");
	ok(kube_find_device_plugin(j) == NULL, "mistyped label or metadata: NULL");
	cJSON_Delete(j);
	ok(kube_find_device_plugin(NULL) == NULL, "NULL: NULL");

	j = J(DS("p", "n", "", "\"desiredNumberScheduled\":3,\"numberReady\":2"));
	memset(&st, 0x5a, sizeof(st));
	kube_daemonset_status(j, &st);
	ok(st.desired == 3 && st.ready == 2 && st.available == 0, "absent numberAvailable reads 0");
	cJSON_Delete(j);

	j = J(DS("p", "n", "", "\"desiredNumberScheduled\":\"3\",\"numberReady\":1.5,\"numberAvailable\":-2"));
	memset(&st, 0x5a, sizeof(st));
	kube_daemonset_status(j, &st);
	ok(st.desired == 0 && st.ready == 0 && st.available == 0, "string, fraction and negative counters read 0");
	cJSON_Delete(j);

	j = J("{\"metadata\":{\"name\":\"p\"}}");
	memset(&st, 0x5a, sizeof(st));
	kube_daemonset_status(j, &st);
	ok(st.desired == 0 && st.ready == 0 && st.available == 0, "no status at all reads 0");
	cJSON_Delete(j);

	memset(&st, 0x5a, sizeof(st));
	kube_daemonset_status(NULL, &st);
	ok(st.desired == 0 && st.ready == 0 && st.available == 0, "NULL DaemonSet reads 0");
}

/* ---- base/json.h--------------------------------------------------------------- */

static void test_json(void)
{
	cJSON *j;
	long long v;
	os_error err = { 0 };
	static const char bad[] = "{\"a\": [1, 2,, 3]}";

	j = J("{\"i\":42,\"neg\":-7,\"frac\":1.5,\"big\":1e300,\"str\":\"42\",\"t\":true,\"f\":false,"
	      "\"null\":null,\"max\":65535,\"o\":{\"p\":{\"q\":\"deep\"}},\"arr\":[1],\"Case\":\"C\"}");

	v = -99;
	ok(json_int(json_get(j, "i", NULL), 0, 100, &v) == 0 && v == 42, "json_int 42 in [0,100]");
	ok(json_int(json_get(j, "i", NULL), 42, 42, &v) == 0 && v == 42, "json_int bounds are inclusive");
	v = -99;
	ok(json_int(json_get(j, "i", NULL), 0, 41, &v) == -1 && v == -99, "json_int above max: -1, *out untouched");
	ok(json_int(json_get(j, "i", NULL), 43, 100, &v) == -1, "json_int below min: -1");
	ok(json_int(json_get(j, "neg", NULL), -10, 0, &v) == 0 && v == -7, "json_int negative in range");
	ok(json_int(json_get(j, "neg", NULL), 0, 10, &v) == -1, "json_int negative below 0: -1");
	ok(json_int(json_get(j, "frac", NULL), 0, 10, &v) == -1, "json_int 1.5: -1");
	ok(json_int(json_get(j, "big", NULL), 0, 1LL << 40, &v) == -1, "json_int 1e300: -1");
	ok(json_int(json_get(j, "str", NULL), 0, 100, &v) == -1, "json_int \"42\": -1");
	ok(json_int(json_get(j, "t", NULL), 0, 100, &v) == -1, "json_int true: -1");
	ok(json_int(json_get(j, "null", NULL), 0, 100, &v) == -1, "json_int null: -1");
	ok(json_int(NULL, 0, 100, &v) == -1, "json_int NULL: -1");
	ok(json_int(json_get(j, "max", NULL), 1, 65535, &v) == 0 && v == 65535, "json_int 65535 in [1,65535]");

	is_str(json_str(json_get(j, "o", "p", NULL), "q"), "deep", "json_get walks nested objects");
	ok(json_get(j, NULL) == j, "json_get with no keys returns obj");
	ok(json_get(j, "o", "x", "q", NULL) == NULL, "json_get with a missing step: NULL");
	ok(json_get(j, "str", "x", NULL) == NULL, "json_get through a string: NULL");
	ok(json_get(j, "arr", "0", NULL) == NULL, "json_get through an array: NULL");
	ok(json_get(j, "null", "x", NULL) == NULL, "json_get through null: NULL");
	ok(json_get(NULL, "a", NULL) == NULL, "json_get on NULL: NULL");
	ok(json_get(j, "case", NULL) == NULL, "json_get is case-sensitive");
	ok(json_get(json_get(j, "arr", NULL), "x", NULL) == NULL, "json_get on an array: NULL");

	ok(json_str(j, "str") && strcmp(json_str(j, "str"), "42") == 0, "json_str of a string");
	ok(json_str(j, "i") == NULL, "json_str of a number: NULL");
	ok(json_str(j, "null") == NULL, "json_str of null: NULL");
	ok(json_str(j, "absent") == NULL, "json_str of an absent key: NULL");
	ok(json_str(json_get(j, "arr", NULL), "x") == NULL, "json_str on an array: NULL");
	ok(json_str(NULL, "x") == NULL, "json_str on NULL: NULL");
	is_int(json_bool(j, "t"), 1, "json_bool true");
	is_int(json_bool(j, "f"), 0, "json_bool false");
	is_int(json_bool(j, "i"), -1, "json_bool of a number: -1");
	is_int(json_bool(j, "str"), -1, "json_bool of a string: -1");
	is_int(json_bool(j, "absent"), -1, "json_bool absent: -1");
	is_int(json_bool(NULL, "t"), -1, "json_bool on NULL: -1");
	cJSON_Delete(j);

	j = json_parse(bad, strlen(bad), "kubectl output", &err);
	ok(j == NULL, "json_parse refuses invalid JSON");
	ok(err.msg && strstr(err.msg, "at byte"), "the message says at which byte");
	ok(err.msg && strstr(err.msg, "kubectl output"), "the message names the source");
	ok(err.msg && strstr(err.msg, "of 17)"), "the message gives the length");
	is_int(err.code, OS_EXIT_FAILURE, "with status 1");
	if (err.msg && !strstr(err.msg, "at byte"))
		printf("#   message: %s\n", err.msg);
	os_error_clear(&err);

	j = json_parse("", 0, "docker output", &err);
	ok(j == NULL && err.msg && strstr(err.msg, "at byte 0 of 0"), "empty input: at byte 0 of 0");
	os_error_clear(&err);

	/* len is a bound: the text need not be NUL-terminated. */
	{
		char *buf = xmalloc(8);

		memcpy(buf, "{\"a\":12}", 8);
		j = json_parse(buf, 8, "x", &err);
		ok(j && json_int(json_get(j, "a", NULL), 0, 100, &v) == 0 && v == 12,
		   "json_parse reads an unterminated buffer of exactly len bytes");
		cJSON_Delete(j);
		j = json_parse(buf, 5, "x", &err);
		ok(j == NULL && err.msg, "json_parse stops at len");
		os_error_clear(&err);
		free(buf);
	}
}

int main(void)
{
	xalloc_init();
	test_inspect_full();
	test_inspect_variants();
	test_inspect_disable();
	test_inspect_malformed();
	test_says_missing();
	test_inspect_any();
	test_nodes();
	test_nodes_capacity();
	test_mixed_list();
	test_facts_of_list();
	test_dra_facts();
	test_verify_dra();
	test_gpu_claims();
	test_gpu_claims_sharing();
	test_device_checkpoint();
	test_gpu_use();
	test_pod_cgroup();
	test_gpu_procs();
	test_gpu_view_part();
	test_gpu_ids();
	test_status_predates();
	test_daemonsets();
	test_json();
	return tap_done();
}
