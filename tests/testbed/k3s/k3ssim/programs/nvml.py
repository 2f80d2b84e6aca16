"""NVML as NVIDIA's pods reach it (SIMULATION: go-nvml's answers read from
the simulated nvidia-smi, in the environment the runtime gave the pod, and
from the driver's procfs), shared by the device plugin and the DRA
driver's kubelet plugin.

- gpus(): the GPUs the container sees, their MIG devices and MIG mode
  (nvmlDeviceGetCount, GetUUID, GetMigMode, GetMigDeviceHandleByIndex);
- info(): each GPU's attributes as the DRA driver reads them
  (cmd/gpu-kubelet-plugin/nvlib.go: name, memory, PCI bus ID, minor,
  CUDA compute capability, driver and CUDA driver versions). The minor
  is the driver's (GetMinorNumber), as its procfs shows it
  (driverprocfs.py);
- wsl(): the platform is WSL when libdxcore.so loads (go-nvlib
  pkg/nvlib/info), ahead of NVML.
"""

import os

from .. import driverprocfs, procs

# Where the dynamic loader finds libdxcore.so in the plugin's container:
# the toolkit puts WSL's libraries in the library directory (libnvidia-
# container's libs_dir), nvidia-ctk's CDI spec leaves them in /usr/lib/wsl/lib.
DXCORE_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/wsl/lib")


def wsl():
    return any(os.path.exists(os.path.join(d, "libdxcore.so")) for d in DXCORE_DIRS)


def _which(tool):
    return any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ.get("PATH", "").split(":"))


def _smi(ctx, args):
    """nvidia-smi ARGS as the container's processes run it: (exit, text)."""
    env = {k: v for k, v in os.environ.items() if k != "SIM_RUNTIME_DEVICES"}
    if "SIM_RUNTIME_DEVICES" in ctx.env:
        env["SIM_RUNTIME_DEVICES"] = ctx.env["SIM_RUNTIME_DEVICES"]
    if not _which("nvidia-smi"):
        return 9, ""
    code, text, _ = procs.run(["nvidia-smi"] + args, env=env, timeout=10)
    return code, text.decode("utf-8", "replace")


def gpus(ctx):
    """[[uuid, [(profile, mig uuid)], MIG enabled]] of the GPUs NVML finds
    in the container (the simulated NVML: the device nodes the gateway has,
    as the nvidia runtime hands them to this pod)."""
    code, text = _smi(ctx, ["-L"])
    out = []
    for line in text.splitlines() if code == 0 else []:
        if line.startswith("GPU ") and "(UUID: " in line:
            out.append([line.rsplit("(UUID: ", 1)[1].rstrip(")"), [], False])
        elif line.startswith("  MIG ") and out and "(UUID: " in line:
            out[-1][1].append((line.split()[1], line.rsplit("(UUID: ", 1)[1].rstrip(")")))
    if out:
        _, text = _smi(ctx, ["--query-gpu=uuid,mig.mode.current", "--format=csv,noheader"])
        enabled = {u.strip() for u, _, m in (ln.partition(",") for ln in text.splitlines()) if m.strip() == "Enabled"}
        for g in out:
            g[2] = g[0] in enabled
    return out


def info(ctx):
    """[{uuid, name, memory_mib, bus, minor, cc, driver, cuda}] of the GPUs
    the container sees, in NVML's order; a GPU whose minor the procfs
    lacks is left out (NVML fails GetMinorNumber on it)."""
    code, text = _smi(ctx, ["--query-gpu=uuid,name,memory.total,pci.bus_id,driver_version,compute_cap",
                            "--format=csv,noheader,nounits"])
    if code != 0:
        return []
    _, table = _smi(ctx, [])
    cuda = next((ln.split("CUDA Version:", 1)[1].split()[0] for ln in table.splitlines() if "CUDA Version:" in ln), "")
    minors = {g["bus"]: g["minor"] for g in driverprocfs.gpus()}
    out = []
    for line in text.splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) != 6 or not f[2].isdigit():
            continue
        bus = f[3].lower()
        # nvidia-smi prints 8 hex digits of domain, the procfs 4.
        short = bus[4:] if len(bus.split(":")[0]) == 8 else bus
        minor = minors.get(short, minors.get(bus))
        if minor is None:
            continue
        out.append({"uuid": f[0], "name": f[1], "memory_mib": int(f[2]), "bus": short, "minor": minor,
                    "cc": f[5], "driver": f[4], "cuda": cuda})
    return out
