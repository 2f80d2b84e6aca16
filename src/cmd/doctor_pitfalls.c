/* cmd/doctor_pitfalls.c - the GPU pitfalls doctor catches (see cmd/doctor_pitfalls.h).
 *
 * Each one is reported only when it is there: a warn or fail line, with
 * what was seen and the fix.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <yaml.h>

#include "base/json.h"
#include "base/xalloc.h"
#include "cmd/doctor_pitfalls.h"
#include "cmd/doctor_report.h"

/* A host path under $OPENSHELL_HOST_ROOT (owned). */
static char *host(const char *path)
{
	const char *root = getenv("OPENSHELL_HOST_ROOT");

	return xasprintf("%s%s", root && *root ? root : "", path);
}

static int host_exists(const char *path)
{
	cleanup_free char *p = host(path);
	struct stat st;

	return stat(p, &st) == 0;
}

/* The first line of a small host file, or NULL (owned). */
static char *host_line(const char *path)
{
	cleanup_free char *p = host(path);
	char buf[512];
	FILE *f = fopen(p, "r");
	char *line = NULL;

	if (f && fgets(buf, sizeof(buf), f))
		line = xstrndup(buf, strcspn(buf, "\n"));
	if (f)
		fclose(f);
	return line;
}

static void check_rootless(struct doctor *d, const cJSON *info)
{
	const cJSON *opt;

	cJSON_ArrayForEach(opt, json_get(info, "SecurityOptions", NULL))
		if (cJSON_IsString(opt) && strstr(opt->valuestring, "name=rootless")) {
			report(d, CHECK_FAIL, "rootless-docker",
			       "use the system's Docker daemon (DOCKER_HOST=unix:///var/run/docker.sock, or unset it)",
			       "Docker runs rootless: the gateway's k3s needs a privileged container with the host's cgroups and GPU devices, which a rootless daemon cannot give");
			return;
		}
}

/* toolkit#48: with the systemd cgroup driver, a `systemctl daemon-reload`
 * rewrites the containers' device rules from systemd's view, which knows
 * the NVIDIA devices only through /dev/char links; without them the
 * containers lose their GPUs. */
static void check_systemd_cgroups(struct doctor *d, const cJSON *info)
{
	const char *driver = json_str(info, "CgroupDriver");
	cleanup_free char *dev = host("/dev/nvidia0");
	cleanup_free char *link = NULL;
	struct stat st;

	if (!driver || strcmp(driver, "systemd") != 0 || stat(dev, &st) != 0 || !S_ISCHR(st.st_mode))
		return;
	link = xasprintf("/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (host_exists(link))
		return;
	report(d, CHECK_WARN, "systemd-cgroup-gpus",
	       "run 'nvidia-ctk system create-dev-char-symlinks --create-all' and install its udev rule, or use CDI (nvidia-ctk cdi generate)",
	       "Docker uses the systemd cgroup driver and %s is missing: after 'systemctl daemon-reload' running containers lose their GPUs (\"Failed to initialize NVML: Unknown Error\", nvidia-container-toolkit#48)",
	       link);
}

static void check_wsl2(struct doctor *d)
{
	if (!host_exists("/dev/dxg") || host_exists("/dev/nvidia0"))
		return;
	report(d, CHECK_WARN, "wsl2", "expect allocatable nvidia.com/gpu 1 whatever the GPUs; use --gpu, not a count or a list",
	       "WSL2: the GPUs come through /dev/dxg, with no /dev/nvidiaN, so the device plugin advertises them as one device and --gpus cannot pick among them");
}

static void check_tegra(struct doctor *d)
{
	cleanup_free char *family = host_line("/sys/devices/soc0/family");

	if (!host_exists("/etc/nv_tegra_release") && !(family && strstr(family, "Tegra")))
		return;
	report(d, CHECK_WARN, "tegra",
	       "use JetPack's NVIDIA Container Toolkit (its CSV mode) and the device plugin's tegra discovery (deviceDiscoveryStrategy=tegra)",
	       "Jetson/Tegra: there is no NVML, so nvidia-smi and the device plugin's NVML discovery do not work; its tegra discovery does");
}

/* The driver version in a path such as .../libcuda.so.550.54.15. */
static char *driver_in(const char *path)
{
	static const char *const libs[] = { "libcuda.so.", "libnvidia-ml.so.", NULL };

	for (const char *const *l = libs; *l; l++) {
		const char *p = strstr(path, *l);
		if (p && strspn(p + strlen(*l), "0123456789.") > 2)
			return xstrndup(p + strlen(*l), strspn(p + strlen(*l), "0123456789."));
	}
	return NULL;
}

/* The driver a CDI spec was generated for: the version its library
 * mounts name (NULL: none named, or the file is not YAML/JSON). */
static char *spec_driver(const char *file)
{
	FILE *f = fopen(file, "r");
	yaml_parser_t p;
	yaml_event_t e;
	char *found = NULL;
	int done = 0;

	if (!f)
		return NULL;
	if (!yaml_parser_initialize(&p)) {
		fclose(f);
		return NULL;
	}
	yaml_parser_set_input_file(&p, f);
	while (!done && !found && yaml_parser_parse(&p, &e)) {
		if (e.type == YAML_SCALAR_EVENT)
			found = driver_in((const char *)e.data.scalar.value);
		done = e.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	fclose(f);
	return found;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..." */
static char *loaded_driver(void)
{
	cleanup_free char *line = host_line("/proc/driver/nvidia/version");
	const char *p = line ? strstr(line, "Kernel Module") : NULL;

	if (!p)
		return NULL;
	p += strlen("Kernel Module");
	p += strspn(p, " ");
	return strspn(p, "0123456789.") ? xstrndup(p, strspn(p, "0123456789.")) : NULL;
}

static void check_cdi_spec_dir(struct doctor *d, const char *dir, const char *driver)
{
	cleanup_free char *path = host(dir);
	DIR *dp = opendir(path);
	struct dirent *ent;

	while (dp && (ent = readdir(dp))) {
		if (!strstr(ent->d_name, "nvidia") || (!strstr(ent->d_name, ".yaml") && !strstr(ent->d_name, ".json")))
			continue;
		cleanup_free char *file = xasprintf("%s/%s", path, ent->d_name);
		cleanup_free char *made_for = spec_driver(file);
		if (made_for && strcmp(made_for, driver) != 0)
			report(d, CHECK_WARN, "cdi-spec-stale",
			       "run 'nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml', or enable the toolkit's nvidia-cdi-refresh service",
			       "CDI spec %s/%s was made for driver %s, but driver %s is loaded: GPU containers fail with \"unresolvable CDI devices\" or \"CDI device injection failed\"",
			       dir, ent->d_name, made_for, driver);
	}
	if (dp)
		closedir(dp);
}

void doctor_pitfalls(struct doctor *d, const cJSON *info)
{
	cleanup_free char *driver = loaded_driver();

	d->pitfalls_done = 1;
	if (info) {
		check_rootless(d, info);
		check_systemd_cgroups(d, info);
	}
	check_wsl2(d);
	check_tegra(d);
	if (driver) {
		check_cdi_spec_dir(d, "/etc/cdi", driver);
		check_cdi_spec_dir(d, "/var/run/cdi", driver);
	}
}
