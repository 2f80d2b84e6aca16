/* gateway/check/doctor_pitfalls.c - the GPU pitfalls doctor catches (see gateway/check/doctor_pitfalls.h).
 *
 * Each one is reported only when it is there: a warn or fail line, with
 * what was seen and the fix.
 */
#include "config.h"

#include <string.h>

#include "base/json.h"
#include "gateway/check/doctor_pitfalls.h"
#include "gateway/check/doctor_report.h"
#include "gateway/gpu/wsl2.h"

static void check_rootless(struct doctor *d, const cJSON *info)
{
	const cJSON *opt;

	cJSON_ArrayForEach(opt, json_get(info, "SecurityOptions", NULL))
		if (cJSON_IsString(opt) && strstr(opt->valuestring, "name=rootless")) {
			doctor_check(d, CHECK_FAIL, "rootless-docker",
			             "use the system's Docker daemon (DOCKER_HOST=unix:///var/run/docker.sock, or unset it)",
			             "Docker runs rootless: the gateway's k3s needs a privileged container with the host's cgroups and GPU devices, which a rootless daemon cannot give");
			return;
		}
}

/* toolkit#48: with the systemd cgroup driver, a `systemctl daemon-reload`
 * rewrites the containers' device rules from systemd's view, which knows
 * the NVIDIA devices only through /dev/char links; without them the
 * containers lose their GPUs. */
static void check_systemd_cgroups(struct doctor *d, const cJSON *info, const struct host_facts *f)
{
	const char *driver = json_str(info, "CgroupDriver");

	if (!driver || strcmp(driver, "systemd") != 0 || !f->nvidia0 || f->nvidia0_char_link)
		return;
	doctor_check(d, CHECK_WARN, "systemd-cgroup-gpus",
	             "run 'nvidia-ctk system create-dev-char-symlinks --create-all' and install its udev rule, or use CDI (nvidia-ctk cdi generate)",
	             "Docker uses the systemd cgroup driver and /dev/char/%u:%u is missing: after 'systemctl daemon-reload' running containers lose their GPUs (\"Failed to initialize NVML: Unknown Error\", nvidia-container-toolkit#48)",
	             f->major, f->minor);
}

/* WSL2, by the daemon's kernel (docker info) or by /dev/dxg without
 * /dev/nvidiaN on its host: what a start there can and cannot do. */
static void check_wsl2(struct doctor *d, const cJSON *info, const struct host_facts *f)
{
	enum wsl2_host host = info ? wsl2_of_info(info) : WSL2_NO;

	if (host == WSL2_NO && !host_facts_wsl2(f))
		return;
	doctor_check(d, CHECK_WARN, "wsl2",
	             host == WSL2_DOCKER_DESKTOP
	                     ? "use --gpu, not a count or a list; Docker Desktop gives its engine the GPUs with " WSL2_DESKTOP_SETTINGS
	                     : "use --gpu, not a count or a list; expect allocatable nvidia.com/gpu 1 whatever the GPUs",
	             "%s: the GPUs come through /dev/dxg%s, so the device plugin advertises them as one device; --gpus cannot pick among them, and MIG, MPS sharing and --gpu-allocation dra are refused there",
	             host == WSL2_DOCKER_DESKTOP ? "Docker Desktop on WSL2" : "WSL2",
	             host_facts_wsl2(f) ? ", with no /dev/nvidiaN" : "");
}

static void check_tegra(struct doctor *d, const struct host_facts *f)
{
	if (!f->tegra)
		return;
	doctor_check(d, CHECK_WARN, "tegra",
	             "use JetPack's NVIDIA Container Toolkit (its CSV mode) and the device plugin's tegra discovery (deviceDiscoveryStrategy=tegra)",
	             "Jetson/Tegra: there is no NVML, so nvidia-smi and the device plugin's NVML discovery do not work; its tegra discovery does");
}

static void check_cdi_specs(struct doctor *d, const struct host_facts *f)
{
	for (size_t i = 0; f->driver && i < f->n_specs; i++) {
		const struct host_cdi_spec *s = &f->specs[i];
		if (s->driver && strcmp(s->driver, f->driver) != 0)
			doctor_check(d, CHECK_WARN, "cdi-spec-stale",
			             "run 'nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml', or enable the toolkit's nvidia-cdi-refresh service",
			             "CDI spec %s was made for driver %s, but driver %s is loaded: GPU containers fail with \"unresolvable CDI devices\" or \"CDI device injection failed\"",
			             s->path, s->driver, f->driver);
	}
}

void doctor_pitfalls(struct doctor *d, const cJSON *info, const struct host_facts *f)
{
	if (info)
		check_rootless(d, info);
	check_wsl2(d, info, f);
	if (!f)
		return;
	if (info)
		check_systemd_cgroups(d, info, f);
	check_tegra(d, f);
	check_cdi_specs(d, f);
}
