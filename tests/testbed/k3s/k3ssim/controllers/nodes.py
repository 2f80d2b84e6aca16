"""What happens when a node is deleted (`kubectl delete node`).

- k3s's node controller (pkg/node/controller.go, registered with wrangler's
  OnRemove, whose finalizer wrangler.cattle.io/node every node gets): its
  onRemove deletes the node's password Secret, kube-system/NAME.node-password.k3s
  (nodepassword.Delete), so that a machine of that name may join again with
  another password, and updates CoreDNS's NodeHosts (no CoreDNS here); then
  wrangler removes the finalizer and the node goes.
- kube-controller-manager's pod garbage collector (pkg/controller/podgc,
  gcOrphaned): a pod bound to a node that does not exist, for longer than the
  40 s quarantine, is marked (phase Failed unless it ended, condition
  DisruptionTarget, reason DeletionByPodGC, "PodGC: node no longer exists")
  and deleted at once (grace 0). It looks every 20 s (gcCheckPeriod).
"""

from .. import clock, status

FINALIZER = "wrangler.cattle.io/node"
QUARANTINE = 40.0
PERIOD = 20.0


class Nodes:
    def __init__(self, api):
        self.api = api
        self.missing = {}     # pod uid -> when its node was first seen missing
        self.due = 0.0

    def start(self):
        pass

    def tick(self):
        nodes_res = self.api.registry.by_kind("v1", "Node")
        nodes, _ = self.api.list(nodes_res)
        for node in nodes:
            md = node["metadata"]
            if md.get("deletionTimestamp") and FINALIZER in (md.get("finalizers") or []):
                self._on_remove(nodes_res, node)
        now = clock.now()
        if now >= self.due:
            self.due = now + PERIOD
            self._orphans({n["metadata"]["name"] for n in nodes}, now)

    def _on_remove(self, res, node):
        name = node["metadata"]["name"]
        try:
            self.api.delete(self.api.registry.by_kind("v1", "Secret"), "kube-system", name + ".node-password.k3s")
        except status.ApiError as e:
            if e.code != 404:
                return
        node["metadata"]["finalizers"] = [f for f in node["metadata"]["finalizers"] if f != FINALIZER]
        try:
            self.api.update(res, node, check_rv=False)
        except status.ApiError:
            pass

    def _orphans(self, nodes, now):
        res = self.api.registry.by_kind("v1", "Pod")
        pods, _ = self.api.list(res)
        seen = set()
        for pod in pods:
            node = pod.get("spec", {}).get("nodeName")
            if not node or node in nodes:
                continue
            uid = pod["metadata"]["uid"]
            seen.add(uid)
            since = self.missing.setdefault(uid, now)
            if now - since < QUARANTINE:
                continue
            st = pod.setdefault("status", {})
            if st.get("phase") not in ("Succeeded", "Failed"):
                st["phase"] = "Failed"
            conds = [c for c in st.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                          "message": "PodGC: node no longer exists", "lastTransitionTime": clock.rfc3339(),
                          "lastProbeTime": None})
            st["conditions"] = conds
            try:
                self.api.update_status(res, pod)
                self.api.delete(res, pod["metadata"]["namespace"], pod["metadata"]["name"],
                                {"gracePeriodSeconds": 0})
            except status.ApiError:
                pass
        self.missing = {u: t for u, t in self.missing.items() if u in seen}
