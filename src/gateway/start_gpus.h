/* gateway/start_gpus.h - a new gateway's GPUs, checked on the Docker host
 * before anything of it is created.
 *
 * Which of the host's GPUs a selection means (their UUIDs, for the
 * entrypoint to keep), whether MPS can share them, and with CDI whether
 * the daemon has their device names: each refused with its fix while
 * nothing exists yet. The host's GPUs are looked at only when a choice
 * needs them, with a throwaway container of the cluster image (so after
 * the image is there, and after gpu_mode_choose(), whose mode the look
 * takes).
 */
#ifndef OPENSHELL_GATEWAY_START_GPUS_H
#define OPENSHELL_GATEWAY_START_GPUS_H

#include "base/error.h"
#include "gateway/deploy.h"
#include "gateway/gpu_mode.h"

/* Check o's GPUs and fill o->gpu_uuids, on a daemon that offers D; each
 * docker call within timeout_ms. Without o->gpu, nothing. */
int start_gpus_check(struct deploy_opts *o, const struct daemon_gpus *d, int timeout_ms, os_error *err);

#endif
