/* kube/pod_cgroup.h - which pod's container a process runs in, from its cgroup.
 *
 * The kubelet puts each pod in a cgroup under kubepods named by its UID,
 * and the runtime each container in one below it named by its ID, so a
 * process's /proc/PID/cgroup says both. The cgroupfs driver (k3s's
 * default) writes /kubepods[/burstable|/besteffort]/pod<UID>/<ID>; the
 * systemd driver .../kubepods-<qos>-pod<UID, '_' for '-'>.slice/
 * cri-containerd-<ID>.scope (pkg/kubelet/cm/cgroup_manager_linux.go).
 * The reading is of text alone: no file is opened here.
 */
#ifndef OPENSHELL_KUBE_POD_CGROUP_H
#define OPENSHELL_KUBE_POD_CGROUP_H

#define POD_UID_LEN 36        /* a UUID's text */
#define CONTAINER_ID_LEN 64   /* containerd's: 64 hex digits */

struct pod_cgroup {
	char pod_uid[POD_UID_LEN + 1];
	char container_id[CONTAINER_ID_LEN + 1];
};

/* Read LINE, a line of /proc/PID/cgroup ("8:pids:/kubepods/…" or
 * "0::/kubepods.slice/…"): 1 with OUT filled, 0 when it names no pod's
 * container. */
int pod_cgroup_parse(const char *line, struct pod_cgroup *out);

#endif
