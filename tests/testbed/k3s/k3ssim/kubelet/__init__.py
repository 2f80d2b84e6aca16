"""The kubelet of one node (k3s's agent runs it in the same process as the
server; an agent stand-in runs it alone): containerd's config and image
store, the device manager, the node's status and its Lease, and a worker
per pod bound to the node. It reaches the API through CLIENT (the server's own Api, or
an agent's HTTPS client), as the real kubelet does with its node
credentials.
"""

import hashlib
import os

from .. import clock, config, logs, status
from . import containerd, devicemanager, dramanager, images, lease, node, podnet, pods


class Kubelet:
    def __init__(self, client, node_name, ip, wake, server=True, label_flags=(), pod_cidr="10.42.0.0/24",
                 network=None, default_runtime=None):
        self.api = client
        self.node = node_name
        self.ip = ip
        self.wake = wake
        self.pod_cidr = pod_cidr
        self.workers = {}
        self.mps_serving = set()   # uids of MPS control daemons that serve
        self.images = images.ImageStore()
        self.devices = devicemanager.DeviceManager()
        self.handlers = {}
        self.default_runtime = default_runtime   # --default-runtime
        self.default_handler = "runc"            # as containerd loaded it
        self.dra = dramanager.DRAManager(self)
        self.runtime_options = {}
        self.base_specs = {}
        self.cri_error = None      # containerd's CRI plugin did not load: why
        self._cri_said = 0.0
        self.status = node.NodeStatus(self, server, list(label_flags))
        self.lease = lease.NodeLease(self)
        network = dict(network or {})
        self.external_ips = network.get("external_ips") or []
        self.net = podnet.PodNetwork(self, **network) if podnet.enabled() else None
        self.started = False

    def res(self, api_version, kind):
        return self.api.resource(api_version, kind)

    def start_containerd(self):
        """k3s writes containerd's config; containerd starts and reads it,
        with the files it imports, once."""
        self.handlers = containerd.write(self.default_runtime)
        table = containerd.cri_containerd()
        self.runtime_options = containerd.runtime_options(table)
        try:
            self.default_handler = containerd.default_handler(table)
            self.base_specs = containerd.base_specs(self.runtime_options)
        except containerd.CRIError as e:
            self.cri_error = str(e)
            logs.warn('failed to load plugin io.containerd.cri.v1.runtime: %s' % e)

    def base_hooks(self, handler):
        return containerd.base_hooks(self.runtime_options.get(handler), self.base_specs)

    def _cri_missing(self):
        """k3s waits for containerd's CRI service, saying so every second;
        no kubelet runs, so no node registers."""
        if self.cri_error is None:
            return False
        if clock.now() - self._cri_said >= 1:
            self._cri_said = clock.now()
            logs.info("Waiting for containerd startup: rpc error: code = Unimplemented desc = unknown service "
                      "runtime.v1.RuntimeService")
        return True

    def start(self):
        if not self.handlers:
            self.start_containerd()
        if self._cri_missing():
            return
        self.images.import_dir()
        self.status.register()
        # No DRA driver is usable until its plugin registers again.
        self.dra.wipe()
        self.status.post(force=True)
        if self.net:
            self.net.start()
        self.started = True
        logs.info("SIMULATION: kubelet of node %s started" % self.node)

    # ---- the loop ----------------------------------------------------

    def tick(self):
        if not self.started:
            if self.handlers:
                self._cri_missing()   # at the loop's pace: at least a second apart when quiet
            return
        self.images.import_dir()
        self.status.post()
        self.lease.renew()
        if self.net:
            try:
                self.net.sync(clock.now())
            except RuntimeError as e:
                logs.error("SIMULATION: flannel: %s" % e)
        pods_res = self.res("v1", "Pod")
        mine, _ = self.api.list(pods_res, None, None, "spec.nodeName=" + self.node)
        seen = set()
        for p in mine:
            uid = p["metadata"]["uid"]
            seen.add(uid)
            w = self.workers.get(uid)
            if w is None:
                w = self.workers[uid] = pods.PodWorker(self, p)
            w.sync(p)
        for uid in [u for u in self.workers if u not in seen]:
            self.workers.pop(uid).teardown()
        self.dra.tick(self.live_pod_uids())
        if self.devices.changed.is_set():
            self.devices.changed.clear()
            self.status.post()

    def next_deadline(self):
        ends = [t for t in (self.devices.next_grace_end(), self.dra.next_deadline()) if t is not None]
        return min(ends) if ends else None

    def shutdown(self):
        for w in self.workers.values():
            w.kill_all()

    # ---- for the pod workers -------------------------------------------

    def live_pod_uids(self):
        return {u for u, w in self.workers.items() if not w.stopped and
                w.pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")}

    def container_exited(self, run):
        self.wake.set()

    def event(self, pod, etype, reason, message):
        try:
            self.api.record_event(pod, etype, reason, message, "kubelet", self.node)
        except status.ApiError:
            pass

    def finish_delete(self, pod):
        try:
            self.api.delete(self.res("v1", "Pod"), pod["metadata"]["namespace"], pod["metadata"]["name"],
                            {"gracePeriodSeconds": 0, "preconditions": {"uid": pod["metadata"]["uid"]}})
        except status.ApiError:
            pass
        w = self.workers.pop(pod["metadata"]["uid"], None)
        if w:
            w.teardown()

    def log_dir(self, pod, container):
        md = pod["metadata"]
        return os.path.join(config.POD_LOG_DIR, "%s_%s_%s" % (md["namespace"], md["name"], md["uid"]), container)

    def log_path(self, pod, container, cid):
        w = self.workers.get(pod["metadata"]["uid"])
        path = w.log_path(container, cid) if w else None
        if path is None:
            path = pods._read_index(self.log_dir(pod, container)).get(cid)
        return path

    def pod_ip(self, pod):
        if (pod.get("spec") or {}).get("hostNetwork"):
            return self.ip
        n = int(hashlib.sha256(pod["metadata"]["uid"].encode()).hexdigest(), 16) % 240 + 10
        return self.pod_cidr.rsplit(".", 2)[0] + ".%d.%d" % (int(self.pod_cidr.split(".")[2]), n)
