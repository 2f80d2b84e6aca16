"""Unit tests of the DRA driver's kubelet plugin (programs/dra_kubelet_plugin.py)
and the kubelet's DRA manager (kubelet/dramanager.py): each case is a rule of
the real source the module names."""

import json
import os
import shutil
import sys
import tempfile
import threading
import unittest
import zlib

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from k3ssim import config, driverprocfs, status  # noqa: E402
from k3ssim.kubelet import dramanager, nvidia_runtime  # noqa: E402
from k3ssim.programs import dra_kubelet_plugin as plugin  # noqa: E402
from k3ssim.programs import gpuconfig  # noqa: E402

NODE = "node1"
GPUS = [{"uuid": "GPU-aaaa", "name": "NVIDIA A100-PCIE-40GB", "memory_mib": 40960, "bus": "0000:18:00.0",
         "minor": 2, "cc": "8.0", "driver": "565.57.01", "cuda": "12.7"},
        {"uuid": "GPU-bbbb", "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "bus": "0000:2a:00.0",
         "minor": 0, "cc": "9.0", "driver": "565.57.01", "cuda": "12.7"}]


class FakeApi:
    """The API as a kubelet or a plugin reaches it: a few objects by kind."""

    def __init__(self):
        self.objs = {}
        self.n = 0

    def find(self, res, ns, name):
        return self.objs.get((res, ns, name))

    def list(self, res, namespace=None, label_selector=None, *a, **k):
        want = dict(kv.split("=", 1) for kv in (label_selector or "").split(",") if kv)
        return [o for (r, ns, _), o in self.objs.items() if r == res and namespace in (None, ns) and
                all((o["metadata"].get("labels") or {}).get(k) == v for k, v in want.items())], None

    def create(self, res, obj, *a, **k):
        md = obj["metadata"]
        if "name" not in md:
            self.n += 1
            md["name"] = md["generateName"] + "x%04d" % self.n
        self.objs[(res, md.get("namespace"), md["name"])] = obj
        return obj, []

    def update(self, res, obj, *a, **k):
        self.objs[(res, obj["metadata"].get("namespace"), obj["metadata"]["name"])] = obj
        return obj, []

    def delete(self, res, ns, name, *a, **k):
        if self.objs.pop((res, ns, name), None) is None:
            raise status.ApiError(404, "NotFound", "not found")
        return None, False


class FakeKubelet:
    def __init__(self):
        self.api = FakeApi()
        self.node = NODE
        self.wake = threading.Event()
        self.dra = None

    def res(self, api_version, kind):
        return kind


class Log:
    def __init__(self):
        self.lines = []

    def write(self, line):
        self.lines.append(line)


class Ctx:
    def __init__(self, kubelet, cdi_root):
        self.kubelet = kubelet
        self.api = kubelet.api
        self.env = {"CDI_ROOT": cdi_root, "NODE_NAME": NODE}
        self.log = Log()


def claim(uid, devices, reserved=("pod-1",), name="c1"):
    return {"metadata": {"name": name, "namespace": "default", "uid": uid},
            "status": {"allocation": {"devices": {"results": [
                {"request": req, "driver": plugin.DRIVER, "pool": NODE, "device": d} for req, d in devices]}},
                "reservedFor": [{"resource": "pods", "name": "p", "uid": u} for u in reserved]}}


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.cdi = os.path.join(self.dir, "cdi")
        saved = (config.KUBELET_DIR, config.CDI_DIRS, driverprocfs.GPUS, config.NVIDIA_RUNTIME_CONFIG)
        self.addCleanup(self._restore, saved)
        config.NVIDIA_RUNTIME_CONFIG = os.path.join(self.dir, "no-config.toml")   # the toolkit's defaults
        config.KUBELET_DIR = os.path.join(self.dir, "kubelet")
        config.CDI_DIRS = [self.cdi]
        driverprocfs.GPUS = os.path.join(self.dir, "procfs")
        for g in GPUS:
            d = os.path.join(driverprocfs.GPUS, g["bus"])
            os.makedirs(d)
            with open(os.path.join(d, "information"), "w", encoding="utf-8") as f:
                f.write("Model: \t\t %s\nGPU UUID: \t %s\nBus Location: \t %s\nDevice Minor: \t %d\n"
                        % (g["name"], g["uuid"], g["bus"], g["minor"]))
        self.k = FakeKubelet()
        self.k.dra = dramanager.DRAManager(self.k)
        self.ctx = Ctx(self.k, self.cdi)

    @staticmethod
    def _restore(saved):
        config.KUBELET_DIR, config.CDI_DIRS, driverprocfs.GPUS, config.NVIDIA_RUNTIME_CONFIG = saved

    def said(self):
        """What the driver root's recording nvidia-smi was asked (self.calls), since the last look."""
        if not os.path.exists(self.calls):
            return []
        with open(self.calls, encoding="utf-8") as f:
            lines = f.read().splitlines()
        os.unlink(self.calls)
        return lines


class Plugin(Base):
    """cmd/gpu-kubelet-plugin deviceinfo.go, cdi.go; resourceslicecontroller.go."""

    def test_a_device_per_gpu_named_for_its_minor(self):
        d = plugin.device(GPUS[0])
        self.assertEqual(d["name"], "gpu-2")
        a = d["attributes"]
        self.assertEqual((a["type"], a["uuid"], a["architecture"]), ({"string": "gpu"}, {"string": "GPU-aaaa"},
                                                                     {"string": "Ampere"}))
        self.assertEqual((a["cudaComputeCapability"], a["driverVersion"], a["cudaDriverVersion"]),
                         ({"version": "8.0.0"}, {"version": "565.57.1"}, {"version": "12.7.0"}))
        self.assertEqual(d["capacity"], {"memory": {"value": "40Gi"}})
        self.assertEqual(plugin.device(GPUS[1])["capacity"], {"memory": {"value": "81559Mi"}})

    def test_one_slice_owned_by_the_node_then_updated_in_place(self):
        self.k.api.create("Node", {"metadata": {"name": NODE, "uid": "n-uid"}})
        name = plugin.publish(self.ctx, NODE, [plugin.device(GPUS[0])])
        self.assertTrue(name.startswith("00000-gpu.nvidia.com-node1-"))
        s = self.k.api.find("ResourceSlice", None, name)
        self.assertEqual(s["metadata"]["ownerReferences"][0]["uid"], "n-uid")
        self.assertEqual(s["spec"]["pool"], {"name": NODE, "generation": 1, "resourceSliceCount": 1})
        self.assertEqual(plugin.publish(self.ctx, NODE, [plugin.device(g) for g in GPUS]), name)
        s = self.k.api.find("ResourceSlice", None, name)
        # One update in place keeps the generation (syncPool).
        self.assertEqual((len(s["spec"]["devices"]), s["spec"]["pool"]["generation"]), (2, 1))
        self.assertEqual(plugin.architecture("8.6"), "Ampere")
        self.assertEqual(plugin.architecture("8.9"), "Ada Lovelace")
        self.assertEqual(plugin.architecture("6.1"), "Pascal")

    def test_prepare_writes_a_transient_spec_whose_device_node_the_runtime_resolves(self):
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        devs, err = p.prepare(claim("u-1", [("gpu", "gpu-2")]))
        self.assertIsNone(err)
        self.assertEqual(devs, [{"requestNames": ["gpu"], "poolName": NODE, "deviceName": "gpu-2",
                                 "cdiDeviceIDs": ["k8s.gpu.nvidia.com/claim=u-1-gpu-2"]}])
        path = os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-1.yaml")
        with open(path, encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        self.assertEqual(spec["containerEdits"]["env"], ["NVIDIA_VISIBLE_DEVICES=void"])
        # containerd resolves the name to the GPU behind /dev/nvidia2, under any handler;
        # the spec's void overrides the pod's own variable, so the runtime adds none.
        cdi = [{"cdi_devices": devs[0]["cdiDeviceIDs"]}]
        self.assertEqual(nvidia_runtime.devices("runc", {}, {}, cdi), "GPU-aaaa")
        self.assertEqual(nvidia_runtime.devices("nvidia", {},
                                                {"NVIDIA_VISIBLE_DEVICES": "all"}, cdi), "GPU-aaaa")
        p.unprepare("default", "c1", "u-1")
        self.assertFalse(os.path.exists(path))
        with self.assertRaises(nvidia_runtime.Unresolvable):
            nvidia_runtime.devices("runc", {}, {}, [{"cdi_devices": devs[0]["cdiDeviceIDs"]}])

    def test_a_device_it_does_not_publish_fails_the_claim(self):
        p = plugin.Plugin(self.ctx, NODE, GPUS[:1])
        _, err = p.prepare(claim("u-2", [("gpu", "gpu-0")]))
        self.assertEqual(err, 'error preparing devices for claim default/c1:u-2: prepare devices failed: '
                              'allocatable not found for device "gpu-0"')


class Mig(Base):
    """cmd/gpu-kubelet-plugin nvlib.go, mig.go, cdi.go: MIG devices with the DynamicMIG gate off."""

    def setUp(self):
        super().setUp()
        base = os.path.join(os.path.dirname(driverprocfs.GPUS), "capabilities", "gpu0", "mig")
        for gi, (gmin, cmin) in {1: (12, 13), 2: (21, 22), 3: (30, 31)}.items():
            os.makedirs(os.path.join(base, "gi%d" % gi, "ci0"))
            for path, minor in ((os.path.join(base, "gi%d" % gi, "access"), gmin),
                                (os.path.join(base, "gi%d" % gi, "ci0", "access"), cmin)):
                with open(path, "w", encoding="utf-8") as f:
                    f.write("DeviceFileMinor: %d\nDeviceFileMode: 292\n" % minor)

    def test_named_and_placed_as_the_driver_does(self):
        migs = [("1g.10gb", "MIG-a"), ("1g.10gb", "MIG-b"), ("3g.40gb", "MIG-c")]
        devs = plugin.mig_devices(GPUS[1], migs, driverprocfs.mig_caps(0))
        self.assertEqual([d["name"] for d in devs], ["gpu-0-mig-1g10gb-19-0", "gpu-0-mig-1g10gb-19-1",
                                                     "gpu-0-mig-3g40gb-9-4"])
        a = devs[2]["attributes"]
        self.assertEqual((a["type"], a["uuid"], a["parentUUID"], a["profile"]),
                         ({"string": "mig"}, {"string": "MIG-c"}, {"string": "GPU-bbbb"}, {"string": "3g.40gb"}))
        self.assertEqual(devs[2]["capacity"], {"memory": {"value": "40Gi"}, "memorySlice4": {"value": "1"},
                                               "memorySlice5": {"value": "1"}, "memorySlice6": {"value": "1"},
                                               "memorySlice7": {"value": "1"}})

    def test_a_one_slice_profile_of_a_quarter_of_the_memory_takes_two_slices(self):
        devs = plugin.mig_devices(GPUS[1], [("1g.20gb", "MIG-a"), ("1g.10gb", "MIG-b")], driverprocfs.mig_caps(0))
        self.assertEqual([d["name"] for d in devs], ["gpu-0-mig-1g20gb-15-0", "gpu-0-mig-1g10gb-19-2"])

    def test_prepared_with_its_parent_and_its_instances_nodes(self):
        devs = plugin.mig_devices(GPUS[1], [("1g.10gb", "MIG-a"), ("1g.10gb", "MIG-b")], driverprocfs.mig_caps(0))
        p = plugin.Plugin(self.ctx, NODE, [], devs)
        out, err = p.prepare(claim("u-6", [("gpu", "gpu-0-mig-1g10gb-19-1")]))
        self.assertIsNone(err)
        with open(os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-6.yaml"), encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        self.assertEqual([n["path"] for n in spec["devices"][0]["containerEdits"]["deviceNodes"]],
                         ["/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia-caps/nvidia-cap22"])
        self.assertEqual(out[0]["cdiDeviceIDs"], ["k8s.gpu.nvidia.com/claim=u-6-gpu-0-mig-1g10gb-19-1"])
        # A GpuConfig that names no request is for GPUs: a MIG device passes it by.
        c = claim("u-7", [("gpu", "gpu-0-mig-1g10gb-19-0")])
        c["status"]["allocation"]["devices"]["config"] = [shared("Long")]
        self.assertIsNone(p.prepare(c)[1])
        # One aimed at its request (of a claim of several) fails the claim;
        # a MigDeviceConfig is its own, its strategy's gate checked.
        c["metadata"]["uid"] = "u-8"
        c["status"]["allocation"]["devices"]["config"] = [shared("Long", requests=["gpu"])]
        _, err = p.prepare(c)
        self.assertIn('cannot apply GpuConfig to device "gpu-0-mig-1g10gb-19-0" of type "mig" (request: gpu)', err)
        mig = shared(requests=["gpu"])
        mig["opaque"]["parameters"]["kind"] = "MigDeviceConfig"
        c["status"]["allocation"]["devices"]["config"] = [mig]
        self.assertIn('"TimeSlicingSettings" feature gate is not enabled', p.prepare(c)[1])
        self.ctx.env["FEATURE_GATES"] = "TimeSlicingSettings=true"
        self.assertIsNone(p.prepare(c)[1])
        mig["opaque"]["parameters"]["sharing"]["timeSlicingConfig"] = {"interval": "Long"}
        self.assertIn('strict decoding error: unknown field "sharing.timeSlicingConfig"', p.prepare(c)[1])


def shared(interval=None, strategy="TimeSlicing", requests=None, source="FromClaim", extra=None):
    """An allocation config of the driver's: a GpuConfig sharing by STRATEGY."""
    sharing = {"strategy": strategy}
    if interval:
        sharing["timeSlicingConfig"] = {"interval": interval}
    params = {"apiVersion": gpuconfig.API_VERSION, "kind": "GpuConfig", "sharing": sharing}
    params.update(extra or {})
    return {"source": source, "requests": requests or [], "opaque": {"driver": plugin.DRIVER, "parameters": params}}


class Sharing(Base):
    """api/nvidia.com/resource/v1beta1 gpuconfig.go, sharing.go, validate.go; device_state.go; sharing.go."""

    def setUp(self):
        super().setUp()
        root = os.path.join(self.dir, "root")
        os.makedirs(os.path.join(root, "usr/bin"))
        self.calls = os.path.join(self.dir, "calls")
        with open(os.path.join(root, "usr/bin/nvidia-smi"), "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho \"$*\" >>'%s'\n" % self.calls)
        os.chmod(os.path.join(root, "usr/bin/nvidia-smi"), 0o755)
        self.ctx.pod = {"spec": {"volumes": [{"name": "driver-root-parent", "hostPath": {"path": root}}]}}
        self.ctx.env["NVIDIA_DRIVER_ROOT"] = "/"

    def test_feature_gates_as_the_chart_renders_them(self):
        self.assertEqual(gpuconfig.feature_gates("MPSSupport=false,TimeSlicingSettings=true,"),
                         {"MPSSupport": False, "TimeSlicingSettings": True})
        self.assertEqual(gpuconfig.feature_gates(None), {})

    def test_time_slicing_set_on_prepare_and_reset_on_unprepare(self):
        self.ctx.env["FEATURE_GATES"] = "TimeSlicingSettings=true,"
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        c = claim("u-3", [("gpu", "gpu-2")])
        c["status"]["allocation"]["devices"]["config"] = [shared("Long")]
        _, err = p.prepare(c)
        self.assertIsNone(err)
        self.assertEqual(self.said(), ["-i GPU-aaaa -c DEFAULT", "compute-policy -i GPU-aaaa --set-timeslice 3"])
        self.assertIsNone(p.unprepare("default", "c1", "u-3"))
        self.assertEqual(self.said(), ["-i GPU-aaaa -c DEFAULT", "compute-policy -i GPU-aaaa --set-timeslice 0"])
        # No interval: Normalize makes it Default.
        c["status"]["allocation"]["devices"]["config"] = [shared()]
        self.assertIsNone(p.prepare(c)[1])
        self.assertEqual(self.said()[-1], "compute-policy -i GPU-aaaa --set-timeslice 0")
        # With the gate on, unprepare sets back a claim that asked for none too.
        self.assertIsNone(p.prepare(claim("u-9", [("gpu", "gpu-0")]))[1])
        self.assertEqual(self.said(), [])
        self.assertIsNone(p.unprepare("default", "c1", "u-9"))
        self.assertEqual(self.said(), ["-i GPU-bbbb -c DEFAULT", "compute-policy -i GPU-bbbb --set-timeslice 0"])

    def test_a_failing_nvidia_smi_is_gos_exit_status_its_words_in_the_log(self):
        self.ctx.env["FEATURE_GATES"] = "TimeSlicingSettings=true,"
        smi = os.path.join(self.dir, "root", "usr/bin/nvidia-smi")
        with open(smi, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\necho 'Unable to set the compute mode for GPU 00000000:3B:00.0: Insufficient Permissions'\n"
                    "exit 4\n")
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        c = claim("u-5", [("gpu", "gpu-2")])
        c["status"]["allocation"]["devices"]["config"] = [shared("Long")]
        _, err = p.prepare(c)
        self.assertIn("error setting compute mode: error running nvidia-smi: exit status 4", err)
        self.assertNotIn("Insufficient Permissions", err)
        self.assertTrue(any("Insufficient Permissions" in line for line in self.ctx.log.lines))

    def test_no_config_no_sharing_and_no_nvidia_smi(self):
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        self.assertIsNone(p.prepare(claim("u-4", [("gpu", "gpu-2")]))[1])
        self.assertIsNone(p.unprepare("default", "c1", "u-4"))
        self.assertEqual(self.said(), [])

    def test_the_claims_config_over_the_classs_and_a_request_it_does_not_name(self):
        configs = gpuconfig.configs_for({"devices": {"config": [
            shared("Short", source="FromClaim"), shared("Long", source="FromClass"),
            shared("Medium", requests=["other"], source="FromClaim")]}}, plugin.DRIVER)
        self.assertEqual(gpuconfig.config_of(configs, "gpu", "gpu-0")["sharing"]["timeSlicingConfig"]["interval"],
                         "Short")
        self.assertEqual(gpuconfig.config_of(configs, "other", "gpu-0")["sharing"]["timeSlicingConfig"]["interval"],
                         "Medium")
        # A subrequest's result takes a config naming it exactly, not its request's.
        self.assertEqual(gpuconfig.config_of(configs, "other/whole", "gpu-0")["sharing"]["timeSlicingConfig"]
                         ["interval"], "Short")
        self.assertNotIn("sharing", gpuconfig.config_of(configs[:2], "gpu", "gpu-0"))
        self.assertTrue(gpuconfig.is_default(configs, gpuconfig.config_of(configs[:2], "gpu", "gpu-0")))

    def test_refusals_fail_the_claim_in_the_drivers_words(self):
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        cases = [
            ({}, shared("Long"), '"TimeSlicing" is selected as the GPU sharing strategy, but the '
                                 '"TimeSlicingSettings" feature gate is not enabled'),
            ({"FEATURE_GATES": "TimeSlicingSettings=true"}, shared("Forever"),
             "unknown time-slice interval: Forever, supported time-slice intervals: Default, Short, Medium, Long"),
            ({"FEATURE_GATES": "TimeSlicingSettings=true"}, shared(strategy="Spatial"),
             "unknown GPU sharing strategy: Spatial, supported GPU sharing strategies: TimeSlicing, MPS"),
            ({"FEATURE_GATES": "TimeSlicingSettings=true"}, shared("Long", extra={"slices": 2}),
             'error getting opaque device configs: error decoding config parameters: strict decoding error: '
             'unknown field "slices"'),
        ]
        for env, cfg, want in cases:
            self.ctx.env.pop("FEATURE_GATES", None)
            self.ctx.env.update(env)
            c = claim("u-5", [("gpu", "gpu-2")])
            c["status"]["allocation"]["devices"]["config"] = [cfg]
            devs, err = p.prepare(c)
            self.assertIsNone(devs)
            self.assertTrue(err.startswith("error preparing devices for claim default/c1:u-5: prepare devices "
                                           "failed: "), err)
            self.assertIn(want, err)
        self.assertEqual(self.said(), [])
        self.assertFalse(os.path.exists(os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-5.yaml")))


class Manager(Base):
    """pkg/kubelet/cm/dra/manager.go, plugin/dra_plugin_manager.go, state/checkpoint.go."""

    def pod(self, uid="pod-1", claim_name="c1", request=None):
        ref = {"name": "gpu"}
        if request:
            ref["request"] = request
        return {"metadata": {"name": "p", "namespace": "default", "uid": uid},
                "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
                         "containers": [{"name": "c", "resources": {"claims": [ref]}}]}}

    def test_refusals_in_the_kubelets_words(self):
        self.k.api.create("ResourceClaim", claim("u-1", [("gpu", "gpu-2")], reserved=()))
        self.assertEqual(self.k.dra.prepare(self.pod()), "pod p (pod-1) is not allowed to use ResourceClaim c1 (u-1)")
        self.k.api.create("ResourceClaim", claim("u-1", [("gpu", "gpu-2")]))
        self.assertEqual(self.k.dra.prepare(self.pod()), "DRA driver gpu.nvidia.com is not registered")
        self.assertEqual(self.k.dra.prepare(self.pod(claim_name="c9")),
                         'fetch ResourceClaim c9: resourceclaims.resource.k8s.io "c9" not found')
        unmade = self.pod()
        unmade["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
        self.assertEqual(self.k.dra.prepare(unmade), 'pod "default/p": ResourceClaim not created yet')

    def test_every_claim_checked_even_one_prepared_already(self):
        self.k.api.create("ResourceClaim", claim("u-1", [("gpu", "gpu-2")], reserved=("pod-1", "pod-2")))
        p = plugin.Plugin(self.ctx, NODE, GPUS)
        self.k.dra.register(plugin.DRIVER, p)
        self.assertIsNone(self.k.dra.prepare(self.pod()))
        self.k.dra.unregister(plugin.DRIVER, p)
        self.assertEqual(self.k.dra.prepare(self.pod(uid="pod-2")), "DRA driver gpu.nvidia.com is not registered")
        self.k.dra.register(plugin.DRIVER, p)
        # A claim of that name made anew while the old one is still held.
        self.k.api.create("ResourceClaim", claim("u-9", [("gpu", "gpu-2")], reserved=("pod-3",)))
        self.assertEqual(self.k.dra.prepare(self.pod(uid="pod-3")),
                         "old ResourceClaim with same name c1 and different UID u-1 still exists "
                         "(previous pod force-deleted?!)")
        self.assertEqual(self.k.dra.cdi_devices(self.pod(claim_name="c7"), self.pod()["spec"]["containers"][0]),
                         (None, "internal error: unable to get claim info for ResourceClaim c7"))

    def test_prepared_claims_are_checkpointed_and_survive_a_restart(self):
        self.k.api.create("ResourceClaim", claim("u-1", [("gpu", "gpu-2"), ("other", "gpu-0")]))
        self.k.dra.register(plugin.DRIVER, plugin.Plugin(self.ctx, NODE, GPUS))
        self.assertIsNone(self.k.dra.prepare(self.pod()))
        self.assertEqual(self.k.dra.cdi_devices(self.pod(), self.pod()["spec"]["containers"][0]),
                         (["k8s.gpu.nvidia.com/claim=u-1-gpu-2", "k8s.gpu.nvidia.com/claim=u-1-gpu-0"], None))
        one = self.pod(request="other")
        self.assertEqual(self.k.dra.cdi_devices(one, one["spec"]["containers"][0]),
                         (["k8s.gpu.nvidia.com/claim=u-1-gpu-0"], None))
        with open(os.path.join(config.KUBELET_DIR, "dra_manager_state"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["Checksum"], zlib.crc32(doc["Data"].encode()))
        data = json.loads(doc["Data"])
        self.assertEqual((data["kind"], data["apiVersion"]), ("DRACheckpoint", "checkpoint.dra.kubelet.k8s.io/v1"))
        self.assertEqual(data["Entries"][0]["PodUIDs"], {"pod-1": {}})
        again = dramanager.DRAManager(self.k)
        self.assertEqual(again.claims, self.k.dra.claims)

    def test_a_claim_no_pod_uses_is_unprepared(self):
        self.k.api.create("ResourceClaim", claim("u-1", [("gpu", "gpu-2")], reserved=("pod-1", "pod-2")))
        self.k.dra.register(plugin.DRIVER, plugin.Plugin(self.ctx, NODE, GPUS))
        self.assertIsNone(self.k.dra.prepare(self.pod()))
        self.assertIsNone(self.k.dra.prepare(self.pod(uid="pod-2")))
        spec = os.path.join(self.cdi, "k8s.gpu.nvidia.com-claim_u-1.yaml")
        self.assertTrue(self.k.dra.unprepare_pod("pod-1"))
        self.assertTrue(os.path.exists(spec))
        # The last pod's release fails while the driver is away, then works.
        p = self.k.dra.plugins[plugin.DRIVER][-1]
        self.k.dra.unregister(plugin.DRIVER, p)
        self.assertFalse(self.k.dra.unprepare_pod("pod-2"))
        self.assertTrue(os.path.exists(spec))
        self.k.dra.register(plugin.DRIVER, p)
        self.k.dra.tick(set())              # the reconcile pass: pod-2 is not active
        self.assertFalse(os.path.exists(spec))
        self.assertEqual(self.k.dra.claims, {})

    def test_the_schedulers_special_claim_by_its_request_mappings(self):
        self.k.api.create("ResourceClaim", claim("u-5", [("container-1-request-0", "gpu-2")], name="p-ext"))
        self.k.dra.register(plugin.DRIVER, plugin.Plugin(self.ctx, NODE, GPUS))
        pod = {"metadata": {"name": "p", "namespace": "default", "uid": "pod-1"},
               "spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
               "status": {"extendedResourceClaimStatus": {"resourceClaimName": "p-ext", "requestMappings": [
                   {"containerName": "b", "resourceName": "nvidia.com/gpu", "requestName": "container-1-request-0"}]}}}
        a, b = pod["spec"]["containers"]
        self.assertEqual(self.k.dra.cdi_devices(pod, b), (None, "unable to get claim info for claim p-ext in "
                                                                "namespace default"))
        self.assertIsNone(self.k.dra.prepare(pod))
        self.assertEqual(self.k.dra.cdi_devices(pod, b), (["k8s.gpu.nvidia.com/claim=u-5-gpu-2"], None))
        self.assertEqual(self.k.dra.cdi_devices(pod, a), ([], None))
        self.assertEqual(dramanager.mapped_resources(pod, b), {"nvidia.com/gpu"})

    def test_the_kubelets_own_checkpoints(self):
        """state/checkpoint_test.go's files: the checksum is CRC-32 (IEEE) of Data, a wrong one
        is a corrupted checkpoint, and a kubelet starts with an empty one written."""
        good = {"Data": '{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList"'
                        ':[{"ClaimUID":"067798be-454e-4be4-9047-1aa06aea63f7","ClaimName":"example","Namespace":'
                        '"default","PodUIDs":{"139cdb46-f989-4f17-9561-ca10cfb509a6":{}},"DriverState":{"test-driver.'
                        'cdi.k8s.io":{"Devices":[{"PoolName":"worker-1","DeviceName":"dev-1","RequestNames":["test '
                        'request"],"CDIDeviceIDs":["example.com/example=cdi-example"]}]}}}]}', "Checksum": 1656016162}
        dramanager.parse_checkpoint(good)
        with self.assertRaisesRegex(dramanager.CheckpointError, "checkpoint is corrupted"):
            dramanager.parse_checkpoint(dict(good, Checksum=2930258365))
        with open(os.path.join(config.KUBELET_DIR, "dra_manager_state"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(json.loads(doc["Data"]), {"kind": "DRACheckpoint",
                                                   "apiVersion": "checkpoint.dra.kubelet.k8s.io/v1", "Entries": []})
        entry = {"ClaimUID": "u", "ClaimName": "c", "Namespace": "n", "PodUIDs": None, "DriverState": None}
        data = json.dumps({"Entries": [entry]})
        got = dramanager.parse_checkpoint({"Data": data, "Checksum": zlib.crc32(data.encode())})
        self.assertEqual((got[0]["PodUIDs"], got[0]["DriverState"]), ({}, {}))

    def test_slices_wiped_at_start_and_after_the_last_plugin_goes(self):
        self.k.api.create("ResourceSlice", {"metadata": {"name": "s1"}, "spec": {"nodeName": NODE, "driver": "a"}})
        self.k.api.create("ResourceSlice", {"metadata": {"name": "s2"}, "spec": {"nodeName": "other", "driver": "a"}})
        self.k.dra.wipe()
        self.assertEqual([s["metadata"]["name"] for s in self.k.api.list("ResourceSlice")[0]], ["s2"])
        self.k.api.create("ResourceSlice", {"metadata": {"name": "s3"}, "spec": {"nodeName": NODE, "driver": "a"}})
        p = object()
        self.k.dra.register("a", p)
        self.k.dra.unregister("a", p)
        self.assertGreater(self.k.dra.next_deadline(), 0)
        self.k.dra.tick(set())
        self.assertIsNotNone(self.k.api.find("ResourceSlice", None, "s3"))   # not before the delay
        self.k.dra.register("a", p)            # back in time: nothing goes
        self.assertIsNone(self.k.dra.next_deadline())
        self.k.dra.unregister("a", p)
        self.k.dra.wipe_at["a"] = 0
        self.k.dra.tick(set())
        self.assertIsNone(self.k.api.find("ResourceSlice", None, "s3"))


if __name__ == "__main__":
    unittest.main()
