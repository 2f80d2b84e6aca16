/* cmd_doctor.c - `openshell doctor`: host preflight, creating nothing.
 *
 * Each check prints one line: ok, warn or fail, what was seen, and for
 * anything short of ok, the fix. The exit status is 1 when any check
 * failed, so scripts can gate on it.
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "docker.h"
#include "exitcode.h"
#include "json.h"
#include "log.h"
#include "runner.h"
#include "xalloc.h"

enum verdict { OK, WARN, FAIL };

struct doctor {
	int failed;
	int warned;
};

static void report(struct doctor *d, enum verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct doctor *d, enum verdict v, const char *fmt, ...)
{
	static const char *const words[] = { "ok  ", "warn", "fail" };
	va_list ap;

	d->failed += v == FAIL;
	d->warned += v == WARN;
	printf("%s  ", words[v]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void check_nvidia_runtime(struct doctor *d, const cJSON *info)
{
	const cJSON *runtimes = json_get(info, "Runtimes", NULL);
	const cJSON *rt;
	int has_nvidia = cJSON_GetObjectItemCaseSensitive(runtimes, "nvidia") != NULL;
	cleanup_free char *names = xstrdup("");

	cJSON_ArrayForEach(rt, runtimes) {
		char *n = xasprintf("%s%s%s", names, *names ? "," : "", rt->string);
		free(names);
		names = n;
	}
	if (has_nvidia)
		report(d, OK, "docker runtimes: %s (nvidia registered)", names);
	else
		report(d, WARN,
		       "docker runtimes: %s (no nvidia runtime; if 'docker run --gpus all' fails, run 'nvidia-ctk runtime configure --runtime=docker' and restart docker)",
		       *names ? names : "none");
}

static void check_docker_info(struct doctor *d)
{
	static const char *const args[] = { "info", "--format", "{{json .}}", NULL };
	struct run_result res;
	os_error err = { 0 };
	cJSON *info = NULL;

	if (docker_run_ok(args, NULL, 0, 0, &res, &err) < 0 ||
	    !(info = json_parse(res.out, res.out_len, "docker info output", &err))) {
		report(d, FAIL, "docker info: %s", err.msg);
		goto out;
	}
	const char *cg = json_str(info, "CgroupVersion");
	const char *driver = json_str(info, "CgroupDriver");
	report(d, OK, "cgroups: v%s, driver %s", cg ? cg : "?", driver ? driver : "?");
	check_nvidia_runtime(d, info);
	const cJSON *cdi = json_get(info, "CDISpecDirs", NULL);
	if (cJSON_IsArray(cdi) && cJSON_GetArraySize(cdi) > 0)
		report(d, OK, "CDI spec directories: %d configured", cJSON_GetArraySize(cdi));
out:
	cJSON_Delete(info);
	run_result_free(&res);
	os_error_clear(&err);
}

static void check_host_gpus(struct doctor *d)
{
	static const char *const args[] = { "nvidia-smi", "-L", NULL };
	struct run_spec spec = { .argv = args, .timeout_ms = docker_call_timeout_ms() };
	struct run_result res;
	os_error err = { 0 };
	cleanup_free char *path = run_find_executable("nvidia-smi");

	if (!path) {
		report(d, WARN, "nvidia-smi: not found on this host (install the NVIDIA driver to use --gpu; remote Docker hosts may differ)");
		return;
	}
	if (run_command_ok(&spec, &res, &err) < 0) {
		report(d, FAIL, "nvidia-smi: %s (check the NVIDIA driver)", err.msg);
	} else {
		int n = 0;
		for (const char *p = res.out; (p = strstr(p, "GPU ")); p++)
			n += p == res.out || p[-1] == '\n';
		report(d, n ? OK : WARN, "nvidia-smi: %d GPU%s on this host", n, n == 1 ? "" : "s");
	}
	run_result_free(&res);
	os_error_clear(&err);
}

static void check_bpf_jit_harden(struct doctor *d)
{
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_harden", "r");
	int v = -1;

	if (!f)
		return;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	if (v == 2)
		report(d, WARN, "net.core.bpf_jit_harden=2: some CNI/eBPF programs in k3s may fail; set it to 1 with sysctl");
	else if (v >= 0)
		report(d, OK, "net.core.bpf_jit_harden=%d", v);
}

static void usage(FILE *out)
{
	fputs("Usage: openshell doctor [OPTIONS]\n"
	      "\n"
	      "Check this host for what a GPU gateway needs: the docker CLI and daemon,\n"
	      "the NVIDIA driver, Docker's NVIDIA runtime, cgroups and known pitfalls.\n"
	      "Creates nothing. Exit status 1 when a check fails.\n"
	      "\n"
	      "Options:\n"
	      "  -v, --verbose   show each command run\n"
	      "  -h, --help      show this help\n", out);
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct doctor d = { 0 };
	os_error err = { 0 };
	cleanup_free char *server = NULL;
	int c;

	while ((c = getopt_long(argc, argv, CLI_OPTS_PREFIX CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		if (cli_common_option(c))
			continue;
		if (c == 'h') {
			usage(stdout);
			return OS_EXIT_OK;
		}
		return cli_bad_option("doctor", c, argv);
	}
	if (optind < argc)
		return log_usage_error("doctor", "unexpected argument '%s'", argv[optind]);

	if (docker_init(&err) < 0) {
		report(&d, FAIL, "docker client: %s", err.msg);
	} else {
		report(&d, OK, "docker client: %s", docker_path());
		if (docker_ping(&server, &err) < 0) {
			report(&d, FAIL, "docker daemon: %s", err.msg);
		} else {
			report(&d, OK, "docker daemon: version %s", server);
			check_docker_info(&d);
		}
	}
	check_host_gpus(&d);
	check_bpf_jit_harden(&d);
	os_error_clear(&err);
	printf("%d failed, %d warning%s\n", d.failed, d.warned, d.warned == 1 ? "" : "s");
	return d.failed ? OS_EXIT_FAILURE : OS_EXIT_OK;
}
