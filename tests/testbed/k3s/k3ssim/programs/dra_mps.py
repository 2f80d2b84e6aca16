"""NVIDIA's DRA driver's MPS sharing, as its kubelet plugin runs it for a
claim whose GpuConfig asks for strategy MPS with the MPSSupport gate on
(kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1:
cmd/gpu-kubelet-plugin/sharing.go MpsManager and MpsControlDaemon,
device_state.go applySharingConfig and unprepareDevices,
templates/mps-control-daemon.tmpl.yaml).

- Per claim and config group, a control daemon whose ID is "<claim
  UID>-<the first 5 hex digits of the SHA-256 of the group's device
  UUIDs, sorted, joined by commas>", its directories
  <plugins dir>/gpu.nvidia.com/mps/<ID>/{pipe,shm,log}.
- Start: nothing when its Deployment mps-control-daemon-<ID> exists
  already; else the directories, shm a tmpfs (rw, nosuid, nodev, noexec,
  size half of MemTotal), compute mode EXCLUSIVE_PROCESS on the group's
  whole GPUs (nvidia-smi -i UUID -c EXCLUSIVE_PROCESS), then the
  Deployment from the template: in the plugin's namespace, on its node
  (nodeName), hostPID, the plugin's image and service account, one
  privileged container running the template's script (sh -c: the control
  daemon started in the driver root, through chroot where it has a shell,
  the active thread percentage and pinned memory limits set, then
  "startup complete" in startup.log, which its startup probe reads), with
  CUDA_VISIBLE_DEVICES the group's UUIDs and FEATURE_GATES every gate the
  plugin knows, as featuregates.ToMap() gives them (gpuconfig.DEFAULT_GATES,
  the plugin's own over them), in the namespace of NAMESPACE ("default"
  unless set),
  the driver root, shm (at <driver root mount>/dev/shm where that
  exists), pipe and log directories mounted.
- AssertReady: the Deployment's readyReplicas is 1, its selector finds
  one pod, whose one container is ready; tried four times over 7 to 14 s
  (retry.OnError, backoff 1 s doubling, jitter 1); else the prepare fails
  "MPS control daemon is not yet ready: <the last try's words>", and the
  kubelet tries the claim again later (the Deployment then exists).
  SIMULATION: the plugin's call does not block the stand-in's one loop:
  the wait is a deadline, 7 s (the backoff's least), that each of the
  kubelet's passes checks (the plugin answers PENDING until it passes or
  ends), so readiness is seen a pass after it comes, not at the next try.
- The claim's CDI devices get CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps and
  binds of the pipe directory at /tmp/nvidia-mps and of shm at /dev/shm
  (GetCDIContainerEdits).
- Stop (unprepare, the MPSSupport gate on): nothing when its directory is
  gone; else its Deployment deleted (Foreground), shm unmounted, the
  directory removed. The GPUs' compute mode is left EXCLUSIVE_PROCESS:
  only the time-slicing gate's unprepare sets DEFAULT again.
SIMULATION: the plugin's RBAC (the chart's Role for deployments, rendered
with the gate) is not enforced by the stand-in's API.
"""

import hashlib
import os
import shutil

from .. import clock, procs, status
from ..dra import PENDING
from . import gpuconfig

NAME_FMT = "mps-control-daemon-%s"
PIPE_IN_CONTAINER = "/tmp/nvidia-mps"
DRIVER_ROOT_MOUNT = "/driver-root"
READY_WAIT = 7.0    # 1 + 2 + 4 s: AssertReady's backoff without its jitter

# The template's script as text/template renders it (the lines of the
# optional settings added where its range and if blocks stand).
SCRIPT = """set -e
rm -f /driver-root/var/log/nvidia-mps/startup.log

if [ -x /driver-root/bin/sh ] || [ -x /driver-root/usr/bin/sh ]; then
  # Use chroot to avoid library mismatch between container and host
  # when driver root is / (default value) or /run/nvidia/driver (default location for driver installation by GPU Operator)
  RUN="chroot /driver-root sh -c"
else
  # No shell in driver root (e.g. GKE COS): run directly with PATH/LD_LIBRARY_PATH
  export PATH="/driver-root/usr/bin:/driver-root/bin:/driver-root/usr/local/bin:$PATH"
  export LD_LIBRARY_PATH="/driver-root/lib64:/driver-root/lib:/driver-root/usr/lib64:/driver-root/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  RUN="sh -c"

  # Point MPS to mounted paths (not set in Deployment spec as for chroot approach /driver-root/... paths don't exist inside chroot)
  export CUDA_MPS_PIPE_DIRECTORY=/driver-root/tmp/nvidia-mps
  export CUDA_MPS_LOG_DIRECTORY=/driver-root/var/log/nvidia-mps
fi

$RUN "nvidia-cuda-mps-control -d"%s

echo "startup complete" > /driver-root/var/log/nvidia-mps/startup.log

tail -n +1 -f /driver-root/var/log/nvidia-mps/control.log"""


def daemon_id(claim_uid, uuids):
    return "%s-%s" % (claim_uid, hashlib.sha256(",".join(sorted(uuids)).encode()).hexdigest()[:5])


def _shm_size():
    """getDefaultShmSize: half of MemTotal, in its unit's first letter."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    parts = line[len("MemTotal:"):].strip().split(" ", 1)
                    return "%d%s" % (int(parts[0]) // 2, parts[1][0] if len(parts) == 2 else "")
    except (OSError, ValueError):
        pass
    return "65536k"


def mount_shm(path):
    """mount-utils' Mount of a tmpfs at PATH (once): None or its error."""
    if os.path.ismount(path):
        return None
    opts = "rw,nosuid,nodev,noexec,relatime,size=%s" % _shm_size()
    code, out, err = procs.run(["mount", "-t", "tmpfs", "-o", opts, "shm", path], timeout=10)
    if code == 0:
        return None
    return ("mount failed: exit status %d\nMounting command: mount\nMounting arguments: -t tmpfs -o %s shm %s\n"
            "Output: %s" % (code, opts, path, (out + err).decode("utf-8", "replace")))


def unmount_shm(path):
    """mount-utils' CleanupMountPoint's unmount: None or its error."""
    if not os.path.ismount(path):
        return None
    code, out, err = procs.run(["umount", path], timeout=10)
    return None if code == 0 else (out + err).decode("utf-8", "replace").strip()


def _mps_dir(ctx):
    """<plugins dir>/gpu.nvidia.com/mps (config.DriverPluginPath())."""
    plugins = ctx.env.get("KUBELET_PLUGINS_DIRECTORY_PATH") or "/var/lib/kubelet/plugins"
    return os.path.join(plugins, "gpu.nvidia.com", "mps")


class Daemon:
    """One claim group's MPS control daemon (MpsControlDaemon): for a group
    of devices (UUIDS, the whole GPUs' GPU_UUIDS), or by its ID alone (to
    stop it)."""

    def __init__(self, plugin, claim_uid, uuids=(), gpu_uuids=(), ident=None):
        ctx = plugin.ctx
        self.plugin, self.ctx = plugin, ctx
        self.uuids, self.gpu_uuids = sorted(uuids), sorted(gpu_uuids)
        self.id = ident or daemon_id(claim_uid, uuids)
        self.name = NAME_FMT % self.id
        self.namespace = ctx.env.get("NAMESPACE") or "default"   # flags.namespace's default
        self.root = os.path.join(_mps_dir(ctx), self.id)
        self.pipe, self.shm, self.log = (os.path.join(self.root, d) for d in ("pipe", "shm", "log"))
        self.res = ctx.kubelet.res("apps/v1", "Deployment")

    @classmethod
    def of_claim(cls, plugin, claim_uid):
        """The claim's daemons, by their directories (SIMULATION: the real
        plugin recomputes their IDs from its checkpoint's devices; a
        directory per started daemon names the same ones, and outlives a
        restart of the plugin as the checkpoint does)."""
        try:
            names = sorted(os.listdir(_mps_dir(plugin.ctx)))
        except OSError:
            return []
        return [cls(plugin, claim_uid, ident=n) for n in names if n.startswith(claim_uid + "-")]

    def _deployment(self, mps, limits):
        ctx = self.ctx
        settings = ""
        if mps.get("defaultActiveThreadPercentage") is not None:
            settings += '\n$RUN "echo set_default_active_thread_percentage %d | nvidia-cuda-mps-control"' \
                % mps["defaultActiveThreadPercentage"]
        for uuid in sorted(limits):
            settings += '\n$RUN "echo set_default_device_pinned_mem_limit %s %s | nvidia-cuda-mps-control"' \
                % (uuid, limits[uuid])
        gates = dict(gpuconfig.DEFAULT_GATES, **gpuconfig.feature_gates(ctx.env.get("FEATURE_GATES")))
        env = [{"name": "CUDA_VISIBLE_DEVICES", "value": ",".join(self.uuids)},
               {"name": "FEATURE_GATES", "value": "".join("%s=%s," % (k, str(gates[k]).lower())
                                                           for k in sorted(gates))}]
        shm_at = os.path.join(DRIVER_ROOT_MOUNT, "dev", "shm") if os.path.exists(
            os.path.join(self.plugin.driver_root, "dev", "shm")) else "/dev/shm"
        labels = {"app": self.name}
        pod = {"nodeName": self.plugin.node, "hostPID": True,
               "containers": [{"name": "mps-control-daemon", "image": ctx.env.get("IMAGE_NAME", ""),
                               "securityContext": {"privileged": True}, "command": ["sh", "-c"],
                               "args": [SCRIPT % settings],
                               "startupProbe": {"exec": {"command": ["cat",
                                                                     "/driver-root/var/log/nvidia-mps/startup.log"]},
                                                "initialDelaySeconds": 1, "periodSeconds": 1},
                               "env": env,
                               "volumeMounts": [{"name": "driver-root", "mountPath": DRIVER_ROOT_MOUNT},
                                                {"name": "mps-shm-directory", "mountPath": shm_at},
                                                {"name": "mps-pipe-directory", "mountPath": "/driver-root/tmp/nvidia-mps"},
                                                {"name": "mps-log-directory",
                                                 "mountPath": "/driver-root/var/log/nvidia-mps"}]}],
               "volumes": [{"name": n, "hostPath": {"path": p}} for n, p in (
                   ("driver-root", ctx.env.get("NVIDIA_DRIVER_ROOT") or "/"), ("mps-shm-directory", self.shm),
                   ("mps-pipe-directory", self.pipe), ("mps-log-directory", self.log))]}
        if ctx.env.get("SERVICE_ACCOUNT_NAME"):
            pod["serviceAccountName"] = ctx.env["SERVICE_ACCOUNT_NAME"]
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"namespace": self.namespace, "name": self.name, "labels": dict(labels)},
                "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                         "template": {"metadata": {"labels": dict(labels)}, "spec": pod}}}

    def start(self, mps):
        """Start(): None or the error."""
        if self.ctx.api.find(self.res, self.namespace, self.name) is not None:
            return None
        self.plugin.klog("I", "sharing.go:225", "Starting MPS control daemon for '%s', with settings: %s"
                         % (self.id, mps))
        try:
            limits = gpuconfig.pinned_limits(mps, self.uuids)
        except gpuconfig.ConfigError as e:
            return "error transforming DefaultPerDevicePinnedMemoryLimit into string: %s" % e
        deployment = self._deployment(mps, limits)
        for d in (self.shm, self.pipe, self.log):
            try:
                os.makedirs(d, 0o755, exist_ok=True)
            except OSError as e:
                return "error creating directory %s: %s" % (d, e.strerror)
        said = mount_shm(self.shm)
        if said:
            return "error mounting %s as tmpfs: %s" % (self.shm, said)
        for u in self.gpu_uuids:
            said = self.plugin.smi("-i", u, "-c", "EXCLUSIVE_PROCESS")
            if said:
                return "error setting compute mode: error running nvidia-smi: %s" % said
        try:
            self.ctx.api.create(self.res, deployment, self.namespace)
        except status.ApiError as e:
            if e.reason != "AlreadyExists":
                return "failed to create deployment: %s" % e.message
        return None

    def not_ready(self):
        """One try of AssertReady: None when ready, else its error."""
        d = self.ctx.api.find(self.res, self.namespace, self.name)
        if d is None:
            return 'failed to get deployment: deployments.apps "%s" not found' % self.name
        if (d.get("status") or {}).get("readyReplicas", 0) != 1:
            return "waiting for MPS control daemon to come online"
        want = d["spec"]["selector"]["matchLabels"]
        pods, _ = self.ctx.api.list(self.ctx.kubelet.res("v1", "Pod"), self.namespace,
                                    ",".join("%s=%s" % kv for kv in sorted(want.items())))
        if len(pods) != 1:
            return "unexpected number of pods in deployment: %d" % len(pods)
        statuses = (pods[0].get("status") or {}).get("containerStatuses") or []
        if len(statuses) != 1:
            return "unexpected number of container statuses in pod"
        if not statuses[0].get("ready"):
            return "control daemon not yet ready"
        return None

    def cdi_edits(self):
        return {"env": ["CUDA_MPS_PIPE_DIRECTORY=%s" % PIPE_IN_CONTAINER],
                "mounts": [{"containerPath": "/dev/shm", "hostPath": self.shm,
                            "options": ["rw", "nosuid", "nodev", "bind"]},
                           {"containerPath": PIPE_IN_CONTAINER, "hostPath": self.pipe,
                            "options": ["rw", "nosuid", "nodev", "bind"]}]}

    def stop(self):
        """Stop(): None or the error."""
        if not os.path.exists(self.root):
            return None
        self.plugin.klog("I", "sharing.go:409", "Stopping MPS control daemon for '%s'" % self.id)
        try:
            self.ctx.api.delete(self.res, self.namespace, self.name, {"propagationPolicy": "Foreground"})
        except status.ApiError as e:
            if e.reason != "NotFound":
                return "failed to delete deployment: %s" % e.message
        said = unmount_shm(self.shm)
        if said:
            return "error unmounting %s: %s" % (self.shm, said)
        try:
            shutil.rmtree(self.root)
        except OSError as e:
            return "error removing directory %s: %s" % (self.root, e.strerror)
        return None


class Waits:
    """The AssertReady calls under way: daemon ID -> when the last try is."""

    def __init__(self):
        self.until = {}

    def check(self, daemon):
        """None (ready), PENDING, or the prepare's error."""
        said = daemon.not_ready()
        if said is None:
            self.until.pop(daemon.id, None)
            return None
        end = self.until.setdefault(daemon.id, clock.now() + READY_WAIT)
        if clock.now() < end:
            return PENDING
        self.until.pop(daemon.id, None)
        return "MPS control daemon is not yet ready: %s" % said
