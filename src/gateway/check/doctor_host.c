/* gateway/check/doctor_host.c - doctor's checks of the daemon's host (see gateway/check/doctor_host.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/daemon.h"
#include "gateway/check/doctor_host.h"

static const char read_fix[] =
	"the host's checks (driver, toolkit, pitfalls) run in a container of the cluster image on the Docker host";

int doctor_host_read(struct doctor *d, const cJSON *info, const char *image, int image_present,
		     struct host_facts *f)
{
	struct docker_daemon dd = { 0 };
	os_error err = { 0 };
	const char *name = json_str(info, "Name");
	int rc = -1;

	if (!info) {
		doctor_check(d, CHECK_SKIP, "docker-host", "start the Docker daemon, then run doctor again",
		             "Docker host: not read, no daemon answered (%s)", read_fix);
		return -1;
	}
	if (!image_present) {
		doctor_check(d, CHECK_SKIP, "docker-host",
		             "build the image with 'openshell image build' (a first 'gateway start' does too), then run doctor again",
		             "Docker host %s: not read, cluster image %s not here yet (%s)", name ? name : "?", image, read_fix);
		return -1;
	}
	if (docker_daemon_resolve(&dd, &err) < 0 || host_probe(NULL, image, 0, f, &err) < 0) {
		doctor_check(d, CHECK_FAIL, "docker-host", NULL, "Docker host %s: %s", name ? name : "?", err.msg);
	} else {
		cleanup_free char *context = strcmp(dd.at.context, "default") ? xasprintf(", context %s", dd.at.context)
									   : xstrdup("");
		doctor_check(d, CHECK_PASS, "docker-host", NULL, "Docker host %s (%s%s): read in a container of %s",
		             name ? name : "?", dd.at.endpoint, context, image);
		rc = 0;
	}
	docker_daemon_free(&dd);
	os_error_clear(&err);
	return rc;
}

/* The driver the kernel has loaded, and the GPUs it knows. */
static void check_driver(struct doctor *d, const struct host_facts *f)
{
	cleanup_free char *models = strv_join(&f->gpus, ", ");

	if (!f->driver && host_facts_wsl2(f))
		doctor_check(d, CHECK_SKIP, "nvidia-driver",
		             "install NVIDIA's driver for WSL on Windows (R495 or later); /usr/lib/wsl/lib/nvidia-smi in the distribution shows it",
		             "NVIDIA driver: not in the WSL2 kernel (no /proc/driver/nvidia), which passes the Windows host's GPUs through /dev/dxg");
	else if (!f->driver)
		doctor_check(d, CHECK_WARN, "nvidia-driver", "install the NVIDIA driver on the Docker host to use --gpu",
		             "NVIDIA driver: none loaded on the Docker host (no /proc/driver/nvidia/version)");
	else if (!f->gpus.n)
		doctor_check(d, CHECK_WARN, "nvidia-driver", "check the NVIDIA driver (nvidia-smi on the Docker host)",
		             "NVIDIA driver %s: loaded, but it lists no GPU", f->driver);
	else
		doctor_check(d, CHECK_PASS, "nvidia-driver", NULL, "NVIDIA driver %s: %zu GPU%s (%s)", f->driver, f->gpus.n,
		             f->gpus.n == 1 ? "" : "s", models);
}

/* The toolkit's tools on the Docker host, where dockerd and the runtime
 * run them. Docker with the nvidia runtime registered or CDI devices may
 * do without the hook on its PATH, so a missing one is a warning. */
static void check_tool(struct doctor *d, const char *tool, const char *path)
{
	if (path)
		doctor_check(d, CHECK_PASS, tool, NULL, "%s: %s on the Docker host", tool, path);
	else
		doctor_check(d, CHECK_WARN, tool,
		             "install the NVIDIA Container Toolkit on the Docker host, then 'nvidia-ctk runtime configure --runtime=docker'",
		             "%s: not on the Docker host (looked in /usr/bin, /usr/local/bin, /usr/sbin, /usr/local/sbin, /bin, /sbin)",
		             tool);
}

static void check_bpf_jit_harden(struct doctor *d, int v)
{
	if (v == 2)
		doctor_check(d, CHECK_WARN, "bpf-jit-harden", "set it to 1 with sysctl on the Docker host",
		             "net.core.bpf_jit_harden=2: some CNI/eBPF programs in k3s may fail");
	else if (v >= 0)
		doctor_check(d, CHECK_PASS, "bpf-jit-harden", NULL, "net.core.bpf_jit_harden=%d", v);
}

void doctor_host_checks(struct doctor *d, const struct host_facts *f)
{
	check_driver(d, f);
	check_tool(d, "nvidia-container-runtime-hook", f->hook);
	check_tool(d, "nvidia-ctk", f->ctk);
	check_bpf_jit_harden(d, f->bpf_jit_harden);
}
