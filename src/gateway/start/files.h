/* gateway/start/files.h - a gateway's files on the host: its kubeconfig and
 * metadata.json.
 *
 * The kubeconfig is k3s's own k3s.yaml, read from the container, with its
 * server rewritten to the published address and its names made the
 * gateway's (kube/kubeconfig.h); metadata.json records what was made. Both
 * are written atomically, 0600, under $XDG_CONFIG_HOME/openshell/gateways/NAME;
 * with --update-kubeconfig the kubeconfig is merged into the user's too.
 */
#ifndef OPENSHELL_GATEWAY_FILES_H
#define OPENSHELL_GATEWAY_FILES_H

#include "base/error.h"
#include "gateway/deploy/deploy.h"
#include "gateway/start/start.h"
#include "gateway/wait/wait.h"

/* Fills r->server, r->kubeconfig (and r->user_kubeconfig, r->user_backup);
 * a read of k3s.yaml cut by the wait's deadline is its timeout. */
int gateway_write_files(const struct deploy_plan *p, const struct wait_ctx *w, struct start_result *r,
			os_error *err);
/* The same from K3S_YAML, the text of CONTAINER's k3s.yaml read
 * elsewhere (the GPU wait's watch: gateway/wait/wait.h, struct wait_file). */
int gateway_write_files_from(const struct deploy_plan *p, const char *container, const char *k3s_yaml,
			     struct start_result *r, os_error *err);

#endif
