/* test_deploy.c - a start's request (defaults, validation), the docker run
 * argv of its plan, and the option parsing of `gateway start` that fills
 * the request. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/command.h"
#include "base/exitcode.h"
#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "cmd/commands.h"
#include "docker/container.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"
#include "gateway/deploy/start_failure.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/node_network.h"
#include "tap.h"

#define NAME_53 "a1234567890123456789012345678901234567890123456789012"
#define NAME_54 NAME_53 "3"

/* ---- argv helpers ---------------------------------------------------- */

static int argv_has(struct strv *sv, const char *arg)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], arg) == 0)
			return 1;
	return 0;
}

static int argv_count_prefix(struct strv *sv, const char *prefix)
{
	int n = 0;

	for (size_t i = 0; i < sv->n; i++)
		n += strncmp(sv->v[i], prefix, strlen(prefix)) == 0;
	return n;
}

/* The whole argv, element by element, against a NULL-terminated list. */
static void argv_is(struct strv *sv, const char *const *want, const char *what)
{
	size_t nwant = 0, i;
	int same;

	while (want[nwant])
		nwant++;
	same = sv->n == nwant;
	for (i = 0; same && i < nwant; i++)
		same = strcmp(sv->v[i], want[i]) == 0;
	ok(same, "%s", what);
	if (!same) {
		for (i = 0; i < sv->n || i < nwant; i++)
			printf("#   [%zu] got '%s', want '%s'\n", i, i < sv->n ? sv->v[i] : "(end)",
			       i < nwant ? want[i] : "(end)");
	}
	ok(strv_argv(sv)[sv->n] == NULL, "%s: argv is NULL-terminated", what);
}

static void build(const struct deploy_plan *p, struct strv *sv)
{
	memset(sv, 0, sizeof(*sv));
	deploy_run_argv(p, sv);
}

/* The plan of request RQ as a new gateway's, before the flow's own
 * decisions (which a test sets on it): a static, made again each call
 * (a test that gives it UUIDs or capabilities frees the plan after). */
static struct deploy_plan *plan(const struct gateway_request *rq)
{
	static struct deploy_plan p;

	deploy_plan_init(&p, rq);
	return &p;
}

/* ---- deploy_run_argv --------------------------------------------------- */

static void test_argv_default(void)
{
	static const char *const want[] = {
		"run", "--detach",
		"--name=openshell-cluster-openshell",
		"--hostname=openshell-openshell",
		"--label=org.openshell.managed-by=openshell",
		"--label=org.openshell.gateway=openshell",
		"--label=org.openshell.gpu=false",
		"--privileged", "--cgroupns=private", "--restart=unless-stopped",
		"--label=org.openshell.api-host=127.0.0.1",
		"--label=org.openshell.node-network=vxlan",
		"--network=openshell-cluster-openshell",
		"--mount=type=volume,src=openshell-cluster-openshell,dst=/var/lib/rancher/k3s,volume-label=org.openshell.managed-by=openshell,volume-label=org.openshell.gateway=openshell",
		"--publish=127.0.0.1:6443:6443",
		IMAGE_DEFAULT_TAG,
		"server", "--disable=traefik", "--tls-san=127.0.0.1", "--tls-san=localhost",
		NULL,
	};
	struct gateway_request o;
	struct deploy_plan *pl;
	struct strv sv;

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	gateway_request_init(&o);
	build(plan(&o), &sv);
	argv_is(&sv, want, "default argv is exactly docker run … server …");
	ok(!argv_has(&sv, "--env=GPU_ENABLED=true"), "no GPU_ENABLED without --gpu");
	is_int(argv_count_prefix(&sv, "--gpus"), 0, "no --gpus without --gpu");
	strv_free(&sv);

	/* Docker >= 25 probes at this interval during the start period. */
	pl = plan(&o);
	pl->health_start_interval = 1;
	build(pl, &sv);
	is_int(argv_count_prefix(&sv, "--health-start-interval=1s"), 1, "--health-start-interval=1s on Docker >= 25");
	strv_free(&sv);
}

static void test_argv_gpu(void)
{
	static const char *const want[] = {
		"run", "--detach",
		"--name=openshell-cluster-gpu1",
		"--hostname=openshell-gpu1",
		"--label=org.openshell.managed-by=openshell",
		"--label=org.openshell.gateway=gpu1",
		"--label=org.openshell.gpu=true",
		"--privileged", "--cgroupns=private", "--restart=unless-stopped",
		"--label=org.openshell.api-host=127.0.0.1",
		"--label=org.openshell.node-network=vxlan",
		"--network=openshell-cluster-gpu1",
		"--mount=type=volume,src=openshell-cluster-gpu1,dst=/var/lib/rancher/k3s,volume-label=org.openshell.managed-by=openshell,volume-label=org.openshell.gateway=gpu1",
		"--publish=127.0.0.1:6443:6443",
		"--gpus=driver=nvidia,count=all,\"capabilities=utility,compute\"",
		"--env=GPU_ENABLED=true",
		"registry.example/cluster:dev",
		"server", "--disable=traefik", "--tls-san=127.0.0.1", "--tls-san=localhost",
		NULL,
	};
	struct gateway_request o;
	struct strv sv;

	gateway_request_init(&o);
	o.name = "gpu1";
	o.gpu = 1;
	o.image = "registry.example/cluster:dev";
	build(plan(&o), &sv);
	argv_is(&sv, want, "--gpu argv is exactly docker run … --gpus … --env … server …");
	strv_free(&sv);
}

struct bind_case {
	const char *bind;
	const char *publish_host;  /* as --publish writes it: IPv6 in brackets */
	const char *extra_san;     /* NULL: none beyond 127.0.0.1 and localhost */
	int advertised;            /* other hosts are meant to reach it */
};

static const struct bind_case bind_cases[] = {
	{ "127.0.0.1", "127.0.0.1", NULL, 0 },
	{ "127.0.0.2", "127.0.0.2", "--tls-san=127.0.0.2", 0 },
	{ "192.168.1.10", "192.168.1.10", "--tls-san=192.168.1.10", 1 },
	{ "0.0.0.0", "0.0.0.0", NULL, 0 },
	{ "::1", "[::1]", "--tls-san=::1", 0 },
	{ "::", "[::]", NULL, 0 },
	{ "fd00::5", "[fd00::5]", "--tls-san=fd00::5", 1 },
};

/* What flannel's choice adds, with an address to advertise or without:
 * its port published beside the API's, the backend, the external IP. */
static int node_network_ok(struct strv *sv, const struct bind_case *bc, enum node_network nn)
{
	int v6 = strchr(bc->bind, ':') != NULL;
	int port = nn == NODE_NETWORK_VXLAN ? 8472 : v6 ? 51821 : 51820;
	char *publish = xasprintf("--publish=%s:%d:%d/udp", bc->publish_host, port, port);
	char *external = xasprintf("--node-external-ip=%s", bc->bind);
	char *label = xasprintf("--label=org.openshell.node-network=%s", nn == NODE_NETWORK_VXLAN ? "vxlan" : "wireguard");
	int good = argv_count_prefix(sv, "--publish=") == 1 + bc->advertised && argv_has(sv, publish) == bc->advertised &&
		   argv_has(sv, external) == bc->advertised && argv_count_prefix(sv, "--node-external-ip=") == bc->advertised &&
		   argv_has(sv, "--flannel-external-ip") == bc->advertised && argv_has(sv, label) &&
		   argv_has(sv, "--flannel-backend=wireguard-native") == (nn == NODE_NETWORK_WIREGUARD) &&
		   argv_count_prefix(sv, "--flannel-backend") == (nn == NODE_NETWORK_WIREGUARD);

	free(publish);
	free(external);
	free(label);
	return good;
}

/* Every combination of gpu, port, bind, node network, recreate and no-wait. */
static void test_argv_matrix(void)
{
	static const int ports[] = { DEPLOY_DEFAULT_PORT, 16443 };
	int combos = 0, bad = 0;

	for (int gpu = 0; gpu <= 1; gpu++)
	for (size_t p = 0; p < sizeof(ports) / sizeof(ports[0]); p++)
	for (size_t b = 0; b < sizeof(bind_cases) / sizeof(bind_cases[0]); b++)
	for (int nn = NODE_NETWORK_VXLAN; nn <= NODE_NETWORK_WIREGUARD; nn++) {
		const struct bind_case *bc = &bind_cases[b];
		struct gateway_request o;
		struct strv sv, sv2;
		char *publish = xasprintf("--publish=%s:%d:6443", bc->publish_host, ports[p]);
		const char *last;
		int good;

		gateway_request_init(&o);
		o.name = "m";
		o.image = "img:1";
		o.gpu = gpu;
		o.port = ports[p];
		o.bind = bc->bind;
		o.node_network = (enum node_network)nn;
		build(plan(&o), &sv);
		last = sv.n ? sv.v[sv.n - 1] : "";

		good = argv_has(&sv, publish);
		ok(good, "gpu=%d port=%d bind=%s: %s", gpu, ports[p], bc->bind, publish);
		bad += !good;

		good = node_network_ok(&sv, bc, (enum node_network)nn);
		ok(good, "gpu=%d port=%d bind=%s node-network=%s: flannel's port, backend and external IP", gpu, ports[p],
		   bc->bind, nn == NODE_NETWORK_VXLAN ? "vxlan" : "wireguard");
		bad += !good;

		good = argv_count_prefix(&sv, "--gpus=") == gpu && argv_has(&sv, "--env=GPU_ENABLED=true") == gpu &&
		       argv_has(&sv, gpu ? "--label=org.openshell.gpu=true" : "--label=org.openshell.gpu=false");
		ok(good, "gpu=%d port=%d bind=%s: GPU flags and label follow gpu", gpu, ports[p], bc->bind);
		bad += !good;

		if (bc->extra_san) {
			char *san = xasprintf("--tls-san=%s", bc->bind);
			char *adv = xasprintf("--advertise-address=%s", bc->bind);
			/* A bind other hosts reach is also what k3s advertises to agents. */
			good = argv_has(&sv, san) && argv_count_prefix(&sv, "--tls-san=") == 3 &&
			       argv_has(&sv, adv) == bc->advertised;
			free(san);
			free(adv);
		} else {
			good = strcmp(last, nn == NODE_NETWORK_WIREGUARD ? "--flannel-backend=wireguard-native" : "--tls-san=localhost") == 0 &&
			       argv_count_prefix(&sv, "--tls-san=") == 2;
		}
		ok(good, "gpu=%d port=%d bind=%s: tls-san %s", gpu, ports[p], bc->bind,
		   bc->extra_san ? bc->extra_san : "only 127.0.0.1 and localhost");
		bad += !good;

		/* The image comes right before "server", after every option. */
		good = 0;
		for (size_t i = 0; i + 1 < sv.n; i++)
			if (strcmp(sv.v[i + 1], "server") == 0) {
				good = strcmp(sv.v[i], "img:1") == 0;
				break;
			}
		ok(good, "gpu=%d port=%d bind=%s: image then server", gpu, ports[p], bc->bind);

		/* recreate, no-wait and timeout are not docker's business. */
		o.recreate = 1;
		o.no_wait = 1;
		o.timeout_ms = 1234;
		build(plan(&o), &sv2);
		good = sv.n == sv2.n;
		for (size_t i = 0; good && i < sv.n; i++)
			good = strcmp(sv.v[i], sv2.v[i]) == 0;
		ok(good, "gpu=%d port=%d bind=%s: recreate/no-wait/timeout leave argv alone", gpu,
		   ports[p], bc->bind);
		strv_free(&sv);
		strv_free(&sv2);
		free(publish);
		combos++;
	}
	is_int(combos, 2 * 2 * 7 * 2, "all combinations were built");
	if (bad)
		printf("# %d matrix checks failed\n", bad);
}

/* ---- gateway_request_init ---------------------------------------------- */

static void test_opts_init(void)
{
	struct gateway_request o;
	struct deploy_plan pl;

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	memset(&o, 0x5a, sizeof(o));
	gateway_request_init(&o);
	is_str(o.name, "openshell", "default name");
	is_int(o.gpu, 0, "default gpu off");
	/* What was not asked is unset, not a default that looks asked. */
	ok(o.port == 0 && !o.bind && !o.image, "port, bind and image: not given");
	ok(o.mig == MIG_UNSET && o.node_network == NODE_NETWORK_UNSET && !sharing_asked(&o.sharing),
	   "MIG strategy, node network and sharing: not given");
	is_int(o.recreate, 0, "default recreate off");
	is_int(o.timeout_ms, 600000, "default timeout 10m");
	is_int(o.no_wait, 0, "default no-wait off");
	deploy_plan_init(&pl, &o);
	ok(pl.port == 6443 && !strcmp(pl.bind, "127.0.0.1") && !strcmp(pl.image, IMAGE_DEFAULT_TAG),
	   "the plan fills the defaults: 6443, 127.0.0.1, the default image");
	ok(pl.mig == MIG_NONE && pl.node_network == NODE_NETWORK_VXLAN, "no MIG strategy, vxlan");
	deploy_plan_free(&pl);

	setenv("OPENSHELL_CLUSTER_IMAGE", "localhost:5000/cluster:test", 1);
	is_str(gateway_default_image(), "localhost:5000/cluster:test", "OPENSHELL_CLUSTER_IMAGE overrides the image");
	setenv("OPENSHELL_CLUSTER_IMAGE", "", 1);
	is_str(gateway_default_image(), IMAGE_DEFAULT_TAG, "empty OPENSHELL_CLUSTER_IMAGE is ignored");
	unsetenv("OPENSHELL_CLUSTER_IMAGE");
}

/* ---- gateway_request_check ----------------------------------------------- */

static int one_line_n(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

static int one_line(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return 0;
	return 1;
}

/* Check a field; want_ok 1 or 0. want_in: a substring the message must hold. */
static void check(const char *name, const char *bind, const char *image, int want_ok,
		  const char *want_in, const char *what)
{
	struct gateway_request o;
	os_error err = { 0 };
	int rc;

	gateway_request_init(&o);
	if (name)
		o.name = name;
	if (bind)
		o.bind = bind;
	if (image)
		o.image = image;
	rc = gateway_request_check(&o, &err);
	if (want_ok) {
		ok(rc == 0 && err.msg == NULL, "accepted: %s", what);
		if (rc != 0)
			printf("#   message: %s\n", err.msg ? err.msg : "(none)");
	} else {
		ok(rc == -1 && err.msg && err.code == OS_EXIT_USAGE, "refused with usage status: %s", what);
		ok(err.msg && one_line(err.msg), "one-line message: %s", what);
		if (want_in) {
			ok(err.msg && strstr(err.msg, want_in), "message shows '%s': %s", want_in, what);
			if (err.msg && !strstr(err.msg, want_in))
				printf("#   message: %s\n", err.msg);
		}
	}
	os_error_clear(&err);
}

/* The GPU allocation's place among the other GPU options. */
static void check_allocation(int gpu, enum gpu_allocation a, const char *sharing, enum mig_strategy m,
			     const char *want_in, const char *what)
{
	struct gateway_request o;
	os_error err = { 0 };
	int rc;

	gateway_request_init(&o);
	o.gpu = gpu;
	o.allocation = a;
	o.mig = m;
	if (sharing && sharing_parse(sharing, &o.sharing, &err) < 0)
		printf("#   sharing '%s': %s\n", sharing, err.msg);
	rc = gateway_request_check(&o, &err);
	if (!want_in)
		ok(rc == 0, "accepted: %s", what);
	else
		ok(rc == -1 && err.code == OS_EXIT_USAGE && one_line(err.msg) && strstr(err.msg, want_in),
		   "refused: %s", what);
	if (err.msg && (!want_in || !strstr(err.msg, want_in)))
		printf("#   message: %s\n", err.msg);
	os_error_clear(&err);
}

static void test_allocation_check(void)
{
	check_allocation(1, GPU_ALLOCATION_DRA, NULL, MIG_UNSET, NULL, "--gpu --gpu-allocation dra");
	check_allocation(1, GPU_ALLOCATION_DEVICE_PLUGIN, "mps:2", MIG_SINGLE, NULL,
			 "--gpu-allocation device-plugin with sharing and a MIG strategy");
	check_allocation(0, GPU_ALLOCATION_DRA, NULL, MIG_UNSET,
			 "--gpu-allocation says how GPUs are given, and none were asked for: add --gpu or --gpus",
			 "--gpu-allocation without GPUs");
	check_allocation(1, GPU_ALLOCATION_DRA, "time-slicing:2", MIG_UNSET,
			 "there is no count of replicas: give --gpu-sharing time-slicing, without :N", "dra with a count of replicas");
	check_allocation(1, GPU_ALLOCATION_DRA, "mps:2", MIG_UNSET, "asks the DRA driver for MPS, and there is no count of replicas: give --gpu-sharing mps, without :N",
			 "dra with a count of MPS replicas");
	check_allocation(1, GPU_ALLOCATION_DRA, "time-slicing", MIG_UNSET, NULL, "dra with time-slicing per claim");
	check_allocation(1, GPU_ALLOCATION_DRA, "none", MIG_UNSET, NULL, "dra with none");
	check_allocation(1, GPU_ALLOCATION_DRA, "mps", MIG_UNSET, NULL, "dra with MPS per claim");
	check_allocation(1, GPU_ALLOCATION_DEVICE_PLUGIN, "time-slicing", MIG_UNSET,
			 "--gpu-sharing without a count is for --gpu-allocation dra", "the device plugin with sharing per claim");
	check_allocation(1, GPU_ALLOCATION_UNSET, "time-slicing", MIG_UNSET, "or add --gpu-allocation dra",
			 "no allocation asked: per claim names dra");
	check_allocation(1, GPU_ALLOCATION_UNSET, "mps", MIG_UNSET, "give --gpu-sharing time-slicing:N or mps:N, or add --gpu-allocation dra",
			 "MPS per claim, no allocation asked");
	check_allocation(1, GPU_ALLOCATION_DRA, NULL, MIG_NONE, "leave out --mig-strategy, or use --gpu-allocation device-plugin",
			 "dra with --mig-strategy, even none");
	/* The host's driver: 565 or later under dra, whatever under the device plugin. */
	static const struct {
		enum gpu_allocation a;
		const char *driver;
		int rc;
	} drivers[] = {
		{ GPU_ALLOCATION_DRA, "565.57.01", 0 },     { GPU_ALLOCATION_DRA, "570.172.08", 0 },
		{ GPU_ALLOCATION_DRA, "550.54.15", -1 },    { GPU_ALLOCATION_DRA, NULL, 0 },
		{ GPU_ALLOCATION_DRA, "[N/A]", 0 },         { GPU_ALLOCATION_DEVICE_PLUGIN, "535.104.05", 0 },
	};
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		os_error err = { 0 };
		int rc = gpu_allocation_check_driver(drivers[i].a, drivers[i].driver, NULL, &err);
		ok(rc == drivers[i].rc && (rc == 0 || (err.code == OS_EXIT_NOGPU && strstr(err.msg, "and it has 550.54.15: upgrade the driver"))),
		   "driver %s under %s: %s", drivers[i].driver ? drivers[i].driver : "unknown",
		   gpu_allocation_name(drivers[i].a), rc ? err.msg : "let be");
		os_error_clear(&err);
	}
	{
		os_error err = { 0 };
		ok(gpu_allocation_check_driver(GPU_ALLOCATION_DRA, "550.54.15", "n2", &err) < 0 &&
			   strstr(err.msg, "node 'n2''s host has NVIDIA driver 550.54.15") &&
			   strstr(err.msg, "remake the gateway with --gpu-allocation device-plugin"),
		   "a node's host: named, and the fix is the gateway's: %s", err.msg ? err.msg : "");
		os_error_clear(&err);
	}
}

/* Under DRA the entrypoint is told the allocation, and k3s runs pods
 * under the nvidia runtime and labels its node; the device plugin's
 * gateway has none of it, an agent of a DRA gateway all of it. */
static void test_argv_dra(void)
{
	struct gateway_request o;
	struct deploy_plan *p;
	struct strv sv;
	size_t server = 0;

	gateway_request_init(&o);
	o.name = "d";
	o.gpu = 1;
	build(plan(&o), &sv);
	ok(!argv_count_prefix(&sv, "--env=OPENSHELL_GPU_ALLOCATION=") && !argv_count_prefix(&sv, "--default-runtime") &&
		   !argv_count_prefix(&sv, "--node-label"),
	   "the device plugin's gateway: no allocation, default runtime or node label");
	strv_free(&sv);
	o.allocation = GPU_ALLOCATION_DRA;
	build(plan(&o), &sv);
	for (size_t i = 0; i < sv.n && !server; i++)
		if (strcmp(sv.v[i], "server") == 0)
			server = i;
	ok(argv_has(&sv, "--env=OPENSHELL_GPU_ALLOCATION=dra") && argv_has(&sv, "--default-runtime=nvidia") &&
		   argv_has(&sv, "--node-label=nvidia.com/gpu.present=true"),
	   "dra: the entrypoint's allocation, k3s's default runtime and node label");
	ok(server && strcmp(sv.v[sv.n - 2], "--default-runtime=nvidia") == 0 &&
		   strcmp(sv.v[sv.n - 1], "--node-label=nvidia.com/gpu.present=true") == 0,
	   "k3s's flags come after the image's command, not as docker's");
	strv_free(&sv);
	p = plan(&o);
	memset(&sv, 0, sizeof(sv));
	deploy_agent_argv(p, "n1", "https://10.0.0.1:6443", &sv);
	ok(argv_has(&sv, "--env=OPENSHELL_GPU_ALLOCATION=dra") && argv_has(&sv, "--default-runtime=nvidia") &&
		   argv_has(&sv, "--node-label=nvidia.com/gpu.present=true"),
	   "an agent of a DRA gateway: the same");
	strv_free(&sv);
	o.gpu = 0;
	build(plan(&o), &sv);
	ok(!argv_count_prefix(&sv, "--default-runtime") && !argv_count_prefix(&sv, "--env=OPENSHELL_GPU_ALLOCATION"),
	   "without GPUs the allocation gives nothing");
	strv_free(&sv);
	gateway_request_free(&o);
}

static void test_opts_check(void)
{
	char img255[256], img256[257];

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	/* names */
	check(NULL, NULL, NULL, 1, NULL, "defaults");
	check("a", NULL, NULL, 1, NULL, "name 'a'");
	check("dev-1", NULL, NULL, 1, NULL, "name 'dev-1'");
	check("0x", NULL, NULL, 1, NULL, "name starting with a digit");
	check("a--b", NULL, NULL, 1, NULL, "name with a double hyphen");
	check(NAME_53, NULL, NULL, 1, NULL, "53-character name");
	check(NAME_54, NULL, NULL, 0, "invalid gateway name", "54-character name");
	check("", NULL, NULL, 0, "invalid gateway name ''", "empty name");
	check("Dev", NULL, NULL, 0, "'Dev'", "uppercase name");
	check("my_gw", NULL, NULL, 0, "'my_gw'", "underscore in name");
	check("-gw", NULL, NULL, 0, "'-gw'", "leading '-'");
	check("gw-", NULL, NULL, 0, "'gw-'", "trailing '-'");
	check("../x", NULL, NULL, 0, "'../x'", "path in name");
	check("a.b", NULL, NULL, 0, "'a.b'", "dot in name");
	check("a;rm", NULL, NULL, 0, "'a;rm'", "shell metacharacter ';'");
	check("a$(id)", NULL, NULL, 0, "invalid gateway name", "shell metacharacter '$('");
	check("a b", NULL, NULL, 0, "'a b'", "space in name");
	check("a\nb", NULL, NULL, 0, "'a\\x0ab'", "newline in name, shown as \\x0a");
	check("a\x1b[31mb", NULL, NULL, 0, "'a\\x1b[31mb'", "escape sequence in name, shown as \\x1b");
	check("caf\xc3\xa9", NULL, NULL, 0, "'caf\\xc3\\xa9'", "UTF-8 name, bytes shown as \\xHH");
	check("a\xff\xfe", NULL, NULL, 0, "'a\\xff\\xfe'", "non-UTF-8 bytes, shown as \\xHH");
	check("a\\b", NULL, NULL, 0, "'a\\x5cb'", "backslash in name, shown as \\x5c");

	/* bind addresses */
	check(NULL, "::1", NULL, 1, NULL, "bind ::1");
	check(NULL, "0.0.0.0", NULL, 1, NULL, "bind 0.0.0.0");
	check(NULL, "::", NULL, 1, NULL, "bind ::");
	check(NULL, "10.1.2.3", NULL, 1, NULL, "bind 10.1.2.3");
	check(NULL, "fe80::1", NULL, 1, NULL, "bind fe80::1");
	check(NULL, "", NULL, 0, "invalid --bind address ''", "empty bind");
	check(NULL, "localhost", NULL, 0, "'localhost'", "bind host name");
	check(NULL, "256.1.1.1", NULL, 0, "'256.1.1.1'", "bind 256.1.1.1");
	check(NULL, "1.2.3", NULL, 0, "'1.2.3'", "bind 1.2.3");
	check(NULL, "[::1]", NULL, 0, "'[::1]'", "bracketed IPv6 bind");
	check(NULL, "127.0.0.1:80", NULL, 0, "'127.0.0.1:80'", "bind with a port");
	check(NULL, " 127.0.0.1", NULL, 0, "invalid --bind", "bind with a leading space");
	check(NULL, "127.0.0.1\n", NULL, 0, "'127.0.0.1\\x0a'", "bind with a newline");

	/* image references */
	memset(img255, 'a', 255);
	img255[255] = '\0';
	memset(img256, 'a', 256);
	img256[256] = '\0';
	check(NULL, NULL, "ghcr.io/openshell/cluster:0.1.0", 1, NULL, "image with registry and tag");
	check(NULL, NULL, "openshell-cluster:sim", 1, NULL, "local image");
	check(NULL, NULL, "localhost:5000/x@sha256:0123abcd", 1, NULL, "image with port and digest");
	check(NULL, NULL, img255, 1, NULL, "255-character image");
	check(NULL, NULL, img256, 0, "invalid image reference", "256-character image");
	check(NULL, NULL, "", 0, "invalid image reference ''", "empty image");
	check(NULL, NULL, "-v", 0, "'-v'", "image with a leading '-'");
	check(NULL, NULL, "--privileged", 0, "'--privileged'", "image that reads as an option");
	check(NULL, NULL, "a b", 0, "'a b'", "image with a space");
	check(NULL, NULL, "$(x)", 0, "'$(x)'", "image with $(x)");
	check(NULL, NULL, "img;rm", 0, "'img;rm'", "image with ';'");
	check(NULL, NULL, "img\t1", 0, "'img\\x091'", "image with a tab, shown as \\x09");
	check(NULL, NULL, ".img", 0, "'.img'", "image with a leading '.'");

	/* the name is checked first, the image last */
	{
		struct gateway_request o;
		os_error err = { 0 };

		gateway_request_init(&o);
		o.name = "BAD";
		o.bind = "nope";
		o.image = "-x";
		ok(gateway_request_check(&o, &err) < 0 && err.msg && strstr(err.msg, "gateway name"),
		   "with everything wrong the name is reported");
		os_error_clear(&err);
	}
	/* a long value is cut in the message */
	{
		char longname[300];
		struct gateway_request o;
		os_error err = { 0 };

		memset(longname, 'X', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		gateway_request_init(&o);
		o.name = longname;
		ok(gateway_request_check(&o, &err) < 0 && err.msg && strstr(err.msg, "...") &&
		   strlen(err.msg) < 250, "a 299-character name is cut with '...' in the message");
		os_error_clear(&err);
	}
}

/* ---- printable ------------------------------------------------------------ */

static void test_printable(void)
{
	char *s;

	s = printable("plain", 64);
	is_str(s, "plain", "printable keeps plain text");
	free(s);
	s = printable("a\nb\x7f\xff", 64);
	is_str(s, "a\\x0ab\\x7f\\xff", "printable escapes control, DEL and high bytes");
	free(s);
	s = printable("abcdef", 3);
	is_str(s, "abc...", "printable cuts at max with '...'");
	free(s);
	s = printable("abc", 3);
	is_str(s, "abc", "printable does not cut at exactly max");
	free(s);
	s = printable("\x01\x02\x03", 3);
	is_str(s, "\\x01\\x02\\x03", "printable of all-escaped text at max fits");
	free(s);
	s = printable("", 8);
	is_str(s, "", "printable of empty text");
	free(s);
}

/* ---- image references, addresses, loopback ------------------------------- */

static void test_image_default(void)
{
	struct gateway_request o;

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	gateway_request_init(&o);
	ok(!plan(&o)->image_named, "the default image is built when absent, not pulled");
	setenv("OPENSHELL_CLUSTER_IMAGE", IMAGE_DEFAULT_TAG, 1);
	ok(!plan(&o)->image_named, "OPENSHELL_CLUSTER_IMAGE naming the default tag is still the default");
	setenv("OPENSHELL_CLUSTER_IMAGE", "org/cluster:1", 1);
	ok(plan(&o)->image_named, "another OPENSHELL_CLUSTER_IMAGE is pulled when absent");
	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	o.image = "org/cluster:2";
	ok(plan(&o)->image_named, "so is another --image");
}

static void api_address(const char *bind, int port, const char *want)
{
	struct gateway_request o;
	char *s;

	gateway_request_init(&o);
	o.bind = bind;
	o.port = port;
	s = deploy_api_address(plan(&o));
	is_str(s, want, bind);
	free(s);
}

static void test_api_address(void)
{
	api_address("127.0.0.1", 6443, "127.0.0.1:6443");
	api_address("192.168.0.7", 16443, "192.168.0.7:16443");
	api_address("0.0.0.0", 7000, "127.0.0.1:7000");
	api_address("::1", 6443, "[::1]:6443");
	api_address("::", 6443, "[::1]:6443");
	api_address("fd00::5", 8443, "[fd00::5]:8443");
}

/* --tls-san and a wildcard bind's host addresses reach k3s's certificate. */
static void test_tls_sans(void)
{
	struct gateway_request o;
	struct deploy_plan *pl;
	struct strv argv = { 0 }, hosts = { 0 };
	os_error err = { 0 };
	char *s;

	gateway_request_init(&o);
	o.bind = "0.0.0.0";
	o.tls_san[o.n_tls_san++] = "gw.example.test";
	o.tls_san[o.n_tls_san++] = "10.1.2.3";
	strv_push(&hosts, "192.0.2.10");
	is_int(gateway_request_check(&o, &err), 0, "DNS names and addresses are valid SANs");
	pl = plan(&o);
	pl->host_sans = &hosts;
	deploy_run_argv(pl, &argv);
	s = command_string(strv_argv(&argv));
	ok(strstr(s, " --tls-san=127.0.0.1 --tls-san=localhost --tls-san=gw.example.test --tls-san=10.1.2.3 --tls-san=192.0.2.10")
	   != NULL, "loopback, then --tls-san in order, then the host's addresses");
	free(s);
	s = deploy_api_address(plan(&o));
	is_str(s, "gw.example.test:6443", "a wildcard bind's kubeconfig names the first --tls-san");
	free(s);
	o.bind = "192.0.2.10";
	s = deploy_api_address(plan(&o));
	is_str(s, "192.0.2.10:6443", "a specific bind is the address asked for, whatever the SANs");
	free(s);
	strv_free(&argv);
	strv_free(&hosts);

	static const char *const bad[] = { "", "-x", "x-", "a..b", "a_b", "a b", "x.", "$(id)", NULL };
	for (size_t i = 0; bad[i]; i++) {
		gateway_request_init(&o);
		o.tls_san[o.n_tls_san++] = bad[i];
		cleanup_free char *what = xasprintf("--tls-san '%s' is a usage error", bad[i]);
		is_int(gateway_request_check(&o, &err), -1, what);
		ok(err.code == OS_EXIT_USAGE && strstr(err.msg, "invalid --tls-san"), "it names --tls-san");
		os_error_clear(&err);
	}
	s = xasprintf("%0254d", 0);
	gateway_request_init(&o);
	o.tls_san[o.n_tls_san++] = s;
	is_int(gateway_request_check(&o, &err), -1, "a name over 253 characters is refused");
	os_error_clear(&err);
	free(s);
}

static void test_loopback(void)
{
	ok(bind_is_loopback("127.0.0.1"), "127.0.0.1 is loopback");
	ok(bind_is_loopback("127.255.0.9"), "127.255.0.9 is loopback");
	ok(bind_is_loopback("::1"), "::1 is loopback");
	ok(!bind_is_loopback("0.0.0.0"), "0.0.0.0 is not loopback");
	ok(!bind_is_loopback("128.0.0.1"), "128.0.0.1 is not loopback");
	ok(!bind_is_loopback("::"), ":: is not loopback");
	ok(!bind_is_loopback("10.0.0.1"), "10.0.0.1 is not loopback");
}

/* ---- gateway_start_parse ------------------------------------------------ */

#define MAXARGS 16

/* What --json set: cmd/'s own, not the request's. */
static int parsed_json;

/* argv is copied into writable strings, as a real argv is. */
static int parse(struct gateway_request *o, char *store[MAXARGS], const char *first, ...)
{
	va_list ap;
	const char *a;
	int argc = 0;

	store[argc++] = xstrdup("start");
	va_start(ap, first);
	for (a = first; a && argc < MAXARGS - 1; a = va_arg(ap, const char *))
		store[argc++] = xstrdup(a);
	va_end(ap);
	store[argc] = NULL;
	optind = 0;   /* GNU getopt: full reinitialisation */
	parsed_json = 0;
	return gateway_start_parse(argc, store, o, &parsed_json);
}

static void drop(char *store[MAXARGS])
{
	for (int i = 0; store[i]; i++)
		free(store[i]);
}

/* A usage error: status 2 and one line on stderr naming what was wrong. */
static void usage_error(struct gateway_request *o, const char *what, const char *want_in, ...)
{
	char *st[MAXARGS];
	char msg[1024];
	FILE *cap = tmpfile();
	int saved, rc, argc = 0;
	size_t n;
	va_list ap;
	const char *a;

	st[argc++] = xstrdup("start");
	va_start(ap, want_in);
	while ((a = va_arg(ap, const char *)) && argc < MAXARGS - 1)
		st[argc++] = xstrdup(a);
	va_end(ap);
	st[argc] = NULL;

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(cap), STDERR_FILENO);
	optind = 0;
	rc = gateway_start_parse(argc, st, o, &parsed_json);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	n = fread(msg, 1, sizeof(msg) - 1, cap);
	msg[n] = '\0';
	fclose(cap);
	drop(st);

	/* The one usage format: the error line, then where to look. */
	const char *nl = strchr(msg, '\n');
	const char *hint = nl ? nl + 1 : "";
	int two = nl && one_line_n(msg, (size_t)(nl - msg)) && strncmp(msg, "openshell: error: ", 18) == 0 &&
		  strncmp(hint, "Try 'openshell ", 15) == 0 &&
		  strchr(hint, '\n') == msg + n - 1 &&
		  strstr(hint, "--help' for more information.\n") != NULL;

	is_int(rc, OS_EXIT_USAGE, what);
	ok(two, "%s: an error line and a --help hint on stderr", what);
	ok(strstr(msg, want_in) != NULL, "%s: message shows %s", what, want_in);
	if (!strstr(msg, want_in) || !two) {
		char *shown = printable(msg, 200);
		printf("#   stderr: %s\n", shown);
		free(shown);
	}
}

static void test_parse(void)
{
	struct gateway_request o;
	char *st[MAXARGS];
	int rc;

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	rc = parse(&o, st, NULL);
	is_int(rc, -1, "no options: go on");
	is_str(o.name, "openshell", "no options: default name");
	ok(o.port == 0 && plan(&o)->port == 6443, "no options: no port asked; the plan's is 6443");
	drop(st);

	rc = parse(&o, st, "--name", "dev", "--gpu", "--port", "16443", "--bind", "::1", "--image",
		   "localhost/img:2", "--recreate", "--timeout", "90s", "--no-wait", "--json", NULL);
	is_int(rc, -1, "every option: go on");
	is_str(o.name, "dev", "--name sets name");
	is_int(o.gpu, 1, "--gpu sets gpu");
	is_int(o.port, 16443, "--port sets port");
	is_str(o.bind, "::1", "--bind sets bind");
	is_str(o.image, "localhost/img:2", "--image sets image");
	is_int(o.recreate, 1, "--recreate sets recreate");
	is_int(o.timeout_ms, 90000, "--timeout sets timeout_ms");
	is_int(o.no_wait, 1, "--no-wait sets no_wait");
	is_int(parsed_json, 1, "--json is cmd/'s, not the request's");
	drop(st);

	rc = parse(&o, st, "--name=eq", "--port=7000", "--timeout=2m", NULL);
	is_int(rc, -1, "--opt=value forms: go on");
	ok(strcmp(o.name, "eq") == 0 && o.port == 7000 && o.timeout_ms == 120000,
	   "--opt=value forms set name, port and timeout");
	ok(o.gpu == 0 && o.recreate == 0 && o.no_wait == 0,
	   "flags not given stay off after an earlier parse");
	drop(st);

	setenv("OPENSHELL_CLUSTER_IMAGE", "env/img:3", 1);
	rc = parse(&o, st, NULL);
	ok(!o.image && !strcmp(plan(&o)->image, "env/img:3"), "without --image, the plan takes OPENSHELL_CLUSTER_IMAGE");
	drop(st);
	rc = parse(&o, st, "--image", "flag/img:4", NULL);
	is_str(o.image, "flag/img:4", "--image beats OPENSHELL_CLUSTER_IMAGE");
	drop(st);
	unsetenv("OPENSHELL_CLUSTER_IMAGE");

	/* The GPU options are parsed once, into typed values, as they come. */
	rc = parse(&o, st, "--gpus", "\"device=0,2\"", "--gpu-sharing", "mps:4", "--gpu-mode", "cdi", "--mig-strategy",
		   "single", NULL);
	is_int(rc, -1, "the GPU options: go on");
	ok(o.gpu && o.gpus.kind == GPUS_DEVICES && o.gpus.ids.n == 2 && strcmp(o.gpus.ids.v[1], "2") == 0,
	   "--gpus '\"device=0,2\"' (Docker's own form) is GPUs 0 and 2");
	ok(sharing_asked(&o.sharing) && o.sharing.mps && o.sharing.replicas == 4, "--gpu-sharing mps:4 is MPS with 4 replicas");
	ok(o.gpu_mode == GPU_MODE_CDI && o.mig == MIG_SINGLE, "--gpu-mode and --mig-strategy as enums");
	ok(o.node_network == NODE_NETWORK_UNSET && plan(&o)->node_network == NODE_NETWORK_VXLAN,
	   "without --node-network: not given; the plan's is vxlan");
	gateway_request_free(&o);
	drop(st);
	rc = parse(&o, st, "--node-network", "wireguard", NULL);
	ok(rc == -1 && o.node_network == NODE_NETWORK_WIREGUARD, "--node-network wireguard as an enum");
	drop(st);
	rc = parse(&o, st, "--node-network=vxlan", NULL);
	ok(rc == -1 && o.node_network == NODE_NETWORK_VXLAN, "--node-network=vxlan, given");
	drop(st);
	usage_error(&o, "--node-network VXLAN is a usage error", "invalid --node-network 'VXLAN': give vxlan or wireguard",
		    "--node-network", "VXLAN", NULL);
	usage_error(&o, "--node-network without a value is a usage error", "'--node-network'", "--node-network", NULL);
	rc = parse(&o, st, "--gpu", NULL);
	ok(rc == -1 && o.gpu && o.gpus.kind == GPUS_ALL && !sharing_asked(&o.sharing) && o.gpu_mode == GPU_MODE_AUTO &&
		   o.mig == MIG_UNSET,
	   "--gpu alone: all GPUs, nothing else set");
	drop(st);
	usage_error(&o, "--gpus x is a usage error", "invalid --gpus 'x'", "--gpus", "x", NULL);
	usage_error(&o, "--gpu-sharing mps:1 is a usage error", "invalid --gpu-sharing 'mps:1'", "--gpu", "--gpu-sharing",
		    "mps:1", NULL);
	usage_error(&o, "--gpu-mode CDI is a usage error", "give auto, cdi or legacy", "--gpu", "--gpu-mode", "CDI", NULL);
	usage_error(&o, "--mig-strategy both is a usage error", "give none, single or mixed", "--gpu", "--mig-strategy",
		    "both", NULL);
	usage_error(&o, "--gpu with --gpus 2 is a usage error", "--gpus 2 contradicts", "--gpu", "--gpus", "2", NULL);
	usage_error(&o, "--gpu-allocation plugin is a usage error", "invalid --gpu-allocation 'plugin': give device-plugin or dra",
		    "--gpu", "--gpu-allocation", "plugin", NULL);
	gateway_request_free(&o);
	rc = parse(&o, st, "--gpu", "--gpu-allocation", "dra", NULL);
	ok(rc == -1 && o.allocation == GPU_ALLOCATION_DRA, "--gpu-allocation dra as an enum");
	gateway_request_free(&o);
	drop(st);
	rc = parse(&o, st, "--gpu", NULL);
	ok(rc == -1 && o.allocation == GPU_ALLOCATION_UNSET && plan(&o)->allocation == GPU_ALLOCATION_DEVICE_PLUGIN,
	   "without --gpu-allocation: not given; the plan's is the device plugin");
	gateway_request_free(&o);
	drop(st);
	gateway_request_free(&o);
	usage_error(&o, "--port 0 is a usage error", "'0'", "--port", "0", NULL);
	usage_error(&o, "--port x is a usage error", "'x'", "--port", "x", NULL);
	usage_error(&o, "--port 65536 is a usage error", "'65536'", "--port", "65536", NULL);
	usage_error(&o, "--port 6x\\n is a usage error", "'6x\\x0a'", "--port", "6x\n", NULL);
	usage_error(&o, "--timeout soon is a usage error", "'soon'", "--timeout", "soon", NULL);
	usage_error(&o, "unknown long option is a usage error", "'--bogus'", "--bogus", NULL);
	usage_error(&o, "unknown short option is a usage error", "'-Z'", "-Z", NULL);
	usage_error(&o, "--name without a value is a usage error", "'--name'", "--name", NULL);
	usage_error(&o, "stray argument is a usage error", "'extra'", "extra", NULL);
	usage_error(&o, "stray argument between options is a usage error", "'extra'", "--gpu", "extra",
		    "--json", NULL);
	/* getopt_long reports a value given to a flag with optopt set to the
	 * option's val (here > 255), not to a character. */
	usage_error(&o, "--gpu=yes is a usage error", "--gpu", "--gpu=yes", NULL);
	usage_error(&o, "--json=1 is a usage error", "--json", "--json=1", NULL);

	/* --help prints the usage on stdout, which would break the TAP stream. */
	{
		int saved, devnull;

		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
		rc = parse(&o, st, "--gpu", "--help", "--port", "0", NULL);
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		is_int(rc, OS_EXIT_OK, "--help returns 0");
		drop(st);

		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
		rc = parse(&o, st, "-h", NULL);
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
		is_int(rc, OS_EXIT_OK, "-h returns 0");
		drop(st);
	}
}

/* Docker's two ways of saying the port is taken, read in one place. */
static void test_port_taken(void)
{
	ok(start_port_taken("docker: Error response from daemon: driver failed programming external connectivity on endpoint x: Bind for 127.0.0.1:6443 failed: port is already allocated."),
	   "another container's port");
	ok(start_port_taken("Error starting userland proxy: listen tcp4 127.0.0.1:6443: bind: address already in use"),
	   "something else on the host");
	ok(!start_port_taken("docker: Error response from daemon: network foo not found."), "not any failure");
}

/* flannel's port, which no other API port frees, told from the API's. */
static void test_node_port_taken(void)
{
	struct gateway_request o;

	gateway_request_init(&o);
	o.bind = "0.0.0.0";
	o.tls_san[o.n_tls_san++] = "192.0.2.10";
	is_int(deploy_node_port(plan(&o)), 8472, "vxlan: 8472");
	ok(start_node_port_taken(plan(&o), "Bind for 0.0.0.0:8472 failed: port is already allocated"),
	   "another container's 8472/udp");
	ok(start_node_port_taken(plan(&o), "Error starting userland proxy: listen udp4 0.0.0.0:8472: bind: address already in use"),
	   "a socket of the host's on 8472/udp");
	ok(start_node_port_taken(plan(&o), "failed to bind host port for 0.0.0.0:8472:172.18.0.2:8472/udp: address already in use"),
	   "Docker 28's words");
	ok(!start_node_port_taken(plan(&o), "Bind for 0.0.0.0:6443 failed: port is already allocated"), "the API's port is not it");
	ok(!start_node_port_taken(plan(&o), "Bind for 0.0.0.0:84720 failed: port is already allocated"), "nor a port it begins");
	ok(!start_node_port_taken(plan(&o), "network 8472 not found: :8472"), "nor a failure that is no port in use");
	o.node_network = NODE_NETWORK_WIREGUARD;
	is_int(deploy_node_port(plan(&o)), 51820, "wireguard: 51820");
	ok(start_node_port_taken(plan(&o), "Bind for 0.0.0.0:51820 failed: port is already allocated"), "wireguard's port");
	ok(!start_node_port_taken(plan(&o), "Bind for 0.0.0.0:8472 failed: port is already allocated"), "not vxlan's");
	o.bind = "::";
	o.tls_san[0] = "2001:db8::1";
	is_int(deploy_node_port(plan(&o)), 51821, "wireguard over IPv6: 51821");
	o.tls_san[0] = "10.0.0.5";
	is_int(deploy_node_port(plan(&o)), 51820, "an IPv6 bind advertising an IPv4 address: flannel's IPv4 port");
	o.n_tls_san = 0;
	is_int(deploy_node_port(plan(&o)), 0, "nothing to advertise: no port");
	ok(!start_node_port_taken(plan(&o), "Bind for [::]:51821 failed: port is already allocated"), "so never taken");
}

/* The server's argv with each node network, advertising and not. */
static void test_node_network_argv(void)
{
	static const char *const want[] = {
		"run", "--detach",
		"--name=openshell-cluster-wg",
		"--hostname=openshell-wg",
		"--label=org.openshell.managed-by=openshell",
		"--label=org.openshell.gateway=wg",
		"--label=org.openshell.gpu=false",
		"--privileged", "--cgroupns=private", "--restart=unless-stopped",
		"--label=org.openshell.api-host=2001:db8::1",
		"--label=org.openshell.node-network=wireguard",
		"--network=openshell-cluster-wg",
		"--mount=type=volume,src=openshell-cluster-wg,dst=/var/lib/rancher/k3s,volume-label=org.openshell.managed-by=openshell,volume-label=org.openshell.gateway=wg",
		"--publish=[::]:7443:6443",
		"--publish=[::]:51821:51821/udp",
		"img:1",
		"server", "--disable=traefik", "--tls-san=127.0.0.1", "--tls-san=localhost", "--tls-san=2001:db8::1",
		"--flannel-backend=wireguard-native",
		"--advertise-address=2001:db8::1", "--advertise-port=7443",
		"--node-external-ip=2001:db8::1", "--flannel-external-ip",
		NULL,
	};
	struct gateway_request o;
	struct strv sv;

	gateway_request_init(&o);
	o.name = "wg";
	o.image = "img:1";
	o.port = 7443;
	o.bind = "::";
	o.tls_san[o.n_tls_san++] = "2001:db8::1";
	o.node_network = NODE_NETWORK_WIREGUARD;
	build(plan(&o), &sv);
	argv_is(&sv, want, "wireguard on an IPv6 wildcard, advertising its first --tls-san: 51821/udp, the backend, the external IP");
	strv_free(&sv);

	/* An explicit --advertise-address: flannel's port on the bind, as the API's. */
	o.node_network = NODE_NETWORK_VXLAN;
	o.bind = "192.0.2.10";
	o.n_tls_san = 0;
	o.advertise = "198.51.100.7";
	build(plan(&o), &sv);
	ok(argv_has(&sv, "--publish=192.0.2.10:7443:6443") && argv_has(&sv, "--publish=192.0.2.10:8472:8472/udp") &&
	   argv_has(&sv, "--node-external-ip=198.51.100.7") && argv_count_prefix(&sv, "--flannel-backend") == 0,
	   "vxlan with --advertise-address: 8472/udp on the bind, the advertised address as the external IP");
	strv_free(&sv);

	/* Loopback: no other host, nothing published for them; the backend stays. */
	o.advertise = NULL;
	o.bind = "127.0.0.1";
	o.node_network = NODE_NETWORK_WIREGUARD;
	build(plan(&o), &sv);
	ok(argv_count_prefix(&sv, "--publish=") == 1 && argv_has(&sv, "--flannel-backend=wireguard-native") &&
	   !argv_has(&sv, "--flannel-external-ip") && argv_count_prefix(&sv, "--node-external-ip") == 0,
	   "wireguard on loopback: the backend, no flannel port, no external IP");
	strv_free(&sv);
}

/* A kept gateway keeps its node network: its label says which. */
static void test_node_network_adopt(void)
{
	struct gateway_request o;
	struct deploy_plan *pl;
	struct gw_container c = { .exists = 1 };
	os_error err = { 0 };

	gateway_request_init(&o);
	pl = plan(&o);
	ok(deploy_adopt_node_network(pl, &c, &err) == 0 && pl->node_network == NODE_NETWORK_VXLAN,
	   "a gateway made before the label is vxlan, k3s's default");
	c.node_network = "wireguard";
	pl = plan(&o);
	ok(deploy_adopt_node_network(pl, &c, &err) == 0 && pl->node_network == NODE_NETWORK_WIREGUARD &&
	   o.node_network == NODE_NETWORK_UNSET,
	   "without --node-network, a resume takes the gateway's (in the plan; the request stands)");
	o.node_network = NODE_NETWORK_WIREGUARD;
	ok(deploy_adopt_node_network(plan(&o), &c, &err) == 0, "the same one asked for is no conflict");
	o.node_network = NODE_NETWORK_VXLAN;
	ok(deploy_adopt_node_network(plan(&o), &c, &err) < 0 && err.code == OS_EXIT_CONFLICT &&
	   strstr(err.msg, "gateway 'openshell' exists with --node-network wireguard but --node-network vxlan was asked for; rerun with --recreate"),
	   "another one is refused, naming both and --recreate");
	os_error_clear(&err);
	c.node_network = NULL;
	o.node_network = NODE_NETWORK_WIREGUARD;
	ok(deploy_adopt_node_network(plan(&o), &c, &err) < 0 && strstr(err.msg, "--node-network vxlan but --node-network wireguard"),
	   "wireguard for a gateway made before the label is refused too");
	os_error_clear(&err);
}

/* The address the server advertises to its agents: what they dial. */
static void test_advertise(void)
{
	static const struct {
		const char *bind, *san, *advertise, *want;
	} cases[] = {
		{ "127.0.0.1", NULL, NULL, NULL },             /* loopback: no agent reaches it */
		{ "0.0.0.0", NULL, NULL, NULL },               /* reached through loopback */
		{ "0.0.0.0", "10.1.2.3", NULL, "10.1.2.3" },   /* the kubeconfig's server */
		{ "0.0.0.0", "gw.example.test", NULL, NULL },  /* k3s takes an address only */
		{ "192.0.2.10", NULL, NULL, "192.0.2.10" },
		{ "0.0.0.0", "gw.example.test", "192.0.2.7", "192.0.2.7" },
		{ "::", "2001:db8::1", NULL, "2001:db8::1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gateway_request o;
		struct strv argv = { 0 };
		os_error err = { 0 };
		char *got, *s;

		gateway_request_init(&o);
		o.bind = cases[i].bind;
		o.port = 35000;
		if (cases[i].san)
			o.tls_san[o.n_tls_san++] = cases[i].san;
		o.advertise = cases[i].advertise;
		ok(gateway_request_check(&o, &err) == 0, "advertise case %zu is valid", i);
		got = deploy_advertise_address(plan(&o));
		ok(strcmp(got ? got : "(none)", cases[i].want ? cases[i].want : "(none)") == 0,
		   "advertise case %zu: %s (got %s)", i, cases[i].want ? cases[i].want : "none", got ? got : "none");
		deploy_run_argv(plan(&o), &argv);
		s = command_string(strv_argv(&argv));
		if (got) {
			char *want = xasprintf(" --advertise-address=%s --advertise-port=35000 --node-external-ip=%s --flannel-external-ip",
					       got, got);
			ok(strstr(s, want) != NULL,
			   "advertise case %zu: k3s is told the address, the published port, and flannel the address", i);
			free(want);
		} else {
			ok(strstr(s, "--advertise") == NULL && strstr(s, "--node-external-ip") == NULL &&
			   strstr(s, "--flannel-external-ip") == NULL && strstr(s, "/udp") == NULL,
			   "advertise case %zu: k3s picks its own, and flannel's port stays unpublished", i);
		}
		free(s);
		free(got);
		strv_free(&argv);
	}
	/* A reused gateway keeps the host it was made with, whatever its bind. */
	{
		struct gateway_request o;
		struct deploy_plan *pl;
		char *a;

		gateway_request_init(&o);
		o.bind = "0.0.0.0";
		pl = plan(&o);
		pl->api_host = "10.1.2.3";
		a = deploy_api_address(pl);
		is_str(a, "10.1.2.3:6443", "a resumed wildcard gateway is reached where it was made to be");
		free(a);
		a = deploy_advertise_address(pl);
		is_str(a, "10.1.2.3", "and advertises it");
		free(a);
	}
	static const char *const bad[] = { "127.0.0.1", "::1", "0.0.0.0", "::", "gw.example.test", "10.1.2", NULL };
	for (size_t i = 0; bad[i]; i++) {
		struct gateway_request o;
		os_error err = { 0 };

		gateway_request_init(&o);
		o.advertise = bad[i];
		ok(gateway_request_check(&o, &err) == -1, "--advertise-address %s is refused", bad[i]);
		ok(err.msg && strstr(err.msg, "invalid --advertise-address") && err.code == OS_EXIT_USAGE,
		   "with a usage error naming the option");
		os_error_clear(&err);
	}
}

/* ---- deploy_plan_describe --------------------------------------------- */

static void test_plan_describe(void)
{
	struct gateway_request o;
	struct deploy_plan *pl;
	os_error err = { 0 };
	char *s;

	unsetenv("OPENSHELL_CLUSTER_IMAGE");
	gateway_request_init(&o);
	o.image = "img:1";
	s = deploy_plan_describe(plan(&o));
	is_str(s, "image img:1, API on 127.0.0.1:6443 reached at 127.0.0.1:6443, node network vxlan, no GPUs",
	       "a plan without GPUs in one line");
	free(s);
	o.gpu = 1;
	gpus_parse("0,2", &o.gpus, &err);
	pl = plan(&o);
	pl->cdi = 1;
	pl->mig = MIG_SINGLE;
	strv_push(&pl->gpu_uuids, "GPU-a");
	strv_push(&pl->gpu_uuids, "GPU-c");
	strv_push(&pl->gpu_caps, "156");
	s = deploy_plan_describe(pl);
	is_str(s, "image img:1, API on 127.0.0.1:6443 reached at 127.0.0.1:6443, node network vxlan, GPUs 0,2 by CDI "
		  "devices, allocated by device-plugin, MIG strategy single, kept GPU-a,GPU-c, MIG capabilities 156",
	       "with GPUs: the selection as asked, the mode, allocation, strategy, UUIDs and capabilities as decided");
	free(s);
	deploy_plan_free(pl);
	gpus_free(&o.gpus);
	o.gpu = 0;
	o.bind = "0.0.0.0";
	o.port = 7443;
	o.tls_san[o.n_tls_san++] = "10.1.2.3";
	o.node_network = NODE_NETWORK_WIREGUARD;
	pl = plan(&o);
	pl->port = 7444;   /* a kept gateway's, or the next free one */
	s = deploy_plan_describe(pl);
	is_str(s, "image img:1, API on 0.0.0.0:7444 reached at 10.1.2.3:7444, node network wireguard, advertised at "
		  "10.1.2.3, no GPUs",
	       "the plan's port, not the request's; the address clients and agents reach");
	free(s);
	o.bind = "::1";
	o.n_tls_san = 0;
	s = deploy_plan_describe(plan(&o));
	is_str(s, "image img:1, API on [::1]:7443 reached at [::1]:7443, node network wireguard, no GPUs",
	       "an IPv6 address in brackets, as the argv publishes it");
	free(s);
	os_error_clear(&err);
}

int main(void)
{
	test_port_taken();
	test_node_port_taken();
	test_node_network_argv();
	test_node_network_adopt();
	test_argv_default();
	test_argv_gpu();
	test_argv_dra();
	test_allocation_check();
	test_argv_matrix();
	test_opts_init();
	test_opts_check();
	test_printable();
	test_image_default();
	test_api_address();
	test_tls_sans();
	test_advertise();
	test_loopback();
	test_parse();
	test_plan_describe();
	return tap_done();
}
