/* gateway/gpu/wsl2.h - what a Docker host under WSL2 can give a gateway's GPUs, and what it cannot.
 *
 * Under WSL2 the GPUs come through one paravirtual device, /dev/dxg, with
 * no /dev/nvidiaN: Docker's toolkit gives a container all of them or none
 * (NVIDIA's CUDA on WSL guide: "only --gpus all is supported. On
 * multi-GPU systems it is not possible to filter for specific GPU
 * devices"), the device plugin (0.19.1 and later) advertises them as one
 * device named "all" (internal/rm/wsl_devices.go), libnvidia-container
 * has "No MIG support for WSL" (src/nvc_info.c), and the driver's compute
 * mode cannot be changed there (the guide: "Modifiable state features
 * (ECC, Compute mode, Persistence mode) will not be supported"), which
 * MPS sharing needs (EXCLUSIVE_PROCESS). NVML reaches /dev/dxg through
 * libdxcore.so, which the toolkit's hook always gives, but which nvidia-ctk's
 * CDI specs there (one device, all) can miss ("Could not locate
 * libdxcore.so", nvidia-container-toolkit#1739), the device plugin's own
 * in CDI mode too: a gateway there takes Docker's --gpus, and where Docker
 * (29.2 and later) sends that through the host's spec, NVML is proven in a
 * container first. The host is known by what its
 * daemon reports (`docker info`): a kernel of Microsoft's WSL2 build
 * ("5.15.153.1-microsoft-standard-WSL2"), and Docker Desktop by its
 * OperatingSystem.
 */
#ifndef OPENSHELL_GATEWAY_WSL2_H
#define OPENSHELL_GATEWAY_WSL2_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "gateway/gpu/mig.h"

enum wsl2_host { WSL2_NO, WSL2_ENGINE, WSL2_DOCKER_DESKTOP };

/* Which the daemon whose `docker info` is INFO runs on. */
enum wsl2_host wsl2_of_info(const cJSON *info);

/* Docker Desktop's settings that give its engine the GPUs. */
#define WSL2_DESKTOP_SETTINGS \
	"Settings > General > Use the WSL 2 based engine (on by default), with NVIDIA's driver for WSL installed on Windows"

/* A GPU request on such a host: a count or a list of GPUs, a MIG strategy,
 * --gpu-mode cdi, MPS sharing or DRA (DRA: --gpu-allocation dra) is refused (OS_EXIT_FAILURE),
 * naming why and what works instead; 0 when nothing needs it or it can be served. GPUS (NULL: none
 * asked) and CDI (--gpu-mode cdi) are always the user's; MIG, SHARING (NULL: none) and DRA are
 * the user's for a new gateway (JOINING NULL), else those of gateway
 * JOINING, which a node there joins. */
struct gpus;
struct sharing;
int wsl2_check(const struct gpus *gpus, int cdi, enum mig_strategy mig, const struct sharing *sharing, int dra,
	       const char *joining, enum wsl2_host host, os_error *err);

/* The host's GPUs could not be listed in a container given them (ERR says
 * so): where NVML did not initialise there and the daemon (D) gives
 * --gpus through the CDI spec, ERR becomes that cause and its fix. */
struct daemon_gpus;
void wsl2_explain_probe(const struct daemon_gpus *d, os_error *err);

#endif
