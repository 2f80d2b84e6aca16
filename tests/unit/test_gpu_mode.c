/* test_gpu_mode.c - CDI or the legacy hook, and MIG: parsing, the daemon's answer, the request. */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "docker/container.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/start_gpus.h"
#include "gateway/gpu/gpu_errors.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/gpu/wsl2.h"
#include "tap.h"

/* docker info of Docker 28.2 with the NVIDIA spec of a 2-GPU host. */
static const char *const info_cdi =
	"{\"ServerVersion\":\"28.2.2\",\"Runtimes\":{\"runc\":{\"path\":\"runc\"}},"
	"\"CDISpecDirs\":[\"/etc/cdi\",\"/var/run/cdi\"],"
	"\"DiscoveredDevices\":[{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=0\"},"
	"{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=GPU-3f2a\"},{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=1\"},"
	"{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=all\"},{\"Source\":\"cdi\",\"ID\":\"vendor.example/fpga=0\"}]}";
/* Docker 20.10 with the toolkit's runtime: no CDI. */
static const char *const info_legacy = "{\"ServerVersion\":\"20.10.24\",\"Runtimes\":{\"nvidia\":{\"path\":\"nvidia-container-runtime\"},\"runc\":{}}}";

static void test_parse(void)
{
	enum gpu_mode m;
	enum mig_strategy s;
	os_error err = { 0 };

	ok(gpu_mode_parse("cdi", &m, &err) == 0 && m == GPU_MODE_CDI, "cdi parses");
	ok(gpu_mode_parse("legacy", &m, &err) == 0 && m == GPU_MODE_LEGACY, "legacy parses");
	ok(gpu_mode_parse("auto", &m, &err) == 0 && m == GPU_MODE_AUTO, "auto parses");
	ok(gpu_mode_parse("CDI", &m, &err) < 0 && err.code == OS_EXIT_USAGE && strstr(err.msg, "give auto, cdi or legacy"),
	   "CDI (case) is a usage error naming the forms: %s", err.msg);
	os_error_clear(&err);
	ok(mig_strategy_parse("mixed", &s, &err) == 0 && s == MIG_MIXED, "mixed parses");
	ok(mig_strategy_parse("none", &s, &err) == 0 && s == MIG_NONE, "none parses");
	ok(mig_strategy_parse("both", &s, &err) < 0 && err.code == OS_EXIT_USAGE && strstr(err.msg, "give none, single or mixed"),
	   "an unknown strategy is a usage error: %s", err.msg);
	os_error_clear(&err);
	{
		struct sharing mps = { .replicas = 2, .mps = 1 }, ts = { .replicas = 2 }, none = { .replicas = 1 };
		ok(mps_with_mixed(&mps, MIG_MIXED) && !mps_with_mixed(&ts, MIG_MIXED) && !mps_with_mixed(&mps, MIG_SINGLE) &&
			   !mps_with_mixed(&none, MIG_MIXED) && !mps_with_mixed(&mps, MIG_NONE),
		   "MPS with the mixed strategy, and nothing else, is the plugin's refused pair");
	}
}

static void test_daemon(void)
{
	struct daemon_gpus d;
	enum gpu_mode used;
	os_error err = { 0 };

	ok(daemon_gpus_parse(info_cdi, strlen(info_cdi), &d, &err) == 0, "Docker 28's info parses");
	is_int((int)d.cdi.n, 4, "four NVIDIA CDI devices (the FPGA is another kind)");
	is_int(d.nvidia_runtime, 0, "no nvidia runtime");
	is_int(d.gpus_by_cdi, 0, "Docker 28.2 sends --gpus to the hook");
	ok(gpu_mode_resolve(GPU_MODE_AUTO, &d, &used, &err) == 0 && used == GPU_MODE_CDI, "auto is cdi there");
	ok(gpu_mode_resolve(GPU_MODE_LEGACY, &d, &used, &err) == 0 && used == GPU_MODE_LEGACY, "legacy stays legacy");
	d.wsl2 = WSL2_ENGINE;
	ok(gpu_mode_resolve(GPU_MODE_AUTO, &d, &used, &err) == 0 && used == GPU_MODE_LEGACY,
	   "on WSL2 auto is legacy though CDI devices are listed (the spec lacks libdxcore.so)");
	daemon_gpus_free(&d);

	{
		/* Docker 29.2 sends --gpus through CDI first; not without a spec's devices. */
		static const char *const v29 = "{\"ServerVersion\":\"29.2.0\",\"DiscoveredDevices\":"
					      "[{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=0\"}]}";
		static const char *const v29_1 = "{\"ServerVersion\":\"29.1.5\",\"DiscoveredDevices\":"
						"[{\"Source\":\"cdi\",\"ID\":\"nvidia.com/gpu=0\"}]}";
		static const char *const v30_none = "{\"ServerVersion\":\"30.0.1\"}";
		struct daemon_gpus e;
		daemon_gpus_parse(v29, strlen(v29), &e, &err);
		is_int(e.gpus_by_cdi, 1, "29.2.0 with the NVIDIA spec: --gpus through CDI");
		daemon_gpus_free(&e);
		daemon_gpus_parse(v29_1, strlen(v29_1), &e, &err);
		is_int(e.gpus_by_cdi, 0, "29.1.5: not yet");
		daemon_gpus_free(&e);
		daemon_gpus_parse(v30_none, strlen(v30_none), &e, &err);
		is_int(e.gpus_by_cdi, 0, "30.0 without a spec's devices: the hook");
		daemon_gpus_free(&e);
	}
	ok(daemon_gpus_parse(info_legacy, strlen(info_legacy), &d, &err) == 0, "Docker 20.10's info parses");
	ok(d.cdi.n == 0 && d.nvidia_runtime, "no CDI device, the nvidia runtime");
	ok(gpu_mode_resolve(GPU_MODE_AUTO, &d, &used, &err) == 0 && used == GPU_MODE_LEGACY, "auto is legacy there");
	ok(gpu_mode_resolve(GPU_MODE_CDI, &d, &used, &err) < 0 && err.code == OS_EXIT_NOGPU &&
		   strstr(err.msg, "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml") && strstr(err.msg, "--gpu-mode legacy"),
	   "cdi there is refused with the fix: %s", err.msg);
	os_error_clear(&err);
	daemon_gpus_free(&d);
	ok(daemon_gpus_parse("{", 1, &d, &err) < 0 && err.msg, "unreadable info is an error");
	os_error_clear(&err);
}

/* The CDI names of --gpus TEXT, into NAMES. */
static void cdi_names(const char *text, struct strv *names)
{
	struct gpus g;
	os_error err = { 0 };

	gpus_parse(text, &g, &err);
	gpu_mode_cdi_devices(&g, names);
	gpus_free(&g);
	os_error_clear(&err);
}

static void devices_are(const char *sel, const char *want)
{
	struct strv names = { 0 };
	char *got;

	cdi_names(sel, &names);
	got = strv_join(&names, " ");
	ok(strcmp(got, want) == 0, "--gpus %s is CDI's %s (%s)", sel, want, got);
	free(got);
	strv_free(&names);
}

static void test_devices(void)
{
	struct daemon_gpus d;
	struct strv names = { 0 };
	os_error err = { 0 };

	devices_are("all", "nvidia.com/gpu=all");
	devices_are("2", "nvidia.com/gpu=0 nvidia.com/gpu=1");
	devices_are("device=1", "nvidia.com/gpu=1");
	devices_are("0,GPU-3f2a", "nvidia.com/gpu=0 nvidia.com/gpu=GPU-3f2a");

	daemon_gpus_parse(info_cdi, strlen(info_cdi), &d, &err);
	cdi_names("0,GPU-3f2a", &names);
	is_int(gpu_mode_cdi_check(&names, &d, &err), 0, "names the spec has pass");
	strv_free(&names);
	cdi_names("3", &names);
	ok(gpu_mode_cdi_check(&names, &d, &err) < 0 && strstr(err.msg, "has no device nvidia.com/gpu=2") &&
		   strstr(err.msg, "it lists nvidia.com/gpu=0, GPU-3f2a, 1, all"),
	   "a name it lacks is refused, with what it lists: %s", err.msg);
	os_error_clear(&err);
	strv_free(&names);
	daemon_gpus_free(&d);
}

/* --gpus TEXT against the daemon's CDI device NAMES (short, comma-separated):
 * "" passes, else the error's start. */
static void cdi_judges(const char *names, const char *text, const char *want)
{
	struct gpus g;
	struct daemon_gpus d = { 0 };
	os_error err = { 0 };
	char *copy = xstrdup(names), *save = NULL;
	int rc;

	for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
		strv_pushf(&d.cdi, "nvidia.com/gpu=%s", n);
	gpus_parse(text, &g, &err);
	rc = gpu_mode_check_cdi_gpus(&g, &d, &err);
	if (!*want)
		ok(rc == 0, "--gpus %s against CDI devices %s: not judged a lack (%s)", text, names, err.msg ? err.msg : "");
	else
		ok(rc < 0 && err.code == OS_EXIT_FAILURE && strncmp(err.msg, want, strlen(want)) == 0,
		   "--gpus %s against CDI devices %s: %s (%s)", text, names, want, err.msg ? err.msg : "passes");
	free(copy);
	daemon_gpus_free(&d);
	gpus_free(&g);
	os_error_clear(&err);
}

/* What the daemon's names say of the host's GPUs, before any container. */
static void test_cdi_gpus(void)
{
	/* nvidia-ctk's names by index and by UUID, and a MIG device's. */
	const char *both = "0,GPU-aaaa,1,GPU-bbbb,0:0,MIG-cccc,all";
	cdi_judges(both, "2", "");
	cdi_judges(both, "3",
		   "--gpus 3: more GPUs than the host has; the Docker host has 2 GPUs, by the Docker daemon's CDI devices "
		   "(nvidia.com/gpu=0, GPU-aaaa, 1, GPU-bbbb, 0:0, MIG-cccc, all)");
	cdi_judges(both, "device=5", "--gpus device=5: the host has no GPU 5; the Docker host has 2 GPUs");
	cdi_judges(both, "1,GPU-dddd", "--gpus 1,GPU-dddd: the host has no GPU GPU-dddd");
	cdi_judges(both, "GPU-bbbb,0,MIG-cccc", "");
	/* Names by index alone judge no UUID; by UUID alone they count the GPUs. */
	cdi_judges("0,1,all", "GPU-dddd", "");
	cdi_judges("0,1,all", "0,2", "--gpus 0,2: the host has no GPU 2; the Docker host has 2 GPUs");
	cdi_judges("GPU-aaaa,GPU-bbbb,all", "device=1", "");
	cdi_judges("GPU-aaaa,GPU-bbbb,all", "3", "--gpus 3: more GPUs than the host has; the Docker host has 2 GPUs");
	cdi_judges("GPU-aaaa,GPU-bbbb,all", "GPU-dddd", "--gpus GPU-dddd: the host has no GPU GPU-dddd");
	/* A spec that lacks an index its UUIDs count: the spec's lack, not the host's. */
	cdi_judges("0,GPU-aaaa,GPU-bbbb,all", "device=1", "");
	cdi_judges("all", "5", "");
}

static void explains(const char *text, const char *want)
{
	os_error err = { 0 };

	ok(gpu_errors_explain(text, 0, &err) == 1 && err.code == OS_EXIT_NOGPU && strstr(err.msg, want),
	   "'%.50s…' is answered with '%s': %s", text, want, err.msg ? err.msg : "(nothing)");
	os_error_clear(&err);
}

static void test_explain(void)
{
	os_error err = { 0 };

	explains("docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=all\n",
		 "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml");
	explains("docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=all\n",
		 "nvidia-cdi-refresh.service");
	explains("docker: Error response from daemon: could not select device driver \"cdi\" with capabilities: [].",
		 "\"features\": {\"cdi\": true}");
	explains("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error mounting \"/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05\" to rootfs at \"/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05\": mount …: no such file or directory: unknown.",
		 "older than the driver");
	is_int(gpu_errors_explain("docker: Error response from daemon: could not select device driver \"nvidia\" with capabilities: [[gpu]].", 0, &err), 0,
	       "the legacy driver's failure is not CDI's");
	is_int(gpu_errors_explain("error mounting \"/data\" to rootfs: no such file or directory", 0, &err), 0,
	       "a mount error of no driver file is not CDI's");
	ok(err.msg == NULL, "and sets no error");
	ok(gpu_errors_explain("Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=0", 1, &err) &&
		   strstr(err.msg, "or rebuild the gateway with --recreate --gpu-mode legacy") && !strstr(err.msg, "or use --gpu-mode"),
	   "a kept gateway is told to rebuild for the legacy path: %s", err.msg);
	os_error_clear(&err);
}

/* A container made with --device nvidia.com/gpu=0 --device nvidia.com/gpu=1
 * and the label for --gpus 2, as docker inspect shows it. */
static const char *const inspect_cdi =
	"[{\"Id\":\"abc\",\"State\":{\"Status\":\"running\",\"Running\":true},"
	"\"Args\":[\"server\",\"--advertise-address=10.0.0.5\",\"--advertise-port=6443\"],"
	"\"HostConfig\":{\"DeviceRequests\":[{\"Driver\":\"cdi\",\"Count\":0,"
	"\"DeviceIDs\":[\"nvidia.com/gpu=0\",\"nvidia.com/gpu=1\"],\"Capabilities\":null,\"Options\":null}]},"
	"\"Config\":{\"Image\":\"img\",\"Env\":[\"GPU_ENABLED=true\",\"OPENSHELL_GPU_MODE=cdi\",\"OPENSHELL_MIG_STRATEGY=mixed\"],"
	"\"Labels\":{\"org.openshell.gpus\":\"2\"}}}]";

static void test_container(void)
{
	struct gw_container c;
	struct gateway_request rq;
	struct deploy_plan o;
	os_error err = { 0 };

	ok(container_parse_inspect(inspect_cdi, strlen(inspect_cdi), &c, &err) == 0, "a CDI container parses");
	ok(c.gpu_request && c.gpu_cdi, "its request asks for GPUs, by CDI");
	is_str(c.gpu_devices, "0,1", "the devices, without the kind");
	is_str(c.gpu_request_desc, "driver=cdi devices=nvidia.com/gpu=0,1", "said as evidence");
	is_str(c.mig_strategy, "mixed", "the MIG strategy the entrypoint got");
	is_str(c.advertise, "10.0.0.5", "the address its k3s advertises, from its args");
	{
		struct gpus had;

		ok(gpus_of_container(&c, &had, &err) == 0 && had.kind == GPUS_COUNT && had.count == 2,
		   "the selection is the label's count, which the names cannot say");
		gpus_free(&had);
	}

	gateway_request_init(&rq);
	deploy_plan_init(&o, &rq);
	rq.name = "g";
	rq.gpu = 1;
	gpus_parse("2", &rq.gpus, &err);
	ok(start_gpus_adopt(&o, &c, &err) == 0, "--gpus 2 matches it");
	ok(start_gpus_adopt_mode(&o, &c, &err) == 0 && o.cdi && o.mig == MIG_MIXED, "auto adopts its CDI and its strategy");
	ok(rq.mig == MIG_UNSET && rq.gpu_mode == GPU_MODE_AUTO, "in the plan: the request stands as asked");
	rq.gpu_mode = GPU_MODE_LEGACY;
	ok(start_gpus_adopt_mode(&o, &c, &err) < 0 && err.code == OS_EXIT_CONFLICT && strstr(err.msg, "--gpu-mode cdi but --gpu-mode legacy"),
	   "--gpu-mode legacy conflicts: %s", err.msg);
	os_error_clear(&err);
	rq.gpu_mode = GPU_MODE_AUTO;
	rq.mig = MIG_SINGLE;
	ok(start_gpus_adopt_mode(&o, &c, &err) < 0 && err.code == OS_EXIT_CONFLICT && strstr(err.msg, "--mig-strategy mixed but --mig-strategy single"),
	   "another --mig-strategy conflicts: %s", err.msg);
	os_error_clear(&err);
	rq.mig = MIG_NONE;
	ok(start_gpus_adopt_mode(&o, &c, &err) < 0 && strstr(err.msg, "--mig-strategy mixed but --mig-strategy none"),
	   "an explicit none conflicts too: %s", err.msg);
	os_error_clear(&err);
	rq.mig = MIG_UNSET;
	rq.sharing = (struct sharing){ .replicas = 2, .mps = 1 };
	ok(start_gpus_adopt_mode(&o, &c, &err) < 0 && strstr(err.msg, "does not share MIG devices by MPS: use --gpu-sharing time-slicing:N, or rebuild it with --recreate"),
	   "MPS on a mixed gateway is refused: %s", err.msg);
	os_error_clear(&err);
	deploy_plan_free(&o);
	gateway_request_free(&rq);
	container_free(&c);
}

static void test_argv(void)
{
	struct gateway_request rq;
	struct deploy_plan o;
	struct strv argv = { 0 };
	char *all;

	gateway_request_init(&rq);
	deploy_plan_init(&o, &rq);
	rq.name = "g";
	rq.gpu = 1;
	gpus_parse("0,2", &rq.gpus, &(os_error){ 0 });
	o.cdi = 1;
	o.mig = MIG_SINGLE;
	o.image = "img";
	deploy_run_argv(&o, &argv);
	all = strv_join(&argv, " ");
	ok(strstr(all, " --device=nvidia.com/gpu=0 --device=nvidia.com/gpu=2 ") != NULL, "CDI names for --gpus 0,2: %s", all);
	ok(!strstr(all, "--gpus="), "and no --gpus: Docker would apply both");
	ok(strstr(all, " --label=org.openshell.gpus=0,2 ") != NULL, "the selection as a label");
	ok(strstr(all, " --env=OPENSHELL_GPU_MODE=cdi ") && strstr(all, " --env=OPENSHELL_MIG_STRATEGY=single "),
	   "the entrypoint is told the mode and the strategy");
	free(all);
	strv_free(&argv);
	o.cdi = 0;
	o.mig = MIG_NONE;
	deploy_run_argv(&o, &argv);
	all = strv_join(&argv, " ");
	ok(strstr(all, " --gpus=") && !strstr(all, "--device=") && !strstr(all, "OPENSHELL_GPU_MODE") && !strstr(all, "OPENSHELL_MIG") &&
		   !strstr(all, LABEL_GPUS) && !strstr(all, "OPENSHELL_GPU_UUIDS"),
	   "legacy: --gpus, and the entrypoint's defaults");
	free(all);
	strv_free(&argv);
	strv_push(&o.gpu_uuids, "GPU-aaaa");
	strv_push(&o.gpu_uuids, "GPU-cccc");
	deploy_run_argv(&o, &argv);
	all = strv_join(&argv, " ");
	ok(strstr(all, " --env=OPENSHELL_GPU_UUIDS=GPU-aaaa,GPU-cccc ") != NULL && !strstr(all, "OPENSHELL_GPU_CAPS"),
	   "the selection's UUIDs go to the entrypoint, which hides the other GPUs: %s", all);
	free(all);
	strv_free(&argv);
	strv_push(&o.gpu_caps, "156");
	strv_push(&o.gpu_caps, "157");
	deploy_run_argv(&o, &argv);
	all = strv_join(&argv, " ");
	ok(strstr(all, " --env=OPENSHELL_GPU_CAPS=156,157 ") != NULL,
	   "with CDI, the MIG capabilities a container given the selection got go too: %s", all);
	free(all);
	strv_free(&argv);
	deploy_plan_free(&o);
	gateway_request_free(&rq);
}

static void test_mig_resources(void)
{
	const char *nodes = "{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"status\":{\"allocatable\":"
			    "{\"cpu\":\"2\",\"nvidia.com/gpu\":\"1\",\"nvidia.com/mig-3g.40gb\":\"1\",\"nvidia.com/mig-1g.10gb\":\"2\"}}},"
			    "{\"kind\":\"Node\",\"status\":{\"allocatable\":{\"nvidia.com/mig-1g.10gb\":\"3\"}}}]}";
	cJSON *j = cJSON_Parse(nodes);
	struct strv r = { 0 };
	char *got;

	is_int((int)mig_resources(j, &r), 6, "six MIG devices on the nodes");
	got = strv_join(&r, " ");
	is_str(got, "nvidia.com/mig-1g.10gb=5 nvidia.com/mig-3g.40gb=1", "summed by profile, sorted; nvidia.com/gpu is not one");
	free(got);
	is_int((int)mig_count(&r), 6, "and their total again from that");
	cJSON_Delete(j);
	j = mig_resources_json(&r);
	got = cJSON_PrintUnformatted(j);
	is_str(got, "{\"nvidia.com/mig-1g.10gb\":5,\"nvidia.com/mig-3g.40gb\":1}", "as --json gives them, numbers");
	free(got);
	strv_free(&r);
	cJSON_Delete(j);
	/* The capacity holds the sick ones too: the wait counts it, so that a
	 * MIG device marked unhealthy does not hold the start up. */
	j = cJSON_Parse("{\"kind\":\"Node\",\"status\":{\"capacity\":{\"nvidia.com/mig-1g.10gb\":\"2\","
			"\"nvidia.com/gpu\":\"1\"},\"allocatable\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}");
	is_int((int)mig_capacity(j), 2, "one Node: its capacity's MIG devices, healthy or not");
	is_int((int)mig_resources(j, NULL), 1, "and its allocatable ones");
	cJSON_Delete(j);
}

/* A WSL2 daemon by its docker info; what its one /dev/dxg cannot serve. */
static void test_wsl2(void)
{
	static const char engine[] = "{\"ServerVersion\":\"27.3.1\",\"KernelVersion\":\"5.15.153.1-microsoft-standard-WSL2\",\"OperatingSystem\":\"Ubuntu 24.04.1 LTS\"}";
	static const char desktop[] = "{\"ServerVersion\":\"28.1.1\",\"KernelVersion\":\"6.6.87.2-microsoft-standard-WSL2\",\"OperatingSystem\":\"Docker Desktop\"}";
	static const char linux_host[] = "{\"ServerVersion\":\"28.1.1\",\"KernelVersion\":\"6.1.0-27-amd64\",\"OperatingSystem\":\"Debian GNU/Linux 12 (bookworm)\"}";
	struct daemon_gpus d;
	struct gateway_request rq;
	struct deploy_plan o;
	os_error err = { 0 };

	daemon_gpus_parse(engine, strlen(engine), &d, &err);
	is_int(d.wsl2, WSL2_ENGINE, "a daemon on a WSL2 kernel is a WSL2 host");
	daemon_gpus_free(&d);
	daemon_gpus_parse(desktop, strlen(desktop), &d, &err);
	is_int(d.wsl2, WSL2_DOCKER_DESKTOP, "Docker Desktop's engine is one too, named as such");
	daemon_gpus_free(&d);
	daemon_gpus_parse(linux_host, strlen(linux_host), &d, &err);
	is_int(d.wsl2, WSL2_NO, "a Linux host's is not");
	daemon_gpus_free(&d);

	gateway_request_init(&rq);
	deploy_plan_init(&o, &rq);
	rq.name = "g";
	rq.gpu = 1;
	is_int(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err), 0, "all the GPUs can be served");
	sharing_parse("time-slicing:4", &rq.sharing, &err);
	is_int(start_gpus_wsl2(&o, &rq.sharing, NULL, WSL2_ENGINE, &err), 0, "and time-sliced");
	gpus_parse("2", &rq.gpus, &err);
	ok(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err) < 0 && err.code == OS_EXIT_FAILURE &&
	   strstr(err.msg, "--gpus 2 cannot be served on a WSL2 Docker host") && strstr(err.msg, "use --gpu"),
	   "a count is refused with the fix: %s", err.msg);
	os_error_clear(&err);
	gpus_free(&rq.gpus);
	gpus_parse("0,1", &rq.gpus, &err);
	ok(start_gpus_wsl2(&o, NULL, NULL, WSL2_DOCKER_DESKTOP, &err) < 0 && strstr(err.msg, "--gpus 0,1 cannot be served on Docker Desktop on WSL2"),
	   "a list too, on Docker Desktop: %s", err.msg);
	os_error_clear(&err);
	is_int(start_gpus_wsl2(&o, NULL, NULL, WSL2_NO, &err), 0, "a Linux host serves the list");
	gpus_free(&rq.gpus);
	gpus_parse("all", &rq.gpus, &err);
	o.mig = MIG_MIXED;
	ok(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err) < 0 && strstr(err.msg, "--mig-strategy mixed cannot be served") &&
	   strstr(err.msg, "no MIG") && strstr(err.msg, "leave --mig-strategy out"), "MIG is refused: %s", err.msg);
	os_error_clear(&err);
	ok(start_gpus_wsl2(&o, NULL, "lab", WSL2_ENGINE, &err) < 0 &&
	   strstr(err.msg, "gateway 'lab' has --mig-strategy mixed, which a WSL2 Docker host cannot serve (WSL2 has no MIG") &&
	   strstr(err.msg, "add a Linux host as its node") && !strstr(err.msg, "leave --mig-strategy out"),
	   "a node joining a MIG gateway is told the gateway's strategy, which it cannot leave out: %s", err.msg);
	os_error_clear(&err);
	o.mig = MIG_NONE;
	sharing_parse("mps:2", &rq.sharing, &err);
	ok(start_gpus_wsl2(&o, &rq.sharing, NULL, WSL2_ENGINE, &err) < 0 && strstr(err.msg, "--gpu-sharing mps cannot be served") &&
	   strstr(err.msg, "time-slicing"), "MPS is refused with the alternative: %s", err.msg);
	os_error_clear(&err);
	ok(start_gpus_wsl2(&o, &rq.sharing, "lab", WSL2_ENGINE, &err) < 0 &&
	   strstr(err.msg, "gateway 'lab' shares its GPUs with MPS, which a WSL2 Docker host cannot serve"),
	   "a node joining a gateway that shares with MPS is refused: %s", err.msg);
	os_error_clear(&err);
	is_int(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err), 0, "no sharing asked: nothing to refuse");
	o.allocation = GPU_ALLOCATION_DRA;
	ok(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err) < 0 &&
	   strstr(err.msg, "--gpu-allocation dra cannot be served on a WSL2 Docker host") &&
	   strstr(err.msg, "leave --gpu-allocation out"), "DRA is refused, with what serves WSL2: %s", err.msg);
	os_error_clear(&err);
	ok(start_gpus_wsl2(&o, NULL, "lab", WSL2_ENGINE, &err) < 0 &&
	   strstr(err.msg, "gateway 'lab' allocates its GPUs by DRA (--gpu-allocation dra), which a WSL2 Docker host cannot serve") &&
	   strstr(err.msg, "add a Linux host as its node"),
	   "a node joining a DRA gateway is refused: %s", err.msg);
	os_error_clear(&err);
	is_int(start_gpus_wsl2(&o, NULL, NULL, WSL2_NO, &err), 0, "a Linux host serves DRA");
	o.allocation = GPU_ALLOCATION_DEVICE_PLUGIN;
	rq.gpu_mode = GPU_MODE_CDI;
	ok(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err) < 0 &&
	   strstr(err.msg, "--gpu-mode cdi cannot be served on a WSL2 Docker host") && strstr(err.msg, "libdxcore.so") &&
	   strstr(err.msg, "leave --gpu-mode out"), "CDI is refused, with why and what works: %s", err.msg);
	os_error_clear(&err);
	rq.gpu_mode = GPU_MODE_LEGACY;
	is_int(start_gpus_wsl2(&o, NULL, NULL, WSL2_ENGINE, &err), 0, "legacy is what works there");
	{
		struct daemon_gpus wd = { .wsl2 = WSL2_ENGINE, .gpus_by_cdi = 1 };
		os_error_set(&err, OS_EXIT_FAILURE, "cannot list the Docker host's GPUs (nvidia-smi -L in a container of i): Failed to initialize NVML: N/A");
		os_error_set_detail(&err, "Failed to initialize NVML: N/A\nmore\n");
		wsl2_explain_probe(&wd, &err);
		ok(err.code == OS_EXIT_NOGPU && strstr(err.msg, "gives --gpus through the NVIDIA CDI spec") &&
		   strstr(err.msg, "libdxcore.so") && strstr(err.msg, "remove /etc/cdi/nvidia.yaml"),
		   "Docker 29.2 on WSL2, NVML failing: the spec's cause and fix: %s", err.msg);
		ok(err.detail && strcmp(err.detail, "Failed to initialize NVML: N/A\nmore\n") == 0, "the probe's output is kept");
		wd.gpus_by_cdi = 0;
		os_error_set(&err, OS_EXIT_FAILURE, "cannot list the Docker host's GPUs: Failed to initialize NVML: N/A");
		wsl2_explain_probe(&wd, &err);
		ok(err.code == OS_EXIT_FAILURE && !strstr(err.msg, "CDI"), "--gpus through the hook: the error stands");
		wd.gpus_by_cdi = 1;
		os_error_set(&err, OS_EXIT_FAILURE, "cannot list the Docker host's GPUs: exit 9");
		wsl2_explain_probe(&wd, &err);
		ok(err.code == OS_EXIT_FAILURE && !strstr(err.msg, "CDI"), "another failure: the error stands");
		os_error_clear(&err);
	}
	rq.gpu = 0;
	is_int(start_gpus_wsl2(&o, &rq.sharing, NULL, WSL2_ENGINE, &err), 0, "a gateway without GPUs asks nothing of it");
	deploy_plan_free(&o);
	gateway_request_free(&rq);
}

int main(void)
{
	xalloc_init();
	test_parse();
	test_daemon();
	test_devices();
	test_cdi_gpus();
	test_explain();
	test_container();
	test_argv();
	test_mig_resources();
	test_wsl2();
	return tap_done();
}
