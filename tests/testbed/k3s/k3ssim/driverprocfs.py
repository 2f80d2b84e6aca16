"""The NVIDIA kernel module's procfs as a process of the gateway reads it
(open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c): one directory
per GPU under /proc/driver/nvidia/gpus, named for its PCI bus ID, whose
`information` gives its UUID and device minor. NVML's GetMinorNumber and
the CDI specs' device nodes (/dev/nvidia<minor>) name GPUs by that minor.
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
