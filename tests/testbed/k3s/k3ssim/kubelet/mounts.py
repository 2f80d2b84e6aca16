"""A container's mounts, in the mount namespace of its own that its
process runs in (runtime.MountNamespace), where the stand-in's pods run in
the gateway's filesystem.

- Propagation, as containerd checks it before it makes the container's
  spec (internal/cri/opts/spec_linux_opts.go, ensureShared and
  ensureSharedOrSlave): a Bidirectional mount's source must be on a shared
  mount, a HostToContainer one's on a shared or slave mount, else the
  container is not created ("path %q is mounted on %q but it is not a
  shared mount"). The mounts are the gateway's own (/proc/self/mountinfo).
- hostPath volumes (the kubelet's makeMounts, containerd's WithMounts):
  each volumeMount's host path bound recursively (rbind, CRI's default)
  at its mountPath, a missing host path made a directory, the mount point
  made as runc makes it, shallower
  destinations first (containerd sorts them by depth, so that none hides
  another). SIMULATION: other volume kinds are not mounted; readOnly and
  the propagation are not applied (the check above is made).
- CDI mounts (container-device-interface ContainerEdits.Apply): each
  mount's hostPath bound at its containerPath. One whose host and
  container paths are the same is the file the gateway's root shows
  already, so no bind is made (the stand-in's root is the gateway's).
"""

import os

from .. import config


def _mount_of(path):
    """(mount point, its optional fields) of the mount PATH is on."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and path != "/":
        path = os.path.dirname(path)
    path = os.path.realpath(path)
    best, tags = "/", []
    try:
        with open(config.MOUNTINFO, encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if "-" not in fields:
                    continue
                mp = fields[4].encode().decode("unicode_escape")
                if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best):
                    best, tags = mp, fields[6:fields.index("-")]
    except OSError:
        pass
    return best, tags


def propagation_error(pod, container):
    """Why containerd refuses the container's mounts, or None."""
    vols = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for m in container.get("volumeMounts") or []:
        prop = m.get("mountPropagation")
        host = ((vols.get(m.get("name")) or {}).get("hostPath") or {}).get("path")
        if prop not in ("Bidirectional", "HostToContainer") or not host:
            continue
        mp, tags = _mount_of(host)
        shared = any(t.startswith("shared:") for t in tags)
        slave = any(t.startswith("master:") for t in tags)
        if prop == "Bidirectional" and not shared:
            return 'path "%s" is mounted on "%s" but it is not a shared mount' % (host, mp)
        if prop == "HostToContainer" and not (shared or slave):
            return 'path "%s" is mounted on "%s" but it is not a shared or slave mount' % (host, mp)
    return None


def _depth(dst):
    return len([p for p in dst.split("/") if p])


def bind_volumes(pod, container, ns):
    """The container's hostPath volumeMounts into NS (MountNamespace)."""
    vols = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    binds = []
    for m in container.get("volumeMounts") or []:
        host = ((vols.get(m.get("name")) or {}).get("hostPath") or {}).get("path")
        if host and m.get("mountPath"):
            if not os.path.exists(host):
                os.makedirs(host, exist_ok=True)   # containerd's WithMounts makes a missing source a directory
            binds.append((host, m["mountPath"]))
    _bind_all(binds, ns)


def bind_cdi(binds, ns):
    """CDI mounts [(hostPath, containerPath)] into NS."""
    _bind_all([(h, c) for h, c in binds if h and c and os.path.normpath(h) != os.path.normpath(c)], ns)


def _bind_all(binds, ns):
    for host, dst in sorted(binds, key=lambda b: _depth(b[1])):
        ns.bind(host, dst, create=True, directory=os.path.isdir(host), recursive=True)
