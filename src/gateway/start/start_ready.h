/* gateway/start/start_ready.h - a start's last part: the waits of a gateway
 * whose container runs, its files saved on the way.
 *
 * Ready once every fact the healthcheck judges is seen, not at Docker's
 * next probe (`status` runs the probe itself while Docker's verdict is
 * still "starting"); with --no-wait, once k3s has written its kubeconfig.
 * The files (gateway/start/files.h) are saved once the API answers; with --gpu,
 * from the k3s.yaml the GPU wait reads in the exec of its DaemonSet watch
 * (one docker call fewer), and should that wait end before it came (a
 * sharing change refused, a timeout, an interrupt: the gateway is kept,
 * and so are its files), by a read of their own, the first error kept. A
 * failure to write them (a full or read-only disk) keeps the gateway, and
 * says how to finish.
 */
#ifndef OPENSHELL_GATEWAY_START_READY_H
#define OPENSHELL_GATEWAY_START_READY_H

#include "base/error.h"
#include "gateway/deploy/deploy.h"
#include "gateway/start/start.h"
#include "gateway/wait/wait.h"

/* NEW_VOLUME: this run made the volume (no GPU run's device plugin of an
 * earlier start can be on it). */
int start_ready(const struct deploy_plan *p, struct wait_ctx *w, int new_volume, struct start_result *r,
		os_error *err);

#endif
