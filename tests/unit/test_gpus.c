/* test_gpus.c - GPU selections: parsing, Docker's request, the host's GPUs. */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/container.h"
#include "gateway/gpu/gpus.h"
#include "tap.h"

static void parses(const char *text, const char *want_string, const char *want_request)
{
	struct gpus g;
	os_error err = { 0 };
	char *s = NULL, *r = NULL;

	int rc = gpus_parse(text, &g, &err);

	ok(rc == 0, "'%s' parses%s%s", text, err.msg ? ": " : "", err.msg ? err.msg : "");
	os_error_clear(&err);
	if (rc < 0)
		return;
	s = gpus_string(&g);
	ok(strcmp(s, want_string) == 0, "'%s' reads back as '%s' (%s)", text, want_string, s);
	r = gpus_docker_request(&g);
	ok(strcmp(r, want_request) == 0, "'%s' asks Docker for %s (%s)", text, want_request, r);
	free(s);
	free(r);
	gpus_free(&g);
}

static void refused(const char *text, const char *why)
{
	struct gpus g;
	os_error err = { 0 };

	ok(gpus_parse(text, &g, &err) == -1, "'%s' is refused", text);
	is_int(err.code, OS_EXIT_USAGE, "as a usage error");
	ok(err.msg && strstr(err.msg, why) && strstr(err.msg, "give all, a count"), "naming why and the forms: %s",
	   err.msg);
	os_error_clear(&err);
}

static const char smi[] =
	"GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaa0000-0000-0000-0000-000000000000)\n"
	"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbbb0000-0000-0000-0000-000000000000)\n"
	"  MIG 1g.10gb Device 0: (UUID: MIG-cccc)\n"
	"GPU 2: NVIDIA A100-SXM4-40GB (UUID: GPU-cccc0000-0000-0000-0000-000000000000)\n";

static void resolves(const char *text, const char *want)
{
	struct gpus g;
	struct host_gpus h;
	struct strv u = { 0 };
	os_error err = { 0 };
	char *got = xstrdup("");

	host_gpus_parse(smi, &h);
	gpus_parse(text, &g, &err);
	if (gpus_resolve(&g, &h, &u, &err) < 0) {
		free(got);
		got = xasprintf("error: %s", err.msg);
	}
	for (size_t i = 0; i < u.n; i++) {
		char *next = xasprintf("%s%s%c", got, i ? "," : "", u.v[i][4]);
		free(got);
		got = next;
	}
	ok(strncmp(got, want, strlen(want)) == 0, "--gpus %s on the host is %s (%s)", text, want, got);
	free(got);
	strv_free(&u);
	gpus_free(&g);
	host_gpus_free(&h);
	os_error_clear(&err);
}

/* A container's request (and label) read as one selection. */
static void of_container(long long count, const char *devices, const char *label, int cdi, const char *want,
			 const char *what)
{
	struct gw_container c = { .gpu_request = 1, .gpu_count = count, .gpu_devices = (char *)devices,
				  .gpus_label = (char *)label, .gpu_cdi = cdi };
	struct gpus g;
	os_error err = { 0 };
	char *s = gpus_of_container(&c, &g, &err) == 0 ? gpus_string(&g) : xstrdup("error");

	ok(strcmp(s, want) == 0 &&
	   (strcmp(want, "error") != 0 || strstr(err.msg, cdi ? "its label " LABEL_GPUS : "its DeviceRequest")),
	   "%s (%s)", what, s);
	free(s);
	gpus_free(&g);
	os_error_clear(&err);
}

static void equal(const char *a, const char *b, int want)
{
	struct gpus ga, gb;
	os_error err = { 0 };

	gpus_parse(a, &ga, &err);
	gpus_parse(b, &gb, &err);
	ok(gpus_equal(&ga, &gb) == want, "--gpus %s and %s are %s", a, b, want ? "one selection" : "two");
	gpus_free(&ga);
	gpus_free(&gb);
	os_error_clear(&err);
}

/* The selection as --json gives it: one shape a kind, never a string. */
static void json_shape(const char *text, const char *want)
{
	struct gpus g;
	os_error err = { 0 };
	cJSON *j;
	char *s;

	gpus_parse(text, &g, &err);
	j = gpus_json(&g);
	s = cJSON_PrintUnformatted(j);
	ok(strcmp(s, want) == 0, "--gpus %s in JSON is %s (%s)", text, want, s);
	free(s);
	cJSON_Delete(j);
	gpus_free(&g);
}

static void words(const char *text, const char *want)
{
	struct gpus g;
	os_error err = { 0 };
	char *s;

	gpus_parse(text, &g, &err);
	s = gpus_words(&g);
	ok(strcmp(s, want) == 0, "--gpus %s in words is %s (%s)", text, want, s);
	free(s);
	gpus_free(&g);
	os_error_clear(&err);
}

/* A look in a container: its nvidia-smi saw GPU 2 (one MIG device on it),
 * and the driver lists three GPUs, printed out of their bus order. */
static const char *const looked_driver_head =
	"GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-cccc)\n"
	"  MIG 1g.5gb      Device  0: (UUID: MIG-cc01)\n"
	GPUS_QUERY_MARK "\n"
	"GPU-cccc, Enabled, 8.0\n"
	GPUS_ENV_MARK "\n"
	"2\n"
	GPU_DRIVER_MARK " ";
static const char *const looked_driver_tail =
	"\n0000:c1:00.0 model NVIDIA A100-SXM4-40GB\n"
	"0000:c1:00.0 uuid GPU-cccc\n"
	"0000:3b:00.0 model Tesla V100-SXM2-16GB\n"
	"0000:3b:00.0 uuid GPU-aaaa\n"
	"0000:5e:00.0 model NVIDIA A100-SXM4-40GB\n"
	"0000:5e:00.0 uuid GPU-bbbb\n"
	"0000:86:00.0 model GPU without a UUID line\n";

/* In a container whose driver part says VIEW, is the host known for
 * SELECTION, and as which GPUs ("a,b,c": their UUIDs' fifth letters)? */
static void driver_host(const char *view, const char *selection, const char *want)
{
	char *text = xasprintf("%s%s%s", looked_driver_head, view, looked_driver_tail), *got = xstrdup("");
	struct host_gpus mine, host;
	struct gpus g;
	os_error err = { 0 };

	host_gpus_parse(text, &mine);
	gpus_parse(selection, &g, &err);
	if (!gpus_host_of_driver(&mine, &g, &host)) {
		free(got);
		got = xstrdup("unknown");
	}
	for (int i = 0; i < host.n; i++) {
		char *next = xasprintf("%s%s%c", got, i ? "," : "", host.v[i].uuid[4]);
		free(got);
		got = next;
	}
	ok(strcmp(got, want) == 0, "driver view '%s', --gpus %s: the host's GPUs are %s (%s)", view, selection, want, got);
	host_gpus_free(&mine);
	host_gpus_free(&host);
	gpus_free(&g);
	os_error_clear(&err);
	free(got);
	free(text);
}

static void driver_list(void)
{
	char *text = xasprintf("%sown%s", looked_driver_head, looked_driver_tail);
	struct host_gpus mine, host;
	struct strv want = { 0 };
	struct gpus g;
	os_error err = { 0 };

	host_gpus_parse(text, &mine);
	is_int(mine.n, 1, "the container's own GPUs: nvidia-smi's, not the driver's list");
	ok(mine.injected == GPUS_INJECTED_HOOK && mine.v[0].compute_cap == 80, "its env and query parts still read");
	is_int(mine.driver.view, GPU_DRIVER_OWN, "the driver's list is its own");
	ok(mine.driver.uuids.n == 3, "three GPUs with a UUID; one without is left out (%zu)", mine.driver.uuids.n);
	ok(mine.driver.uuids.n == 3 && strcmp(mine.driver.uuids.v[0], "GPU-aaaa") == 0 &&
	   strcmp(mine.driver.uuids.v[2], "GPU-cccc") == 0 && strcmp(mine.driver.names.v[0], "Tesla V100-SXM2-16GB") == 0,
	   "in PCI bus order, NVML's, with their models");
	gpus_parse("MIG-cc01", &g, &err);
	ok(gpus_host_of_driver(&mine, &g, &host) == 1 && host.n == 3 && host.v[2].migs.n == 1 &&
	   strcmp(host.v[2].profiles.v[0], "1g.5gb") == 0 && host.v[2].compute_cap == 80 && host.v[0].migs.n == 0,
	   "a GPU the container sees keeps its MIG devices and facts");
	ok(gpus_resolve(&g, &host, &want, &err) == 0 && want.n == 1 && strcmp(want.v[0], "GPU-cccc") == 0,
	   "and its MIG device resolves to it");
	strv_free(&want);
	host_gpus_free(&host);
	gpus_free(&g);
	host_gpus_free(&mine);
	free(text);
	driver_host("own", "device=1", "a,b,c");
	driver_host("own", "1", "a,b,c");
	driver_host("toolkit", "all", "a,b,c");    /* the toolkit gave all: its list is the host's */
	driver_host("toolkit", "device=2", "unknown");
	driver_host("", "all", "unknown");         /* the mounts could not be read */
	driver_host("own", "MIG-bb01", "unknown"); /* a MIG device the container does not list */
	host_gpus_parse("GPU 0: Tesla V100 (UUID: GPU-aaaa)\n", &mine);
	is_int(mine.driver.view, GPU_DRIVER_UNREAD, "no driver part: unread");
	host_gpus_free(&mine);
	host_gpus_parse(GPU_DRIVER_MARK " own\n", &mine);
	gpus_parse("all", &g, &err);
	ok(mine.n == 0 && gpus_host_of_driver(&mine, &g, &host) == 1 && host.n == 0,
	   "a driver without GPUs: the host has none");
	gpus_free(&g);
	host_gpus_free(&host);
	host_gpus_free(&mine);
}

/* The driver's MIG capabilities, per GPU minor, and the nodes held. */
static void driver_caps(void)
{
	struct gpu_driver d;

	gpu_driver_parse(GPU_DRIVER_MARK " own\n0000:3b:00.0 uuid GPU-aaaa\n"
			 GPU_CAPS_MARK " 0 12 13 21 \n" GPU_CAPS_MARK " 1 30 31\n" GPU_CAPS_MARK " x 9\n"
			 GPU_NODES_MARK " nvidia0 nvidia-caps/nvidia-cap1 nvidia-caps/nvidia-cap13 nvidiactl nvidia-caps/nvidia-cap31 \n",
			 &d);
	ok(d.n_caps == 5 && d.caps[0].minor == 12 && d.caps[0].gpu == 0 && d.caps[4].minor == 31 && d.caps[4].gpu == 1,
	   "each GPU's MIG capabilities with its minor; a line without a GPU minor is left out (%zu)", d.n_caps);
	ok(d.n_caps == 5 && !d.caps[0].held && d.caps[1].held && !d.caps[2].held && !d.caps[3].held && d.caps[4].held,
	   "the nodes held: nvidia-cap13 and 31 (nvidia-cap1, mig/config, is no GPU's)");
	ok(d.gpu_nodes.n == 1 && strcmp(d.gpu_nodes.v[0], "0") == 0, "the GPU nodes held: /dev/nvidia0, not nvidiactl");
	ok(d.uuids.n == 1, "the GPU lines still read");
	gpu_driver_free(&d);
	gpu_driver_parse(GPU_DRIVER_MARK " own\n", &d);
	ok(d.n_caps == 0 && d.gpu_nodes.n == 0, "an old look without those parts: none");
	gpu_driver_free(&d);
}

/* A look ahead of another output (GPUS_LOOK_BEFORE): its status line
 * ends it, and what follows is the other's. */
static void look_before(void)
{
	struct host_gpus h;
	os_error err = { 0 };
	const char *rest = NULL;

	ok(container_gpus_read("ctr", "GPU 0: Tesla V100 (UUID: GPU-aaaa)\n" GPU_DRIVER_MARK " own\n"
				      "0000:18:00.0 uuid GPU-aaaa\n" GPUS_STATUS_MARK " 0\n[plugins]\nx = 1\n",
			       &h, &rest, &err) == 0 && h.n == 1 && h.driver.uuids.n == 1,
	   "a look read up to its status line");
	is_str(rest, "[plugins]\nx = 1\n", "the rest is the other output's, whole");
	host_gpus_free(&h);
	ok(container_gpus_read("ctr", "No devices were found\n" GPU_DRIVER_MARK " own\n" GPUS_STATUS_MARK " 6\n", &h,
			       &rest, &err) == 0 && h.n == 0 && *rest == '\0',
	   "no GPU found (exit 6) is an empty list, not a failure");
	host_gpus_free(&h);
	ok(container_gpus_read("ctr", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
				      GPU_DRIVER_MARK " own\n" GPUS_STATUS_MARK " 9\nconfig\n",
			       &h, &rest, &err) == -1 && err.msg &&
		   strstr(err.msg, "nvidia-smi -L in gateway container ctr failed (exit status 9): NVIDIA-SMI has failed because"),
	   "nvidia-smi's failure, with its first line: %s", err.msg ? err.msg : "");
	os_error_clear(&err);
	host_gpus_free(&h);
	ok(container_gpus_read("ctr", "GPU 0: Tesla V100 (UUID: GPU-aaaa)\n", &h, &rest, &err) == -1 && err.msg &&
		   strstr(err.msg, "did not finish"),
	   "a look without its status line did not finish: %s", err.msg ? err.msg : "");
	os_error_clear(&err);
	host_gpus_free(&h);
	ok(container_gpus_read("ctr", NULL, &h, &rest, &err) == -1, "no output at all: the same");
	os_error_clear(&err);
	host_gpus_free(&h);
}

int main(void)
{
	struct host_gpus h;
	char *s;

	xalloc_init();
	parses("all", "all", "driver=nvidia,count=all,\"capabilities=utility,compute\"");
	parses("2", "2", "driver=nvidia,count=2,\"capabilities=utility,compute\"");
	parses("0,2", "0,2", "driver=nvidia,\"device=0,2\",\"capabilities=utility,compute\"");
	parses("device=1", "device=1", "driver=nvidia,\"device=1\",\"capabilities=utility,compute\"");
	parses("device=0,2", "0,2", "driver=nvidia,\"device=0,2\",\"capabilities=utility,compute\"");
	/* Docker's documented form, quotes and all: --gpus '"device=0,2"'. */
	parses("\"device=0,2\"", "0,2", "driver=nvidia,\"device=0,2\",\"capabilities=utility,compute\"");
	parses("GPU-3f2a00aa-1,1", "GPU-3f2a00aa-1,1", "driver=nvidia,\"device=GPU-3f2a00aa-1,1\",\"capabilities=utility,compute\"");
	refused("", "empty");
	refused("0", "a count from 1");
	refused("-1", "each item must be");
	refused("abc", "each item must be");
	refused("0,,1", "an empty item");
	refused("0,", "an empty item");
	refused("1,1", "a GPU named twice");
	refused("99999", "a count from 1");
	refused("GPU-", "each item must be");
	refused("GPU-xyz", "each item must be");
	refused("\"\"", "empty");
	refused("\"device=0,2", "each item must be");
	{
		struct gpus a = { 0 }, b = { 0 };
		os_error e = { 0 };

		gpus_parse("0,GPU-3f2a00aa-1", &a, &e);
		gpus_copy(&b, &a);
		gpus_free(&a);
		s = gpus_string(&b);
		is_str(s, "0,GPU-3f2a00aa-1", "a copy is a selection of its own: the original freed, it stands");
		free(s);
		gpus_free(&b);
		gpus_parse("3", &a, &e);
		gpus_copy(&b, &a);
		ok(gpus_equal(&a, &b) && b.ids.n == 0, "a count copied is that count");
		gpus_free(&a);
		gpus_free(&b);
	}

	host_gpus_parse(smi, &h);
	is_int(h.n, 3, "nvidia-smi -L: three GPUs, the MIG line is not one");
	is_str(h.v[2].name, "NVIDIA A100-SXM4-40GB", "each with its name");
	is_str(h.v[1].uuid, "GPU-bbbb0000-0000-0000-0000-000000000000", "and its UUID");
	ok(h.v[1].migs.n == 1 && strcmp(h.v[1].migs.v[0], "MIG-cccc") == 0 && strcmp(h.v[1].profiles.v[0], "1g.10gb") == 0,
	   "GPU 1's MIG device, with its profile");
	ok(h.v[0].migs.n == 0 && h.v[2].migs.n == 0, "the others have none");
	is_int(gpus_plugin_devices(&h, MIG_NONE), 3, "strategy none: every GPU whole");
	is_int(gpus_plugin_devices(&h, MIG_MIXED), 2, "mixed: the GPUs without MIG");
	is_int(gpus_plugin_devices(&h, MIG_SINGLE), 3, "single on a mix: the GPUs (the plugin refuses it anyway)");
	host_gpus_free(&h);
	host_gpus_parse("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaa)\n"
			"  MIG 1g.10gb     Device  0: (UUID: MIG-1111)\n"
			"  MIG 1g.10gb     Device  1: (UUID: MIG-2222)\n"
			"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbbb)\n"
			"  MIG 3g.40gb     Device  0: (UUID: MIG-3333)\n", &h);
	is_int(gpus_plugin_devices(&h, MIG_SINGLE), 3, "single with every GPU MIG-enabled: every MIG device");
	is_int(gpus_plugin_devices(&h, MIG_MIXED), 0, "mixed there: no whole GPU");
	host_gpus_free(&h);
	/* WSL2: the look's mark after the query; the plugin's one device. */
	host_gpus_parse("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-aaaa)\n"
			"GPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-bbbb)\n"
			GPUS_QUERY_MARK "\n"
			"GPU-aaaa, [N/A], 8.9\n"
			GPUS_DXG_MARK "\n"
			GPUS_ENV_MARK "\n"
			"all\n", &h);
	ok(h.n == 2 && h.dxg && h.injected == GPUS_INJECTED_HOOK, "through /dev/dxg: two GPUs, marked, given by the hook");
	is_int(gpus_plugin_devices(&h, MIG_NONE), 1, "WSL2: the plugin advertises them as one device");
	host_gpus_free(&h);
	{
		struct host_gpus wsl, host;
		struct gpus all;

		/* verify's look there: the driver's part finds no procfs, which
		 * says nothing of the host's GPUs (0 would be "none"). */
		host_gpus_parse("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-aaaa)\n" GPUS_DXG_MARK "\n" GPU_DRIVER_MARK " own\n"
				GPU_NODES_MARK " \n", &wsl);
		gpus_parse("all", &all, &(os_error){ 0 });
		is_int(gpus_host_of_driver(&wsl, &all, &host), 0, "WSL2: the driver's list cannot say the host's GPUs");
		is_int(host.n, 0, "and gives none");
		host_gpus_free(&wsl);
		host_gpus_free(&host);
		gpus_free(&all);
	}
	host_gpus_parse(GPUS_DXG_MARK "\n", &h);
	is_int(gpus_plugin_devices(&h, MIG_NONE), 0, "and none without a GPU");
	host_gpus_free(&h);
	/* The query's facts: MIG mode (with no MIG device yet) and compute capability. */
	host_gpus_parse("GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-aaaa)\n"
			"GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-bbbb)\n"
			"GPU 2: NVIDIA A100-SXM4-40GB (UUID: GPU-cccc)\n"
			"  MIG 3g.20gb     Device  0: (UUID: MIG-3333)\n"
			GPUS_QUERY_MARK "\n"
			"GPU-aaaa, [N/A], 7.0\n"
			"GPU-bbbb, Enabled, 8.0\n"
			"GPU-cccc, Enabled, 8.0\n", &h);
	ok(h.n == 3 && !h.v[0].mig_enabled && h.v[1].mig_enabled && h.v[2].mig_enabled, "MIG mode per GPU, [N/A] off");
	ok(h.v[0].compute_cap == 70 && h.v[1].compute_cap == 80, "compute capability x 10");
	is_int(gpus_plugin_devices(&h, MIG_MIXED), 1, "mixed skips a MIG-enabled GPU without MIG devices: V100 alone");
	is_int(gpus_plugin_devices(&h, MIG_NONE), 3, "none counts every GPU whole");
	host_gpus_free(&h);
	host_gpus_parse("GPU 0: Tesla V100 (UUID: GPU-aaaa)\n" GPUS_QUERY_MARK "\n", &h);
	ok(h.n == 1 && h.v[0].compute_cap == 0 && !h.v[0].mig_enabled, "an old driver's refused query: facts unknown");
	host_gpus_free(&h);
	/* The driver's version, from its procfs, ahead of the query. */
	host_gpus_parse("GPU 0: NVIDIA H100 (UUID: GPU-aaaa)\n" GPUS_VERSION_MARK
			" NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.172.08  Tue Jul  8 18:02:41 UTC 2025\n"
			GPUS_QUERY_MARK "\nGPU-aaaa, Disabled, 9.0\n", &h);
	ok(h.n == 1 && h.driver_version && strcmp(h.driver_version, "570.172.08") == 0 && h.v[0].compute_cap == 90,
	   "the kernel module's version, beside the query's facts");
	host_gpus_free(&h);
	host_gpus_parse("GPU 0: NVIDIA H100 (UUID: GPU-aaaa)\n" GPUS_VERSION_MARK
			" NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
			"(dvs-builder@U16-I3-B03-4-3)  Tue Feb 20 21:21:10 UTC 2024\n", &h);
	ok(h.driver_version && strcmp(h.driver_version, "550.54.15") == 0, "the open modules' line too");
	host_gpus_free(&h);
	host_gpus_parse("GPU 0: NVIDIA H100 (UUID: GPU-aaaa)\n" GPUS_VERSION_MARK " \n" GPUS_QUERY_MARK "\n", &h);
	ok(h.n == 1 && !h.driver_version, "no version file (WSL2's /dev/dxg): unknown");
	host_gpus_free(&h);
	resolves("MIG-cccc", "b");   /* a MIG device means its GPU */
	resolves("1,MIG-cccc", "b"); /* once, however often it is named */
	resolves("all", "a,b,c");
	resolves("2", "a,b");
	resolves("2,0", "c,a");
	resolves("device=1", "b");
	resolves("GPU-cccc0000-0000-0000-0000-000000000000", "c");
	resolves("4", "error: --gpus 4: more GPUs than the host has; the Docker host has 3 GPUs: 0 GPU-aaaa");
	resolves("0,3", "error: --gpus 0,3: the host has no GPU 3; the Docker host has 3 GPUs");
	resolves("GPU-dddd", "error: --gpus GPU-dddd: the host has no GPU GPU-dddd");


	of_container(-1, "", NULL, 0, "all", "Count -1 is all");
	of_container(2, "", NULL, 0, "2", "Count 2 is 2");
	of_container(0, "1", NULL, 0, "device=1", "one index alone reads device=1, not a count");
	of_container(0, "0,2", NULL, 0, "0,2", "device IDs as they are");
	of_container(0, "GPU-aaaa,1", "0,2", 0, "GPU-aaaa,1", "without CDI the request, not the label");
	of_container(0, "GPU-aaaa,GPU-bbbb", "2", 1, "2", "a CDI gateway's label: its device names lose the count");
	of_container(0, "GPU-aaaa", "all,x", 1, "error", "a label edited by hand does not read");
	of_container(0, "", NULL, 0, "error", "a request of no GPU does not read");
	equal("0,2", "device=0,2", 1);
	equal("2", "0,1", 0);
	equal("2", "2", 1);
	equal("2", "3", 0);
	equal("all", "all", 1);
	equal("0,2", "2,0", 0);
	equal("0,2", "0", 0);
	words("2", "2 GPUs (the first)");
	words("device=1", "GPU 1");
	words("0,GPU-3f2a", "GPUs 0,GPU-3f2a");
	words("all", "all GPUs");
	json_shape("all", "{\"all\":true}");
	json_shape("2", "{\"count\":2}");
	json_shape("device=1", "{\"devices\":[\"1\"]}");
	json_shape("0,GPU-3f2a", "{\"devices\":[\"0\",\"GPU-3f2a\"]}");
	driver_list();
	driver_caps();
	look_before();
	return tap_done();
}
