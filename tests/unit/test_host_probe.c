/* test_host_probe.c - the host probe's lines read into typed facts
 * (gateway/gpu/host_probe.h): each fact, its absence, and output that is not
 * the probe's. */
#include "config.h"

#include <string.h>

#include "gateway/gpu/host_probe.h"
#include "tap.h"

static const char full[] =
	"version NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
	"gpu NVIDIA H100 80GB HBM3\n"
	"gpu \n"
	"nvidia0 195 0 1\n"
	"dxg\n"
	"soc-family Tegra234\n"
	"tool nvidia-container-runtime-hook /usr/bin/nvidia-container-runtime-hook\n"
	"tool nvidia-ctk /usr/local/bin/nvidia-ctk\n"
	"tool nvidia-smi /usr/bin/nvidia-smi\n"
	"bpf-jit-harden 2\n"
	"cdi libcuda.so.535.104.05 /etc/cdi/nvidia.yaml\n"
	"cdi - /var/run/cdi/nvidia two.json\n"
	"later-fact whatever a newer probe says\n"
	"end\n";

static void test_full(void)
{
	struct host_facts f;
	os_error err = { 0 };

	ok(host_facts_parse(full, &f, &err) == 0, "every fact read (%s)", err.msg ? err.msg : "");
	ok(f.driver && strcmp(f.driver, "550.54.15") == 0, "the driver from the Kernel Module's version");
	ok(f.gpus.n == 2 && strcmp(f.gpus.v[0], "NVIDIA H100 80GB HBM3") == 0 &&
	   strcmp(f.gpus.v[1], "unknown model") == 0, "each GPU by its model, an empty model said so");
	ok(f.nvidia0 && f.major == 195 && f.minor == 0 && f.nvidia0_char_link, "/dev/nvidia0 195:0 and its /dev/char link");
	ok(f.dxg && f.tegra, "/dev/dxg; a Tegra SoC family");
	ok(!host_facts_wsl2(&f), "/dev/dxg beside the driver's own nodes is no WSL2 host");
	ok(f.hook && strcmp(f.hook, "/usr/bin/nvidia-container-runtime-hook") == 0 && f.ctk &&
	   strcmp(f.ctk, "/usr/local/bin/nvidia-ctk") == 0, "the toolkit's tools where the host has them; others skipped");
	ok(f.bpf_jit_harden == 2, "net.core.bpf_jit_harden");
	ok(f.n_specs == 2 && strcmp(f.specs[0].path, "/etc/cdi/nvidia.yaml") == 0 && f.specs[0].driver &&
	   strcmp(f.specs[0].driver, "535.104.05") == 0 && strcmp(f.specs[1].path, "/var/run/cdi/nvidia two.json") == 0 &&
	   f.specs[1].driver == NULL, "CDI specs with the driver their libraries name, or none");
	host_facts_free(&f);
	os_error_clear(&err);
}

static void test_bare(void)
{
	struct host_facts f;
	os_error err = { 0 };

	ok(host_facts_parse("tegra-release\nend\n", &f, &err) == 0 && !f.driver && !f.gpus.n && !f.nvidia0 && !f.dxg &&
	   f.tegra && !f.hook && !f.ctk && f.bpf_jit_harden == -1 && !f.n_specs,
	   "a host without a driver: nothing but what was said");
	host_facts_free(&f);
	ok(host_facts_parse("dxg\nend\n", &f, &err) == 0 && host_facts_wsl2(&f), "/dev/dxg alone: WSL2's GPUs");
	ok(!host_facts_wsl2(NULL), "a host not read is not");
	host_facts_free(&f);
	os_error_clear(&err);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"version x\n",                          /* no end: cut short */
		"nvidia0 195 zero 1\nend\n",             /* not a number */
		"nvidia0 195 0\nend\n",                  /* a field short */
		"bpf-jit-harden 7\nend\n",               /* out of range */
		"tool nvidia-ctk relative/path\nend\n",  /* not a path */
		"cdi libcuda.so.1\nend\n",               /* no path */
		"",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct host_facts f;
		os_error err = { 0 };
		int rc = host_facts_parse(bad[i], &f, &err);
		ok(rc < 0 && err.msg && f.specs == NULL && f.driver == NULL, "refused: '%.*s' (%s)",
		   (int)strcspn(bad[i], "\n"), bad[i], err.msg ? err.msg : "accepted");
		os_error_clear(&err);
	}
}

int main(void)
{
	test_full();
	test_bare();
	test_refused();
	return tap_done();
}
