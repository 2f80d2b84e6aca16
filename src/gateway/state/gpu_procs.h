/* gateway/state/gpu_procs.h - the processes on a gateway's GPUs, each named by
 * the pod's container it runs in.
 *
 * A node's nvidia-smi lists the processes that hold a context on its GPUs
 * (--query-compute-apps: PID, GPU UUID, memory; a process on a MIG device
 * under its GPU), and the node's /proc says each one's cgroup, which names
 * its pod's UID and its container's ID (kube/pod_cgroup.h): the pods'
 * statuses (an init container's too) turn those into namespace/pod/
 * container. A process in no pod's cgroup, or whose PID the node's
 * container cannot see (a driver that reports the host's PIDs), has no
 * pod; one of a pod that has ended, or read without the pods, has its
 * pod's UID alone.
 * Part of a node's one exec (gateway/state/gpu_view.h).
 */
#ifndef OPENSHELL_GATEWAY_GPU_PROCS_H
#define OPENSHELL_GATEWAY_GPU_PROCS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define GPU_PROCS_MARK "#openshell-gpus-procs"
/* The node's part of the look: the mark, then a line a process, "PID UUID
 * MIB" and its first kubepods line of /proc/PID/cgroup (none when it has
 * none). A constant, of the shell's builtins but nvidia-smi. */
#define GPU_PROCS_SCRIPT                                                                                   \
	"echo '" GPU_PROCS_MARK "'; nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory "                \
	"--format=csv,noheader,nounits 2>/dev/null | while IFS=', ' read -r p u m; do c=; "                    \
	"while read -r l; do case $l in *kubepods*) c=$l; break ;; esac; done 2>/dev/null </proc/$p/cgroup; " \
	"printf '%s %s %s %s\\n' \"$p\" \"$u\" \"$m\" \"$c\"; done"

/* A pod's container that holds a GPU, or runs a process on one. */
struct gpu_holder {
	char *ns, *pod, *container;   /* all NULL: none named */
};
void gpu_holder_set(struct gpu_holder *h, const char *ns, const char *pod, const char *container);
/* "namespace/pod/container", as tables show it (owned). */
char *gpu_holder_text(const struct gpu_holder *h);
int gpu_holder_same(const struct gpu_holder *a, const struct gpu_holder *b);
void gpu_holder_free(struct gpu_holder *h);

struct gpu_proc {
	const char *node;       /* its node's name, as the view's rows have it */
	int index;              /* its GPU's index on the node; -1 not a row's */
	char *uuid;             /* its GPU's */
	long long pid, mem_mib; /* -1 unknown */
	char *pod_uid;          /* the pod its cgroup names, or NULL: no pod's */
	struct gpu_holder holder;   /* that pod's container; none named: ended, or
	                            * the pods were not read */
};

struct gpu_procs {
	struct gpu_proc *v;
	size_t n;
};

/* Read TEXT, the lines after the mark in NODE's look (NODE must outlive
 * the list), naming each process from POD_LIST, the server's kubectl List
 * with the pods (NULL: none named). Appended to P. */
void gpu_procs_read(const char *text, const char *node, const cJSON *pod_list, struct gpu_procs *p);
void gpu_procs_free(struct gpu_procs *p);

#endif
