/* docker/attach.h - docker commands that run on the user's terminal.
 *
 * `gateway logs` and `gateway exec` hand the terminal to docker: stdin,
 * stdout and stderr are inherited (the runner's interactive mode), so
 * output streams as it comes and a TTY stays a TTY. Nothing is captured;
 * docker prints its own errors, and its exit status is the result.
 */
#ifndef OPENSHELL_DOCKER_ATTACH_H
#define OPENSHELL_DOCKER_ATTACH_H

#include "base/error.h"

/* Run `docker ARGS…` attached, on ON (docker/client.h). timeout_ms 0: no deadline (for --follow
 * and interactive shells). On success *status is docker's exit status
 * (128 + N when killed by signal N). -1 when docker could not be run or
 * the deadline passed. */
struct docker_target;
int docker_attach(const struct docker_target *on, const char *const *args, int timeout_ms, int *status, os_error *err);

#endif
