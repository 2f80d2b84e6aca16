/* test_image.c - the cluster image's readers: build output (BuildKit and
 * legacy), docker image inspect, the recipe's pins; and the kubectl
 * readers that explain a device plugin that does not come up. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/build.h"
#include "docker/image.h"
#include "docker/target.h"
#include "gateway/deploy/image.h"
#include "gateway/deploy/image_fit.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"
#include "tap.h"

/* ---- build output ----------------------------------------------------- */

/* dockerd 20.10's BuildKit, a RUN step failing. */
static const char buildkit_run_fail[] =
	"#1 [internal] load build definition from Dockerfile\n"
	"#1 sha256:335eb4992422b32186aa34e8444325065bfc19fc59b40f192a1b19c0c8c83516\n"
	"#1 DONE 0.0s\n"
	"\n"
	"#4 [other 1/2] FROM docker.io/local/bb:1\n"
	"#4 DONE 0.0s\n"
	"\n"
	"#5 [other 2/2] RUN mkdir -p /out && echo hi > /out/x\n"
	"#5 sha256:dd396e5bc795f0b91c43429f3a64782a810c41cced8fee41db59e337f7666ac6\n"
	"#5 ERROR: executor failed running [/bin/sh -c mkdir -p /out && echo hi > /out/x]: network bridge not found\n"
	"------\n"
	" > [other 2/2] RUN mkdir -p /out && echo hi > /out/x:\n"
	"------\n"
	"executor failed running [/bin/sh -c mkdir -p /out && echo hi > /out/x]: network bridge not found\n";

/* buildx: a base image that cannot be resolved, then the closing error. */
static const char buildx_metadata_fail[] =
	"#0 building with \"default\" instance using docker driver\n"
	"\n"
	"#3 [internal] load metadata for docker.io/openshell-testbed/nosuch:sim\n"
	"#3 ERROR: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed\n"
	"------\n"
	" > [internal] load metadata for docker.io/openshell-testbed/nosuch:sim:\n"
	"------\n"
	"ERROR: failed to solve: openshell-testbed/nosuch:sim: failed to resolve source metadata\n";

/* The legacy builder: no step ids, the error as the last line. */
static const char legacy_fail[] =
	"Sending build context to Docker daemon  3.987MB\n"
	"Step 1/10 : ARG BASE=ubuntu:24.04\n"
	"Step 2/10 : ARG SRC=fetch\n"
	"Step 3/10 : FROM ubuntu:24.04 AS fetch\n"
	"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host\n";

static void test_build_outcome(void)
{
	struct build_outcome o = { 0 };

	build_outcome_read(buildkit_run_fail, &o);
	is_str(o.step, "[other 2/2] RUN mkdir -p /out && echo hi > /out/x", "BuildKit: the step that failed");
	is_str(o.cause, "executor failed running [/bin/sh -c mkdir -p /out && echo hi > /out/x]: network bridge not found",
	       "BuildKit: the step's own ERROR line is the cause");
	build_outcome_free(&o);

	build_outcome_read(buildx_metadata_fail, &o);
	is_str(o.step, "[internal] load metadata for docker.io/openshell-testbed/nosuch:sim",
	       "buildx: a base image that cannot be resolved is the step");
	ok(o.cause && strncmp(o.cause, "pull access denied", 18) == 0, "buildx: the step's error wins over the closing one");
	build_outcome_free(&o);

	build_outcome_read(legacy_fail, &o);
	is_str(o.step, "Step 3/10 : FROM ubuntu:24.04 AS fetch", "legacy: the last step begun");
	ok(o.cause && strstr(o.cause, "no such host"), "legacy: the last line is the cause");
	build_outcome_free(&o);

	build_outcome_read("ERROR: failed to solve: no Dockerfile\n", &o);
	ok(o.step == NULL, "no step when the build never began one");
	is_str(o.cause, "failed to solve: no Dockerfile", "the closing error without a step");
	build_outcome_free(&o);

	build_outcome_read("", &o);
	ok(o.step == NULL && o.cause == NULL, "empty output: neither");
	build_outcome_free(&o);

	/* A step id out of range or a malformed header is plain output. */
	build_outcome_read("#99999 [x 1/1] RUN y\n#-1 ERROR: z\n#7x [a] b\n", &o);
	ok(o.step == NULL, "headers with ids out of range are not steps");
	build_outcome_free(&o);
}

/* ---- docker image inspect ---------------------------------------------- */

static void test_image_inspect(void)
{
	static const char json[] =
		"[{\"Id\":\"sha256:abc\",\"Created\":\"2026-12-01T08:15:53Z\",\"Size\":7837923,"
		"\"Config\":{\"Labels\":{\"org.openshell.image\":\"cluster\",\"org.openshell.k3s-version\":\"v1.37.1+k3s1\","
		"\"org.openshell.bundle.images\":\"\"}}}]";
	struct docker_image img;
	os_error err = { 0 };

	is_int(image_parse_inspect(json, sizeof(json) - 1, &img, &err), 0, "image inspect parses");
	ok(img.exists, "the image exists");
	is_str(img.id, "sha256:abc", "Id");
	is_int(img.size, 7837923, "Size");
	is_str(image_label(&img, "org.openshell.k3s-version"), "v1.37.1+k3s1", "a label");
	ok(image_label(&img, "org.openshell.bundle.images") == NULL, "an empty label reads as absent");
	ok(image_label(&img, "nosuch") == NULL, "a missing label reads as absent");
	docker_image_free(&img);

	is_int(image_parse_inspect("[{\"Id\":\"x\",\"Config\":{\"Labels\":null}}]", 38, &img, &err), 0,
	       "an image without labels parses");
	ok(img.labels && cJSON_IsObject(img.labels) && img.size == -1, "labels: an empty object; size unknown");
	docker_image_free(&img);

	is_int(image_parse_inspect("{}", 2, &img, &err), -1, "an object, not an array, is refused");
	os_error_clear(&err);
	is_int(image_parse_inspect("[]", 2, &img, &err), -1, "an empty array is refused");
	os_error_clear(&err);
	is_int(image_parse_inspect("[{", 2, &img, &err), -1, "truncated JSON is refused");
	os_error_clear(&err);
}

/* ---- the recipe's pins ------------------------------------------------- */

static int versions_of(const char *text, struct strv *pairs, os_error *err)
{
	char dir[] = "/tmp/test_image.XXXXXX";
	int rc;

	if (!mkdtemp(dir))
		return -1;
	cleanup_free char *path = xasprintf("%s/%s", dir, IMAGE_VERSIONS_FILE);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	rc = image_versions(dir, pairs, err);
	unlink(path);
	rmdir(dir);
	return rc;
}

static void test_versions(void)
{
	struct strv pairs = { 0 };
	os_error err = { 0 };

	is_int(versions_of("# pins\n\nK3S_VERSION=v1.37.1+k3s1\nA_B2=x/y:z@sha256:0\n", &pairs, &err), 0,
	       "comments and blank lines are skipped");
	is_int((long long)pairs.n, 2, "two pins");
	is_str(pairs.n == 2 ? pairs.v[0] : NULL, "K3S_VERSION=v1.37.1+k3s1", "a pin as KEY=VALUE");
	is_str(strv_value(&pairs, "A_B2"), "x/y:z@sha256:0", "a pin looked up by its key");
	ok(strv_value(&pairs, "A_B") == NULL && strv_value(&pairs, "K3S") == NULL, "not by a prefix of it");
	ok(strv_value(NULL, "A_B2") == NULL, "nor in no pins at all");
	strv_free(&pairs);

	static const char *const bad[] = { "lower=x\n", "K=\n", "K\n", "K=a b\n", "K=\"q\"\n", "K=$(x)\n",
					   "=v\n", "K=a\\b\n", NULL };
	for (size_t i = 0; bad[i]; i++) {
		cleanup_free char *what = xasprintf("a malformed pin is refused (case %zu)", i);
		is_int(versions_of(bad[i], &pairs, &err), -1, what);
		ok(err.msg && strstr(err.msg, ":1: not a KEY=VALUE pin"), "the message names the line");
		os_error_clear(&err);
		strv_free(&pairs);
	}
	is_int(image_versions("/nonexistent", &pairs, &err), -1, "a missing recipe is an error");
	os_error_clear(&err);
}

/* ---- why the device plugin does not come up ---------------------------- */

static void test_pods_stuck(void)
{
	static const char pods[] =
		"{\"items\":["
		"{\"metadata\":{\"name\":\"other\",\"namespace\":\"ns\",\"labels\":{\"app\":\"x\"}},"
		" \"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\"}}}]}},"
		"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"labels\":{\"app\":\"dp\"}},"
		" \"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}},"
		"{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ns\",\"labels\":{\"app\":\"dp\"}},"
		" \"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\","
		"  \"message\":\"Back-off pulling image \\\"nvcr.io/x:1\\\"\"}}}]}}]}";
	cJSON *obj = cJSON_Parse(pods);
	char *s;

	s = kube_pods_stuck(obj, "app", "dp");
	is_str(s, "pod ns/p2: ImagePullBackOff: Back-off pulling image \"nvcr.io/x:1\"",
	       "the first pod of the label whose container waits for a reason that matters");
	free(s);
	ok((s = kube_pods_stuck(obj, "app", "none")) == NULL, "no pod of the label: NULL");
	free(s);
	ok((s = kube_pods_stuck(NULL, "app", "dp")) == NULL, "no list: NULL");
	free(s);
	cJSON_Delete(obj);

	s = kube_last_error_line("+ helm install\nError: first\nnoise\n  | Error: INSTALLATION FAILED: 404\n");
	is_str(s, "Error: INSTALLATION FAILED: 404", "helm's last Error: line, quoted or not");
	free(s);
	ok((s = kube_last_error_line("all good\n")) == NULL, "no Error: line: NULL");
	free(s);
	ok((s = kube_last_error_line(NULL)) == NULL, "no text: NULL");
	free(s);
}

/* ---- containerd's nvidia runtime ---------------------------------------- */

static void test_containerd(void)
{
	/* k3s's v3 template, as written for a host with the toolkit. */
	static const char v3[] =
		"# File generated by k3s. DO NOT EDIT. Use config-v3.toml.tmpl instead.\n"
		"version = 3\n"
		"\n"
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
		"  runtime_type = \"io.containerd.runc.v2\"\n"
		"\n"
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
		"  BinaryName = \"/usr/bin/runc\"\n"
		"  SystemdCgroup = false\n"
		"\n"
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']\n"
		"  runtime_type = \"io.containerd.runc.v2\"\n"
		"\n"
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia'.options]\n"
		"  BinaryName = \"/usr/bin/nvidia-container-runtime\"\n"
		"  SystemdCgroup = false\n";
	/* containerd 1.7's v2 config. */
	static const char v2[] =
		"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.\"nvidia\"]\n"
		"  runtime_type = \"io.containerd.runc.v2\"\n"
		"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.\"nvidia\".options]\n"
		"  BinaryName = \"/usr/local/nvidia/toolkit/nvidia-container-runtime\"\n";
	static const char without[] =
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
		"  runtime_type = \"io.containerd.runc.v2\"\n"
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia-experimental']\n"
		"# runtimes.'nvidia'] in a comment is not a table\n";
	struct runtime_fact f = { 0 };

	containerd_parse_nvidia(v3, &f);
	ok(f.config_read && f.nvidia, "v3: the nvidia runtime is there");
	is_str(f.binary, "/usr/bin/nvidia-container-runtime", "v3: its BinaryName, not runc's");
	runtime_fact_free(&f);
	memset(&f, 0, sizeof(f));
	containerd_parse_nvidia(v2, &f);
	ok(f.nvidia, "v2: the nvidia runtime is there");
	is_str(f.binary, "/usr/local/nvidia/toolkit/nvidia-container-runtime", "v2: its BinaryName");
	runtime_fact_free(&f);
	memset(&f, 0, sizeof(f));
	containerd_parse_nvidia(without, &f);
	ok(f.config_read && !f.nvidia && !f.binary, "runc and nvidia-experimental only: no nvidia runtime");
	runtime_fact_free(&f);
	memset(&f, 0, sizeof(f));
	containerd_parse_nvidia("", &f);
	ok(f.config_read && !f.nvidia, "an empty config: read, no nvidia runtime");
	runtime_fact_free(&f);
}

static void test_pod_reasons(void)
{
	cJSON *pod = cJSON_Parse("{\"metadata\":{\"name\":\"p\"},\"status\":{\"containerStatuses\":["
				 "{\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"rpc error\"}}}]}}");
	cJSON *events = cJSON_Parse("{\"items\":["
		"{\"type\":\"Normal\",\"reason\":\"Scheduled\",\"involvedObject\":{\"name\":\"p\"}},"
		"{\"type\":\"Warning\",\"reason\":\"FailedCreatePodSandBox\",\"message\":\"no runtime for \\\"nvidia\\\" is configured\","
		" \"involvedObject\":{\"name\":\"p\"}},"
		"{\"type\":\"Warning\",\"reason\":\"Other\",\"involvedObject\":{\"name\":\"q\"}}]}");
	char *s;

	s = kube_pod_stuck(pod);
	is_str(s, "ErrImagePull: rpc error", "a pod's waiting reason and message");
	free(s);
	s = kube_pod_warning(events, "p");
	is_str(s, "FailedCreatePodSandBox: no runtime for \"nvidia\" is configured", "the pod's Warning, not another pod's");
	free(s);
	ok((s = kube_pod_warning(events, "none")) == NULL, "no Warning about the pod: NULL");
	free(s);
	cJSON_Delete(pod);
	cJSON_Delete(events);
	/* The device plugin with a config.map: its init container pulls first. */
	pod = cJSON_Parse("{\"status\":{\"initContainerStatuses\":[{\"name\":\"nvidia-device-plugin-init\","
			  "\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"Back-off pulling image\"}}}],"
			  "\"containerStatuses\":[{\"name\":\"nvidia-device-plugin-ctr\",\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}");
	s = kube_pod_stuck(pod);
	is_str(s, "ImagePullBackOff: Back-off pulling image", "an init container's reason, which keeps the others PodInitializing");
	free(s);
	cJSON_Delete(pod);
}

/* ---- an image sent from one daemon to another ----------------------------- */

/* docker for two daemons, each a directory (DOCKER_HOST=unix://DIR) of
 * files named for images and holding their IDs: `image inspect` prints the
 * ID, `save` the name and ID on a line and then a megabyte, `load` reads
 * them back in. A fault after '#' in the endpoint: save-fail cuts the save
 * short, load-fail makes load fail before it reads anything, load-id=ID
 * records another ID than the one sent; DOCKER_HOST=ssh://lost is a daemon
 * that does not answer. */
static const char fake_docker[] =
	"#!/bin/sh\n"
	"d=${DOCKER_HOST#unix://} flag=\n"
	"case $d in *'#'*) flag=${d#*#} d=${d%%#*} ;; esac\n"
	"f() { printf '%s/%s' \"$d\" \"$(printf %s \"$1\" | tr /: __)\"; }\n"
	"case \"$1\" in\n"
	"image) [ -f \"$(f \"$6\")\" ] || { echo \"Error response from daemon: No such image: $6\" >&2; exit 1; }\n"
	"	cat \"$(f \"$6\")\" ;;\n"
	"save) [ -f \"$(f \"$3\")\" ] || { echo 'Error response from daemon: reference does not exist' >&2; exit 1; }\n"
	"	if [ \"$flag\" = save-fail ]; then printf part; echo 'Error response from daemon: layer vanished' >&2; exit 1; fi\n"
	"	printf '%s %s\\n' \"$3\" \"$(cat \"$(f \"$3\")\")\"\n"
	"	head -c 1048576 /dev/zero ;;\n"
	"load) [ \"$DOCKER_HOST\" != ssh://lost ] || { echo 'Cannot connect to the Docker daemon at ssh://lost.' >&2; exit 1; }\n"
	"	[ \"$flag\" != load-fail ] || { echo 'Error response from daemon: no space left on device' >&2; exit 1; }\n"
	"	read -r name id\n"
	"	[ \"$(wc -c)\" -eq 1048576 ] || { echo 'Error: unexpected EOF' >&2; exit 1; }\n"
	"	case $flag in load-id=*) id=${flag#load-id=} ;; esac\n"
	"	echo \"$id\" >\"$(f \"$name\")\"\n"
	"	echo \"Loaded image: $name\" ;;\n"
	"esac\n";

static char send_dir[] = "/tmp/test_image_send.XXXXXX";

static char *send_path(const char *name)
{
	return xasprintf("%s/%s", send_dir, name);
}

static void write_send_file(const char *name, const char *text, int mode)
{
	cleanup_free char *path = send_path(name);
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
}

/* Send IMAGE from the gateway's daemon to the node's, each target's
 * endpoint with its fault (NULL: none; TO_LOST: a node's daemon that does
 * not answer); the ID, or NULL with *err set. */
#define TO_LOST "ssh://lost"
static char *send_with(const char *image, const char *from_fault, const char *to_fault, os_error *err)
{
	cleanup_free char *gw = xasprintf("unix://%s/gw%s%s", send_dir, from_fault ? "#" : "", from_fault ? from_fault : "");
	cleanup_free char *node = to_fault && strcmp(to_fault, TO_LOST) == 0
					  ? xstrdup(TO_LOST)
					  : xasprintf("unix://%s/node%s%s", send_dir, to_fault ? "#" : "", to_fault ? to_fault : "");
	struct docker_target from = { .context = "default", .endpoint = gw, .tls_recorded = 1 };
	struct docker_target to = { .context = "default", .endpoint = node, .tls_recorded = 1 };
	char *id = NULL;

	if (docker_image_send(image, &from, &to, 10000, &id, err) < 0 && id)
		printf("# an ID despite the failure\n");
	return id;
}

static void test_send(void)
{
	static const char image[] = "openshell/cluster:dev";
	cleanup_free char *docker = NULL, *arrived = NULL, *gw = NULL, *node = NULL;
	os_error err = { 0 };
	size_t len;
	char *id;

	ok(mkdtemp(send_dir) != NULL, "a scratch directory for two daemons");
	gw = send_path("gw");
	node = send_path("node");
	mkdir(gw, 0700);
	mkdir(node, 0700);
	write_send_file("docker", fake_docker, 0755);
	write_send_file("gw/openshell_cluster_dev", "sha256:1111\n", 0644);
	docker = send_path("docker");
	setenv("OPENSHELL_DOCKER", docker, 1);

	setenv("DOCKER_HOST", TO_LOST, 1);   /* openshell's own: each side's target wins over it */
	id = send_with(image, NULL, NULL, &err);
	is_str(id, "sha256:1111", "the image is sent, and its ID given");
	free(id);
	unsetenv("DOCKER_HOST");
	cleanup_free char *arrived_path = send_path("node/openshell_cluster_dev");
	read_file(arrived_path, 4096, &arrived, &len, &err);
	is_str(arrived, "sha256:1111\n", "the node's daemon has it under the same ID");
	os_error_clear(&err);
	unlink(arrived_path);

	ok(!send_with(image, NULL, "load-fail", &err), "a load that fails fails the send");
	ok(err.msg && strstr(err.msg, "cannot send the image openshell/cluster:dev: loading it on the node's daemon failed "
				      "(exit status 1): Error response from daemon: no space left on device"),
	   "naming the loading side and quoting docker: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);

	ok(!send_with(image, NULL, TO_LOST, &err), "a node's daemon that does not answer");
	ok(err.msg && strstr(err.msg, "loading it on the node's daemon failed: lost the Docker daemon (DOCKER_HOST=ssh://lost)"),
	   "is named as the call's, not openshell's: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);

	ok(!send_with(image, "save-fail", NULL, &err), "a save cut short fails the send");
	ok(err.msg && strstr(err.msg, "saving it from the gateway's daemon failed (exit status 1): "
				      "Error response from daemon: layer vanished"),
	   "naming the saving side, not load's short input: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);

	ok(!send_with(image, NULL, "load-id=sha256:2222", &err), "an image that arrives as another ID is refused");
	is_str(err.msg, "the image openshell/cluster:dev arrived as ID sha256:2222, not sha256:1111", "saying so");
	os_error_clear(&err);
	unlink(arrived_path);

	ok(!send_with("nosuch:1", NULL, NULL, &err), "an image the gateway's daemon lacks");
	is_str(err.msg, "the image nosuch:1 is not on the gateway's daemon", "is not sent");
	os_error_clear(&err);

	unlink(docker);
	cleanup_free char *gw_image = send_path("gw/openshell_cluster_dev");
	unlink(gw_image);
	ok(rmdir(gw) == 0 && rmdir(node) == 0 && rmdir(send_dir) == 0, "cleaned up");
}

/* Under dra, an image of the recipe must run k3s 1.34 or later and bundle
 * the driver's chart and image; one without those labels is let be. */
static void fits(const char *labels, int want, const char *what)
{
	struct docker_image img = { .exists = 1, .labels = cJSON_Parse(labels) };
	os_error err = { 0 };
	int rc = image_fit_allocation("i:1", &img, GPU_ALLOCATION_DRA, &err);

	ok(rc == want, "%s: %s", what, rc ? err.msg : "fits");
	is_int(image_fit_allocation("i:1", &img, GPU_ALLOCATION_DEVICE_PLUGIN, &err), 0, "the device plugin needs none of it");
	cJSON_Delete(img.labels);
	os_error_clear(&err);
}

static void test_image_fit(void)
{
#define DRA_CHARTS "\"org.openshell.bundle.charts\":\"nvidia-device-plugin-0.17.1.tgz dra-driver-nvidia-gpu-0.4.1.tgz\""
#define DRA_IMAGES "\"org.openshell.bundle.images\":\"nvcr.io/nvidia/k8s-device-plugin:v0.17.1 " \
		   "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1@sha256:eefe nvcr.io/nvidia/cuda:12.9.1\""
	fits("{\"org.openshell.k3s-version\":\"v1.37.1+k3s1\"," DRA_CHARTS "," DRA_IMAGES "}", 0, "the recipe's image");
	fits("{\"org.openshell.k3s-version\":\"v1.34.2+k3s1\"}", 0, "k3s 1.34, no bundle labels");
	fits("{}", 0, "no labels: not the recipe's, let be");
	fits("{\"org.openshell.k3s-version\":\"v1.33.5+k3s1\"," DRA_CHARTS "," DRA_IMAGES "}", -1, "k3s 1.33");
	fits("{\"org.openshell.k3s-version\":\"v1.37.1+k3s1\",\"org.openshell.bundle.charts\":\"nvidia-device-plugin-0.17.1.tgz\"}",
	     -1, "no DRA chart in the bundle");
	fits("{\"org.openshell.bundle.charts\":\"dra-driver-nvidia-gpu.tgz\"}", -1, "a chart of that name but no version");
	fits("{\"org.openshell.bundle.images\":\"example.com/dra-driver-nvidia-gpu-fork:v1\"}", -1,
	     "an image whose name only begins as the driver's");
	fits("{\"org.openshell.bundle.images\":\"dra-driver-nvidia-gpu:v0.4.1\"}", 0, "the driver's image without a registry");
#undef DRA_CHARTS
#undef DRA_IMAGES
}

int main(void)
{
	xalloc_init();
	test_build_outcome();
	test_image_inspect();
	test_versions();
	test_pods_stuck();
	test_containerd();
	test_pod_reasons();
	test_send();
	test_image_fit();
	return tap_done();
}
