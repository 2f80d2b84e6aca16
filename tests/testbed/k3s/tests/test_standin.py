"""Unit tests of the stand-in's pure parts (SIMULATION's own logic): the
patches, selectors, the store's watch history, printing, Helm's values.
Each case is a rule of the real source its module names."""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from k3ssim import charts, dra, patch, selectors, status, store, tables  # noqa: E402


class Cgroups(unittest.TestCase):
    """A pod's container in kubepods/<qos>/pod<UID>/<ID> of every hierarchy, as the kubelet's
    cgroupfs driver and runc make it (kubelet/cgroups.py)."""

    def setUp(self):
        from k3ssim import config
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.saved = config.CGROUP_DIR
        config.CGROUP_DIR = self.dir
        self.addCleanup(setattr, config, "CGROUP_DIR", self.saved)

    def test_v1_each_hierarchy_then_removed(self):
        import subprocess
        from k3ssim.kubelet import cgroups
        for h in ("pids", "memory"):
            os.makedirs(os.path.join(self.dir, h))
            open(os.path.join(self.dir, h, "cgroup.procs"), "w").close()
        os.makedirs(os.path.join(self.dir, "not-a-hierarchy"))
        cid = "containerd://" + "ab" * 32
        cg = cgroups.Cgroup("u-1", "Burstable", cid)
        leaf = "kubepods/burstable/podu-1/" + "ab" * 32
        self.assertEqual([d for _, d in cg.dirs], [os.path.join(self.dir, h, leaf) for h in ("memory", "pids")])
        out = subprocess.run(["sh", "-c", cg.join_line() + "; echo $$"], capture_output=True, text=True).stdout
        for _, d in cg.dirs:
            with open(os.path.join(d, "cgroup.procs")) as f:
                self.assertEqual(f.read(), out)
            os.unlink(os.path.join(d, "cgroup.procs"))   # cgroupfs's own files do not keep a rmdir back
        cg.remove()
        for h in ("pids", "memory"):
            self.assertEqual(os.listdir(os.path.join(self.dir, h, "kubepods/burstable")), [])

    def test_v2_one_tree_and_the_qos_classes(self):
        from k3ssim.kubelet import cgroups
        open(os.path.join(self.dir, "cgroup.controllers"), "w").close()
        os.makedirs(os.path.join(self.dir, "kubepods"))   # a child cgroup: not a hierarchy of its own
        self.assertEqual(cgroups.hierarchies(), [self.dir])
        self.assertEqual(cgroups.pod_dir("u", "Guaranteed"), "kubepods/podu")
        self.assertEqual(cgroups.pod_dir("u", "BestEffort"), "kubepods/besteffort/podu")
        self.assertEqual(cgroups.pod_dir("u", None), "kubepods/besteffort/podu")

    def test_no_cgroups_no_join(self):
        from k3ssim.kubelet import cgroups, runtime
        cg = cgroups.Cgroup("u", "BestEffort", "containerd://" + "0" * 64)
        self.assertEqual(cg.join_line(), "")
        self.assertEqual(runtime.MountNamespace().wrap(["true"], cg.join_line()), ["true"])
        self.assertEqual(runtime.MountNamespace().wrap(["true"], "J"), ["sh", "-c", 'J; exec "$@"', "sh", "true"])


class Pace(unittest.TestCase):
    def test_quick_while_changing_slow_when_quiet(self):
        import threading
        from k3ssim import clock, config
        wake = threading.Event()
        pace = clock.Pace(wake)
        self.assertEqual(pace.period(), config.RECONCILE_PERIOD)
        pace.changed -= config.IDLE_AFTER + 1
        self.assertEqual(pace.period(), config.IDLE_PERIOD)
        wake.set()
        pace.wait()
        self.assertEqual(pace.period(), config.RECONCILE_PERIOD)
        self.assertFalse(wake.is_set())


class StrategicMergePatch(unittest.TestCase):
    def test_containers_merge_by_name(self):
        pod = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}
        out = patch.strategic_merge(pod, {"spec": {"containers": [{"name": "b", "image": "z"}]}})
        self.assertEqual(out["spec"]["containers"], [{"name": "a", "image": "x"}, {"name": "b", "image": "z"}])

    def test_delete_directive_and_null(self):
        pod = {"metadata": {"labels": {"a": "1", "b": "2"}},
               "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
        out = patch.strategic_merge(pod, {"metadata": {"labels": {"a": None}},
                                          "spec": {"containers": [{"name": "a", "$patch": "delete"}]}})
        self.assertEqual(out["metadata"]["labels"], {"b": "2"})
        self.assertEqual(out["spec"]["containers"], [{"name": "b"}])

    def test_list_without_merge_key_is_replaced(self):
        pod = {"spec": {"tolerations": [{"key": "a"}]}}
        out = patch.strategic_merge(pod, {"spec": {"tolerations": [{"key": "b"}]}})
        self.assertEqual(out["spec"]["tolerations"], [{"key": "b"}])

    def test_finalizers_merge_as_a_set(self):
        obj = {"metadata": {"finalizers": ["x"]}}
        out = patch.strategic_merge(obj, {"metadata": {"finalizers": ["y", "x"]}})
        self.assertEqual(out["metadata"]["finalizers"], ["x", "y"])


class JsonAndMergePatch(unittest.TestCase):
    def test_rfc6902(self):
        doc = {"a": [1, 2], "b": {"c": 1}}
        out = patch.json_patch(doc, [{"op": "add", "path": "/a/-", "value": 3}, {"op": "remove", "path": "/b/c"},
                                     {"op": "replace", "path": "/a/0", "value": 9}])
        self.assertEqual(out, {"a": [9, 2, 3], "b": {}})

    def test_failed_test_op_is_invalid(self):
        with self.assertRaises(status.ApiError) as e:
            patch.json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
        self.assertEqual(e.exception.code, 422)

    def test_rfc7386(self):
        self.assertEqual(patch.merge_patch({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None}, "d": [2]}),
                         {"a": {"c": 2}, "d": [2]})


class DraAllocator(unittest.TestCase):
    """k3ssim/dra.py against the structured allocator's rules."""
    NODE = {"metadata": {"name": "n1"}}
    CLASS = {"gpu": {"spec": {"selectors": [{"cel": {"expression":
                                                     "device.driver == 'gpu.nvidia.com' && "
                                                     "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}}

    def slice_(self, node="n1", **spec):
        devs = [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}},
                {"name": "gpu-1", "attributes": {"type": {"string": "gpu"}}},
                {"name": "gpu-0-mig", "attributes": {"type": {"string": "mig"}}},
                {"name": "bare", "attributes": {}}]
        return {"spec": dict({"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node},
                              "devices": devs}, **spec)}

    def claim(self, **exactly):
        return {"spec": {"devices": {"requests": [{"name": "r", "exactly": dict(deviceClassName="gpu", **exactly)}]}}}

    def devices(self, alloc):
        return [r["device"] for r in alloc["devices"]["results"]]

    def test_class_selectors_and_taken_devices(self):
        taken = set()
        a, _ = dra.allocate(self.claim(), self.CLASS, [self.slice_()], self.NODE, taken)
        b, _ = dra.allocate(self.claim(), self.CLASS, [self.slice_()], self.NODE, taken)
        c, why = dra.allocate(self.claim(), self.CLASS, [self.slice_()], self.NODE, taken)
        self.assertEqual(self.devices(a) + self.devices(b), ["gpu-0", "gpu-1"])
        self.assertEqual((c, why), (None, "cannot allocate all claims"))
        self.assertEqual(a["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"], ["n1"])

    def test_first_available_takes_the_first_subrequest_that_fits(self):
        classes = dict(self.CLASS, mig={"spec": {"selectors": [{"cel": {"expression":
                                                                        "device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}})
        claim = {"spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
            {"name": "whole", "deviceClassName": "gpu"}, {"name": "part", "deviceClassName": "mig"}]}]}}}
        taken = set()
        got = [dra.allocate(claim, classes, [self.slice_()], self.NODE, taken)[0] for _ in range(3)]
        self.assertEqual([(r["request"], r["device"]) for a in got for r in a["devices"]["results"]],
                         [("r/whole", "gpu-0"), ("r/whole", "gpu-1"), ("r/part", "gpu-0-mig")])
        self.assertEqual(dra.allocate(claim, classes, [self.slice_()], self.NODE, taken), (None, "cannot allocate all claims"))
        self.assertEqual(dra.allocate(claim, self.CLASS, [self.slice_()], self.NODE, taken),
                         (None, "request r/part: device class mig does not exist"))

    def test_the_claims_configs_as_the_allocator_writes_them(self):
        classes = dict(self.CLASS, mig={"spec": {"selectors": [{"cel": {"expression":
                                                                        "device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}})
        cfg = [{"requests": ["r"], "opaque": {"driver": "d"}}, {"requests": ["r/part"], "opaque": {"driver": "e"}},
               {"requests": ["r/whole", "s"], "opaque": {"driver": "f"}}]
        claim = {"spec": {"devices": {"config": cfg, "requests": [
            {"name": "r", "firstAvailable": [{"name": "whole", "deviceClassName": "gpu"},
                                             {"name": "part", "deviceClassName": "mig"}]},
            {"name": "s", "exactly": {"deviceClassName": "gpu"}}]}}}
        a, _ = dra.allocate(claim, classes, [self.slice_()], self.NODE, set())
        # r/part was not chosen: its config goes; one naming every request names none.
        self.assertEqual([(c["opaque"]["driver"], c["requests"]) for c in a["devices"]["config"]],
                         [("d", ["r"]), ("f", [])])

    def test_all_takes_every_match_or_none(self):
        a, _ = dra.allocate(self.claim(allocationMode="All"), self.CLASS, [self.slice_()], self.NODE, set())
        self.assertEqual(self.devices(a), ["gpu-0", "gpu-1"])
        taken = {("gpu.nvidia.com", "n1", "gpu-1")}
        self.assertEqual(dra.allocate(self.claim(allocationMode="All"), self.CLASS, [self.slice_()], self.NODE,
                                      taken)[0], None)

    def test_slices_of_other_nodes_and_missing_class(self):
        self.assertEqual(dra.allocate(self.claim(), self.CLASS, [self.slice_("n2")], self.NODE, set())[1],
                         "cannot allocate all claims")
        self.assertEqual(dra.allocate(self.claim(), self.CLASS, [self.slice_(allNodes=True, nodeName=None)],
                                      self.NODE, set())[1], None)
        claim = {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nope"}}]}}}
        self.assertEqual(dra.allocate(claim, self.CLASS, [self.slice_()], self.NODE, set())[1],
                         "request r: device class nope does not exist")

    def test_cel_subset(self):
        dev = {"attributes": {"type": {"string": "gpu"}, "gpu.nvidia.com/count": {"int": 2},
                              "resource.kubernetes.io/pciBusID": {"string": "0000:65:00.0"}}}
        self.assertTrue(dra.cel_matches("device.attributes['gpu.nvidia.com'].count == 2", dev, "gpu.nvidia.com"))
        self.assertTrue(dra.cel_matches("device.attributes['resource.kubernetes.io'].pciBusID != 'x'", dev,
                                        "gpu.nvidia.com"))
        # Another driver's domain is not the device's own.
        self.assertFalse(dra.cel_matches("device.attributes['other.io'].type == 'gpu'", dev, "gpu.nvidia.com"))
        # Outside the subset: no device.
        self.assertFalse(dra.cel_matches("device.attributes['gpu.nvidia.com'].type in ['gpu']", dev,
                                         "gpu.nvidia.com"))

    def test_generate_name_cut_as_controller_go(self):
        from k3ssim.controllers.resourceclaim import _generate_name
        self.assertEqual(_generate_name("web", "gpu"), "web-gpu-")
        long = _generate_name("a" * 54, "gpu")
        # Past 57: both cut in proportion, no trailing '-', room for the suffix.
        self.assertEqual(long, "a" * 52 + "-gp")
        self.assertLessEqual(len(long) + 5, 63)

    def test_pod_claims_and_empty_node_term(self):
        pod = {"spec": {"resourceClaims": [{"name": "a", "resourceClaimName": "x"},
                                           {"name": "b", "resourceClaimTemplateName": "t"}]},
               "status": {"resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-1"}]}}
        self.assertEqual(dra.pod_claims(pod), [("a", "x"), ("b", "p-b-1")])
        self.assertFalse(selectors.node_term_matches({}, self.NODE))
        self.assertTrue(selectors.node_term_matches(
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}, self.NODE))


class DraExtendedResource(unittest.TestCase):
    """extendeddynamicresources.go (1.35 and later): the special claim's requests and mappings;
    extended/cache.go: which class serves a resource; PodRequests."""

    def test_init_containers_reuse_the_later_containers_requests(self):
        from k3ssim.controllers import scheduler
        mapping = {"nvidia.com/gpu": "gpu.nvidia.com"}
        pod = {"spec": {"initContainers": [{"name": "init", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                        "containers": [{"name": "a"},
                                       {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "2",
                                                                              "example.com/x": "1"},
                                                                   "requests": {"cpu": "1"}}}]}}
        reqs, maps = scheduler.requests_and_mappings(pod, ["nvidia.com/gpu"], mapping)
        # b's requests sort as cpu, example.com/x, nvidia.com/gpu: index 2; the init container,
        # which runs before b, reuses b's two devices and asks none of its own.
        self.assertEqual([(r["name"], r["exactly"]["count"]) for r in reqs], [("container-2-request-2", 2)])
        self.assertEqual([(m["containerName"], m["requestName"]) for m in maps],
                         [("b", "container-2-request-2"), ("init", "container-2-request-2")])
        self.assertEqual(scheduler.requests(pod), {"nvidia.com/gpu": 2, "example.com/x": 1})

    def test_of_the_init_containers_own_requests_only_the_largest(self):
        from k3ssim.controllers import scheduler
        gpu = lambda n: {"limits": {"nvidia.com/gpu": str(n)}}   # noqa: E731
        pod = {"spec": {"initContainers": [{"name": "i1", "resources": gpu(1)}, {"name": "i2", "resources": gpu(3)},
                                           {"name": "side", "restartPolicy": "Always", "resources": gpu(1)}],
                        "containers": [{"name": "m"}]}}
        reqs, maps = scheduler.requests_and_mappings(pod, ["nvidia.com/gpu"], {"nvidia.com/gpu": "gpu.nvidia.com"})
        # i1 and i2 run before the sidecar: i1 reuses its device, i2 asks 2 more.
        self.assertEqual([(r["name"], r["exactly"]["count"]) for r in reqs],
                         [("container-1-request-0", 2), ("container-2-request-0", 1)])
        self.assertEqual(sorted((m["containerName"], m["requestName"]) for m in maps),
                         [("i1", "container-2-request-0"), ("i2", "container-1-request-0"),
                          ("i2", "container-2-request-0"), ("side", "container-2-request-0")])
        self.assertEqual(scheduler.requests(pod), {"nvidia.com/gpu": 3})

    def test_the_newer_class_serves_a_shared_name(self):
        from k3ssim.controllers import scheduler
        cls = lambda t, ern=None: {"metadata": {"creationTimestamp": t},   # noqa: E731
                                   "spec": dict(extendedResourceName=ern) if ern else {}}
        classes = {"b": cls("2026-01-02T00:00:00Z", "nvidia.com/gpu"), "a": cls("2026-01-01T00:00:00Z", "nvidia.com/gpu"),
                   "c": cls("2026-01-02T00:00:00Z", "nvidia.com/gpu"), "d": cls("2026-01-01T00:00:00Z")}
        m = scheduler.class_mapping(classes)
        self.assertEqual(m["nvidia.com/gpu"], "b")     # the newest; of b and c the lower name
        self.assertEqual(m["deviceclass.resource.kubernetes.io/d"], "d")


class Selectors(unittest.TestCase):
    def test_label_operators(self):
        s = selectors.parse_labels("app in (a,b),tier!=db,!legacy,env")
        self.assertTrue(s.matches({"app": "a", "tier": "web", "env": "x"}))
        self.assertFalse(s.matches({"app": "c", "env": "x"}))
        self.assertFalse(s.matches({"app": "a", "env": "x", "legacy": "1"}))
        self.assertFalse(s.matches({"app": "a"}))

    def test_unsupported_field_is_a_bad_request(self):
        with self.assertRaises(status.ApiError) as e:
            selectors.parse_fields("spec.frob=1", ("", "pods"))
        self.assertEqual(e.exception.message, "field label not supported: spec.frob")

    def test_field_selector(self):
        s = selectors.parse_fields("spec.nodeName=n1,status.phase!=Failed", ("", "pods"))
        self.assertTrue(s.matches({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}))
        self.assertFalse(s.matches({"spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}}))


class WatchHistory(unittest.TestCase):
    def test_too_old_after_a_restart(self):
        d = tempfile.mkdtemp()
        s = store.Store(os.path.join(d, "state.json"))
        s.create(("", "configmaps"), {"metadata": {"name": "a", "namespace": "default"}})
        s.flush()
        again = store.Store(os.path.join(d, "state.json"))
        self.assertEqual(again.current_rv(), 1)
        self.assertEqual(again.events_after(1, ("", "configmaps")), [])
        with self.assertRaises(store.TooOld):
            again.events_after(0, ("", "configmaps"))

    def test_events_after_a_version(self):
        s = store.Store(os.path.join(tempfile.mkdtemp(), "state.json"))
        key = ("", "configmaps")
        for n in "abc":
            s.create(key, {"metadata": {"name": n, "namespace": "default"}})
        self.assertEqual([o["metadata"]["name"] for _, _, o in s.events_after(1, key)], ["b", "c"])

    def test_objects_as_they_were_at_a_version(self):
        s = store.Store(os.path.join(tempfile.mkdtemp(), "state.json"))
        key = ("", "configmaps")
        s.create(key, {"metadata": {"name": "gone", "namespace": "d", "labels": {"x": "1"}}})
        s.create(key, {"metadata": {"name": "kept", "namespace": "d"}})
        at = s.current_rv()
        s.create(key, {"metadata": {"name": "new", "namespace": "d"}})
        s.remove(key, "d", "gone")
        s.update(key, {"metadata": {"name": "kept", "namespace": "d", "labels": {"x": "2"}}})
        then = s.objects_at(at, key)
        self.assertEqual(sorted(n for _, n in then), ["gone", "kept"])
        self.assertEqual(then[("d", "gone")]["metadata"]["labels"], {"x": "1"})
        self.assertNotIn("labels", then[("d", "kept")]["metadata"])
        self.assertEqual(sorted(n for _, n in s.objects_at(s.current_rv(), key)), ["kept", "new"])


class Printing(unittest.TestCase):
    def test_crash_loop_and_init_status(self):
        pod = {"metadata": {"name": "p"}, "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]},
               "status": {"phase": "Pending", "initContainerStatuses": [
                   {"name": "i", "state": {"running": {}}}]}}
        self.assertEqual(tables.pod_status_reason(pod), "Init:0/1")
        pod["status"] = {"phase": "Running", "containerStatuses": [
            {"name": "c", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        pod["spec"].pop("initContainers")
        self.assertEqual(tables.pod_status_reason(pod), "CrashLoopBackOff")


class HelmValues(unittest.TestCase):
    def test_null_deletes_an_empty_map_keeps(self):
        defaults = {"affinity": {"a": 1}, "x": {"y": 1, "z": 2}}
        self.assertNotIn("affinity", charts.coalesce(defaults, {"affinity": None}))
        self.assertEqual(charts.coalesce(defaults, {"affinity": {}})["affinity"], {"a": 1})
        self.assertEqual(charts.coalesce(defaults, {"x": {"z": 3}})["x"], {"y": 1, "z": 3})


if __name__ == "__main__":
    unittest.main()


class NvidiaRuntime(unittest.TestCase):
    """nvidia-container-toolkit internal/config/image/cuda_image.go
    (VisibleDevices), privileged.go (IsPrivileged), api/config/v1/config.go."""

    def setUp(self):
        from k3ssim import config
        from k3ssim.kubelet import nvidia_runtime
        self.rt = nvidia_runtime
        self.dir = tempfile.mkdtemp()
        self.cfg = os.path.join(self.dir, "config.toml")
        self.cdi = os.path.join(self.dir, "cdi")
        os.makedirs(self.cdi)
        self.saved = (config.NVIDIA_RUNTIME_CONFIG, config.CDI_DIRS)
        config.NVIDIA_RUNTIME_CONFIG, config.CDI_DIRS = self.cfg, [self.cdi]
        self.addCleanup(self._restore)

    def _restore(self):
        from k3ssim import config
        config.NVIDIA_RUNTIME_CONFIG, config.CDI_DIRS = self.saved

    def config(self, text):
        with open(self.cfg, "w", encoding="utf-8") as f:
            f.write(text)

    def test_the_toolkit_defaults_take_the_variable_from_anyone(self):
        self.config('[nvidia-container-runtime]\nmode = "jit-cdi"\n')
        self.assertEqual(self.rt.devices("nvidia", {}, {"NVIDIA_VISIBLE_DEVICES": "all"}, []), "all")
        # Mounts are not read by default: the variable names the devices.
        mounts = [{"mounts": [{"container_path": "/var/run/nvidia-container-devices/GPU-a", "host_path": "/dev/null"}]}]
        self.assertEqual(self.rt.devices("nvidia", {}, {"NVIDIA_VISIBLE_DEVICES": "GPU-b"}, mounts), "GPU-b")

    def test_privileged_gets_the_host_devices_unless_its_handler_says_not(self):
        # containerd internal/cri/server/container_create.go: WithHostDevices, WithAllDevicesAllowed.
        self.config("accept-nvidia-visible-devices-envvar-when-unprivileged = false\n"
                    "accept-nvidia-visible-devices-as-volume-mounts = true\n[nvidia-container-runtime]\n")
        priv = {"securityContext": {"privileged": True}}
        mounts = [{"mounts": [{"container_path": "/var/run/nvidia-container-devices/GPU-a", "host_path": "/dev/null"}]}]
        saved = self.rt.kernel_modifies_device_files
        self.addCleanup(setattr, self.rt, "kernel_modifies_device_files", saved)
        self.rt.kernel_modifies_device_files = lambda: True
        # Every node of the gateway; its runtime masks params, so NVML makes no more.
        self.assertEqual(self.rt.devices("nvidia", priv, {}, mounts, {}), "all")
        self.assertEqual(self.rt.devices("nvidia", priv, {}, mounts, {"privileged_without_host_devices": True}), "GPU-a")
        # runc masks nothing: the kernel's ModifyDeviceFiles: 1 lets NVML make every GPU's node.
        self.assertEqual(self.rt.devices("runc", priv, {}, [], {}), "host")
        self.assertEqual(self.rt.devices("runc", priv, {}, [], {"privileged_without_host_devices": True}), "none")
        self.rt.kernel_modifies_device_files = lambda: False
        self.assertEqual(self.rt.devices("runc", priv, {}, [], {}), "all")
        # SYS_ADMIN alone is privileged to the toolkit, not to containerd.
        sysadmin = {"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
        self.assertEqual(self.rt.devices("runc", sysadmin, {}, [], {}), "none")

    def test_containerd_merges_drop_ins_key_by_key(self):
        from k3ssim import config
        from k3ssim.kubelet import containerd
        saved = (config.CONTAINERD_CONFIG, containerd.DROPIN_DIR)
        self.addCleanup(lambda: (setattr(config, "CONTAINERD_CONFIG", saved[0]),
                                 setattr(containerd, "DROPIN_DIR", saved[1])))
        config.CONTAINERD_CONFIG = os.path.join(self.dir, "containerd", "config.toml")
        containerd.DROPIN_DIR = os.path.join(self.dir, "containerd", "config-v3.toml.d")
        os.makedirs(containerd.DROPIN_DIR)
        containerd.write()
        self.assertEqual(containerd.runtime_options(containerd.cri_containerd())["runc"],
                         {"runtime_type": "io.containerd.runc.v2", "options": {"SystemdCgroup": False}})
        with open(os.path.join(containerd.DROPIN_DIR, "x.toml"), "w", encoding="utf-8") as f:
            f.write("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
                    "privileged_without_host_devices = true\n")
        self.assertEqual(containerd.runtime_options(containerd.cri_containerd())["runc"],
                         {"runtime_type": "io.containerd.runc.v2", "options": {"SystemdCgroup": False},
                          "privileged_without_host_devices": True})

    def test_default_runtime_names_the_handler_of_a_pod_without_a_class(self):
        # k3s --default-runtime (templates: default_runtime_name); containerd's own default is runc,
        # and a name no runtime table answers stops the CRI plugin (config.go ValidateRuntimeConfig).
        from k3ssim import config
        from k3ssim.kubelet import containerd
        saved = (config.CONTAINERD_CONFIG, containerd.DROPIN_DIR, containerd.find_runtimes)
        self.addCleanup(lambda: (setattr(config, "CONTAINERD_CONFIG", saved[0]),
                                 setattr(containerd, "DROPIN_DIR", saved[1]),
                                 setattr(containerd, "find_runtimes", saved[2])))
        config.CONTAINERD_CONFIG = os.path.join(self.dir, "containerd", "config.toml")
        containerd.DROPIN_DIR = os.path.join(self.dir, "containerd", "config-v3.toml.d")
        containerd.find_runtimes = lambda: {"nvidia": "/usr/bin/nvidia-container-runtime"}
        containerd.write()
        self.assertEqual(containerd.default_handler(containerd.cri_containerd()), "runc")
        containerd.write("nvidia")
        with open(config.CONTAINERD_CONFIG, encoding="utf-8") as f:
            self.assertIn("[plugins.'io.containerd.cri.v1.runtime'.containerd]\n  default_runtime_name = \"nvidia\"\n",
                          f.read())
        self.assertEqual(containerd.default_handler(containerd.cri_containerd()), "nvidia")
        containerd.find_runtimes = lambda: {}
        containerd.write("nvidia")
        with self.assertRaisesRegex(containerd.CRIError, 'no corresponding runtime configured in '
                                    '`containerd.runtimes` for `containerd` `default_runtime_name = "nvidia"`'):
            containerd.default_handler(containerd.cri_containerd())

    def test_a_base_spec_is_read_once_and_a_bad_one_stops_the_cri_plugin(self):
        # plugins/cri/runtime/plugin.go loadBaseOCISpecs: os.Open, a JSON decode.
        from k3ssim.kubelet import containerd
        good = os.path.join(self.dir, "spec.json")
        with open(good, "w", encoding="utf-8") as f:
            json.dump({"hooks": {"createContainer": [{"path": "/usr/bin/nvidia-cdi-hook",
                                                      "args": ["nvidia-cdi-hook", "disable-device-node-modification"]}]}},
                      f)
        opts = {"runc": {"base_runtime_spec": good}, "nvidia": {}}
        specs = containerd.base_specs(opts)
        self.assertEqual(containerd.base_hooks(opts["runc"], specs)[0]["path"], "/usr/bin/nvidia-cdi-hook")
        self.assertEqual(containerd.base_hooks(opts["nvidia"], specs), [])
        with self.assertRaisesRegex(containerd.CRIError, "failed to open base OCI spec: .*no such file"):
            containerd.base_specs({"runc": {"base_runtime_spec": good + ".gone"}})
        with open(good, "w", encoding="utf-8") as f:
            f.write("{")
        with self.assertRaisesRegex(containerd.CRIError, "failed to parse base OCI spec file"):
            containerd.base_specs(opts)

    def test_a_runc_pod_gets_the_kernels_params_unless_a_hook_masks_them(self):
        from k3ssim.kubelet import runtime
        saved = self.rt.kernel_params
        self.addCleanup(setattr, self.rt, "kernel_params", saved)
        self.rt.kernel_params = lambda: "/run/k3s-sim/kernel-procfs/nvidia/params"
        hook = {"path": "/usr/bin/nvidia-cdi-hook", "args": ["nvidia-cdi-hook", "disable-device-node-modification"]}
        ns = runtime.MountNamespace()
        self.rt.pod_procfs("runc", [hook], ns)
        argv = ns.wrap(["cat", "/proc/driver/nvidia/params"])
        self.assertEqual(argv[:5], ["unshare", "-m", "--propagation", "private", "sh"])
        self.assertIn("mount --bind /run/k3s-sim/kernel-procfs/nvidia/params /proc/driver/nvidia/params", argv[6])
        self.assertIn("/usr/bin/nvidia-cdi-hook disable-device-node-modification </dev/null", argv[6])
        self.assertLess(argv[6].index("mount --bind"), argv[6].index("nvidia-cdi-hook"))
        self.assertEqual(argv[-2:], ["cat", "/proc/driver/nvidia/params"])
        # An nvidia handler's runtime masks them itself: nothing to do.
        ns = runtime.MountNamespace()
        self.rt.pod_procfs("nvidia", [hook], ns)
        self.assertEqual(ns.wrap(["true"]), ["true"])
        self.assertTrue(self.rt.masks_params("runc", [hook]))
        self.assertFalse(self.rt.masks_params("runc", []))
        # A hook that runs and fails fails the start as runc does: StartError,
        # 128, its exit status and output in runc's words; the command never runs.
        import threading
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        ns = runtime.MountNamespace(start_error=os.path.join(d, "start-error"))
        ns.hook(0, {"path": "/bin/sh", "args": ["sh", "-c", "echo out; echo bad >&2; exit 3"]})
        done = threading.Event()
        run = runtime.ProcessRun("c", os.path.join(d, "0.log"), lambda r: done.set(),
                                 ["sh", "-c", "touch %s/ran" % d], {"PATH": "/usr/bin:/bin"}, "/", None, ns)
        self.assertTrue(done.wait(30))
        self.assertEqual((run.exit_code, run.reason), (128, "StartError"))
        self.assertIn("error running createContainer hook #0: exit status 3, stdout: out, stderr: bad: unknown",
                      run.message)
        self.assertFalse(os.path.exists(os.path.join(d, "ran")))
        # A hook whose program is not there fails the start as runc does.
        self.assertIn("error running createContainer hook #0: fork/exec /nonexistent: no such file",
                      runtime.hook_missing([{"path": "/nonexistent", "args": ["x"]}]))
        self.assertIsNone(runtime.hook_missing([{"path": "/bin/sh", "args": ["sh"]}]))

    def test_refused_from_unprivileged_pods_mounts_read(self):
        self.config("accept-nvidia-visible-devices-envvar-when-unprivileged = false\n"
                    "accept-nvidia-visible-devices-as-volume-mounts = true\n[nvidia-container-runtime]\n")
        env = {"NVIDIA_VISIBLE_DEVICES": "all"}
        self.assertEqual(self.rt.devices("nvidia", {}, env, []), "none")
        self.assertEqual(self.rt.devices("nvidia", {"securityContext": {"privileged": True}}, env, []), "all")
        sysadmin = {"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
        self.assertEqual(self.rt.devices("nvidia", sysadmin, env, []), "all")
        mounts = [{"envs": {"NVIDIA_VISIBLE_DEVICES": "/var/run/nvidia-container-devices"},
                   "mounts": [{"container_path": "/var/run/nvidia-container-devices/GPU-a", "host_path": "/dev/null"}]}]
        self.assertEqual(self.rt.devices("nvidia", {}, env, mounts), "GPU-a")

    def test_runc_gets_none_but_cdi_devices(self):
        self.config("")
        self.assertEqual(self.rt.devices("runc", {}, {"NVIDIA_VISIBLE_DEVICES": "all"}, []), "none")
        with open(os.path.join(self.cdi, "plugin.yaml"), "w", encoding="utf-8") as f:
            f.write("cdiVersion: 0.5.0\nkind: k8s.device-plugin.nvidia.com/gpu\ndevices:\n- name: GPU-a\n")
        cdi = [{"cdi_devices": ["k8s.device-plugin.nvidia.com/gpu=GPU-a"]}]
        self.assertEqual(self.rt.devices("runc", {}, {}, cdi), "GPU-a")
        with self.assertRaises(self.rt.Unresolvable):
            self.rt.devices("nvidia", {}, {}, [{"cdi_devices": ["k8s.device-plugin.nvidia.com/gpu=GPU-z"]}])


class MountPropagation(unittest.TestCase):
    """containerd internal/cri/opts/spec_linux_opts.go: ensureShared."""

    def test_bidirectional_needs_a_shared_mount(self):
        from k3ssim import config
        from k3ssim.kubelet import mounts
        saved = config.MOUNTINFO
        self.addCleanup(setattr, config, "MOUNTINFO", saved)
        info = os.path.join(tempfile.mkdtemp(), "mountinfo")
        pod = {"spec": {"volumes": [{"name": "mps-root", "hostPath": {"path": "/run/nvidia/mps"}}]}}
        ctr = {"volumeMounts": [{"name": "mps-root", "mountPath": "/mps", "mountPropagation": "Bidirectional"}]}
        config.MOUNTINFO = info
        with open(info, "w", encoding="utf-8") as f:
            f.write("100 1 0:50 / / rw,relatime - overlay overlay rw\n"
                    "101 100 0:51 / /proc rw - proc proc rw\n")
        self.assertEqual(mounts.propagation_error(pod, ctr),
                         'path "/run/nvidia/mps" is mounted on "/" but it is not a shared mount')
        with open(info, "w", encoding="utf-8") as f:
            f.write("100 1 0:50 / / rw,relatime shared:1 - overlay overlay rw\n")
        self.assertIsNone(mounts.propagation_error(pod, ctr))
        # Other mounts are not looked at.
        self.assertIsNone(mounts.propagation_error(pod, {"volumeMounts": [{"name": "mps-root", "mountPath": "/mps"}]}))


class AgentJoin(unittest.TestCase):
    """crypto/x509 HostnameError, as k3s's agent meets it (join.py)."""

    def test_the_url_host_must_be_a_san(self):
        from k3ssim import join
        cert = {"subjectAltName": (("DNS", "kubernetes"), ("DNS", "localhost"), ("IP Address", "10.43.0.1"),
                                   ("IP Address", "127.0.0.1"), ("IP Address", "0:0:0:0:0:0:0:1\n"))}
        self.assertIsNone(join.host_error(cert, "127.0.0.1"))
        self.assertIsNone(join.host_error(cert, "localhost"))
        self.assertEqual(join.host_error(cert, "10.214.1.1"),
                         "x509: certificate is valid for 10.43.0.1, 127.0.0.1, ::1, not 10.214.1.1")
        self.assertEqual(join.host_error(cert, "gw.example"),
                         "x509: certificate is valid for kubernetes, localhost, not gw.example")
        self.assertEqual(join.host_error({"subjectAltName": (("DNS", "k3s"),)}, "10.0.0.1"),
                         "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs")


class Advertised(unittest.TestCase):
    """What a server advertises to its agents' tunnels (pkg/cli/server/server.go run)."""

    def test_the_order_of_the_flags(self):
        from k3ssim import server
        opts = server.parse_args(["--https-listen-port", "6443"])
        self.assertEqual(server.advertised(opts, "10.213.0.2"), ("10.213.0.2", 6443))
        opts = server.parse_args(["--node-ip=10.0.0.9", "--node-external-ip", "192.0.2.5,192.0.2.6"])
        self.assertEqual(server.advertised(opts, "10.213.0.2"), ("192.0.2.5", 6443))
        opts = server.parse_args(["--node-ip=10.0.0.9", "--advertise-address=10.0.0.5", "--advertise-port=35000"])
        self.assertEqual(server.advertised(opts, "10.213.0.2"), ("10.0.0.5", 35000))

    def test_go_dial_errors(self):
        import errno
        from k3ssim import join
        self.assertEqual(join.dial_error("10.213.0.2:6443", OSError(errno.EHOSTUNREACH, "x")),
                         "dial tcp 10.213.0.2:6443: connect: no route to host")
        self.assertIsNone(join.dial_error("h:1", ValueError("x")))


class WebSocket(unittest.TestCase):
    """The handshake as gorilla/websocket checks it (remotedialer, kubectl exec)."""

    def test_the_rfc_accept_key(self):
        from k3ssim import websocket
        self.assertEqual(websocket.accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_a_client_refuses_a_wrong_answer(self):
        from k3ssim import websocket
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        good = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        self.assertTrue(websocket.handshake_ok(good, key))
        self.assertFalse(websocket.handshake_ok(good.replace(b"xOo=", b"xOp="), key))
        self.assertFalse(websocket.handshake_ok(good.replace(b"Connection: Upgrade", b"Connection: close"), key))
        self.assertFalse(websocket.handshake_ok(good.replace(b"101 Switching Protocols", b"200 OK"), key))

    def test_exec_status(self):
        from k3ssim import podexec
        self.assertEqual(podexec._status(0), {"metadata": {}, "status": "Success"})
        st = podexec._status(3)
        self.assertEqual((st["reason"], st["details"]["causes"]), ("NonZeroExitCode", [{"reason": "ExitCode",
                                                                                         "message": "3"}]))


class Flannel(unittest.TestCase):
    """Which address flannel gives a node, and which peers it sends to
    (k3s pkg/agent/flannel/setup.go setAnnotations; flannel's kube subnet manager)."""

    def test_public_ip_needs_both_flags(self):
        from k3ssim.kubelet import podnet
        self.assertEqual(podnet.public_ip("10.213.0.2", [], True), "10.213.0.2")
        self.assertEqual(podnet.public_ip("10.213.0.2", ["192.0.2.5"], False), "10.213.0.2")
        self.assertEqual(podnet.public_ip("10.213.0.2", ["2001:db8::5", "192.0.2.5"], True), "192.0.2.5")

    def test_the_server_passes_flannel_flags_on(self):
        from k3ssim import server
        opts = server.parse_args(["--flannel-external-ip", "--flannel-backend=wireguard-native"])
        self.assertEqual((opts["flannel_backend"], opts["flannel_external_ip"]), ("wireguard-native", True))
        self.assertFalse(server.parse_args(["--flannel-external-ip=false"])["flannel_external_ip"])
        self.assertFalse(server.parse_args([])["flannel_external_ip"])

    def test_peers_are_nodes_with_a_lease(self):
        from k3ssim.kubelet import podnet
        ann = {podnet.ANN + "backend-data": '{"VNI": 1, "VtepMAC": "aa:bb:cc:dd:ee:ff"}',
               podnet.ANN + "public-ip": "10.213.0.2", podnet.ANN + "public-ip-overwrite": "192.0.2.5"}
        nodes = [{"metadata": {"name": "me", "annotations": ann}, "spec": {"podCIDR": "10.42.0.0/24"}},
                 {"metadata": {"name": "srv", "annotations": ann}, "spec": {"podCIDR": "10.42.1.0/24"}},
                 {"metadata": {"name": "new"}, "spec": {"podCIDR": "10.42.2.0/24"}}]
        self.assertEqual(podnet.peers(nodes, "me"), {"10.42.1.0/24": ("aa:bb:cc:dd:ee:ff", "192.0.2.5")})


class NodeLifecycle(unittest.TestCase):
    """kube-controller-manager's node lifecycle controller (controllers/nodelifecycle.py)."""

    def setUp(self):
        from k3ssim import api, clock, registry
        self.now = [1000.0]
        saved = clock.now
        clock.now = lambda: self.now[0]
        self.addCleanup(setattr, clock, "now", saved)
        self.api = api.Api(store.Store(os.path.join(tempfile.mkdtemp(), "state.json")), registry.Registry())
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "default"}})
        nodes = self.api.registry.by_kind("v1", "Node")
        for n in ("a", "b"):
            node, _ = self.api.create(nodes, {"metadata": {"name": n}})
            node["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                              "lastHeartbeatTime": "2026-01-01T00:00:00Z"}]}
            self.api.update_status(nodes, node)

    def node(self, name):
        return self.api.get(self.api.registry.by_kind("v1", "Node"), None, name)

    def test_go_durations_and_the_flags_k3s_passes_on(self):
        from k3ssim.controllers import nodelifecycle
        self.assertEqual(nodelifecycle.go_duration("1m30s"), 90.0)
        self.assertEqual(nodelifecycle.go_duration("500ms"), 0.5)
        self.assertIsNone(nodelifecycle.go_duration("50"))
        t = nodelifecycle.timings(["node-monitor-grace-period=20s"])
        self.assertEqual((t["node-monitor-grace-period"], t["node-monitor-period"]), (20.0, 5.0))

    def test_silent_past_the_grace_period_unknown_and_tainted(self):
        from k3ssim.controllers import nodelifecycle
        nc = nodelifecycle.NodeLifecycle(self.api)
        nc.tick()
        self.now[0] += 50
        nc.tick()
        self.assertEqual(self.node("a")["status"]["conditions"][0]["status"], "True")
        # b's kubelet posts a new heartbeat; a's stays silent past 50 s.
        nodes = self.api.registry.by_kind("v1", "Node")
        b = self.node("b")
        b["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:00:50Z"
        self.api.update_status(nodes, b)
        self.now[0] += 5.5
        nc.tick()
        a = self.node("a")
        ready = [c for c in a["status"]["conditions"] if c["type"] == "Ready"][0]
        self.assertEqual((ready["status"], ready["reason"], ready["message"]),
                         ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."))
        self.assertEqual(sorted(c["type"] for c in a["status"]["conditions"] if c["status"] == "Unknown"),
                         ["DiskPressure", "MemoryPressure", "PIDPressure", "Ready"])
        self.assertEqual(sorted((t["key"], t["effect"]) for t in a["spec"]["taints"]),
                         [("node.kubernetes.io/unreachable", "NoExecute"),
                          ("node.kubernetes.io/unreachable", "NoSchedule")])
        self.assertEqual(self.node("b")["status"]["conditions"][0]["status"], "True")

    def test_a_renewed_lease_is_a_sign_of_life(self):
        from k3ssim.controllers import nodelifecycle
        leases = self.api.registry.by_kind("coordination.k8s.io/v1", "Lease")
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "kube-node-lease"}})
        lease, _ = self.api.create(leases, {"metadata": {"name": "a"}, "spec": {"renewTime": "t0"}}, "kube-node-lease")
        nc = nodelifecycle.NodeLifecycle(self.api)
        nc.tick()
        for i in range(12):
            self.now[0] += 5.5
            lease["spec"]["renewTime"] = "t%d" % (i + 1)
            lease, _ = self.api.update(leases, lease, "kube-node-lease")
            nc.tick()
        self.assertEqual(self.node("a")["status"]["conditions"][0]["status"], "True")
        self.assertEqual(self.node("b")["status"]["conditions"][0]["status"], "Unknown")

    def test_no_noexecute_taint_while_no_node_is_ready(self):
        from k3ssim.controllers import nodelifecycle
        nc = nodelifecycle.NodeLifecycle(self.api)
        nc.tick()
        self.now[0] += 60
        nc.tick()
        for n in ("a", "b"):
            self.assertEqual([(t["key"], t["effect"]) for t in self.node(n)["spec"]["taints"]],
                             [("node.kubernetes.io/unreachable", "NoSchedule")])


class GarbageCollector(unittest.TestCase):
    """The garbage collector's foreground deletion (controllers/gc.py)."""

    def setUp(self):
        from k3ssim import api, registry
        from k3ssim.controllers import gc
        self.api = api.Api(store.Store(os.path.join(tempfile.mkdtemp(), "state.json")), registry.Registry())
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "default"}})
        # The owner a Secret: a pod that never ran is removed at once (grace 0).
        self.owners, self.cms = (self.api.registry.by_kind("v1", k) for k in ("Secret", "ConfigMap"))
        self.gc = gc.Housekeeping(self.api)
        self.owner, _ = self.api.create(self.owners, {"metadata": {"name": "own"}}, "default")

    def dependent(self, name, blocks):
        ref = {"apiVersion": "v1", "kind": "Secret", "name": "own", "uid": self.owner["metadata"]["uid"],
               "controller": True}
        if blocks:
            ref["blockOwnerDeletion"] = True
        self.api.create(self.cms, {"metadata": {"name": name, "ownerReferences": [ref]}}, "default")

    def there(self, res, name):
        return self.api.find(res, "default", name) is not None

    def test_an_owner_waits_for_the_dependents_that_block_it(self):
        self.dependent("blocks", True)
        self.dependent("free", False)
        self.api.delete(self.owners, "default", "own", {"propagationPolicy": "Foreground"})
        self.gc.tick()
        self.assertTrue(self.there(self.owners, "own"))
        for _ in range(5):
            self.gc.tick()
            # Never the owner gone while the blocking dependent is there.
            self.assertFalse(self.there(self.cms, "blocks") and not self.there(self.owners, "own"))
        self.assertFalse(self.there(self.owners, "own") or self.there(self.cms, "blocks") or
                         self.there(self.cms, "free"))

    def test_a_pod_that_never_ran_deleted_in_the_foreground_waits_for_the_collector(self):
        # store.go Delete: grace 0, but the policy's finalizer keeps it.
        pods = self.api.registry.by_kind("v1", "Pod")
        self.api.create(pods, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
                        "default", validation="Ignore")
        self.api.delete(pods, "default", "p", {"propagationPolicy": "Foreground"})
        self.assertEqual(self.api.find(pods, "default", "p")["metadata"]["finalizers"], ["foregroundDeletion"])
        self.gc.tick()
        self.assertIsNone(self.api.find(pods, "default", "p"))
        self.api.create(pods, {"metadata": {"name": "q"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
                        "default", validation="Ignore")
        self.api.delete(pods, "default", "q")
        self.assertIsNone(self.api.find(pods, "default", "q"))

    def test_an_owner_does_not_wait_for_a_dependent_that_does_not_block(self):
        # As a pod and its template's claim since 1.35 (kubernetes#134956):
        # the owner goes while its dependent is still being deleted.
        self.dependent("free", False)
        self.api.delete(self.owners, "default", "own", {"propagationPolicy": "Foreground"})
        self.gc.tick()
        self.assertFalse(self.there(self.owners, "own"))
        while self.there(self.cms, "free"):
            self.gc.tick()


class DeployController(unittest.TestCase):
    """k3s's deploy controller (controllers/deploy.py, after
    pkg/deploy/controller.go and stage.go)."""

    def setUp(self):
        from k3ssim import api, config, registry
        from k3ssim.controllers import crds
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.saved = (config.MANIFESTS_DIR, config.CRD_DELAY)
        config.MANIFESTS_DIR, config.CRD_DELAY = self.dir, 0
        self.addCleanup(self.restore)
        self.api = api.Api(store.Store(os.path.join(self.dir, ".state.json")), registry.Registry())
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "kube-system"}})
        self.types = crds.K3sTypes(self.api)
        self.types.start()
        self.types.tick()
        # As the server does on every change of the CRDs.
        self.api.registry.set_crds(self.api.store.list(("apiextensions.k8s.io", "customresourcedefinitions"))[0])
        self.addons = self.api.registry.by_kind("k3s.cattle.io/v1", "Addon")
        self.rcs = self.api.registry.by_kind("node.k8s.io/v1", "RuntimeClass")

    def restore(self):
        from k3ssim import config
        config.MANIFESTS_DIR, config.CRD_DELAY = self.saved

    def deploy(self, disables=()):
        from k3ssim.controllers import deploy
        d = deploy.Deploy(self.api, self.types, disables)
        d.start()
        return d

    def addon(self, name):
        return self.api.find(self.addons, "kube-system", name)

    def test_runtimes_are_applied_and_recorded_by_their_addon(self):
        from k3ssim.controllers import deploy
        deploy.stage_packaged(["traefik"])
        self.deploy().tick()
        self.assertEqual(self.api.find(self.rcs, None, "nvidia")["handler"], "nvidia")
        addon = self.addon("runtimes")
        self.assertEqual(len(addon["spec"]["checksum"]), 64)
        self.assertEqual(addon["metadata"]["annotations"][deploy.GVK_ANNOTATION], "node.k8s.io/v1, Kind=RuntimeClass")

    def test_a_manifest_that_fails_leaves_its_addon_without_a_checksum(self):
        # The Addon comes first, for the events; the checksum only once applied.
        with open(os.path.join(self.dir, "bad.yaml"), "w", encoding="utf-8") as f:
            f.write("apiVersion: example.com/v1\nkind: Nothing\nmetadata:\n  name: x\n")
        self.deploy().tick()
        addon = self.addon("bad")
        self.assertEqual(addon["spec"], {"source": os.path.join(self.dir, "bad.yaml")})

    def test_disabled_runtimes_are_not_staged_and_a_staged_file_is_deleted_with_its_objects(self):
        from k3ssim.controllers import deploy
        deploy.stage_packaged(["runtimes"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "runtimes.yaml")))
        deploy.stage_packaged(["runtimes.yaml"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "runtimes.yaml")), "the name with its extension too")
        deploy.stage_packaged()
        self.deploy().tick()
        other = self.api.registry.by_kind("v1", "ConfigMap")
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "default"}})
        self.api.create(other, {"metadata": {"name": "mine"}}, "default")
        self.deploy(["runtimes"]).tick()
        self.assertIsNone(self.addon("runtimes"))
        self.assertIsNone(self.api.find(self.rcs, None, "nvidia"))
        self.assertIsNone(self.api.find(self.rcs, None, "wasmtime"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "runtimes.yaml")))
        self.assertIsNotNone(self.api.find(other, "default", "mine"), "what the Addon did not own stays")


class NodeRemoval(unittest.TestCase):
    """k3s's node controller's onRemove and the pod GC's orphans (controllers/nodes.py)."""

    def test_a_deleted_node_goes_with_its_password_and_then_its_pods(self):
        from k3ssim import api, clock, registry
        from k3ssim.controllers import nodes
        now = [100.0]
        saved = clock.now
        clock.now = lambda: now[0]
        self.addCleanup(setattr, clock, "now", saved)
        a = api.Api(store.Store(os.path.join(tempfile.mkdtemp(), "state.json")), registry.Registry())
        for ns in ("default", "kube-system"):
            a.store.create(("", "namespaces"), {"metadata": {"name": ns}})
        node_res, secret_res, pod_res = (a.registry.by_kind("v1", k) for k in ("Node", "Secret", "Pod"))
        a.create(node_res, {"metadata": {"name": "b", "finalizers": [nodes.FINALIZER]}})
        a.create(secret_res, {"metadata": {"name": "b.node-password.k3s"}, "data": {}}, "kube-system")
        a.create(pod_res, {"metadata": {"name": "p"}, "spec": {"nodeName": "b", "containers": [
            {"name": "c", "image": "x"}]}}, "default", validation="Ignore")
        a.delete(node_res, None, "b")
        nc = nodes.Nodes(a)
        nc.tick()
        self.assertIsNone(a.find(node_res, None, "b"))
        self.assertIsNone(a.find(secret_res, "kube-system", "b.node-password.k3s"))
        self.assertIsNotNone(a.find(pod_res, "default", "p"))
        # Passes every 20 s: the first to miss the node starts the quarantine (40 s).
        for step, there in ((20, True), (20, True), (20, False)):
            now[0] += step
            nc.tick()
            self.assertEqual(a.find(pod_res, "default", "p") is not None, there, now[0])
