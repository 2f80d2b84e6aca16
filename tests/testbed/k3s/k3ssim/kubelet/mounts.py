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
  at its mountPath (subPath not taken), a missing host path made a
  directory (a failure a CreateContainerError), the mount point
  made as runc makes it, shallower
  destinations first (containerd sorts them by depth, so that none hides
  another). SIMULATION: other volume kinds are not mounted; readOnly and
  the propagation are not applied (the check above is made).
- CDI mounts (container-device-interface pkg/cdi/container-edits.go
  Apply): each mount's hostPath bound at its containerPath, sorted by
  depth with the volumes' (Apply sorts the spec's mounts). One whose host
  and container paths are the same is the file the gateway's root shows
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


def bind(pod, container, cdi_binds, ns):
    """The container's hostPath volumeMounts and its CDI mounts
    [(hostPath, containerPath)] into NS (MountNamespace), all sorted by
    depth together, as the OCI spec's mounts are; None, or containerd's
    error when a missing source cannot be made."""
    vols = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    binds = []
    for m in container.get("volumeMounts") or []:
        host = ((vols.get(m.get("name")) or {}).get("hostPath") or {}).get("path")
        if host and m.get("mountPath"):
            try:
                if not os.path.exists(host):
                    os.makedirs(host, exist_ok=True)   # containerd's WithMounts makes a missing source
            except OSError as e:
                return 'failed to mkdir "%s": mkdir %s: %s' % (host, host, (e.strerror or "").lower())
            binds.append((host, m["mountPath"]))
    binds += [(h, c) for h, c in cdi_binds if h and c and os.path.normpath(h) != os.path.normpath(c)]
    for host, dst in sorted(binds, key=lambda b: _depth(b[1])):
        ns.bind(host, dst, create=True, directory=os.path.isdir(host), recursive=True)
    return None
