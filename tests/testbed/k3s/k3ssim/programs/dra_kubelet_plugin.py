"""NVIDIA's DRA driver's kubelet plugin, gpu-kubelet-plugin
(kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin, the chart's
`gpus` container), as the kubelet and the API see it.

- The GPUs: those NVML finds in its container (programs/nvml.py), each a
  device gpu-<minor> (deviceinfo.go CanonicalName) with the attributes of
  GpuInfo.Attributes(): type, uuid, productName, brand, architecture
  (from the compute capability, as go-nvml's GetArchitecture names it),
  cudaComputeCapability, driverVersion and cudaDriverVersion as semantic
  versions, resource.kubernetes.io/pciBusID; capacity memory.
  SIMULATION: no pcieRoot (the sim host has no PCI topology in sysfs; the
  real plugin leaves it out too when it cannot resolve it), no
  addressingMode, no VFIO; brand is always Nvidia.
- MIG (nvlib.go, mig.go; the DynamicMIG gate off): a GPU with MIG mode on
  is published as its MIG devices only, none when it has none (with the
  plugin's warning); each is gpu-<parent minor>-mig-<profile without
  dots>-<GI profile ID>-<placement start>, type mig, with its uuid,
  parentUUID and profile besides the parent's attributes, capacity memory
  and memorySlice<N> for each memory slice it holds. Prepared, its CDI
  device adds the parent's node and its GPU and compute instances'
  /dev/nvidia-caps nodes (cdi.go; minors from the driver's procfs), and a
  GpuConfig aimed at it fails the claim ("cannot apply GpuConfig to device
  … of type "mig""). SIMULATION: the profile IDs and placements are the
  A100/H100 layout's (1g 19, +me 20, a 1g of a quarter of the memory 15
  with two slices, 2g 14, 3g 9, 4g 5, 7g 0; each device at the first start
  its memory slices fit, in GPU-instance order), the memory the profile's
  name says (not NVML's MemorySizeMB); no engine or multiprocessor counts.
- Publishing (k8s.io/dynamic-resource-allocation resourceslice/
  resourceslicecontroller.go): one pool named for the node, one slice,
  generateName "<index, 5 hex digits>-gpu.nvidia.com-<node>-", owned by
  the Node (controller: true); a slice of this driver and node already
  there is updated in place, its generation kept, as the controller syncs
  its pool; one deleted is made again (SIMULATION: the controller's watch
  is a check every second).
- Registration (kubeletplugin/draplugin.go): the plugin's socket in
  plugins_registry, which the kubelet's plugin watcher registers
  (kubelet/dramanager.py); gone when the container stops.
- NodePrepareResources (driver.go nodePrepareResource, device_state.go
  Prepare, cdi.go CreateClaimSpecFile): the claim's results for this driver
  and pool; a transient CDI spec per claim, CDI_ROOT/k8s.gpu.nvidia.com-
  claim_<claim uid>.yaml, kind k8s.gpu.nvidia.com/claim, a device
  <claim uid>-gpu-<minor> per allocated GPU whose edits are its device
  node /dev/nvidia<minor> (the common edits: the control devices, the
  driver's files such as nvidia-smi, NVIDIA_VISIBLE_DEVICES=void so that
  no runtime adds GPUs of its own); the answer names
  k8s.gpu.nvidia.com/claim=<claim uid>-gpu-<minor> per device. A device
  it does not publish fails the claim: "error preparing devices for claim
  <ns>/<name>:<uid>: prepare devices failed: allocatable not found for
  device …". The claim's opaque GpuConfig (programs/gpuconfig.py) is
  read, validated against the FEATURE_GATES, and its time-slicing applied
  to the claim's GPUs with the driver root's nvidia-smi, or its MPS
  control daemon started and waited for (programs/dra_mps.py, whose CDI
  edits the devices of its group get), before the spec is written; its
  errors fail the claim as "error preparing devices for claim …: prepare
  devices failed: …". SIMULATION: the plugin's own checkpoint
  (plugins/gpu.nvidia.com/checkpoint.json) is not written; what a claim
  set is kept in memory for its unprepare.
- NodeUnprepareResources: the claim's MPS control daemons are stopped,
  its GPUs get time slice Default again (the time-slicing gate on), and
  its CDI spec is removed.
Startup takes SIM_PLUGIN_DELAY seconds (NVML's initialisation).

The DaemonSet's init container runs hack/kubelet-plugin-prestart.sh
(prestart() here): /driver-root is the driver root under the
driver-root-parent volume; it must hold nvidia-smi (opt/bin, usr/bin,
usr/sbin, bin, sbin) and libnvidia-ml.so.1 (the library directories) and
`nvidia-smi --version` must succeed; else it says what it found and tries
again every 10 s (SIM_PLUGIN_RETRY, 2 s by default), with the driver-root advice every
sixth attempt.
"""

import glob
import os

import yaml

from .. import clock, config, driverprocfs, logs, procs, status
from . import dra_mps, gpuconfig, nvml

DRIVER = "gpu.nvidia.com"
CDI_VENDOR = "k8s." + DRIVER
CDI_CLASS = "claim"
CDI_KIND = CDI_VENDOR + "/" + CDI_CLASS
INDEX_DIGITS = 5    # resourceslicecontroller.go resourceSliceIndexMinLength

# The architecture NVML names (go-nvlib GetArchitectureAsString), from the
# compute capability: by its major, where a minor splits one (7.5 Turing,
# 8.9 Ada Lovelace) by both.
ARCHITECTURES = {"3": "Kepler", "5": "Maxwell", "6": "Pascal", "7": "Volta", "7.5": "Turing", "8": "Ampere",
                 "8.9": "Ada Lovelace", "9": "Hopper", "10": "Blackwell", "12": "Blackwell"}


def architecture(cc):
    return ARCHITECTURES.get(cc) or ARCHITECTURES.get(cc.split(".")[0], "Unknown")


def _klog(ctx, sev, where, msg):
    ctx.log.write(logs.klog(sev, where, msg).rstrip("\n"))


def _semver(v):
    """semver.MustParse(v).String() of a dotted version: three parts."""
    parts = (v.split(".") + ["0", "0"])[:3]
    return ".".join(str(int(p)) if p.isdigit() else p for p in parts)


def _quantity(mib):
    """resource.NewQuantity(bytes, BinarySI).String() of MIB mebibytes."""
    return "%dGi" % (mib // 1024) if mib % 1024 == 0 else "%dMi" % mib


def device(g):
    """The slice's device for GPU G (nvml.info)."""
    return {"name": "gpu-%d" % g["minor"],
            "attributes": {"type": {"string": "gpu"}, "uuid": {"string": g["uuid"]},
                           "productName": {"string": g["name"]}, "brand": {"string": "Nvidia"},
                           "architecture": {"string": architecture(g["cc"])},
                           "cudaComputeCapability": {"version": _semver(g["cc"])},
                           "driverVersion": {"version": _semver(g["driver"])},
                           "cudaDriverVersion": {"version": _semver(g["cuda"])},
                           "resource.kubernetes.io/pciBusID": {"string": g["bus"]}},
            "capacity": {"memory": {"value": _quantity(g["memory_mib"])}}}


# MIG (mig.go, partitions.go): a GPU instance profile's ID as nvidia-smi
# mig -lgip lists it, by compute slices ("+me": the media extensions'
# variant), its memory slices, and where it may start among a GPU's eight.
MIG_PROFILE_IDS = {1: 19, 2: 14, 3: 9, 4: 5, 7: 0}
MIG_SLICES = {1: 1, 2: 2, 3: 4, 4: 4, 7: 8}
MIG_STARTS = {1: range(7), 2: (0, 2, 4), 3: (0, 4), 4: (0,), 7: (0,)}


def _mig_shape(profile, gpu_mib):
    """(profile ID, memory slices, placement starts, memory MiB) of PROFILE
    ("1g.10gb") on a GPU of GPU_MIB: a 1g profile with a quarter of the
    memory or more is the two-slice one (1g.20gb of 80 GB, profile 15)."""
    g = int(profile.split("g", 1)[0])
    gb = int(profile.split(".", 1)[1].split("gb", 1)[0])
    if g == 1 and gb * 1024 * 5 >= gpu_mib:
        return 15, 2, (0, 2, 4, 6), gb * 1024
    return (20 if profile.endswith("+me") and g == 1 else MIG_PROFILE_IDS.get(g, 19), MIG_SLICES.get(g, 1),
            MIG_STARTS.get(g, (0,)), gb * 1024)


def mig_devices(g, migs, caps):
    """The slice's devices for the MIG devices MIGS [(profile, uuid)] of GPU
    G, its GPU instances CAPS [(GI id, GI minor, CI minor)] in the same
    order (NVML walks MIG devices by GPU instance), each at the first
    placement its memory slices fit."""
    out, used = [], set()
    for (profile, uuid), (_, gi, ci) in zip(migs, caps):
        pid, size, starts, mib = _mig_shape(profile, g["memory_mib"])
        start = next((s for s in starts if not used & set(range(s, s + size))), starts[0])
        used |= set(range(start, start + size))
        d = device(g)
        d["name"] = "gpu-%d-mig-%s-%d-%d" % (g["minor"], profile.replace(".", "").replace("+", "-"), pid, start)
        d["attributes"].update({"type": {"string": "mig"}, "uuid": {"string": uuid},
                                "parentUUID": {"string": g["uuid"]}, "profile": {"string": profile}})
        d["capacity"] = dict({"memory": {"value": _quantity(mib)}},
                             **{"memorySlice%d" % i: {"value": "1"} for i in range(start, start + size)})
        d["mig"] = {"parent_minor": g["minor"], "gi_minor": gi, "ci_minor": ci, "uuid": uuid}
        out.append(d)
    return out


def node_devices(ctx, gpus):
    """Each GPU as a device, or a MIG-enabled one as its MIG devices
    (nvlib.go enumerateGpusAndMigDevices): the GPU itself is not published
    then, and one without MIG devices not at all."""
    migs = {u: (m, on) for u, m, on in nvml.gpus(ctx)}
    out = []
    for g in gpus:
        m, on = migs.get(g["uuid"], ([], False))
        if not on:
            out.append(device(g))
        elif not m:
            _klog(ctx, "W", "nvlib.go:322", "Physical GPU %s has MIG mode enabled but no configured MIG devices"
                  % device(g)["name"])
        else:
            out += mig_devices(g, m, driverprocfs.mig_caps(g["minor"]))
    return out


def publish(ctx, node, devices):
    """Sync the node's pool: its one slice created, or brought up to date in
    place (at most one update: the generation is kept, syncPool's "Kept
    generation because at most one update API call is necessary")."""
    res = ctx.kubelet.res("resource.k8s.io/v1", "ResourceSlice")
    devices = [{k: v for k, v in d.items() if k != "mig"} for d in devices]
    mine = [s for s in ctx.api.list(res)[0]
            if s["spec"].get("driver") == DRIVER and s["spec"].get("nodeName") == node]
    if mine:
        s = mine[0]
        if s["spec"].get("devices") != devices:
            s["spec"]["devices"] = devices
            ctx.api.update(res, s, check_rv=False)
        return s["metadata"]["name"]
    owner = ctx.api.find(ctx.kubelet.res("v1", "Node"), None, node) or {"metadata": {}}
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"generateName": "%0*x-%s-%s-" % (INDEX_DIGITS, 0, DRIVER, node),
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                             "uid": owner["metadata"].get("uid", ""), "controller": True}]},
           "spec": {"driver": DRIVER, "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}
    created, _ = ctx.api.create(res, obj)
    return created["metadata"]["name"]


class Plugin:
    """The plugin's DRA gRPC service, as the kubelet's DRA manager calls it."""

    def __init__(self, ctx, node, gpus, migs=()):
        self.ctx = ctx
        self.node = node
        self.by_name = {"gpu-%d" % g["minor"]: g for g in gpus}
        self.migs = {d["name"]: d["mig"] for d in migs}
        self.cdi_root = ctx.env.get("CDI_ROOT") or config.CDI_DIRS[-1]
        # Claim UID: its whole GPUs (SIMULATION: the plugin's checkpoint
        # keeps them; its MPS daemons are found by their directories).
        self.whole = {}
        self.waits = dra_mps.Waits()

    def klog(self, sev, where, msg):
        _klog(self.ctx, sev, where, msg)

    @property
    def driver_root(self):
        """/driver-root of the plugin's container, as a path of the gateway."""
        return _driver_root(self.ctx)

    def _spec_path(self, uid):
        # container-device-interface GenerateTransientSpecName.
        return os.path.join(self.cdi_root, "%s-%s_%s.yaml" % (CDI_VENDOR, CDI_CLASS, uid.replace("/", "_")))

    def _common_edits(self):
        """nvcdi's common edits (GetCommonEdits): the control device nodes,
        the driver's user-space files from the driver root (SIMULATION: those
        the runtime hook put in the gateway: nvidia-smi,
        nvidia-cuda-mps-control and the libraries), and
        NVIDIA_VISIBLE_DEVICES=void so that no runtime adds GPUs."""
        root = self.ctx.env.get("NVIDIA_DRIVER_ROOT") or "/"
        files = ["usr/bin/nvidia-smi", "usr/bin/nvidia-cuda-mps-control"] + sorted(
            os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "usr/lib/x86_64-linux-gnu", "lib*.so.*"))
            if os.path.basename(p).startswith(("libcuda.so.", "libnvidia-ml.so.")))
        mounts = [{"hostPath": os.path.join(root, f), "containerPath": "/" + f,
                   "options": ["ro", "nosuid", "nodev", "rbind", "rprivate"]}
                  for f in files if os.path.exists(os.path.join(root, f))]
        return {"env": ["NVIDIA_VISIBLE_DEVICES=void"],
                "deviceNodes": [{"path": "/dev/nvidiactl"}, {"path": "/dev/nvidia-uvm"}, {"path": "/dev/nvidia-uvm-tools"}],
                "mounts": mounts}

    def smi(self, *args):
        """The driver root's nvidia-smi (nvlib.go setComputeMode,
        setTimeSlice): None, or Go's error of the run, "exit status N",
        what it printed going to the plugin's log (klog.Errorf)."""
        root = self.driver_root
        smi = _find(root, SMI_DIRS, "nvidia-smi")
        if not smi:
            return "nvidia-smi not found in the driver root"   # unreached: the plugin's start refuses that root
        code, out, err = procs.run([os.path.join(root, smi[len("/driver-root/"):])] + list(args), timeout=10)
        if code == 0:
            return None
        where = "nvlib.go:851" if args[:1] == ("compute-policy",) else "nvlib.go:870"   # setTimeSlice, setComputeMode
        _klog(self.ctx, "E", where, "\n" + (out + err).decode("utf-8", "replace"))
        # Go's exec.ExitError: a child ended by a signal (procs.run's timeout
        # kills) is named by it, as strsignal does.
        if code < 0:
            return "signal: " + {9: "killed", 15: "terminated", 6: "aborted"}.get(-code, "signal %d" % -code)
        return "exit status %d" % code

    def _timeslice(self, uuids, n):
        """sharing.go TimeSlicingManager.SetTimeSlice (nvlib.go): compute mode
        DEFAULT on every GPU, then the time slice on every GPU."""
        for u in uuids:
            said = self.smi("-i", u, "-c", "DEFAULT")
            if said:
                return "error setting compute mode: error running nvidia-smi: %s" % said
        for u in uuids:
            said = self.smi("compute-policy", "-i", u, "--set-timeslice", str(n))
            if said:
                return "error setting time slice: error running nvidia-smi: %s" % said
        return None

    def _uuid(self, device):
        return self.migs[device]["uuid"] if device in self.migs else self.by_name[device]["uuid"]

    def _sharing(self, claim, results):
        """The claim's configs, normalized and validated, by config
        (device_state.go prepareDevices): ([(sharing, [its results])] of
        those that share, None) or (None, the error)."""
        gates = gpuconfig.feature_gates(self.ctx.env.get("FEATURE_GATES"))
        try:
            configs = gpuconfig.configs_for((claim.get("status") or {}).get("allocation"), DRIVER)
            groups = {}
            for r in results:
                mig = r["device"] in self.migs
                cfg = gpuconfig.config_of(configs, r.get("request"), r["device"], "mig" if mig else "gpu")
                sharing = gpuconfig.normalize_validate(cfg, gates)
                if sharing:
                    groups.setdefault(id(cfg), (sharing, []))[1].append(r)
            return list(groups.values()), None
        except gpuconfig.ConfigError as e:
            return None, str(e)

    def _apply(self, uid, groups, specs):
        """applySharingConfig for each group, MPS's first (so that the
        wait for a daemon does not set time slices again on each pass):
        None, PENDING, or the error ("error applying config: …"). A
        group's MPS daemon's CDI edits go to its devices' specs."""
        for sharing, results in sorted(groups, key=lambda g: g[0]["strategy"] != "MPS"):
            requests = "[%s]" % " ".join(r.get("request") or "" for r in results)
            devices = [r["device"] for r in results]
            whole = sorted(self.by_name[d]["uuid"] for d in devices if d in self.by_name)
            conflict = gpuconfig.other_config(sharing)
            if sharing["strategy"] == "TimeSlicing":
                said = conflict or self._timeslice(whole, gpuconfig.timeslice(sharing))
                if said:
                    return "error applying config: error %s timeslice config for requests '%s' in claim '%s': %s" % (
                        "getting" if conflict else "setting", requests, uid, said)
                continue
            if conflict:
                return "error applying config: error getting MPS configuration: %s" % conflict
            daemon = dra_mps.Daemon(self, uid, [self._uuid(d) for d in devices], whole)
            said = daemon.start(sharing["mpsConfig"])
            if said:
                return "error applying config: error starting MPS control daemon: %s" % said
            said = self.waits.check(daemon)
            if said:
                return said if said is dra_mps.PENDING else "error applying config: %s" % said
            edits = daemon.cdi_edits()
            for spec in specs:
                if spec["name"][len(uid) + 1:] in devices:
                    ce = spec["containerEdits"]
                    ce["env"] = ce.get("env", []) + edits["env"]
                    ce["mounts"] = ce.get("mounts", []) + edits["mounts"]
        return None

    def prepare(self, claim):
        """NodePrepareResources for one claim: ([device], None) or (None, error)."""
        md = claim["metadata"]
        cs = "%s/%s:%s" % (md.get("namespace"), md.get("name"), md.get("uid"))
        results = [r for r in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get(
            "results") or [] if r.get("driver") == DRIVER]
        out, specs = [], []
        for r in results:
            g, m = self.by_name.get(r.get("device")), self.migs.get(r.get("device"))
            if g is None and m is None:
                return None, ('error preparing devices for claim %s: prepare devices failed: allocatable not '
                              'found for device "%s"' % (cs, r.get("device")))
            name = "%s-%s" % (md["uid"], r["device"])
            # A MIG device: its parent's node, then its GPU and compute
            # instances' capability nodes (cdi.go).
            nodes = (["/dev/nvidia%d" % m["parent_minor"], "/dev/nvidia-caps/nvidia-cap%d" % m["gi_minor"],
                      "/dev/nvidia-caps/nvidia-cap%d" % m["ci_minor"]] if m else ["/dev/nvidia%d" % g["minor"]])
            specs.append({"name": name, "containerEdits": {"deviceNodes": [{"path": p} for p in nodes]}})
            out.append({"requestNames": [r.get("request")], "poolName": r.get("pool"), "deviceName": r["device"],
                        "cdiDeviceIDs": ["%s=%s" % (CDI_KIND, name)]})
        groups, err = self._sharing(claim, results)
        err = err or self._apply(md["uid"], groups, specs)
        if err is dra_mps.PENDING:
            return None, err
        if err:
            return None, "error preparing devices for claim %s: prepare devices failed: %s" % (cs, err)
        # Its whole GPUs, which unprepare sets back.
        self.whole[md["uid"]] = sorted(self.by_name[r["device"]]["uuid"] for r in results if r["device"] in self.by_name)
        os.makedirs(self.cdi_root, exist_ok=True)
        path = self._spec_path(md["uid"])
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            yaml.safe_dump({"cdiVersion": "0.5.0", "kind": CDI_KIND, "devices": specs,
                            "containerEdits": self._common_edits()}, f)
        os.replace(path + ".tmp", path)
        _klog(self.ctx, "I", "driver.go:422", "Returning newly prepared devices for claim '%s': %s" % (cs, out))
        return out, None

    def unprepare(self, namespace, name, uid):
        """NodeUnprepareResources: with the MPS gate on, the claim's MPS
        control daemons stopped (dra_mps.py); with the time-slicing gate
        on, its whole GPUs back to compute mode DEFAULT and time slice
        Default, whether or not it set one (device_state.go:
        TimeSliceApplied is never false); its CDI spec gone."""
        gates = gpuconfig.feature_gates(self.ctx.env.get("FEATURE_GATES"))
        for daemon in dra_mps.Daemon.of_claim(self, uid) if gates.get("MPSSupport") else ():
            err = daemon.stop()
            if err:
                return "error stopping MPS control daemon: %s" % err
        err = self._timeslice(self.whole.get(uid, []), 0) if gates.get("TimeSlicingSettings") else None
        if err:
            return err   # the kubelet tries again
        self.whole.pop(uid, None)
        try:
            os.unlink(self._spec_path(uid))
        except FileNotFoundError:
            pass
        return None


SMI_DIRS = ("opt/bin", "usr/bin", "usr/sbin", "bin", "sbin")
NVML_DIRS = ("usr/lib64", "usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib64", "lib/x86_64-linux-gnu",
             "lib/aarch64-linux-gnu")


def _driver_root(ctx):
    """/driver-root in the gateway: the driver-root-parent volume's host
    path joined with the driver root's last component."""
    want = ctx.env.get("NVIDIA_DRIVER_ROOT") or "/"
    vols = {v.get("name"): v for v in ctx.pod.get("spec", {}).get("volumes") or []}
    parent = ((vols.get("driver-root-parent") or {}).get("hostPath") or {}).get("path", "/driver-root-parent")
    return os.path.join(parent, os.path.basename(want.rstrip("/")))


def _find(root, dirs, name):
    return next((os.path.join("/driver-root", d, name) for d in dirs if os.path.isfile(os.path.join(root, d, name))),
                None)


def prestart(ctx):
    root = _driver_root(ctx)
    want = ctx.env.get("NVIDIA_DRIVER_ROOT") or "/"
    ctx.log.write("create symlink: /driver-root -> /driver-root-parent/%s" % os.path.basename(want.rstrip("/")))
    attempt = 0
    while True:
        smi, nvml_lib = _find(root, SMI_DIRS, "nvidia-smi"), _find(root, NVML_DIRS, "libnvidia-ml.so.1")
        try:
            contents = "  ".join(sorted(os.listdir(root)))
        except OSError:
            contents = ""
        ctx.log.write("%s  /driver-root (%s on host): nvidia-smi: %s, libnvidia-ml.so.1: %s, current contents: [%s]."
                      % (clock.rfc3339(), want, "'%s'" % smi if smi else "not found",
                         "'%s'" % nvml_lib if nvml_lib else "not found", contents))
        if smi and nvml_lib:
            ctx.log.write("invoke: env -i LD_PRELOAD=%s %s --version" % (nvml_lib, smi))
            code, out, _ = procs.run([os.path.join(root, smi[len("/driver-root/"):]), "--version"], timeout=10)
            for line in out.decode("utf-8", "replace").splitlines():
                ctx.log.write(line)
            if code == 0:
                ctx.log.write("nvidia-smi returned with code 0: success, leave")
                return 0
            ctx.log.write("exit code: %d" % code)
        if attempt % 6 == 0:
            ctx.log.write("")
            ctx.log.write("Check failed. Has the NVIDIA GPU driver been set up? It is expected to be installed under "
                          "NVIDIA_DRIVER_ROOT (currently set to '%s') in the host filesystem. If that path appears to "
                          "be unexpected: review the DRA driver's 'nvidiaDriverRoot' Helm chart variable. Otherwise, "
                          "review if the GPU driver has actually been installed under that path." % want)
            ctx.log.write("")
        if ctx.sleep(config.PLUGIN_RETRY):
            return 0
        attempt += 1


def main(ctx):
    """NewDriver: the plugin registers (kubeletplugin.Start), then publishes;
    the ResourceSlice controller keeps the slice as published while the
    plugin runs (a deleted or changed one is made again)."""
    node = ctx.env.get("NODE_NAME") or ctx.kubelet.node
    _klog(ctx, "I", "main.go:254", "Starting NVIDIA GPU kubelet plugin (SIMULATION) on node %s" % node)
    if ctx.sleep(config.PLUGIN_DELAY):
        return 0
    gpus = nvml.info(ctx)
    devices = node_devices(ctx, gpus)
    for d in devices:
        _klog(ctx, "I", "driver.go:484", "About to announce device %s" % d["name"])
    plugin = Plugin(ctx, node, [g for g in gpus if device(g)["name"] in {d["name"] for d in devices}],
                    [d for d in devices if "mig" in d])
    ctx.kubelet.dra.register(DRIVER, plugin)
    try:
        while True:
            try:
                publish(ctx, node, devices)
            except status.ApiError as e:
                _klog(ctx, "E", "resourceslicecontroller.go:389", "Syncing pool failed: %s" % e)
            if ctx.sleep(1):
                return 0
    finally:
        ctx.kubelet.dra.unregister(DRIVER, plugin)
        _klog(ctx, "I", "main.go:272", "shutdown")
