/* gateway/gpu/wsl2.c - GPU requests a WSL2 host can serve (see gateway/gpu/wsl2.h). */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "gateway/gpu/wsl2.h"

enum wsl2_host wsl2_of_info(const cJSON *info)
{
	const char *kernel = json_str(info, "KernelVersion"), *os = json_str(info, "OperatingSystem");

	/* Microsoft's WSL2 kernels: "…-microsoft-standard-WSL2", and before
	 * 5.10 "…-microsoft-standard" (WSL1 has no kernel of its own, and no
	 * Docker daemon). */
	if (!kernel || !strstr(kernel, "-microsoft-standard"))
		return WSL2_NO;
	return os && strcmp(os, "Docker Desktop") == 0 ? WSL2_DOCKER_DESKTOP : WSL2_ENGINE;
}

static const char *where(enum wsl2_host host)
{
	return host == WSL2_DOCKER_DESKTOP ? "Docker Desktop on WSL2" : "a WSL2 Docker host";
}

/* The gateway's own MIG strategy or MPS, which a node joining it cannot change. */
static int refuse_gateways(const char *joining, const char *what, const char *why, enum wsl2_host host,
			   os_error *err)
{
	return os_error_set(err, OS_EXIT_FAILURE,
			    "gateway '%s' %s, which %s cannot serve (%s); add a Linux host as its node", joining, what,
			    where(host), why);
}

int wsl2_check(const struct gpus *gpus, int cdi, enum mig_strategy mig, const struct sharing *sharing, int dra,
	       const char *joining, enum wsl2_host host, os_error *err)
{
	/* The DRA driver's claims get their GPUs as CDI devices of /dev/nvidiaN. */
	static const char no_dra[] = "NVIDIA's DRA driver hands a claim its GPU as the device node /dev/nvidiaN, and WSL2's GPUs come through /dev/dxg alone";

	static const char no_mig[] = "WSL2 has no MIG: the toolkit's libnvidia-container gives none there";
	static const char no_cdi[] = "with CDI the pods get their GPUs from specs the device plugin writes in the gateway, whose WSL mode can miss libdxcore.so, without which NVML fails in them (nvidia-container-toolkit#1739)";
	static const char no_mps[] = "MPS needs the GPUs in compute mode EXCLUSIVE_PROCESS, which WSL2's driver cannot set";

	if (!gpus || host == WSL2_NO)
		return 0;
	if (gpus->kind != GPUS_ALL) {
		cleanup_free char *sel = gpus_string(gpus);
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--gpus %s cannot be served on %s: its GPUs come through one device, /dev/dxg, all of them or none; use --gpu (all of them), or a Linux host to pick among them",
				    sel, where(host));
	}
	if (dra && joining)
		return refuse_gateways(joining, "allocates its GPUs by DRA (--gpu-allocation dra)", no_dra, host, err);
	if (dra)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--gpu-allocation dra cannot be served on %s: %s; leave --gpu-allocation out (the device plugin serves WSL2), or use a Linux host",
				    where(host), no_dra);
	if (mig != MIG_NONE && joining) {
		cleanup_free char *what = xasprintf("has --mig-strategy %s", mig_strategy_name(mig));
		return refuse_gateways(joining, what, no_mig, host, err);
	}
	if (mig != MIG_NONE)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--mig-strategy %s cannot be served on %s: %s; leave --mig-strategy out, or use a Linux host for MIG",
				    mig_strategy_name(mig), where(host), no_mig);
	if (cdi)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--gpu-mode cdi cannot be served on %s: %s; leave --gpu-mode out (Docker's --gpus is used there)",
				    where(host), no_cdi);
	if (sharing && sharing->mps && joining)
		return refuse_gateways(joining, "shares its GPUs with MPS", no_mps, host, err);
	if (sharing && sharing->mps)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--gpu-sharing mps cannot be served on %s: %s; use --gpu-sharing time-slicing:N", where(host),
				    no_mps);
	return 0;
}

void wsl2_explain_probe(const struct daemon_gpus *d, os_error *err)
{
	cleanup_free char *detail = NULL;

	if (!d->gpus_by_cdi || !err->msg || !strstr(err->msg, "Failed to initialize NVML"))
		return;
	detail = err->detail ? xstrdup(err->detail) : NULL;
	os_error_set(err, OS_EXIT_NOGPU,
		     "NVML fails in a container given the GPUs on %s (Failed to initialize NVML): this Docker (29.2 and later) gives --gpus through the NVIDIA CDI spec, which lacks libdxcore.so there (nvidia-ctk could not locate it: nvidia-container-toolkit#1739); remove /etc/cdi/nvidia.yaml and /var/run/cdi/nvidia.yaml (and stop nvidia-cdi-refresh.service from writing it again), then restart docker: --gpus then takes the toolkit's hook",
		     where(d->wsl2));
	if (detail)
		os_error_set_detail(err, detail);
}
