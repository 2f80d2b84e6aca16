/* gateway/deploy/start_failure.h - a failed or interrupted start, as the one
 * line that names the fix.
 *
 * Docker's own words for a failed `docker run` or `docker start` of the
 * gateway (a CDI or toolkit problem, a port in use, a network removed
 * under a stopped gateway) become one message saying what to do, with
 * Docker's stderr as its detail.
 */
#ifndef OPENSHELL_GATEWAY_START_FAILURE_H
#define OPENSHELL_GATEWAY_START_FAILURE_H

#include "base/error.h"
#include "base/runner.h"
#include "gateway/deploy/deploy.h"

/* Does Docker's stderr say the port to publish is taken (by another
 * container, or by something else on the host)? */
int start_port_taken(const char *docker_stderr);

/* Is the port taken the one published for flannel (deploy_node_port()),
 * which Docker names (":8472" of "Bind for 0.0.0.0:8472 failed", "listen
 * udp4 0.0.0.0:8472")? Another API port does not free it. */
int start_node_port_taken(const struct deploy_plan *p, const char *docker_stderr);

/* RES is docker VERB ("run" or "start") of CONTAINER for the request O,
 * which exited non-zero: sets *err; always -1. */
int start_explain_failure(const struct deploy_plan *p, const char *container, const struct run_result *res,
			  const char *verb, os_error *err);

/* After SIGINT/SIGTERM: what state the gateway of O was left in, as the
 * error (code 128 + the signal): KEPT, its container runs on; REMOVED_OLD,
 * --recreate removed the old one; ROLLED_BACK, what this run had made
 * before the container ran is gone. Always -1. */
int start_explain_interrupt(const struct deploy_plan *p, int kept, int removed_old, int rolled_back, os_error *err);

#endif
