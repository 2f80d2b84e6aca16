/* test_node.c - a gateway's nodes: their files, the agent's docker run,
 * what an agent's log says of its join, and the daemon it is reached on. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/daemon.h"
#include "gateway/deploy/deploy.h"
#include "gateway/node/node_add.h"
#include "gateway/state/node_record.h"
#include "gateway/wait/node_join.h"
#include "tap.h"

static struct node_record sample(const char *name)
{
	return (struct node_record){ .name = (char *)name, .gateway = "mh", .container = "openshell-node-mh",
				     .image = "openshell-cluster:0.1.0", .image_id = "sha256:ab12",
				     .server = "https://10.0.0.5:6443", .gpu = 1, .gpus = { .kind = GPUS_COUNT, .count = 2 },
				     .created = "2026-12-03T07:00:00Z",
				     .docker = { .context = "default", .endpoint = "ssh://me@gpu-2", .tls_recorded = 1 } };
}

static void test_record_round_trip(void)
{
	struct node_record in = sample("gpu-2"), out;
	os_error err = { 0 };
	char *json = node_record_to_json(&in);

	is_int(node_record_parse(json, strlen(json), &out, &err), 0, "a node's file parses");
	is_str(out.name, "gpu-2", "name round-trips");
	is_str(out.image_id, "sha256:ab12", "the image ID round-trips");
	is_str(out.server, "https://10.0.0.5:6443", "the server URL round-trips");
	ok(out.gpus.kind == GPUS_COUNT && out.gpus.count == 2, "the GPU selection round-trips, read");
	is_str(out.docker.endpoint, "ssh://me@gpu-2", "the daemon round-trips");
	is_int(out.docker.tls_recorded, 1, "with its TLS settings");
	node_record_free(&out);
	free(json);

	in.gpu = 0;
	json = node_record_to_json(&in);
	ok(strstr(json, "\"gpus\":\tnull") || strstr(json, "\"gpus\": null") || strstr(json, "\"gpus\":null"),
	   "a node without GPUs has a null selection in its file");
	is_int(node_record_parse(json, strlen(json), &out, &err), 0, "and parses");
	is_int(out.gpu, 0, "without GPUs");
	node_record_free(&out);
	free(json);
}

static void test_record_corrupt(void)
{
	static const char no_daemon[] = "{\"schema\":1,\"name\":\"n\",\"gateway\":\"g\",\"container\":\"c\",\"image\":\"i\","
					"\"image_id\":\"x\",\"server\":\"https://a:1\",\"gpu\":false,\"created\":\"t\"}";
	static const char other_schema[] = "{\"schema\":2}";
	struct node_record out;
	os_error err = { 0 };

	is_int(node_record_parse(no_daemon, strlen(no_daemon), &out, &err), -1, "a file naming no daemon is refused");
	ok(err.msg && strstr(err.msg, "names no Docker daemon"), "and says so");
	os_error_clear(&err);
	is_int(node_record_parse(other_schema, strlen(other_schema), &out, &err), -1, "another schema is refused");
	os_error_clear(&err);
	static const char bad_gpus[] = "{\"schema\":1,\"name\":\"n\",\"gateway\":\"g\",\"container\":\"c\",\"image\":\"i\","
				       "\"image_id\":\"x\",\"server\":\"https://a:1\",\"gpu\":true,\"gpus\":\"0,,1\",\"created\":\"t\","
				       "\"docker_context\":\"default\",\"docker_endpoint\":\"unix:///var/run/docker.sock\"}";
	is_int(node_record_parse(bad_gpus, strlen(bad_gpus), &out, &err), -1, "a selection that does not read is refused");
	ok(err.msg && strstr(err.msg, "is corrupt: 'gpus' invalid --gpus '0,,1'"), "naming it (%s)", err.msg);
	os_error_clear(&err);
}

static void test_records_dir(void)
{
	char tmpl[] = "/tmp/openshell-test-node.XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct node_records rs;
	struct node_record b = sample("node-b"), a = sample("node-a");
	os_error err = { 0 };
	struct stat st;

	ok(dir != NULL, "a scratch state directory");
	if (!dir)
		return;
	is_int(node_records_load(dir, &rs, &err), 0, "no nodes directory: no nodes");
	is_int((int)rs.n, 0, "none");
	is_int(node_record_write(dir, &b, &err), 0, "a node's file is written");
	is_int(node_record_write(dir, &a, &err), 0, "and another");
	cleanup_free char *path = xasprintf("%s/nodes/node-b.json", dir);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
	is_int(node_records_load(dir, &rs, &err), 0, "they load");
	ok(rs.n == 2 && strcmp(rs.v[0].name, "node-a") == 0 && strcmp(rs.v[1].name, "node-b") == 0, "sorted by name");
	ok(node_records_find(&rs, "node-b") == &rs.v[1], "found by name");
	ok(node_records_find(&rs, "node-c") == NULL, "and not another");
	node_records_free(&rs);
	is_int(node_record_remove(dir, "node-a", &err), 0, "one removed");
	is_int(node_record_remove(dir, "node-a", &err), 0, "removing it again is fine");
	is_int(node_record_remove(dir, "node-b", &err), 0, "the other removed");
	cleanup_free char *nodes = xasprintf("%s/nodes", dir);
	ok(access(nodes, F_OK) < 0 && errno == ENOENT, "and the empty nodes directory with it");
	rmdir(dir);
}

static void test_join_cause(void)
{
	const char *srv = "https://10.0.0.5:6443";
	char *c;

	c = node_join_cause("time=\"2026-12-03T07:00:00Z\" level=error msg=\"Failed to validate connection to cluster at "
			    "https://10.0.0.5:6443: failed to get CA certs: Get \\\"https://127.0.0.1:6444/cacerts\\\": "
			    "dial tcp: connect: connection refused\"",
			    srv, "gw");
	is_str(c, "its agent cannot reach or trust the server at https://10.0.0.5:6443: failed to get CA certs: Get "
		  "\"https://127.0.0.1:6444/cacerts\": dial tcp: connect: connection refused",
	       "an unreachable server: the URL it was given, and Go's error unquoted");
	free(c);
	c = node_join_cause("time=\"t\" level=info msg=\"Waiting to retrieve agent configuration; server is not ready: "
			    "failed to retrieve configuration from server: https://10.0.0.5:6443/v1-k3s/config: 401 "
			    "Unauthorized\"",
			    srv, "gw");
	ok(c && strstr(c, "refuses the node's token (401 Unauthorized)"), "a 401: the token");
	free(c);
	c = node_join_cause("time=\"t\" level=info msg=\"Waiting to retrieve agent configuration; server is not ready: "
			    "https://10.0.0.5:6443/v1-k3s/config: 503 Service Unavailable\"",
			    srv, "gw");
	ok(c == NULL, "a server not ready yet is no cause: the agent waits on");
	c = node_join_cause("time=\"t\" level=fatal msg=\"kubelet exited: listen tcp 0.0.0.0:10250: bind: address "
			    "already in use\"",
			    srv, "gw");
	is_str(c, "its agent stopped: kubelet exited: listen tcp 0.0.0.0:10250: bind: address already in use",
	       "a fatal line");
	free(c);
	ok(node_join_cause("plain text", srv, "gw") == NULL, "a line without msg= says nothing");
	c = node_join_cause("time=\"t\" level=error msg=\"Remotedialer proxy error; reconnecting...\" error=\"dial tcp "
			    "172.18.0.2:6443: connect: no route to host\" url=\"wss://172.18.0.2:6443/v1-k3s/connect\"",
			    srv, "gw");
	is_str(c, "its agent cannot open its tunnel to 172.18.0.2:6443, the address the server advertises to its agents: "
		  "dial tcp 172.18.0.2:6443: connect: no route to host; start the gateway with --advertise-address set to "
		  "an address that host reaches ('openshell gateway start --name gw --recreate --advertise-address ADDR')",
	       "a tunnel that cannot be dialled: the address, Go's error and the fix");
	free(c);
	ok(node_join_cause("time=\"t\" level=info msg=\"Connecting to proxy\" url=\"wss://10.0.0.5:6443/v1-k3s/connect\"",
			   srv, "gw") == NULL, "a dial of the tunnel is no cause");
}

static void test_join_said(void)
{
	char *c;

	c = node_join_said("time=\"t\" level=error msg=\"Failed to connect to proxy\" error=\"websocket: bad handshake\"");
	is_str(c, "Failed to connect to proxy: websocket: bad handshake", "an error line: its msg and error");
	free(c);
	c = node_join_said("time=\"t\" level=warning msg=\"Unable to watch for tunnel endpoints\"");
	is_str(c, "Unable to watch for tunnel endpoints", "a warning without error=: its msg");
	free(c);
	ok(node_join_said("time=\"t\" level=info msg=\"Running kubelet\"") == NULL, "an info line is not quoted");
}

static void test_server_host(void)
{
	char *h;

	is_str((h = node_server_host("https://10.0.0.5:6443")), "10.0.0.5", "an IPv4 server");
	free(h);
	is_str((h = node_server_host("https://[::1]:6443")), "::1", "an IPv6 server");
	free(h);
	is_str((h = node_server_host("https://gpu-box:16443")), "gpu-box", "a name");
	free(h);
	ok(node_server_host("http://gpu-box:6443") == NULL, "no https: none");
}

static int has(const struct strv *sv, const char *arg)
{
	return strv_has(sv, arg);
}

static void test_agent_argv(void)
{
	struct gateway_request rq;
	struct deploy_plan o;
	struct strv argv = { 0 };
	cleanup_free char *joined = NULL;

	gateway_request_init(&rq);
	rq.name = "mh";
	rq.gpu = 1;
	deploy_plan_init(&o, &rq);
	o.image = "openshell-cluster:0.1.0";   /* the gateway's, as node add sets it */
	deploy_agent_argv(&o, "gpu-2", "https://10.0.0.5:6443", &argv);
	joined = strv_join(&argv, " ");
	ok(has(&argv, "--name=openshell-node-mh"), "the container is openshell-node-GATEWAY");
	ok(has(&argv, "--hostname=gpu-2"), "named after its node");
	ok(has(&argv, "--label=org.openshell.node=gpu-2"), "labelled with its node");
	ok(has(&argv, "--label=org.openshell.gateway=mh"), "and its gateway");
	ok(has(&argv, "--network=host"), "in its host's network");
	ok(has(&argv, "--privileged") && has(&argv, "--restart=unless-stopped"), "privileged, brought back with the daemon");
	ok(has(&argv, "--env=GPU_ENABLED=true") && strstr(joined, "--gpus=") != NULL, "its GPUs as the server asks them");
	ok(strstr(joined, "openshell-cluster:0.1.0 agent --server=https://10.0.0.5:6443 "
			  "--token-file=/var/lib/rancher/k3s/openshell/token --node-name=gpu-2") != NULL,
	   "k3s agent, joining the server with the token file");
	ok(!strstr(joined, "K3S_TOKEN") && !strstr(joined, "--token="), "no token in its argv");
	ok(!strstr(joined, "--publish"), "nothing published");
	strv_free(&argv);
	deploy_plan_free(&o);
	gateway_request_free(&rq);
}

static void test_where_env(void)
{
	struct docker_target tls = { .context = "default", .endpoint = "tcp://gpu-2:2376", .tls_recorded = 1,
				    .tls_verify = 1, .cert_path = "/home/u/.docker/gpu-2" };
	struct docker_target named = { .context = "gpu-3", .endpoint = "ssh://gpu-3" };
	struct strv env = { 0 };
	cleanup_free char *a = NULL, *b = NULL;

	docker_target_env(&tls, &env);
	a = strv_join(&env, " ");
	is_str(a, "DOCKER_HOST=tcp://gpu-2:2376 DOCKER_CONTEXT DOCKER_TLS DOCKER_TLS_VERIFY=1 "
		  "DOCKER_CERT_PATH=/home/u/.docker/gpu-2",
	       "the default context: the endpoint and its TLS, the context unset");
	strv_free(&env);
	docker_target_env(&named, &env);
	b = strv_join(&env, " ");
	is_str(b, "DOCKER_CONTEXT=gpu-3 DOCKER_HOST", "a named context: its name, DOCKER_HOST unset");
	strv_free(&env);
}

static void test_names(void)
{
	os_error err = { 0 };

	is_int(node_name_check("gpu-2", &err), 0, "a node name");
	is_int(node_name_check("GPU_2", &err), -1, "capitals and '_' are refused");
	ok(err.msg && strstr(err.msg, "invalid node name 'GPU_2'"), "naming the node");
	is_int(err.code, OS_EXIT_USAGE, "a usage error");
	os_error_clear(&err);
	cleanup_free char *res = node_resource_name("mh");
	is_str(res, "openshell-node-mh", "the agent's container and volume");
}

int main(void)
{
	umask(022);
	test_record_round_trip();
	test_record_corrupt();
	test_records_dir();
	test_join_cause();
	test_join_said();
	test_server_host();
	test_agent_argv();
	test_where_env();
	test_names();
	return tap_done();
}
