"""Unit tests of the stand-in's workload parts: the Deployment and
ReplicaSet controllers (controllers/deployment.py), the kubelet's startup
probe (kubelet/prober.py) and a container's mounts (kubelet/mounts.py).
Each case is a rule of the real source its module names."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from k3ssim import api, clock, registry, status, store  # noqa: E402
from k3ssim.controllers import deployment, gc, ownedpods  # noqa: E402
from k3ssim.kubelet import mounts, prober, runtime  # noqa: E402


class Deployments(unittest.TestCase):
    """pkg/controller/deployment sync.go, pkg/controller/replicaset replica_set.go."""

    def setUp(self):
        self.api = api.Api(store.Store(os.path.join(tempfile.mkdtemp(), "state.json")), registry.Registry())
        self.api.store.create(("", "namespaces"), {"metadata": {"name": "default"}})
        self.res = {k: self.api.registry.by_kind(v, k) for v, k in (("apps/v1", "Deployment"),
                                                                    ("apps/v1", "ReplicaSet"), ("v1", "Pod"))}
        self.c = deployment.Deployments(self.api)
        self.gc = gc.Housekeeping(self.api)

    def make(self, image="busybox", replicas=None):
        spec = {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": image}]}}}
        if replicas is not None:
            spec["replicas"] = replicas
        d, _ = self.api.create(self.res["Deployment"], {"metadata": {"name": "web"}, "spec": spec}, "default")
        return d

    def objs(self, kind):
        return self.api.list(self.res[kind], "default")[0]

    def ready_all(self):
        for p in self.objs("Pod"):
            p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            self.api.update_status(self.res["Pod"], p)

    def test_a_replicaset_of_its_template_then_its_pods_then_the_status(self):
        self.make()
        self.c.tick()
        [rs] = self.objs("ReplicaSet")
        h = rs["metadata"]["labels"]["pod-template-hash"]
        self.assertEqual(rs["metadata"]["name"], "web-" + h)
        self.assertTrue(set(h) <= set(ownedpods.SAFE) and len(h) <= 10)
        self.assertEqual(rs["spec"]["selector"]["matchLabels"], {"app": "web", "pod-template-hash": h})
        self.assertEqual(rs["spec"]["replicas"], 1)   # replicas unset: 1
        self.assertTrue(rs["metadata"]["ownerReferences"][0]["blockOwnerDeletion"])
        self.assertEqual(rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"], "2")   # 1 + 25% up
        [pod] = self.objs("Pod")
        self.assertTrue(pod["metadata"]["name"].startswith(rs["metadata"]["name"] + "-"))
        self.assertEqual(pod["metadata"]["labels"]["pod-template-hash"], h)
        self.assertEqual(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet")
        self.c.tick()
        d = self.api.find(self.res["Deployment"], "default", "web")
        self.assertEqual(d["status"].get("readyReplicas", 0), 0)
        self.assertEqual(d["status"]["unavailableReplicas"], 1)
        self.assertEqual({c["type"]: c["status"] for c in d["status"]["conditions"]},
                         {"Available": "False", "Progressing": "True"})
        self.ready_all()
        self.c.tick()
        self.c.tick()
        d = self.api.find(self.res["Deployment"], "default", "web")
        self.assertEqual((d["status"]["readyReplicas"], d["status"]["availableReplicas"],
                          d["status"]["updatedReplicas"]), (1, 1, 1))
        self.assertNotIn("unavailableReplicas", d["status"])
        self.assertEqual({c["type"]: c["reason"] for c in d["status"]["conditions"]},
                         {"Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"})

    def test_the_apis_defaults_and_refusal(self):
        d = self.make()
        self.assertEqual((d["spec"]["replicas"], d["spec"]["strategy"], d["spec"]["revisionHistoryLimit"],
                          d["spec"]["progressDeadlineSeconds"]),
                         (1, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                          10, 600))
        with self.assertRaises(status.ApiError) as e:
            self.api.create(self.res["Deployment"], {"metadata": {"name": "bad"}, "spec": {
                "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c"}]}}}},
                "default")
        self.assertIn("spec.selector: Required value", e.exception.message)
        # The first pass: its set made at the replicas wanted, the event of it.
        self.c.tick()
        events = [o for o in self.api.list(self.api.registry.by_kind("v1", "Event"), "default")[0]]
        self.assertIn("Scaled up replica set %s from 0 to 1" % self.objs("ReplicaSet")[0]["metadata"]["name"],
                      [e.get("message") for e in events])
        d = self.api.find(self.res["Deployment"], "default", "web")
        self.assertEqual({c["type"]: c["reason"] for c in d["status"]["conditions"]}["Progressing"],
                         "NewReplicaSetCreated")

    def test_a_new_template_scales_the_old_set_to_zero_and_extras_go(self):
        d = self.make(replicas=2)
        self.c.tick()
        self.assertEqual(len(self.objs("Pod")), 2)
        d = self.api.find(self.res["Deployment"], "default", "web")
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
        self.api.update(self.res["Deployment"], d)
        self.c.tick()
        sets = {s["metadata"]["name"]: s["spec"]["replicas"] for s in self.objs("ReplicaSet")}
        self.assertEqual(sorted(sets.values()), [0, 2])
        live = [p for p in self.objs("Pod") if not p["metadata"].get("deletionTimestamp")]
        self.assertEqual({p["spec"]["containers"][0]["image"] for p in live}, {"busybox:2"})

    def test_deleted_in_the_foreground_its_set_and_pods_go_first(self):
        self.make()
        self.c.tick()
        self.ready_all()
        self.c.tick()
        self.c.tick()
        self.api.delete(self.res["Deployment"], "default", "web", {"propagationPolicy": "Foreground"})
        # While it goes its status is kept up (syncStatusOnly): its pod no
        # longer ready shows, and nothing new is made.
        [pod] = self.objs("Pod")
        pod["status"]["conditions"][0]["status"] = "False"
        self.api.update_status(self.res["Pod"], pod)
        self.c.tick()
        self.c.tick()
        d = self.api.find(self.res["Deployment"], "default", "web")
        self.assertEqual((d["status"].get("readyReplicas", 0), len(self.objs("Pod"))), (0, 1))
        for _ in range(6):
            self.gc.tick()
            self.c.tick()
        self.assertEqual((self.objs("Deployment"), self.objs("ReplicaSet"), self.objs("Pod")), ([], [], []))


class TemplateHash(unittest.TestCase):
    def test_a_decimal_fnv_written_as_safe_encode_string_writes_it(self):
        tmpl = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        h = ownedpods.template_hash(tmpl)
        # '0'..'9' are bytes 48..57: SafeEncodeString's letters 4-9, b, c, d, f
        # (k3s's pod-template-hash "7c5ddbdf54" is one such)
        self.assertTrue(h and set(h) <= set("456789bcdf") and len(h) <= 10, h)
        self.assertEqual(h, ownedpods.template_hash(tmpl))
        self.assertNotEqual(h, ownedpods.template_hash({"spec": {"containers": [{"name": "c", "image": "other"}]}}))


class FakeWorker:
    def __init__(self, pod):
        self.pod = pod
        self.events = []
        self.k = self
        self.wake = threading.Event()

    def event(self, pod, etype, reason, message):
        self.events.append((reason, message))

    def exec_env(self, cs):
        return dict(os.environ)

    def exec_argv(self, cs, argv):
        return ["nsenter", "--mount=/proc/%d/ns/mnt" % cs.run.proc.pid, "--"] + list(argv)


class FakeRun:
    def __init__(self, pid):
        self.proc = type("P", (), {"pid": pid})()
        self.killed = None

    def kill(self, grace):
        self.killed = grace


ROOT = unittest.skipUnless(os.geteuid() == 0, "the probe enters a mount namespace: nsenter needs root")


class StartupProbe(unittest.TestCase):
    """pkg/kubelet/prober worker.go, prober.go; kuberuntime_manager.go."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.flag = os.path.join(self.dir, "startup.log")

    def container(self, **probe):
        spec = {"name": "c", "startupProbe": dict({"exec": {"command": ["cat", self.flag]}, "periodSeconds": 0},
                                                  **probe)}
        cs = type("CS", (), {})()
        cs.spec, cs.run = spec, FakeRun(os.getpid())
        cs.startup = prober.Startup(spec, clock.now())
        return cs

    @ROOT
    def test_not_started_until_it_passes_then_never_probed_again(self):
        cs, w = self.container(), FakeWorker({"spec": {}})
        prober.step(w, cs)
        self.assertFalse(prober.started(cs))
        self.assertEqual(w.events[0][0], "Unhealthy")
        self.assertTrue(w.events[0][1].startswith("Startup probe failed: cat: "))
        with open(self.flag, "w") as f:
            f.write("startup complete\n")
        prober.step(w, cs)
        self.assertTrue(prober.started(cs))
        os.unlink(self.flag)
        prober.step(w, cs)
        self.assertEqual((prober.started(cs), len(w.events)), (True, 1))

    @ROOT
    def test_failure_threshold_kills_the_container(self):
        cs, w = self.container(failureThreshold=2), FakeWorker({"spec": {"terminationGracePeriodSeconds": 5}})
        prober.step(w, cs)
        self.assertIsNone(cs.run.killed)
        prober.step(w, cs)
        self.assertEqual(cs.run.killed, 5.0)
        self.assertEqual(w.events[-1], ("Killing", "Container c failed startup probe, will be restarted"))

    def test_initial_delay_and_no_exec_probe(self):
        cs, w = self.container(initialDelaySeconds=3600), FakeWorker({"spec": {}})
        prober.step(w, cs)
        self.assertEqual(w.events, [])
        grpc = prober.Startup({"startupProbe": {"grpc": {"port": 1}}}, clock.now())
        self.assertTrue(grpc.ok)
        self.assertTrue(prober.Startup({}, clock.now()).ok)


class Mounts(unittest.TestCase):
    """containerd WithMounts (sorted by depth, a missing source made), CDI's mounts."""

    def test_hostpath_volumes_and_cdi_mounts_bound_shallow_first(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        missing = os.path.join(d, "made")
        pod = {"spec": {"volumes": [{"name": "root", "hostPath": {"path": d}},
                                    {"name": "deep", "hostPath": {"path": missing}},
                                    {"name": "empty", "emptyDir": {}}]}}
        ctr = {"volumeMounts": [{"name": "deep", "mountPath": "/r/a/b"}, {"name": "root", "mountPath": "/r"},
                                {"name": "empty", "mountPath": "/e"}]}
        ns = runtime.MountNamespace()
        # CDI's among the volumes' by depth; one of the gateway's own file at its own path is no bind.
        cdi = [("/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi"), (d, "/r/a")]
        self.assertIsNone(mounts.bind(pod, ctr, cdi, ns))
        self.assertTrue(os.path.isdir(missing))
        self.assertEqual([line.split("mount --rbind ")[1].split(";")[0] for line in ns.lines],
                         ["%s /r" % d, "%s /r/a" % d, "%s /r/a/b" % missing])
        self.assertIn("mkdir -p /r/a", ns.lines[1])
        # A source containerd cannot make: the container's creation fails.
        blocker = os.path.join(d, "file")
        open(blocker, "w").close()
        pod["spec"]["volumes"][1]["hostPath"]["path"] = os.path.join(blocker, "sub")
        self.assertEqual(mounts.bind(pod, ctr, [], runtime.MountNamespace()),
                         'failed to mkdir "%s/sub": mkdir %s/sub: not a directory' % (blocker, blocker))

    @unittest.skipUnless(os.geteuid() == 0, "unshare -m needs root")
    def test_a_failed_bind_is_runcs_start_error(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        ns = runtime.MountNamespace(start_error=os.path.join(d, "start-error"))
        ns.bind(os.path.join(d, "gone"), os.path.join(d, "at"), create=True, directory=True, recursive=True)
        out = subprocess.run(ns.wrap(["echo", "ran"]), capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout), (128, ""))
        self.assertTrue(ns.start_failure().startswith(
            'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create '
            'failed: unable to start container process: error during container init: error mounting "%s" to rootfs '
            'at "%s": ' % (os.path.join(d, "gone"), os.path.join(d, "at"))), ns.start_failure())

    @unittest.skipUnless(os.geteuid() == 0, "unshare -m needs root")
    def test_a_bind_in_a_namespace_of_its_own(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "f"), "w") as f:
            f.write("seen\n")
        target = os.path.join(d, "at")
        ns = runtime.MountNamespace()
        ns.bind(d, target, create=True, directory=True, recursive=True)
        out = subprocess.run(ns.wrap(["cat", os.path.join(target, "f")]), capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout), (0, "seen\n"))
        self.assertEqual(os.listdir(target), [])   # the bind was the namespace's alone


if __name__ == "__main__":
    unittest.main()
