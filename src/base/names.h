/* base/names.h - gateway names and everything derived from them.
 *
 * A gateway name becomes part of a container name, a hostname, a k3s node
 * name and a directory name, so it must be a DNS label: 1-53 characters
 * (hostname "openshell-NAME" stays within 63) of lowercase letters, digits
 * and '-', beginning and ending with a letter or digit. Checked before any
 * docker call, so nothing the user types reaches docker unvetted.
 */
#ifndef OPENSHELL_BASE_NAMES_H
#define OPENSHELL_BASE_NAMES_H

#include <stddef.h>

#include "base/error.h"

#define GATEWAY_DEFAULT_NAME "openshell"
#define GATEWAY_NAME_MAX 53

/* The labels by which openshell recognises what it created. */
#define LABEL_MANAGED "org.openshell.managed-by"
#define LABEL_MANAGED_VALUE "openshell"
#define LABEL_GATEWAY "org.openshell.gateway"
#define LABEL_GPU "org.openshell.gpu"
#define LABEL_NODE "org.openshell.node"     /* an agent's: its node's name in the cluster */
#define CDI_GPU_PREFIX "nvidia.com/gpu="   /* the NVIDIA CDI spec's kind, as nvidia-ctk names it */
/* How NVIDIA says to write the CDI spec Docker reads. */
#define CDI_SPEC_GENERATE "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"
#define LABEL_GPUS "org.openshell.gpus"   /* a CDI gateway's --gpus: its device names lose a count */
/* The host its clients and agents reach the API at, as it was made:
 * with a wildcard bind its first --tls-san, which its container's
 * published address does not say. */
#define LABEL_API_HOST "org.openshell.api-host"
/* Flannel's backend between the nodes' hosts (gateway/state/node_network.h):
 * a resume keeps the network its nodes were made to meet on. */
#define LABEL_NODE_NETWORK "org.openshell.node-network"

/* Whose a container, network or volume is, judged by its labels alone:
 * openshell's for gateway NAME only when managed-by=openshell and
 * gateway=NAME both hold. Every command asks this one predicate. */
enum owner { OWNER_ABSENT, OWNER_OURS, OWNER_FOREIGN };
enum owner labels_owner(const char *managed_by, const char *gateway_label, const char *name);

/* Why an object of type `what` named `object` is not gateway NAME's, in
 * one clause for messages: "container X exists but was not created by
 * openshell (it lacks the labels ...=openshell and ...=NAME)". */
char *labels_foreign_reason(const char *what, const char *object, const char *name);

int gateway_name_check(const char *name, os_error *err);

/* The same rules for a node's name (gateway node add). */
int node_name_check(const char *name, os_error *err);

/* "openshell-cluster-NAME": the container, its network and its volume. */
char *gateway_resource_name(const char *name);
/* "openshell-NAME": the container's hostname, hence the k3s node name. */
char *gateway_hostname(const char *name);

/* A copy of s fit for a one-line message: control and non-ASCII bytes as
 * \xHH, cut to `max` bytes with "..." appended. */
char *printable(const char *s, size_t max);

#endif
