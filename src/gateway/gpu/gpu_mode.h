/* gateway/gpu/gpu_mode.h - how the gateway's GPUs reach it: CDI or Docker's legacy hook.
 *
 * `--gpu-mode legacy` asks Docker's nvidia driver (`--gpus`, the NVIDIA
 * Container Toolkit's prestart hook); `--gpu-mode cdi` asks for the CDI
 * devices of the NVIDIA spec (`--device nvidia.com/gpu=all`, or the
 * selected ones: `nvidia.com/gpu=0`, `nvidia.com/gpu=GPU-…`), which the
 * docker CLI sends as a DeviceRequest of driver "cdi". `auto`, the
 * default, takes CDI when the daemon lists NVIDIA CDI devices (`docker
 * info`'s DiscoveredDevices, Docker >= 28.2, where CDI is on by default)
 * and the legacy path otherwise. A kept gateway keeps the mode it was made
 * with; inside it the device plugin's deviceListStrategy follows the mode
 * (volume-mounts, or cdi-cri), through the entrypoint.
 */
#ifndef OPENSHELL_GATEWAY_GPU_MODE_H
#define OPENSHELL_GATEWAY_GPU_MODE_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/names.h"
#include "base/strv.h"
#include "gateway/gpu/wsl2.h"

enum gpu_mode { GPU_MODE_AUTO, GPU_MODE_CDI, GPU_MODE_LEGACY };

/* "auto", "cdi" or "legacy"; a usage error otherwise. */
int gpu_mode_parse(const char *text, enum gpu_mode *m, os_error *err);
const char *gpu_mode_name(enum gpu_mode m);

/* What the daemon offers for GPUs: `docker info --format '{{json .}}'`. */
struct daemon_gpus {
	int nvidia_runtime;   /* Runtimes has "nvidia" */
	struct strv cdi;      /* DiscoveredDevices of the NVIDIA spec: "nvidia.com/gpu=0", … */
	int gpus_by_cdi;      /* Docker >= 29.2 with such devices: --gpus goes through CDI
	                       * first (moby daemon/devices_nvidia_linux.go), the hook only
	                       * when the spec cannot resolve them */
	enum wsl2_host wsl2;  /* the daemon runs under WSL2 (gateway/gpu/wsl2.h) */
};

/* Read them from docker info's JSON, parsed or as text. */
void daemon_gpus_from_info(const cJSON *info, struct daemon_gpus *d);
int daemon_gpus_parse(const char *json, size_t len, struct daemon_gpus *d, os_error *err);
void daemon_gpus_free(struct daemon_gpus *d);

/* The mode a new gateway gets: auto is cdi when the daemon lists NVIDIA
 * CDI devices; cdi without any is an error with the fix. */
int gpu_mode_resolve(enum gpu_mode asked, const struct daemon_gpus *d, enum gpu_mode *used, os_error *err);

struct gpus;

/* The CDI device names of a --gpus selection: all is nvidia.com/gpu=all,
 * a count N the first N indices, a list its items. */
void gpu_mode_cdi_devices(const struct gpus *g, struct strv *names);

/* Each name must be one the daemon lists; an error naming the fix. */
int gpu_mode_cdi_check(const struct strv *names, const struct daemon_gpus *d, os_error *err);

/* Before any container, for a gateway that gets its GPUs as CDI devices:
 * the selection G against the GPUs the daemon's device names count (by
 * index, else by UUID) and the UUIDs they name, refused as gpus_resolve()
 * refuses what the host lacks. What the names cannot judge (a UUID where
 * the spec names GPUs by index alone) is left to the look at the host and
 * to gpu_mode_cdi_check() of its device names. */
int gpu_mode_check_cdi_gpus(const struct gpus *g, const struct daemon_gpus *d, os_error *err);

#endif
