"""kube-controller-manager's node lifecycle controller
(pkg/controller/nodelifecycle/node_lifecycle_controller.go: monitorNodeHealth,
tryUpdateNodeHealth, processTaintBaseEviction, doNoScheduleTaintingPass,
handleDisruption; pkg/controller/util/node: RecordNodeStatusChange,
MarkPodsNotReady).

Every node-monitor-period (5 s) it looks at each node's health signals: the
Ready condition's lastHeartbeatTime (a new node status) and the renewTime
of its Lease in kube-node-lease. The moment it sees either change is the
node's probe time (its own clock: "Missing timestamp for Node. Assuming now"
for a node it meets first, so a restarted server starts every node afresh).
When node-monitor-grace-period (50 s since Kubernetes 1.32; 1 m,
node-startup-grace-period, for a node that never posted Ready) passes
without one:
- Ready, MemoryPressure, DiskPressure and PIDPressure become Unknown,
  reason NodeStatusUnknown, "Kubelet stopped posting node status." (a
  condition the kubelet never posted: NodeStatusNeverUpdated, "Kubelet
  never posted node status."), lastTransitionTime now; kubectl prints
  NotReady;
- the Node event NodeNotReady "Node NAME status is now: NodeNotReady"
  (node-controller), and each pod of the node gets Ready False (a new
  lastTransitionTime) and the Warning event NodeNotReady "Node is not ready";
- taints: node.kubernetes.io/unreachable NoSchedule (no timeAdded) and
  NoExecute (timeAdded now); a Ready False node gets not-ready instead; a
  Ready node loses both. NoExecute taints are not added while no node is
  Ready (the zone is in FullDisruption, the controller suspects its own
  network), and are removed then.
The kubelet, when it comes back, posts its status over the Unknown ones.
Timings: the real defaults, or what `--kube-controller-manager-arg
node-monitor-grace-period=20s` (and node-monitor-period,
node-startup-grace-period) says, as k3s passes them on.
SIMULATION: no eviction by the taint manager (pods that do not tolerate
the NoExecute taint stay), no zones, no rate limits.
"""

import re

from .. import clock, status

DEFAULTS = {"node-monitor-period": 5.0, "node-monitor-grace-period": 50.0, "node-startup-grace-period": 60.0}
WATCHED = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
CONDITION_TAINTS = {"Unknown": "node.kubernetes.io/unreachable", "False": "node.kubernetes.io/not-ready"}


def go_duration(text):
    """Seconds of a Go duration ("50s", "1m30s", "500ms"), or None."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(h|ms|m|s|us|µs|ns)", text or "")
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * units[u] for n, u in parts)


def timings(args):
    """The controller's periods from k3s's --kube-controller-manager-arg KEY=VALUE list."""
    out = dict(DEFAULTS)
    for a in args:
        k, _, v = a.lstrip("-").partition("=")
        if k in out and go_duration(v) is not None:
            out[k] = go_duration(v)
    return out


def _cond(node, t):
    return next((c for c in node.get("status", {}).get("conditions") or [] if c.get("type") == t), None)


class NodeLifecycle:
    def __init__(self, api, controller_args=()):
        self.api = api
        self.t = timings(controller_args)
        self.health = {}     # node name -> {"probe", "heartbeat", "renew"}
        self.due = 0.0

    def start(self):
        pass

    def tick(self):
        now = clock.now()
        if now < self.due:
            return
        self.due = now + self.t["node-monitor-period"]
        nodes, _ = self.api.list(self.api.registry.by_kind("v1", "Node"))
        leases, _ = self.api.list(self.api.registry.by_kind("coordination.k8s.io/v1", "Lease"), "kube-node-lease")
        renewed = {l["metadata"]["name"]: (l.get("spec") or {}).get("renewTime") for l in leases}
        for name in [n for n in self.health if n not in {x["metadata"]["name"] for x in nodes}]:
            del self.health[name]
        ready_after = {}
        for node in nodes:
            ready_after[node["metadata"]["name"]] = self._check(node, now, renewed.get(node["metadata"]["name"]))
        # handleDisruption: with no node Ready, the controller takes the
        # NoExecute taints off (FullDisruption) instead of adding them.
        full = bool(nodes) and all(s != "True" for s, _ in ready_after.values())
        for node in nodes:
            st, node_now = ready_after[node["metadata"]["name"]]
            self._taint(node_now, st, full)

    def _check(self, node, now, renew):
        """tryUpdateNodeHealth: (Ready status after, the node as now stored)."""
        name = node["metadata"]["name"]
        ready = _cond(node, "Ready")
        beat = ready.get("lastHeartbeatTime") if ready else None
        h = self.health.get(name)
        if h is None:
            h = self.health[name] = {"probe": now, "heartbeat": beat, "renew": renew}
        elif beat != h["heartbeat"]:
            h["probe"], h["heartbeat"] = now, beat
        if renew and renew != h["renew"]:
            h["probe"], h["renew"] = now, renew
        observed = ready.get("status") if ready else "Unknown"
        grace = self.t["node-monitor-grace-period"] if ready else self.t["node-startup-grace-period"]
        if now <= h["probe"] + grace:
            return observed, node
        stamp = clock.rfc3339()
        conds = node.setdefault("status", {}).setdefault("conditions", [])
        changed = False
        for t in WATCHED:
            c = _cond(node, t)
            if c is None:
                conds.append({"type": t, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                              "message": "Kubelet never posted node status.",
                              "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                              "lastTransitionTime": stamp})
                changed = True
            elif c.get("status") != "Unknown":
                c.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.",
                         lastTransitionTime=stamp)
                changed = True
        if not changed:
            return "Unknown", node
        try:
            node = self.api.update_status(self.api.registry.by_kind("v1", "Node"), node)
        except status.ApiError:
            return observed, node
        if observed == "True":
            self.api.record_event(node, "Normal", "NodeNotReady", "Node %s status is now: NodeNotReady" % name,
                                  "node-controller")
            self._mark_pods_not_ready(name)
        return "Unknown", node

    def _mark_pods_not_ready(self, name):
        res = self.api.registry.by_kind("v1", "Pod")
        pods, _ = self.api.list(res, None, None, "spec.nodeName=" + name)
        for pod in pods:
            c = _cond(pod, "Ready")
            if c is None or c.get("status") == "False":
                continue
            c.update(status="False", lastTransitionTime=clock.rfc3339())
            try:
                pod = self.api.update_status(res, pod)
            except status.ApiError:
                continue
            self.api.record_event(pod, "Warning", "NodeNotReady", "Node is not ready", "node-controller")

    def _taint(self, node, ready, full):
        """doNoScheduleTaintingPass and processTaintBaseEviction."""
        key = CONDITION_TAINTS.get(ready)
        mine = set(CONDITION_TAINTS.values())
        taints = node.get("spec", {}).get("taints") or []
        want = [t for t in taints if t.get("key") not in mine]
        if key:
            want.append(next((t for t in taints if t.get("key") == key and t.get("effect") == "NoSchedule"),
                             {"key": key, "effect": "NoSchedule"}))
            if not full:
                want.append(next((t for t in taints if t.get("key") == key and t.get("effect") == "NoExecute"),
                                 {"key": key, "effect": "NoExecute", "timeAdded": clock.rfc3339()}))
        if sorted(map(repr, want)) == sorted(map(repr, taints)):
            return
        spec = node.setdefault("spec", {})
        if want:
            spec["taints"] = want
        else:
            spec.pop("taints", None)
        try:
            self.api.update(self.api.registry.by_kind("v1", "Node"), node, check_rv=False)
        except status.ApiError:
            pass
