/* kube/kubeconfig.h - the gateway's kubeconfig, derived from k3s.yaml.
 *
 * k3s writes /etc/rancher/k3s/k3s.yaml for use inside the container: its
 * server is https://127.0.0.1:6443 and every name is "default". For the
 * host, the server must be the published address, and distinct names let
 * the file sit beside other clusters' entries. The rewrite goes through
 * libyaml's document API, so certificates and keys pass through untouched
 * and nothing is parsed by hand. The text holds credentials: callers write
 * it 0600 and never print it.
 */
#ifndef OPENSHELL_KUBE_KUBECONFIG_H
#define OPENSHELL_KUBE_KUBECONFIG_H

#include <stddef.h>

#include "base/error.h"

#define K3S_KUBECONFIG_PATH "/etc/rancher/k3s/k3s.yaml"

/* Set every clusters[].cluster.server to `server`, and every cluster,
 * user and context named "default" (and current-context) to `name`. */
int kubeconfig_rewrite(const char *in, size_t len, const char *server, const char *name,
		       char **out, size_t *out_len, os_error *err);

/* Merge the clusters, contexts and users of `add` into `base` (an entry of
 * the same name is replaced, all others are kept in place) and make add's
 * current-context the current one, as `kind` and `k3d` do. An empty base
 * yields add. Comments in base are not kept (libyaml does not load them). */
int kubeconfig_merge(const char *base, size_t base_len, const char *add, size_t add_len,
		     char **out, size_t *out_len, os_error *err);

/* Remove the cluster, context and user named `name` from a kubeconfig, and
 * its current-context when it names them (another is kept). *removed says
 * whether there was anything to remove. */
int kubeconfig_remove(const char *base, size_t base_len, const char *name, char **out, size_t *out_len,
		      int *removed, os_error *err);

/* The server of the current context's cluster (or of the first cluster),
 * newly allocated; used to check a written file. */
int kubeconfig_server(const char *in, size_t len, char **server, os_error *err);

#endif
