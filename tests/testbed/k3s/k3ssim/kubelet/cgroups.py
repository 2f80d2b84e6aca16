"""A container's cgroup, as the kubelet and runc make it.

The kubelet's cgroupfs driver (k3s's default) puts a pod under its QoS
class's cgroup: kubepods/pod<UID> (Guaranteed), kubepods/burstable/pod<UID>
or kubepods/besteffort/pod<UID> (pkg/kubelet/cm/qos_container_manager_linux.go,
pod_container_manager_linux.go), and runc puts each container's processes in
a cgroup named by its ID below that (containerd's CRI plugin asks for
<pod cgroup>/<container ID>; runc's libcontainer/cgroups/fs makes it in every
v1 hierarchy, or once in the unified v2 tree). So /proc/PID/cgroup of a pod's
process names its pod's UID and its container's ID, which is how a tool on
the node (nvidia-smi's process list joined to pods) tells pods apart.

SIMULATION: the processes join the cgroups before they exec (a line of the
sh that wraps them), in the gateway container's own cgroup namespace; the
cgroups are removed when the container ends, the pod's once it is empty.
cpuset gets its parent's cpus and mems first, as runc's cpuset.go does. A
hierarchy that refuses (no right to write it) is left out: the process
runs all the same.
"""

import os
import shlex

from .. import config

QOS_DIRS = {"Guaranteed": "", "Burstable": "burstable", "BestEffort": "besteffort"}


def hierarchies(root=None):
    """The cgroup trees a process joins: the unified one, or each v1 one."""
    root = root or config.CGROUP_DIR
    if os.path.exists(os.path.join(root, "cgroup.controllers")):
        return [root]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [os.path.join(root, n) for n in names
            if not os.path.islink(os.path.join(root, n)) and os.path.exists(os.path.join(root, n, "cgroup.procs"))]


def pod_dir(pod_uid, qos):
    parts = ["kubepods", QOS_DIRS.get(qos or "BestEffort", "besteffort"), "pod" + pod_uid]
    return "/".join(p for p in parts if p)


def _make(base, rel):
    """mkdir each level, a cpuset's cpus and mems copied from its parent;
    on a failure what it made is removed again."""
    path, made = base, []
    try:
        for part in rel.split("/"):
            parent, path = path, os.path.join(path, part)
            if os.path.isdir(path):
                continue
            os.mkdir(path)
            made.append(path)
            for f in ("cpuset.cpus", "cpuset.mems"):
                if os.path.exists(os.path.join(path, f)):
                    with open(os.path.join(parent, f)) as src, open(os.path.join(path, f), "w") as dst:
                        dst.write(src.read())
    except OSError:
        for d in reversed(made):
            try:
                os.rmdir(d)
            except OSError:
                pass
        raise
    return path


class Cgroup:
    def __init__(self, pod_uid, qos, cid):
        self.pod = pod_dir(pod_uid, qos)
        self.rel = self.pod + "/" + cid.split("://", 1)[-1]
        self.dirs = []
        for base in hierarchies():
            # A sibling container that ended may remove the pod's cgroup
            # between two of these mkdirs: once more then.
            for _ in range(2):
                try:
                    self.dirs.append((base, _make(base, self.rel)))
                    break
                except FileNotFoundError:
                    continue
                except OSError:
                    break

    def join_line(self):
        """The sh that puts itself in the container's cgroups ("" when none)."""
        if not self.dirs:
            return ""
        files = " ".join(shlex.quote(os.path.join(d, "cgroup.procs")) for _, d in self.dirs)
        return 'for f in %s; do { echo $$ >"$f"; } 2>/dev/null; done' % files

    def remove(self):
        """Its cgroups, and the pod's when no other container is left."""
        for base, d in self.dirs:
            for path in (d, os.path.join(base, self.pod)):
                try:
                    os.rmdir(path)
                except OSError:
                    break
