"""Which GPUs a container gets: containerd's CDI devices and the NVIDIA
Container Runtime's rules (SIMULATION; there is no containerd here, and a
pod's processes run in the gateway container itself).

- CDI devices from the CRI (the device plugin's cdi-cri strategy, a DRA
  driver's prepared claims):
  containerd resolves each name against the specs in /etc/cdi and
  /var/run/cdi, whatever the runtime handler (containerd
  internal/cri/server/container_create.go, CDI on by default in 2.x); a
  name no spec has fails the container's creation.
- Under an nvidia handler, the runtime's own device list
  (nvidia-container-toolkit internal/config/image/cuda_image.go,
  VisibleDevices), read from its config.toml at each container start as
  the runtime reads it (api/config/v1/config.go):
    1. with accept-nvidia-visible-devices-as-volume-mounts (default
       false), the mounts of /dev/null under /var/run/nvidia-container-devices
       name the devices (the plugin's volume-mounts strategy);
    2. else NVIDIA_VISIBLE_DEVICES, but only from a privileged container
       (CAP_SYS_ADMIN in its bounding set, privileged.go IsPrivileged: under
       containerd, privileged: true or SYS_ADMIN among the added
       capabilities) unless accept-nvidia-visible-devices-envvar-when-
       unprivileged (default true) says otherwise; refused, the container
       gets no GPU ("Ignoring devices requested by environment variable(s)
       in unprivileged container").
  "void", "none" or nothing: no GPU. SIMULATION: the image's own
  environment is not known (images are names), so an image's
  NVIDIA_VISIBLE_DEVICES=all counts only when the pod spec sets it, and the
  legacy-image rule (CUDA_VERSION without NVIDIA_REQUIRE_CUDA means all) is
  not modelled.
- Under runc (or any other handler) the runtime plays no part.
- A privileged container (securityContext.privileged) whose handler's
  table lacks privileged_without_host_devices gets every device node
  containerd sees, the gateway's GPUs', and leave to open any device
  (containerd internal/cri/server/container_create.go: WithHostDevices,
  WithAllDevicesAllowed). Its procfs is its own: /proc/driver/nvidia/params
  is the kernel's, ModifyDeviceFiles: 1 on a default driver, unless its
  runtime masks it (an nvidia handler: the toolkit's
  disable-device-node-modification hook in the specs it makes, 1.18 and
  later, or libnvidia-container's procfs tmpfs); then NVML makes the node
  of every GPU the driver has, and the container sees the host's GPUs
  ("host"); else the gateway's ("all").

The answer is SIM_RUNTIME_DEVICES for the container's processes: the
simulated nvidia-smi shows only those of the gateway's GPUs ("none", "all"
or IDs: UUIDs, or indices with DEVICE_ID_STRATEGY=index), or every GPU of
the driver ("host").
"""

import glob
import os
import tomllib

import yaml

from .. import config, driverprocfs, procs

DEVICES_ROOT = "/var/run/nvidia-container-devices"


class Unresolvable(Exception):
    """A CDI device no spec names: the container cannot be created."""


def runtime_config():
    """The runtime's two accept-* settings, with the toolkit's defaults."""
    try:
        with open(config.NVIDIA_RUNTIME_CONFIG, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        doc = {}
    return (bool(doc.get("accept-nvidia-visible-devices-envvar-when-unprivileged", True)),
            bool(doc.get("accept-nvidia-visible-devices-as-volume-mounts", False)))


def privileged(spec):
    """CAP_SYS_ADMIN in the container's bounding set, as containerd makes it."""
    sc = spec.get("securityContext") or {}
    caps = sc.get("capabilities") or {}
    return bool(sc.get("privileged")) or "SYS_ADMIN" in (caps.get("add") or [])


def _mig_by_cap():
    """{/dev/nvidia-caps/nvidia-cap<GI minor>: MIG UUID}: the MIG device a GPU
    instance's capability node opens. SIMULATION: read from the simulated
    driver's inventory (what NVML would answer in a container with those
    nodes)."""
    out = {}
    try:
        with open(config.NVIDIA_SIM_INVENTORY, encoding="utf-8") as f:
            for line in f:
                w = line.split()
                if len(w) == 7 and w[0] == "mig":
                    out["/dev/nvidia-caps/nvidia-cap%s" % w[5]] = w[3]
    except OSError:
        pass
    return out


def _cdi_specs():
    """{qualified device name: {gpu, mounts, env}} of every CDI spec
    containerd reads. The GPU: the UUID of the one whose node
    /dev/nvidia<minor> its edits add (a DRA driver's claim spec), or of the
    MIG device whose GPU instance's capability node they add, else its
    name (the device plugin's specs name devices by UUID or index,
    SIMULATION: their edits left out). The mounts (host path, container
    path) and the env: the spec's common edits' then the device's."""
    by_minor = {"/dev/nvidia%d" % g["minor"]: g["uuid"] for g in driverprocfs.gpus()}
    by_cap = _mig_by_cap()
    names = {}
    for d in config.CDI_DIRS:
        for path in sorted(glob.glob(os.path.join(d, "*.yaml")) + glob.glob(os.path.join(d, "*.json"))):
            try:
                with open(path, encoding="utf-8") as f:
                    spec = yaml.safe_load(f) or {}
            except (OSError, yaml.YAMLError):
                continue
            common = spec.get("containerEdits") or {}
            for dev in spec.get("devices") or []:
                edits = dev.get("containerEdits") or {}
                nodes = [n.get("path") for n in edits.get("deviceNodes") or []]
                gpu = next((by_cap[n] for n in nodes if n in by_cap), None) or \
                    next((by_minor[n] for n in nodes if n in by_minor), None)
                names["%s=%s" % (spec.get("kind"), dev.get("name"))] = {
                    "gpu": gpu or str(dev.get("name")),
                    "mounts": [(m.get("hostPath"), m.get("containerPath")) for e in (common, edits)
                               for m in e.get("mounts") or []],
                    "env": [v for e in (common, edits) for v in e.get("env") or []]}
    return names


class CdiEdits:
    """What the CDI devices of a container's answers give it: GPUs, their
    mounts (binds: host and container paths; mounts: the container paths),
    and environment variables, which
    override the container's own (container-device-interface
    ContainerEdits.Apply)."""

    def __init__(self, answers):
        names = [n for a in answers for n in a.get("cdi_devices", [])]
        known = _cdi_specs() if names else {}
        missing = [n for n in names if n not in known]
        if missing:
            raise Unresolvable("unresolvable CDI devices " + ", ".join(missing))
        self.gpus = [known[n]["gpu"] for n in names]
        self.binds = list(dict.fromkeys(b for n in names for b in known[n]["mounts"]))
        self.mounts = [c for _, c in self.binds]
        self.env = dict(v.split("=", 1) for n in names for v in known[n]["env"] if "=" in v)


def host_devices(spec, options):
    """Does containerd give the container the host's devices (above)?"""
    sc = spec.get("securityContext") or {}
    return bool(sc.get("privileged")) and not (options or {}).get("privileged_without_host_devices", False)


_KERNEL_PROCFS = os.path.join(config.RUN_DIR, "kernel-procfs")


PARAMS = "/proc/driver/nvidia/params"
DISABLE_HOOK = "disable-device-node-modification"


def kernel_params():
    """/proc/driver/nvidia/params as a fresh procfs shows it: the kernel's,
    not what a process of the gateway bound over it (gpu-isolate.sh); a
    path, or None where the driver has none. A bind of /proc/driver that is
    not recursive shows the file beneath that mount (SIMULATION: the sim
    host's procfs is itself a bind, host/sim-procfs)."""
    view = os.path.join(_KERNEL_PROCFS, "nvidia", "params")
    if not os.path.exists(PARAMS):
        return None
    if not os.path.exists(view):
        os.makedirs(_KERNEL_PROCFS, exist_ok=True)
        procs.run(["mount", "--bind", "/proc/driver", _KERNEL_PROCFS], timeout=10)
    return view if os.path.exists(view) else None


def masks_params(handler, hooks):
    """Does the container's runtime mask ModifyDeviceFiles? An nvidia
    handler's does (the toolkit's hook in the CDI specs it makes, 1.18 and
    later, or libnvidia-container's procfs tmpfs: nvc_mount.c
    mount_procfs); any other only through a createContainer hook of its
    base spec, the toolkit's disable-device-node-modification."""
    return handler.startswith("nvidia") or any(DISABLE_HOOK in (h.get("args") or []) for h in hooks)


def pod_procfs(handler, hooks, ns):
    """The container's /proc/driver/nvidia/params in its mount namespace NS
    (runtime.MountNamespace): a pod gets a procfs of its own, so the
    kernel's file, not the gateway's masked one, then its base spec's
    createContainer hooks. An nvidia handler's container keeps the masked
    view: its runtime masks it as the hook would."""
    if handler.startswith("nvidia"):
        return
    view = kernel_params()
    if view:
        ns.bind(view, PARAMS)
    for i, h in enumerate(hooks):
        ns.hook(i, h)


def kernel_modifies_device_files():
    """ModifyDeviceFiles as a fresh procfs says it (kernel_params())."""
    for path in (kernel_params(), PARAMS):
        if not path:
            continue
        try:
            with open(path, encoding="ascii") as f:
                return any(line.strip() == "ModifyDeviceFiles: 1" for line in f)
        except OSError:
            continue
    return False


def _ids(value):
    value = (value or "").strip()
    if value in ("", "void", "none"):
        return []
    return ["all"] if value == "all" else [v.strip() for v in value.split(",") if v.strip()]


def devices(handler, spec, env, answers, options=None, hooks=(), cdi=None):
    """The devices the container gets, as SIM_RUNTIME_DEVICES says them;
    Unresolvable when a CDI device has no spec. OPTIONS: its handler's
    runtime table in containerd's config; HOOKS: its base spec's
    createContainer hooks; CDI: the answers' CdiEdits, when made already
    (ENV then holds their variables)."""
    if cdi is None:
        cdi = CdiEdits(answers)
        env = dict(env, **cdi.env)
    got = list(cdi.gpus)
    if handler.startswith("nvidia"):
        accept_env, accept_mounts = runtime_config()
        mounts = [m["container_path"] for a in answers for m in a.get("mounts", [])
                  if m.get("host_path") == "/dev/null" and m.get("container_path", "").startswith(DEVICES_ROOT + "/")]
        if accept_mounts and mounts:
            got += [p[len(DEVICES_ROOT) + 1:] for p in mounts]
        elif accept_env or privileged(spec):
            got += _ids(env.get("NVIDIA_VISIBLE_DEVICES"))
    if host_devices(spec, options):
        return "host" if not masks_params(handler, hooks) and kernel_modifies_device_files() else "all"
    if "all" in got:
        return "all"
    return ",".join(dict.fromkeys(got)) or "none"
