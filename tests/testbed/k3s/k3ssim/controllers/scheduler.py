"""The scheduler: binds each unbound pod to a node that fits
(pkg/scheduler, its default plugins):

- NodeUnschedulable, TaintToleration (NoSchedule and NoExecute taints need
  a toleration), NodeAffinity (nodeSelector and the required affinity's
  matchExpressions and matchFields), NodeResourcesFit for extended
  resources (the node's allocatable less what its bound, unfinished pods
  request; cpu and memory are not counted: SIMULATION);
- a pod no node fits stays Pending with PodScheduled False, reason
  Unschedulable, and the scheduler's message ("0/1 nodes are available: 1
  Insufficient nvidia.com/gpu. preemption: …"), and a FailedScheduling
  event; it is tried again when anything changes;
- of the nodes that fit, the one with the most of the pod's extended
  resources left, then the fewest pods (the scoring plugins' lean, not
  their arithmetic: SIMULATION);
- binding sets spec.nodeName and PodScheduled True (the binding
  subresource), with a Scheduled event.
"""

from .. import clock, status

PREEMPT_NONE = "No preemption victims found for incoming pod."
PREEMPT_USELESS = "Preemption is not helpful for scheduling."


def _tolerates(tolerations, taint):
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        op = t.get("operator", "Equal")
        if not t.get("key") and op == "Exists":
            return True
        if t.get("key") != taint.get("key"):
            continue
        if op == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _term_matches(term, node):
    labels = node["metadata"].get("labels") or {}
    for e in term.get("matchExpressions") or []:
        key, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        v = labels.get(key)
        if op == "In" and v not in vals:
            return False
        if op == "NotIn" and v in vals:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op in ("Gt", "Lt"):
            try:
                n, want = int(v), int(vals[0])
            except (TypeError, ValueError, IndexError):
                return False
            if (op == "Gt" and not n > want) or (op == "Lt" and not n < want):
                return False
    for e in term.get("matchFields") or []:
        if e.get("key") == "metadata.name":
            name = node["metadata"]["name"]
            if (e.get("operator") == "In") != (name in (e.get("values") or [])):
                return False
    return True


def node_affinity_ok(pod, node):
    spec = pod.get("spec", {})
    labels = node["metadata"].get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = req.get("nodeSelectorTerms")
    if terms:
        return any(_term_matches(t, node) for t in terms)
    return True


def untolerated(pod, node, effects=("NoSchedule", "NoExecute")):
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in effects and not _tolerates(pod["spec"].get("tolerations"), taint):
            return taint
    return None


def requests(pod):
    """Extended resources the pod asks for (requests, defaulted from limits)."""
    out = {}
    for c in pod.get("spec", {}).get("containers") or []:
        r = (c.get("resources") or {})
        for k, v in dict(r.get("limits") or {}, **(r.get("requests") or {})).items():
            if "/" in k and not k.startswith("kubernetes.io/"):
                try:
                    out[k] = out.get(k, 0) + int(v)
                except (TypeError, ValueError):
                    pass
    return out


class Scheduler:
    def __init__(self, api):
        self.api = api
        self.reported = {}        # pod uid -> the message last written

    def start(self):
        pass

    def tick(self):
        pods = self.api.registry.by_kind("v1", "Pod")
        nodes, _ = self.api.list(self.api.registry.by_kind("v1", "Node"))
        all_pods, _ = self.api.list(pods)
        pending = [p for p in all_pods if not p["spec"].get("nodeName")
                   and p["spec"].get("schedulerName", "default-scheduler") == "default-scheduler"
                   and not p["metadata"].get("deletionTimestamp")
                   and p.get("status", {}).get("phase", "Pending") == "Pending"]
        if not pending:
            return
        used = {}
        for p in all_pods:
            n = p["spec"].get("nodeName")
            if n and p.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                used[(n, "pods")] = used.get((n, "pods"), 0) + 1
                for k, v in requests(p).items():
                    used[(n, k)] = used.get((n, k), 0) + v
        for pod in sorted(pending, key=lambda p: (-(p["spec"].get("priority") or 0),
                                                  p["metadata"].get("creationTimestamp", ""))):
            self._schedule(pods, pod, nodes, used)

    def _schedule(self, pods, pod, nodes, used):
        reasons = {}
        fits = []
        want = requests(pod)
        for n in nodes:
            why = self._why_not(pod, n, want, used)
            if why is None:
                fits.append(n)
                continue
            for w in why:
                reasons[w] = reasons.get(w, 0) + 1
        if not fits:
            return self._unschedulable(pods, pod, len(nodes), reasons)
        # Scoring, as NodeResourcesFit's LeastAllocated and the balance
        # plugins lean: the most of what the pod asks for left, then the
        # fewest pods; ties by name.
        fit = min(fits, key=lambda n: (-sum(self._free(n, k, used) for k in want),
                                       used.get((n["metadata"]["name"], "pods"), 0), n["metadata"]["name"]))
        name = fit["metadata"]["name"]
        for k, v in want.items():
            used[(name, k)] = used.get((name, k), 0) + v
        used[(name, "pods")] = used.get((name, "pods"), 0) + 1
        pod["spec"]["nodeName"] = name
        st = pod.setdefault("status", {})
        st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "PodScheduled"] + [
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": clock.rfc3339()}]
        try:
            with self.api.store.lock:
                cur = self.api.find(pods, pod["metadata"]["namespace"], pod["metadata"]["name"])
                if cur is None or cur["metadata"]["uid"] != pod["metadata"]["uid"] or cur["spec"].get("nodeName"):
                    return
                cur["spec"]["nodeName"] = name
                cur["status"] = st
                self.api.store.update(pods.key, cur)
        except status.ApiError:
            return
        self.reported.pop(pod["metadata"]["uid"], None)
        self.api.record_event(pod, "Normal", "Scheduled", "Successfully assigned %s/%s to %s"
                              % (pod["metadata"]["namespace"], pod["metadata"]["name"], name), "default-scheduler")

    def _free(self, node, resource, used):
        alloc = node.get("status", {}).get("allocatable") or {}
        return int(alloc.get(resource, "0") or 0) - used.get((node["metadata"]["name"], resource), 0)

    def _why_not(self, pod, node, want, used):
        why = []
        if node.get("spec", {}).get("unschedulable"):
            why.append("node(s) were unschedulable")
        taint = untolerated(pod, node)
        if taint:
            why.append("node(s) had untolerated taint {%s: %s}" % (taint.get("key"), taint.get("value", "")))
        if not node_affinity_ok(pod, node):
            why.append("node(s) didn't match Pod's node affinity/selector")
        alloc = node.get("status", {}).get("allocatable") or {}
        for k, v in sorted(want.items()):
            have = int(alloc.get(k, "0") or 0) - used.get((node["metadata"]["name"], k), 0)
            if v > have:
                why.append("Insufficient " + k)
        return why or None

    def _unschedulable(self, pods, pod, n_nodes, reasons):
        parts = ", ".join("%d %s" % (n, r) for r, n in sorted(reasons.items()))
        only_resources = reasons and all(r.startswith("Insufficient") for r in reasons)
        preempt = ("%d %s" % (n_nodes, PREEMPT_NONE)) if only_resources else "%d %s" % (n_nodes, PREEMPT_USELESS)
        if n_nodes == 0:
            msg = "no nodes available to schedule pods"
        else:
            msg = "0/%d nodes are available: %s. preemption: 0/%d nodes are available: %s" % (
                n_nodes, parts, n_nodes, preempt)
        uid = pod["metadata"]["uid"]
        if self.reported.get(uid) == msg:
            return
        self.reported[uid] = msg
        st = pod.setdefault("status", {})
        st["phase"] = "Pending"
        st["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                             "lastTransitionTime": clock.rfc3339(), "reason": "Unschedulable", "message": msg}]
        try:
            self.api.update_status(pods, pod)
        except status.ApiError:
            return
        self.api.record_event(pod, "Warning", "FailedScheduling", msg, "default-scheduler")
