/* gateway/deploy/start_gpus.h - a new gateway's GPUs, checked on the Docker host
 * before anything of it is created.
 *
 * Which of the host's GPUs a selection means (their UUIDs, for the
 * entrypoint to keep), whether MPS can share them, and with CDI whether
 * the daemon has their device names: each refused with its fix while
 * nothing exists yet. The host's GPUs are looked at only when a choice
 * needs them, with a throwaway container of the cluster image (so after
 * start_gpus_mode(), whose mode the look takes); on WSL2 also where Docker
 * gives --gpus through the CDI spec, whose NVML the look proves
 * (gateway/gpu/wsl2.h).
 *
 * When that image is still to be built or pulled, which takes minutes,
 * what can be refused without it is refused first: with CDI the selection
 * against the daemon's device names, with no container at all; else (and
 * for MPS, whose limits only nvidia-smi tells) the same look with another
 * cluster image that is here. Where there is none, the look waits for the
 * image, as it would anyway.
 *
 * Also the GPU choices of gateway/gpu/ made for a deploy plan: the mode,
 * a kept gateway's mode and MIG strategy, the host's check, what WSL2
 * refuses, and the option a message suggests.
 */
#ifndef OPENSHELL_GATEWAY_START_GPUS_H
#define OPENSHELL_GATEWAY_START_GPUS_H

#include "base/error.h"
#include "gateway/deploy/deploy.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/wsl2.h"
#include "gateway/state/lookup.h"

/* Before p->image is built or pulled: the checks above that need no
 * container of it, on a daemon that offers D; each docker call within
 * timeout_ms. *looked is set when the host's GPUs were looked at (and
 * p->gpu_uuids filled), for start_gpus_check(). */
int start_gpus_precheck(struct deploy_plan *p, const struct daemon_gpus *d, int timeout_ms, int *looked,
			os_error *err);

/* Check the GPUs asked for and fill p->gpu_uuids, on a daemon that offers D, once
 * p->image is here; the host's GPUs are not looked at again when LOOKED.
 * Each docker call within timeout_ms. Without p->req->gpu, nothing. */
int start_gpus_check(struct deploy_plan *p, const struct daemon_gpus *d, int looked, int timeout_ms, os_error *err);

/* A kept gateway keeps its GPUs: 0 when its container holds those asked
 * for (none, all, N, or these), else the conflict error naming both. */
int start_gpus_adopt(const struct deploy_plan *p, const struct gw_container *c, os_error *err);

/* For a new gateway: the mode p->req->gpu_mode asks for on this daemon, in
 * p->cdi. Whether the daemon's host has the toolkit is the daemon's own
 * verdict when the container is made (gpu_errors.h), not a guess from
 * this machine's PATH. */
int start_gpus_mode(struct deploy_plan *p, const struct daemon_gpus *d, os_error *err);

/* With CDI, the selection's device names must be the daemon's (after the
 * host's GPUs were checked, which names what the host lacks better). */
int start_gpus_cdi_names(const struct deploy_plan *p, const struct daemon_gpus *d, os_error *err);

/* For a kept gateway: its mode and MIG strategy stand; an --gpu-mode or
 * --mig-strategy that contradicts them is a conflict. */
int start_gpus_adopt_mode(struct deploy_plan *p, const struct gw_container *c, os_error *err);

/* The option that asks for what the request asks: "", " --gpu" or " --gpus SEL", for
 * the commands that messages suggest (owned). */
char *start_gpus_option(const struct deploy_plan *p);

/* The Docker host's GPUs (host_gpus_probe() with IMAGE, p->image or any
 * other image that can run it) into H, and a selection other than all
 * checked against them: its GPUs' UUIDs go to p->gpu_uuids, for the
 * entrypoint to keep. Before anything of the gateway is created. */
int start_gpus_look_host(struct deploy_plan *p, const char *image, int timeout_ms, struct host_gpus *h, os_error *err);

/* wsl2_check() of the GPUs asked for (none without --gpu), --gpu-mode and MIG
 * strategy, with SHARING (NULL: none) and JOINING as it takes them. */
int start_gpus_wsl2(const struct deploy_plan *p, const struct sharing *sharing, const char *joining, enum wsl2_host host,
		    os_error *err);

#endif
