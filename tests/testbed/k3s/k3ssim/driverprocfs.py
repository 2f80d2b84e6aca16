"""The NVIDIA kernel module's procfs as a process of the gateway reads it
(open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c): one directory
per GPU under /proc/driver/nvidia/gpus, named for its PCI bus ID, whose
`information` gives its UUID and device minor. NVML's GetMinorNumber and
the CDI specs' device nodes (/dev/nvidia<minor>) name GPUs by that minor.
A MIG-enabled GPU's instances are capabilities/gpu<minor>/mig/gi<G>
(nvidia-caps), whose `access` files give the device minors of
/dev/nvidia-caps/nvidia-cap<N>, the nodes a MIG device needs.
"""

import os

GPUS = "/proc/driver/nvidia/gpus"


def gpus():
    """[{bus (lower case, 4-digit domain), uuid, minor}] of the driver's GPUs."""
    out = []
    try:
        buses = sorted(os.listdir(GPUS))
    except OSError:
        return out
    for bus in buses:
        fields = {}
        try:
            with open(os.path.join(GPUS, bus, "information"), encoding="utf-8") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    fields[key.strip()] = value.strip()
            out.append({"bus": bus.lower(), "uuid": fields.get("GPU UUID", ""), "minor": int(fields["Device Minor"])})
        except (OSError, KeyError, ValueError):
            continue
    return out


def _minor(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "DeviceFileMinor":
                return int(value)
    raise ValueError(path)


def mig_caps(minor):
    """[(GI id, GI capability minor, CI capability minor)] of GPU MINOR's GPU
    instances, by id, each with its compute instance 0
    (capabilities/gpu<minor>/mig/gi<G>/access and gi<G>/ci0/access)."""
    base = os.path.join(os.path.dirname(GPUS), "capabilities", "gpu%d" % minor, "mig")
    out = []
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        if not name.startswith("gi") or not name[2:].isdigit():
            continue
        try:
            out.append((int(name[2:]), _minor(os.path.join(base, name, "access")),
                        _minor(os.path.join(base, name, "ci0", "access"))))
        except (OSError, ValueError):
            continue
    return sorted(out)
