"""The DaemonSet controller (pkg/controller/daemon): one pod per node the
template fits.

- A node fits when the pod would schedule there, resources aside:
  nodeSelector, required node affinity, taints (daemon pods tolerate the
  node.kubernetes.io conditions' taints: util.AddOrUpdateDaemonPodTolerations).
  A pod stays on a node that no longer fits as long as it tolerates the
  node's NoExecute taints (NodeShouldRunDaemonPod's shouldContinueRunning):
  an unreachable node's NoSchedule taint takes it out of the desired
  count, its pod counts as misscheduled and is not deleted.
- Each pod gets the template, the controller-revision-hash and
  pod-template-generation labels, an owner reference, and node affinity
  on its node's name (matchFields metadata.name), then the scheduler binds
  it.
- A changed template (a new generation) is rolled out as RollingUpdate
  with maxUnavailable 1: the old pod is deleted, a new one made.
- A pod the API refuses (a missing RuntimeClass) is a FailedCreate
  event; status counts what exists: desired, current, ready, available,
  updated, unavailable, misscheduled, observedGeneration.
"""

import copy

from .. import status
from . import ownedpods, scheduler

DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


class DaemonSets:
    def __init__(self, api):
        self.api = api
        self.failed = {}      # ds uid -> last FailedCreate message

    def start(self):
        pass

    def tick(self):
        dss, _ = self.api.list(self.api.registry.by_kind("apps/v1", "DaemonSet"))
        if not dss:
            return
        nodes, _ = self.api.list(self.api.registry.by_kind("v1", "Node"))
        pods, _ = self.api.list(self.api.registry.by_kind("v1", "Pod"))
        for ds in dss:
            if ds["metadata"].get("deletionTimestamp"):
                continue
            self._sync(ds, nodes, [p for p in pods if ownedpods.owned(p, ds)])

    def _pod_for(self, ds, node):
        tmpl = copy.deepcopy(ds["spec"].get("template", {}))
        spec = tmpl.setdefault("spec", {})
        tol = spec.setdefault("tolerations", [])
        for t in DAEMON_TOLERATIONS:
            if not any(x.get("key") == t["key"] and x.get("effect") == t["effect"] for x in tol):
                tol.append(dict(t))
        spec["affinity"] = dict(spec.get("affinity") or {})
        spec["affinity"]["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [node["metadata"]["name"]]}]}]}}
        return tmpl

    def _fits(self, ds, node, effects=("NoSchedule", "NoExecute")):
        probe = {"spec": copy.deepcopy(ds["spec"].get("template", {}).get("spec", {}))}
        probe["spec"].setdefault("tolerations", []).extend(DAEMON_TOLERATIONS)
        return scheduler.node_affinity_ok(probe, node) and scheduler.untolerated(probe, node, effects) is None

    def _sync(self, ds, nodes, pods):
        pods_res = self.api.registry.by_kind("v1", "Pod")
        gen = ds["metadata"].get("generation", 1)
        h = ownedpods.template_hash(ds["spec"].get("template", {}))
        want = [n for n in nodes if self._fits(ds, n)]
        want_names = {n["metadata"]["name"] for n in want}
        keep = want_names | {n["metadata"]["name"] for n in nodes if self._fits(ds, n, ("NoExecute",))}
        by_node = {}
        for p in pods:
            node = _target(p)
            if node not in keep:
                if not p["metadata"].get("deletionTimestamp"):
                    ownedpods.delete(self.api, pods_res, ds, p, "daemonset-controller")
                continue
            if node not in want_names or p["metadata"].get("deletionTimestamp"):
                continue
            by_node.setdefault(node, []).append(p)
        for n in want:
            name = n["metadata"]["name"]
            mine = by_node.get(name, [])
            current = [p for p in mine if p["metadata"].get("labels", {}).get("controller-revision-hash") == h]
            old = [p for p in mine if p not in current]
            for p in old:
                ownedpods.delete(self.api, pods_res, ds, p, "daemonset-controller")
            if not mine and not any(_target(p) == name and p["metadata"].get("deletionTimestamp") for p in pods):
                self._create(pods_res, ds, n, h, gen)
        self._status(ds, want_names, pods, h, gen)

    def _create(self, pods_res, ds, node, h, gen):
        tmpl = self._pod_for(ds, node)
        md = tmpl.setdefault("metadata", {})
        md["generateName"] = ds["metadata"]["name"] + "-"
        md["namespace"] = ds["metadata"]["namespace"]
        md["labels"] = dict(md.get("labels") or {}, **{"controller-revision-hash": h,
                                                       "pod-template-generation": str(gen)})
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds["metadata"]["name"],
                                  "uid": ds["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": tmpl.get("spec", {})}
        ownedpods.create(self.api, pods_res, ds, pod, "daemonset-controller", self.failed)

    def _status(self, ds, want_names, pods, h, gen):
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        scheduled = [p for p in live if _target(p) in want_names]
        ready = [p for p in scheduled if ownedpods.ready(p)]
        updated = [p for p in scheduled if p["metadata"].get("labels", {}).get("controller-revision-hash") == h]
        desired = len(want_names)
        st = {"currentNumberScheduled": len(scheduled), "desiredNumberScheduled": desired,
              "numberMisscheduled": len([p for p in live if _target(p) not in want_names]),
              "numberReady": len(ready), "observedGeneration": gen}
        if updated:
            st["updatedNumberScheduled"] = len(updated)
        if ready:
            st["numberAvailable"] = len(ready)
        if desired - len(ready) > 0:
            st["numberUnavailable"] = desired - len(ready)
        if ds.get("status") != st:
            ds["status"] = st
            try:
                self.api.update_status(self.api.registry.by_kind("apps/v1", "DaemonSet"), ds)
            except status.ApiError:
                pass


def _target(pod):
    """The node a daemon pod is for: its nodeName, or its affinity's."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    terms = ((((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
    for t in terms:
        for f in t.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("values"):
                return f["values"][0]
    return None


