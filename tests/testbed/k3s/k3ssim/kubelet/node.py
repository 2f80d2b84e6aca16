"""The node object: registration and status, as the kubelet posts them.

- Registration (pkg/kubelet/kubelet_node_status.go registerWithAPIServer)
  with k3s's labels and annotations (pkg/agent: the node-role labels,
  k3s.io/hostname, k3s.io/internal-ip) plus --node-label and
  SIM_NODE_LABELS; labels set later through the API stay.
- The status (pkg/kubelet/nodestatus/setters.go): capacity and
  allocatable as strings (cpu, memory in Ki, pods "110", the device
  plugins' resources from the device manager; a resource the node ever
  had stays, "0" once its plugin is gone: reconcileExtendedResource at a
  start without the checkpoint), conditions with lastHeartbeatTime,
  addresses, nodeInfo. Posted when something changed, at least every
  nodeStatusReportFrequency (5 minutes). The node is registered at the
  kubelet's start only: one deleted later stays gone while the kubelet runs.
- SIM_NODE_PRESSURE=memory|disk: that condition True and its NoSchedule
  taint (the node lifecycle controller's TaintNodesByCondition); the node
  stays Ready.
"""

import os
import platform

from .. import clock, config, logs, status

REPORT_FREQUENCY = 300.0
UPDATE_FREQUENCY = 10.0     # nodeStatusUpdateFrequency
BASE = ("cpu", "memory", "pods", "ephemeral-storage", "hugepages-1Gi", "hugepages-2Mi")


def _meminfo_kib():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _storage_kib():
    try:
        st = os.statvfs(config.DATA_DIR if os.path.isdir(config.DATA_DIR) else "/")
        return st.f_blocks * st.f_frsize // 1024
    except OSError:
        return 0


def k3s_labels(node, server=True):
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "k3s",
              "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": node,
              "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "k3s"}
    if server:
        labels["node-role.kubernetes.io/control-plane"] = "true"
        labels["node-role.kubernetes.io/master"] = "true"
    return labels


def extra_labels(flags):
    out = {}
    for item in flags + [l for l in os.environ.get("SIM_NODE_LABELS", "").split(",") if l]:
        k, _, v = item.partition("=")
        if k:
            out[k] = v
    return out


class NodeStatus:
    def __init__(self, kubelet, server, label_flags):
        self.k = kubelet
        self.server = server
        self.label_flags = label_flags
        self.last_post = 0.0
        self.last_missing = -UPDATE_FREQUENCY
        self.last_sig = None

    def register(self):
        res = self.k.res("v1", "Node")
        labels = k3s_labels(self.k.node, self.server)
        labels.update(extra_labels(self.label_flags))
        node = self.k.api.find(res, None, self.k.node)
        if node is None:
            obj = {"metadata": {"name": self.k.node, "labels": labels, "annotations": {
                "k3s.io/hostname": self.k.node, "k3s.io/internal-ip": self.k.ip,
                **({"k3s.io/external-ip": ",".join(self.k.external_ips)} if self.k.external_ips else {}),
                "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                "finalizers": ["wrangler.cattle.io/node"]},
                "spec": {"podCIDR": self.k.pod_cidr, "podCIDRs": [self.k.pod_cidr], "providerID": "k3s://" + self.k.node}}
            try:
                self.k.api.create(res, obj)
            except status.ApiError as e:
                if e.code != 409:
                    raise
        else:
            md = node["metadata"]
            md.setdefault("labels", {}).update(labels)
            md.setdefault("annotations", {})["k3s.io/internal-ip"] = self.k.ip
            self.k.api.update(res, node, check_rv=False)
        self.last_sig = None

    def post(self, force=False):
        res = self.k.res("v1", "Node")
        node = self.k.api.find(res, None, self.k.node)
        if node is None:
            # The kubelet registers once, at its start (registerWithAPIServer): a node
            # deleted under a running kubelet stays gone, its status updates failing.
            if clock.now() - self.last_missing >= UPDATE_FREQUENCY:
                self.last_missing = clock.now()
                logs.error("SIMULATION: kubelet: Error updating node status, will retry: error getting node "
                           "'%s': nodes '%s' not found" % (self.k.node, self.k.node))
            return
        dev_cap, dev_alloc, removed = self.k.devices.capacity()
        old_st = node.get("status", {})
        cap = {"cpu": str(os.cpu_count() or 1), "ephemeral-storage": "%dKi" % _storage_kib(), "hugepages-1Gi": "0",
               "hugepages-2Mi": "0", "memory": "%dKi" % _meminfo_kib(), "pods": "110"}
        alloc = dict(cap)
        for k in old_st.get("capacity") or {}:
            if k not in BASE:
                cap[k] = "0"
                alloc[k] = "0"
        for r in removed:
            cap[r] = "0"
            alloc[r] = "0"
        for r, n in dev_cap.items():
            cap[r] = str(n)
            alloc[r] = str(dev_alloc.get(r, 0))
        pressure = config.switch("SIM_NODE_PRESSURE")
        spec = node.setdefault("spec", {})
        taints = [t for t in spec.get("taints") or [] if t.get("key") not in
                  ("node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure")]
        if pressure in ("memory", "disk"):
            taints.append({"key": "node.kubernetes.io/%s-pressure" % pressure, "effect": "NoSchedule",
                           "timeAdded": clock.rfc3339()})
        conds = [("MemoryPressure", pressure == "memory", "KubeletHasInsufficientMemory" if pressure == "memory"
                  else "KubeletHasSufficientMemory", "kubelet has insufficient memory available" if pressure ==
                  "memory" else "kubelet has sufficient memory available"),
                 ("DiskPressure", pressure == "disk", "KubeletHasDiskPressure" if pressure == "disk"
                  else "KubeletHasNoDiskPressure", "kubelet has disk pressure" if pressure == "disk"
                  else "kubelet has no disk pressure"),
                 ("PIDPressure", False, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                 ("Ready", True, "KubeletReady", "kubelet is posting ready status")]
        # nodeStatusHasChanged compares with the node as the API has it: a
        # condition someone else changed (the node controller's Unknown) is
        # posted over at once.
        sig = (tuple(sorted(cap.items())), tuple(sorted(alloc.items())), pressure,
               tuple(sorted((node["metadata"].get("labels") or {}).items())))
        same_conds = (sorted((c.get("type"), c.get("status")) for c in old_st.get("conditions") or []) ==
                      sorted((t, "True" if on else "False") for t, on, _, _ in conds))
        if not force and same_conds and sig == self.last_sig and clock.now() - self.last_post < REPORT_FREQUENCY:
            return
        now = clock.rfc3339()
        old_conds = {c.get("type"): c for c in old_st.get("conditions") or []}
        conditions = []
        for t, on, reason, msg in conds:
            s = "True" if on else "False"
            prev = old_conds.get(t)
            since = prev.get("lastTransitionTime") if prev and prev.get("status") == s else now
            conditions.append({"type": t, "status": s, "lastHeartbeatTime": now, "lastTransitionTime": since,
                               "reason": reason, "message": msg})
        def bare(ts):
            return [{k: v for k, v in t.items() if k != "timeAdded"} for t in ts]
        if bare(taints) != bare(spec.get("taints") or []):
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)
            node = self.k.api.update(res, node, check_rv=False)[0]
        node["status"] = {
            "capacity": cap, "allocatable": alloc, "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": self.k.ip}]
                         + [{"type": "ExternalIP", "address": a} for a in self.k.external_ips]
                         + [{"type": "Hostname", "address": self.k.node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "bootID": _boot_id(), "containerRuntimeVersion": "containerd://2.1.5-k3s1",
                         "kernelVersion": platform.release(), "kubeProxyVersion": "", "kubeletVersion": config.VERSION,
                         "machineID": "", "operatingSystem": "linux", "osImage": "K3s stand-in (SIMULATION)",
                         "systemUUID": ""}}
        self.k.api.update_status(res, node)
        self.last_sig = sig
        self.last_post = clock.now()
        gpus = alloc.get("nvidia.com/gpu")
        if gpus not in (None, "0"):
            clock.stamp("gpu-allocatable %s" % gpus)


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""
