"""The NVIDIA device plugin (k8s-device-plugin's cmd/nvidia-device-plugin,
chart 0.17 to 0.20), registering GPUs with the kubelet's device manager.

- Its configuration (api/config/v1): the file the config manager chose
  (the chart's ConfigMap entry config.default, read here from the
  ConfigMap the pod mounts; version must be v1; sharing.timeSlicing or
  sharing.mps resources with replicas >= 2), under the flags of its
  environment (MIG_STRATEGY, DEVICE_LIST_STRATEGY, DEVICE_ID_STRATEGY,
  FAIL_ON_INIT_ERROR), printed as "Running with config:".
- The GPUs: those its NVML finds (`nvidia-smi -L` in the gateway, the
  simulated NVML: the GPUs whose /dev/nvidiaN the gateway has, of those
  the runtime gave the pod), UUIDs by default, indices with
  DEVICE_ID_STRATEGY=index; none: "No devices found. Waiting
  indefinitely." and nothing registered.
- MIG (internal/rm/rm.go, device_map.go): none counts a MIG GPU whole;
  single makes each MIG device an nvidia.com/gpu (all GPUs MIG, one
  profile, or a fatal error); mixed registers nvidia.com/mig-<profile>
  beside the whole GPUs' nvidia.com/gpu.
- Sharing (internal/rm/devices.go): each GPU registered REPLICAS times
  as UUID::K; MPS waits for the MPS control daemon first ("Failed to start
  plugin: error waiting for MPS daemon", retried every SIM_PLUGIN_RETRY
  seconds, the real plugin's 30) and is refused on MIG devices.
- Health (internal/rm/health.go): SIM_GPU_XID=I[,I] marks those GPUs
  (the plugin's order) unhealthy with Xid 79, one device per GPU (its
  parentToDeviceMap keeps one replica: the last here); they stay so.
- Allocate (internal/plugin/server.go getAllocateResponse), the allocated
  GPUs (a replica is its GPU) by deviceListStrategy: envvar,
  NVIDIA_VISIBLE_DEVICES=ID,...; volume-mounts, NVIDIA_VISIBLE_DEVICES=
  /var/run/nvidia-container-devices and /dev/null mounted at
  /var/run/nvidia-container-devices/ID; cdi-cri, the CRI's CDI devices
  k8s.device-plugin.nvidia.com/gpu=ID and no variable. The kubelet's
  runtime (kubelet/nvidia_runtime.py) decides what the container gets.
- CDI (cdi-cri, cdi-annotations): at its start the plugin writes its CDI
  spec to /var/run/cdi from the driver root, /driver-root in its
  container (CONTAINER_DRIVER_ROOT), which the chart mounts only when
  nvidiaDriverRoot is set; without libcuda.so.VERSION there it stops with
  the toolkit's "failed to locate" (internal/lookup/root/root.go,
  inferVersion).
- WSL2 (go-nvlib pkg/nvlib/info: the platform is WSL when libdxcore.so
  loads, ahead of NVML and Tegra; internal/rm/wsl_devices.go,
  device_map.go, 0.19.1 and later): one device whose ID is "all", for
  every GPU behind /dev/dxg, whatever the GPUs and the MIG strategy; its
  health is not checked (the base resource manager's CheckHealth is
  disabled); sharing makes all::K replicas of it.
- SIM_PLUGIN_CRASHLOOP=1: at once the non-NVML platform's errors, exit 1
  (also when switched on while it runs); SIM_PLUGIN_CRASH_QUIET without its
  last line. A fatal configuration error exits 1 as main.go does.
Startup takes SIM_PLUGIN_DELAY seconds (NVML's initialisation).
"""

import glob
import json
import os

import yaml

from .. import config, logs
from . import nvml

MAIN_FATAL = ("error starting plugins: error getting plugins: unable to create plugins: failed to construct "
              "resource managers: error building device map: error building device map from config.resources: ")


class Fatal(Exception):
    pass


def _klog(ctx, sev, where, msg):
    ctx.log.write(logs.klog(sev, where, msg).rstrip("\n"))


def _load_config(ctx):
    """The plugin's config file: the default entry of the ConfigMap the
    pod mounts as available-configs, or None."""
    vols = {v.get("name"): v for v in ctx.pod.get("spec", {}).get("volumes") or []}
    cm_name = (vols.get("available-configs") or {}).get("configMap", {}).get("name")
    if not cm_name or not ctx.env.get("CONFIG_FILE"):
        return None
    cm = ctx.api.find(ctx.api.registry.by_kind("v1", "ConfigMap"), ctx.pod["metadata"]["namespace"], cm_name)
    data = (cm or {}).get("data") or {}
    init = next((c for c in ctx.pod["spec"].get("initContainers") or [] if c.get("command") == ["config-manager"]), {})
    default = next((e.get("value") for e in init.get("env") or [] if e.get("name") == "DEFAULT_CONFIG"), "")
    name = default or (next(iter(data)) if len(data) == 1 else "")
    if name not in data:
        return None
    try:
        doc = yaml.safe_load(data[name]) or {}
    except yaml.YAMLError as e:
        raise Fatal("unable to load config: unable to finalize config: unable to parse config file: %s" % e)
    if doc.get("version") != "v1":
        raise Fatal("unable to load config: unable to parse config file: unknown version: %s" % doc.get("version"))
    return doc


def _sharing(doc):
    """("timeSlicing"|"mps"|None, replicas, the config's JSON shape)."""
    sharing = (doc or {}).get("sharing") or {}
    for kind in ("timeSlicing", "mps"):
        for r in (sharing.get(kind) or {}).get("resources") or []:
            if r.get("name") != "nvidia.com/gpu":
                continue
            if "replicas" not in r:
                raise Fatal("unable to load config: unable to parse config file: no replicas specified")
            if int(r["replicas"]) < 2:
                raise Fatal("unable to load config: unable to parse config file: number of replicas must be >= 2")
            return kind, int(r["replicas"]), {kind: {"resources": [{"name": "nvidia.com/gpu",
                                                                    "replicas": int(r["replicas"])}]}}
    return None, 1, {"timeSlicing": {}}


CDI_KIND = "k8s.device-plugin.nvidia.com/gpu"
DEVICES_ROOT = "/var/run/nvidia-container-devices"


class Plugin:
    """The plugin's gRPC servers, as the device manager sees them."""

    def __init__(self, strategy):
        self.strategies = strategy.split(",")

    def allocate(self, resource, ids):
        seen = []
        for i in ids:
            g = i.split("::")[0]
            if g not in seen:
                seen.append(g)
        answer = {"envs": {}, "mounts": [], "cdi_devices": []}
        if "cdi-cri" in self.strategies:
            answer["cdi_devices"] = ["%s=%s" % (CDI_KIND, g) for g in seen]
        if "envvar" in self.strategies:
            answer["envs"]["NVIDIA_VISIBLE_DEVICES"] = ",".join(seen)
        if "volume-mounts" in self.strategies:
            answer["envs"]["NVIDIA_VISIBLE_DEVICES"] = DEVICES_ROOT
            answer["mounts"] = [{"container_path": "%s/%s" % (DEVICES_ROOT, g), "host_path": "/dev/null"} for g in seen]
        return answer


def _driver_root(ctx):
    """Where the plugin's driver root is in the gateway: the hostPath
    mounted at CONTAINER_DRIVER_ROOT, else that path itself (which the
    gateway lacks)."""
    root = ctx.env.get("CONTAINER_DRIVER_ROOT") or "/driver-root"
    vols = {v.get("name"): v for v in ctx.pod.get("spec", {}).get("volumes") or []}
    for m in ctx.container.get("volumeMounts") or []:
        if m.get("mountPath") == root:
            return ((vols.get(m.get("name")) or {}).get("hostPath") or {}).get("path", root)
    return root


def _cdi_spec(ctx, gpus):
    """Write the plugin's CDI spec, or Fatal as the toolkit's lookup of the
    driver's libraries fails."""
    root = _driver_root(ctx)
    libs = [p for d in ("usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib", "lib/x86_64-linux-gnu", "lib64")
            for p in glob.glob(os.path.join(root, d, "libcuda.so.*.*"))]
    if not libs:
        raise Fatal("error starting plugins: error getting plugins: unable to create cdi spec file: failed to get CDI "
                    "spec: failed to locate \"libcuda.so.\": pattern libcuda.so.*.* not found")
    names = [str(i) for i in range(len(gpus))] + [g for g, _, _ in gpus] + ["all"]
    os.makedirs(config.CDI_DIRS[-1], exist_ok=True)
    path = os.path.join(config.CDI_DIRS[-1], "k8s.device-plugin.nvidia.com-gpu.yaml")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        yaml.safe_dump({"cdiVersion": "0.5.0", "kind": CDI_KIND, "devices": [{"name": n} for n in names]}, f)
    os.replace(path + ".tmp", path)
    _klog(ctx, "I", "cdi.go:133", "Generated CDI spec %s for driver root %s" % (path, root))


def _resources(ctx, gpus, mig):
    """{resource: [device ids]}, or Fatal. A GPU with MIG enabled is whole
    to none alone: mixed skips one without MIG devices (device_map.go)."""
    whole = [g for g, migs, enabled in gpus if mig == "none" or not (migs or enabled)]
    with_mig = [(g, migs) for g, migs, _ in gpus if migs and mig != "none"]
    res = {}
    if mig == "single" and with_mig:
        if whole:
            raise Fatal(MAIN_FATAL + "all devices on the node must be configured with the same migEnabled value")
        if len({p for _, migs in with_mig for p, _ in migs}) > 1:
            raise Fatal(MAIN_FATAL + "invalid MIG configuration: more than one MIG device type present on node")
        res["nvidia.com/gpu"] = [u for _, migs in with_mig for _, u in migs]
        return res
    for _, migs in with_mig:
        for profile, u in migs:
            res.setdefault("nvidia.com/mig-" + profile.replace("+", "."), []).append(u)
    if whole:
        res["nvidia.com/gpu"] = whole
    return res


def main(ctx):
    env = ctx.env
    _klog(ctx, "I", "main.go:235", '"Starting NVIDIA Device Plugin" version=<SIMULATION>')
    _klog(ctx, "I", "main.go:238", "Starting FS watcher for /var/lib/kubelet/device-plugins")
    _klog(ctx, "I", "main.go:245", "Starting OS watcher.")
    _klog(ctx, "I", "main.go:260", "Starting Plugins.")
    _klog(ctx, "I", "main.go:317", "Loading configuration.")
    if config.switch_on("SIM_PLUGIN_CRASHLOOP"):
        return _crash(ctx)
    if ctx.sleep(config.PLUGIN_DELAY):
        return 0
    _klog(ctx, "I", "main.go:342", "Updating config with default resource matching patterns.")
    plugin = None
    try:
        doc = _load_config(ctx)
        flags = (doc or {}).get("flags") or {}
        mig = env.get("MIG_STRATEGY") or flags.get("migStrategy") or "none"
        strategy = env.get("DEVICE_LIST_STRATEGY") or (flags.get("plugin") or {}).get("deviceListStrategy") or "envvar"
        if isinstance(strategy, list):
            strategy = ",".join(strategy)
        kind, replicas, shape = _sharing(doc)
        _klog(ctx, "I", "main.go:300", "\nRunning with config:\n" + json.dumps(
            {"version": "v1", "flags": {"migStrategy": mig, "failOnInitError": env.get("FAIL_ON_INIT_ERROR", "true") == "true",
                                        "plugin": {"deviceListStrategy": strategy.split(","),
                                                   "deviceIDStrategy": env.get("DEVICE_ID_STRATEGY", "uuid")}},
             "resources": {"gpus": [{"pattern": "*", "name": "nvidia.com/gpu"}]}, "sharing": shape}, indent=2))
        _klog(ctx, "I", "main.go:356", "Retrieving plugins.")
        gpus = nvml.gpus(ctx)
        if env.get("DEVICE_ID_STRATEGY") == "index":
            gpus = [[str(i), migs, enabled] for i, (_, migs, enabled) in enumerate(gpus)]
        if not gpus:
            _klog(ctx, "I", "main.go:416", "No devices found. Waiting indefinitely.")
            ctx.stop.wait()
            return 0
        wsl = nvml.wsl()
        res = {"nvidia.com/gpu": ["all"]} if wsl else _resources(ctx, gpus, mig)
        if any(x.startswith("cdi-") for x in strategy.split(",")):
            _cdi_spec(ctx, gpus)
        if kind == "mps":
            if any(r.startswith("nvidia.com/mig-") for r in res) or (mig == "single" and any(m for _, m, _ in gpus)):
                raise Fatal("error starting plugins: error getting plugins: unable to create plugins: sharing using "
                            "MPS is not supported for MIG devices")
            while not _mps_healthy(ctx):
                _klog(ctx, "E", "main.go:190", "Failed to start plugin: error waiting for MPS daemon: error checking "
                      "MPS daemon health: failed to send command to MPS daemon: exit status 1")
                _klog(ctx, "I", "main.go:191", "Failed to start one or more plugins. Retrying in 30s...")
                if ctx.sleep(config.PLUGIN_RETRY):
                    return 0
            _klog(ctx, "I", "server.go:120", '"MPS daemon is healthy" resource="nvidia.com/gpu"')
        if replicas > 1 and "nvidia.com/gpu" in res:
            res["nvidia.com/gpu"] = ["%s::%d" % (g, k) for g in res["nvidia.com/gpu"] for k in range(replicas)]
        plugin = Plugin(strategy)
        for k, r in enumerate(sorted(res, key=lambda x: (x != "nvidia.com/gpu", x))):
            # Each resource is a plugin of its own, started and registered
            # in turn (main.go startPlugins): the kubelet may post the node
            # between two of them.
            if k and config.PLUGIN_REGISTER_GAP:
                ctx.kubelet.wake.set()
                if ctx.sleep(config.PLUGIN_REGISTER_GAP):
                    return 0
            sock = "nvidia-gpu.sock" if r == "nvidia.com/gpu" else "nvidia-%s.sock" % r.split("/", 1)[1]
            _klog(ctx, "I", "server.go:146", "Starting to serve '%s' on /var/lib/kubelet/device-plugins/%s" % (r, sock))
            ctx.kubelet.devices.register(r, {d: True for d in res[r]}, plugin)
            _klog(ctx, "I", "server.go:154", "Registered device plugin for '%s' with Kubelet" % r)
        ctx.kubelet.wake.set()
        return _serve(ctx, plugin, {} if wsl else res)
    except Fatal as e:
        _klog(ctx, "E", "main.go:177", str(e))
        return 1
    finally:
        if plugin is not None:
            ctx.kubelet.devices.plugin_stopped(plugin)
            ctx.kubelet.wake.set()


def _serve(ctx, plugin, res):
    """ListAndWatch: health updates until stopped (or a crash switched on);
    RES: the devices whose health is checked."""
    sick = set()
    while not ctx.sleep(0.25):
        if config.switch_on("SIM_PLUGIN_CRASHLOOP"):
            return _crash(ctx)
        want = {int(x) for x in config.switch("SIM_GPU_XID").split(",") if x.strip().isdigit()}
        gpu_ids = res.get("nvidia.com/gpu", [])
        parents = []
        last = {}
        for d in gpu_ids:
            p = d.split("::")[0]
            if p not in parents:
                parents.append(p)
            last[p] = d
        for i in sorted(want):
            if i >= len(parents) or parents[i] in sick:
                continue
            dev = last[parents[i]]
            sick.add(parents[i])
            _klog(ctx, "I", "health.go:169", "XidCriticalError: Xid=79 on Device=%s; marking device as unhealthy." % dev)
            _klog(ctx, "I", "server.go:279", "'nvidia.com/gpu' device marked unhealthy: %s" % dev)
            ctx.kubelet.devices.set_health("nvidia.com/gpu", dev, False, plugin)
            ctx.kubelet.wake.set()
    return 0


def _crash(ctx):
    for sev, where, msg in (
            ("W", "factory.go:31", "No valid resources detected, creating a null CDI handler"),
            ("I", "factory.go:104", "Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: "
                                    "cannot open shared object file: No such file or directory"),
            ("I", "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found"),
            ("E", "factory.go:112", "Incompatible strategy detected auto"),
            ("E", "factory.go:113", "If this is a GPU node, did you configure the NVIDIA Container Toolkit?"),
            ("E", "factory.go:114", "You can check the prerequisites at: "
                                    "https://github.com/NVIDIA/k8s-device-plugin#prerequisites"),
            ("E", "factory.go:115", "You can learn how to set the runtime at: "
                                    "https://github.com/NVIDIA/k8s-device-plugin#quick-start"),
            ("E", "factory.go:116", "If this is not a GPU node, you should set up a toleration or nodeSelector to "
                                    "only deploy this plugin on GPU nodes")):
        _klog(ctx, sev, where, msg)
    if not config.switch_on("SIM_PLUGIN_CRASH_QUIET"):
        _klog(ctx, "E", "main.go:177", "error starting plugins: error creating plugin manager: unable to create "
              "plugin manager: invalid device discovery strategy")
    return 1


def _mps_healthy(ctx):
    """Does an MPS control daemon serve on this node (its program says so)?"""
    return bool(ctx.kubelet.mps_serving)
