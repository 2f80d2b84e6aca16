"""Unit tests of the DRA driver's MPS sharing (programs/dra_mps.py, as the
kubelet plugin runs it, and gpuconfig.py's MpsConfig): each case is a rule
of the real source the module names (sharing.go, device_state.go,
validate.go, templates/mps-control-daemon.tmpl.yaml)."""

import hashlib
import os
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(__file__))

from test_dra_driver import GPUS, NODE, Base, claim, plugin  # noqa: E402

from k3ssim import status  # noqa: E402
from k3ssim.programs import dra_mps, gpuconfig  # noqa: E402


def mps(requests=None, **cfg):
    """A claim config of the driver's: a GpuConfig sharing by MPS with CFG."""
    sharing = {"strategy": "MPS"}
    if cfg:
        sharing["mpsConfig"] = cfg
    return {"source": "FromClaim", "requests": requests or [], "opaque": {"driver": plugin.DRIVER, "parameters": {
        "apiVersion": gpuconfig.API_VERSION, "kind": "GpuConfig", "sharing": sharing}}}


class Mps(Base):
    def setUp(self):
        super().setUp()
        root = os.path.join(self.dir, "root")
        os.makedirs(os.path.join(root, "usr/bin"))
        os.makedirs(os.path.join(root, "dev/shm"))
        self.calls = os.path.join(self.dir, "calls")
        with open(os.path.join(root, "usr/bin/nvidia-smi"), "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho \"$*\" >>'%s'\n" % self.calls)
        os.chmod(os.path.join(root, "usr/bin/nvidia-smi"), 0o755)
        self.ctx.pod = {"metadata": {"namespace": "nvidia-dra-driver-gpu"},
                        "spec": {"volumes": [{"name": "driver-root-parent", "hostPath": {"path": root}}]}}
        self.ctx.env.update({"NVIDIA_DRIVER_ROOT": "/", "FEATURE_GATES": "MPSSupport=true,",
                             "NAMESPACE": "nvidia-dra-driver-gpu", "IMAGE_NAME": "registry.k8s.io/dra:v1",
                             "SERVICE_ACCOUNT_NAME": "sa-kubeletplugin",
                             "KUBELET_PLUGINS_DIRECTORY_PATH": os.path.join(self.dir, "plugins")})
        self.mounted = []
        saved = (dra_mps.mount_shm, dra_mps.unmount_shm, dra_mps.READY_WAIT)
        self.addCleanup(self._put_back, saved)
        dra_mps.mount_shm = lambda p: self.mounted.append(p)
        dra_mps.unmount_shm = lambda p: self.mounted.remove(p)
        self.p = plugin.Plugin(self.ctx, NODE, GPUS)

    @staticmethod
    def _put_back(saved):
        dra_mps.mount_shm, dra_mps.unmount_shm, dra_mps.READY_WAIT = saved

    def deployments(self):
        return [o for (r, _, _), o in self.k.api.objs.items() if r == "Deployment"]

    def ready(self, d):
        """The Deployment's one pod up and ready, as its controllers and the kubelet make it."""
        d["status"] = {"readyReplicas": 1}
        self.k.api.create("Pod", {"metadata": {"name": d["metadata"]["name"] + "-abc",
                                               "namespace": d["metadata"]["namespace"],
                                               "labels": dict(d["spec"]["selector"]["matchLabels"])},
                                  "status": {"containerStatuses": [{"name": "mps-control-daemon", "ready": True}]}})

    def test_the_daemon_is_a_deployment_per_claim_named_for_its_devices(self):
        c = claim("u-1", [("gpu", "gpu-2"), ("gpu", "gpu-0")])
        c["status"]["allocation"]["devices"]["config"] = [mps(defaultActiveThreadPercentage=50,
                                                              defaultPinnedDeviceMemoryLimit="10Gi",
                                                              defaultPerDevicePinnedMemoryLimit={"1": "5Gi"})]
        devs, err = self.p.prepare(c)
        self.assertIs(err, dra_mps.PENDING)
        # Compute mode first, on each whole GPU; then the Deployment.
        self.assertEqual(self.said(), ["-i GPU-aaaa -c EXCLUSIVE_PROCESS", "-i GPU-bbbb -c EXCLUSIVE_PROCESS"])
        want_id = "u-1-" + hashlib.sha256(b"GPU-aaaa,GPU-bbbb").hexdigest()[:5]
        [d] = self.deployments()
        self.assertEqual((d["metadata"]["name"], d["metadata"]["namespace"]),
                         ("mps-control-daemon-" + want_id, "nvidia-dra-driver-gpu"))
        pod = d["spec"]["template"]["spec"]
        self.assertEqual((pod["nodeName"], pod["hostPID"], pod["serviceAccountName"]), (NODE, True, "sa-kubeletplugin"))
        [ctr] = pod["containers"]
        self.assertEqual((ctr["image"], ctr["command"]), ("registry.k8s.io/dra:v1", ["sh", "-c"]))
        # Every gate the driver knows, sorted, the plugin's over the defaults (featuregates.ToMap()).
        self.assertEqual(ctr["env"], [
            {"name": "CUDA_VISIBLE_DEVICES", "value": "GPU-aaaa,GPU-bbbb"},
            {"name": "FEATURE_GATES", "value": "AllAlpha=false,AllBeta=false,ComputeDomainCliques=true,"
             "ContextualLogging=true,CrashOnNVLinkFabricErrors=true,DeviceMetadata=false,DynamicMIG=false,"
             "IMEXDaemonsWithDNSNames=true,LoggingAlphaOptions=false,LoggingBetaOptions=true,MPSSupport=true,"
             "NVMLDeviceHealthCheck=false,PassthroughSupport=false,TimeSlicingSettings=false,"}])
        script = ctr["args"][0].splitlines()
        i = script.index('$RUN "nvidia-cuda-mps-control -d"')
        self.assertEqual(script[i + 1:i + 4], [
            '$RUN "echo set_default_active_thread_percentage 50 | nvidia-cuda-mps-control"',
            '$RUN "echo set_default_device_pinned_mem_limit GPU-aaaa 10240M | nvidia-cuda-mps-control"',
            '$RUN "echo set_default_device_pinned_mem_limit GPU-bbbb 5120M | nvidia-cuda-mps-control"'])
        root = os.path.join(self.dir, "plugins", "gpu.nvidia.com", "mps", want_id)
        vols = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
        self.assertEqual(vols, {"driver-root": "/", "mps-shm-directory": root + "/shm",
                                "mps-pipe-directory": root + "/pipe", "mps-log-directory": root + "/log"})
        # Where the driver root has /dev/shm, shm is mounted there (the chroot's).
        self.assertIn({"name": "mps-shm-directory", "mountPath": "/driver-root/dev/shm"}, ctr["volumeMounts"])
        self.assertEqual(self.mounted, [root + "/shm"])
        self.assertTrue(all(os.path.isdir(os.path.join(root, x)) for x in ("pipe", "shm", "log")))
        # Ready: the claim's devices get the pipe and shm, and the pipe's variable.
        self.ready(d)
        devs, err = self.p.prepare(c)
        self.assertIsNone(err)
        self.assertEqual(len(self.deployments()), 1)   # Start finds it made
        with open(os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-1.yaml"), encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        for dev in spec["devices"]:
            e = dev["containerEdits"]
            self.assertEqual(e["env"], ["CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps"])
            self.assertEqual([(m["hostPath"], m["containerPath"]) for m in e["mounts"]],
                             [(root + "/shm", "/dev/shm"), (root + "/pipe", "/tmp/nvidia-mps")])
        # Unprepare, by a plugin started again (its daemons found by their
        # directories): the Deployment goes, shm unmounted, the directory
        # removed; the compute mode stays (only the time-slicing gate resets it).
        self.said()
        self.p = plugin.Plugin(self.ctx, NODE, GPUS)
        self.assertIsNone(self.p.unprepare("default", "c1", "u-1"))
        self.assertEqual((self.deployments(), self.mounted, os.path.exists(root), self.said()), ([], [], False, []))

    def test_not_ready_in_time_fails_the_claim_with_the_last_tries_words(self):
        dra_mps.READY_WAIT = 0
        c = claim("u-2", [("gpu", "gpu-2")])
        c["status"]["allocation"]["devices"]["config"] = [mps()]
        _, err = self.p.prepare(c)
        self.assertEqual(err, "error preparing devices for claim default/c1:u-2: prepare devices failed: error "
                              "applying config: MPS control daemon is not yet ready: waiting for MPS control daemon "
                              "to come online")
        self.assertFalse(os.path.exists(os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-2.yaml")))
        # Its pod there but its container not ready.
        [d] = self.deployments()
        self.ready(d)
        self.k.api.objs[next(k for k in self.k.api.objs if k[0] == "Pod")]["status"]["containerStatuses"][0][
            "ready"] = False
        self.assertIn("is not yet ready: control daemon not yet ready", self.p.prepare(c)[1])

    def test_refusals_in_the_drivers_words(self):
        cases = [
            ("TimeSlicingSettings=true,", {}, '"MPS" is selected as the GPU sharing strategy, but the "MPSSupport" '
                                              'feature gate is not enabled'),
            (None, {"defaultActiveThreadPercentage": 101},
             "error validating GPU config: active thread percentage must not be greater than 100"),
            (None, {"defaultActiveThreadPercentage": -1},
             "error validating GPU config: active thread percentage must not be negative"),
            (None, {"defaultActiveThreadPercentage": "50"},
             "error getting opaque device configs: error decoding config parameters: json: cannot unmarshal string "
             "into Go struct field MpsConfig.sharing.mpsConfig.defaultActiveThreadPercentage of type int"),
            (None, {"defaultActiveThreadPercentage": 50.5},
             "json: cannot unmarshal number 50.5 into Go struct field"),
            (None, {"defaultPinnedDeviceMemoryLimit": "lots"},
             "error decoding config parameters: quantities must match the regular expression"),
            (None, {"defaultPerDevicePinnedMemoryLimit": ["1Gi"]},
             "json: cannot unmarshal array into Go struct field "
             "MpsConfig.sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit of type "
             "v1beta1.MpsPerDevicePinnedMemoryLimit"),
            (None, {"defaultPinnedDeviceMemoryLimit": True},
             "error decoding config parameters: quantities must match the regular expression"),
            (None, {"defaultPinnedDeviceMemoryLimit": "1Ki"},
             "error applying config: error starting MPS control daemon: error transforming "
             "DefaultPerDevicePinnedMemoryLimit into string: invalid limit: default value set too low: "),
            (None, {"defaultPerDevicePinnedMemoryLimit": {"3": "1Gi"}},
             "error transforming DefaultPerDevicePinnedMemoryLimit into string: invalid device: invalid device "
             "index: 3"),
        ]
        for gates, cfg, want in cases:
            if gates:
                self.ctx.env["FEATURE_GATES"] = gates
            c = claim("u-3", [("gpu", "gpu-2")])
            c["status"]["allocation"]["devices"]["config"] = [mps(**cfg)]
            _, err = self.p.prepare(c)
            self.assertIsNot(err, dra_mps.PENDING, cfg)
            self.assertIn(want, err)
            self.ctx.env["FEATURE_GATES"] = "MPSSupport=true,"
        self.assertEqual((self.deployments(), self.said()), ([], []))

    def test_the_other_strategys_settings_fail_where_applied(self):
        # Validate passes them; GetMpsConfig and GetTimeSlicingConfig refuse (sharing.go).
        self.ctx.env["FEATURE_GATES"] = "MPSSupport=true,TimeSlicingSettings=true,"
        c = claim("u-6", [("gpu", "gpu-2")])
        cfg = mps(defaultActiveThreadPercentage=20)
        cfg["opaque"]["parameters"]["sharing"]["timeSlicingConfig"] = {"interval": "Long"}
        c["status"]["allocation"]["devices"]["config"] = [cfg]
        self.assertIn("prepare devices failed: error applying config: error getting MPS configuration: cannot use "
                      "TimeSlicingConfig with the 'MPS' strategy", self.p.prepare(c)[1])
        cfg["opaque"]["parameters"]["sharing"]["strategy"] = "TimeSlicing"
        self.assertIn("prepare devices failed: error applying config: error getting timeslice config for requests "
                      "'[gpu]' in claim 'u-6': cannot use MpsConfig with the 'TimeSlicing' strategy",
                      self.p.prepare(c)[1])
        # An mpsConfig left empty (null) is Normalize's empty one.
        c["status"]["allocation"]["devices"]["config"] = [mps()]
        c["status"]["allocation"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"]["mpsConfig"] = None
        self.assertIs(self.p.prepare(c)[1], dra_mps.PENDING)
        # No settings: the daemon's start alone.
        self.assertEqual(self.deployments()[0]["spec"]["template"]["spec"]["containers"][0]["args"][0].count("$RUN"),
                         1)

    def test_a_failed_create_is_the_apis_words(self):
        def refuse(*a, **k):
            raise status.ApiError(403, "Forbidden", 'deployments.apps is forbidden: User "x" cannot create')
        self.k.api.create = refuse
        c = claim("u-4", [("gpu", "gpu-2")])
        c["status"]["allocation"]["devices"]["config"] = [mps()]
        self.assertIn("error starting MPS control daemon: failed to create deployment: deployments.apps is forbidden",
                      self.p.prepare(c)[1])

    def test_pinned_limits_by_uuid_or_index_in_megabytes(self):
        self.assertEqual(gpuconfig.pinned_limits({"defaultPinnedDeviceMemoryLimit": "1.5Gi",
                                                  "defaultPerDevicePinnedMemoryLimit": {"GPU-b": "1000M", "0": "2G"}},
                                                 ["GPU-a", "GPU-b"]), {"GPU-a": "1907M", "GPU-b": "953M"})
        self.assertEqual(gpuconfig.pinned_limits({}, ["GPU-a"]), {})
        with self.assertRaises(gpuconfig.ConfigError):
            gpuconfig.pinned_limits({"defaultPerDevicePinnedMemoryLimit": {"x": "1Gi"}}, ["GPU-a"])


if __name__ == "__main__":
    unittest.main()
