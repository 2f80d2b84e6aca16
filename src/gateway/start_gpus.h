/* gateway/start_gpus.h - a new gateway's GPUs, checked on the Docker host
 * before anything of it is created.
 *
 * Which of the host's GPUs a selection means (their UUIDs, for the
 * entrypoint to keep), whether MPS can share them, and with CDI whether
 * the daemon has their device names: each refused with its fix while
 * nothing exists yet. The host's GPUs are looked at only when a choice
 * needs them, with a throwaway container of the cluster image (so after
 * gpu_mode_choose(), whose mode the look takes); on WSL2 also where Docker
 * gives --gpus through the CDI spec, whose NVML the look proves
 * (gateway/wsl2.h).
 *
 * When that image is still to be built or pulled, which takes minutes,
 * what can be refused without it is refused first: with CDI the selection
 * against the daemon's device names, with no container at all; else (and
 * for MPS, whose limits only nvidia-smi tells) the same look with another
 * cluster image that is here. Where there is none, the look waits for the
 * image, as it would anyway.
 */
#ifndef OPENSHELL_GATEWAY_START_GPUS_H
#define OPENSHELL_GATEWAY_START_GPUS_H

#include "base/error.h"
#include "gateway/deploy.h"
#include "gateway/gpu_mode.h"

/* Before o->image is built or pulled: the checks above that need no
 * container of it, on a daemon that offers D; each docker call within
 * timeout_ms. *looked is set when the host's GPUs were looked at (and
 * o->gpu_uuids filled), for start_gpus_check(). */
int start_gpus_precheck(struct deploy_opts *o, const struct daemon_gpus *d, int timeout_ms, int *looked,
			os_error *err);

/* Check o's GPUs and fill o->gpu_uuids, on a daemon that offers D, once
 * o->image is here; the host's GPUs are not looked at again when LOOKED.
 * Each docker call within timeout_ms. Without o->gpu, nothing. */
int start_gpus_check(struct deploy_opts *o, const struct daemon_gpus *d, int looked, int timeout_ms, os_error *err);

/* A kept gateway keeps its GPUs: 0 when its container holds those o asks
 * for (none, all, N, or these), else the conflict error naming both. */
struct gw_container;
int start_gpus_adopt(const struct deploy_opts *o, const struct gw_container *c, os_error *err);

#endif
