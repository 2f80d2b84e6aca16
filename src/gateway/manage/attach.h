/* gateway/manage/attach.h - a gateway's container on the user's terminal:
 * `gateway exec` and `gateway kubectl`, and `gateway logs`.
 *
 * docker gets the terminal (docker/attach.h): stdin, stdout and stderr
 * inherited, nothing captured, docker's own errors and exit status. There
 * is no deadline: a shell stays open, a pager reads, --follow follows, as
 * long as the user likes.
 */
#ifndef OPENSHELL_GATEWAY_ATTACH_H
#define OPENSHELL_GATEWAY_ATTACH_H

#include "base/error.h"
#include "gateway/state/lookup.h"
#include "kube/kubeconfig.h"

/* Where an exec's KUBECONFIG points: k3s's own kubeconfig in the container. */
#define GATEWAY_EXEC_KUBECONFIG K3S_KUBECONFIG_PATH

/* CMD (PREFIX first, when given: "kubectl") in GW's running container with
 * KUBECONFIG=GATEWAY_EXEC_KUBECONFIG, stdin passed through, and a TTY when
 * stdin and stdout are terminals (docker exec -t fails on a pipe). On
 * success *STATUS is the command's exit status. */
int gateway_exec_attached(const struct gateway *gw, const char *prefix, char *const *cmd, int *status,
			  os_error *err);

/* GW's container's logs, as `docker logs` prints them: FOLLOW keeps on,
 * TAIL >= 0 the last TAIL lines alone. On success *STATUS is docker's. */
int gateway_logs_attached(const struct gateway *gw, int follow, int tail, int *status, os_error *err);

#endif
