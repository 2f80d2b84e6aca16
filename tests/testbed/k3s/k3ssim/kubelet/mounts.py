"""Mount propagation of a container's volumes, as containerd checks it
before it makes the container's spec (internal/cri/opts/spec_linux_opts.go,
ensureShared and ensureSharedOrSlave): a Bidirectional mount's source must
be on a shared mount, a HostToContainer one's on a shared or slave mount,
else the container is not created ("path %q is mounted on %q but it is not
a shared mount"). The mounts are the gateway's own (/proc/self/mountinfo),
where the stand-in's pods run. SIMULATION: nothing is mounted; only the
check is made.
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
