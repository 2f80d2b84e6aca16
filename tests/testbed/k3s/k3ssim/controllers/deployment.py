"""kube-controller-manager's Deployment and ReplicaSet controllers
(pkg/controller/deployment, pkg/controller/replicaset): a Deployment's pods
through a ReplicaSet of its template.

- Deployment (sync.go getNewReplicaSet): the ReplicaSet of its current
  template is <name>-<pod-template-hash>, its labels, selector and
  template's labels those of the template plus pod-template-hash, owned by
  the Deployment (controller, blockOwnerDeletion), annotated with the
  revision, the desired replicas and the most with maxSurge (25%); scaled to spec.replicas (1 unless
  given), a ReplicaSet of another template to 0 ("ScalingReplicaSet"
  events). SIMULATION: the rollout is one step, the new ReplicaSet scaled
  up and the old ones down at once (no maxSurge or maxUnavailable steps),
  and the hash is an FNV-1a of the template's JSON, not of its Go dump
  (same alphabet and length: controller.ComputeHash, rand.SafeEncodeString).
- Its status (sync.go calculateStatus): observedGeneration, replicas,
  updatedReplicas, readyReplicas, availableReplicas (minReadySeconds 0: a
  ready pod is available), unavailableReplicas, and the conditions
  Available (MinimumReplicasAvailable, MinimumReplicasUnavailable) and
  Progressing (NewReplicaSetAvailable, ReplicaSetUpdated).
- ReplicaSet (replica_set.go manageReplicas): pods of its template,
  generateName "<rs>-", owned by it (controller, blockOwnerDeletion); the
  missing made ("SuccessfulCreate", or "FailedCreate" with the API's
  refusal), extras deleted, not-ready ones first; a pod that ended or is
  being deleted does not count (FilterActivePods). Status: replicas,
  fullyLabeledReplicas, readyReplicas, availableReplicas,
  observedGeneration.
A Deployment or ReplicaSet being deleted is left to the garbage collector
(gc.py; Foreground deletion waits for its dependents, which block it); its
status is still kept (syncStatusOnly; the ReplicaSet's manageReplicas
skipped).
"""

import copy

from .. import clock, selectors, status
from . import ownedpods

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


def _owner_ref(kind, obj):
    return {"apiVersion": "apps/v1", "kind": kind, "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def _active(pod):
    return not pod["metadata"].get("deletionTimestamp") and \
        pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")


def _put_status(api, res, obj, st):
    if obj.get("status") == st:
        return
    obj["status"] = st
    try:
        api.update_status(res, obj)
    except status.ApiError:
        pass   # changed meanwhile: the next pass sees it


class Deployments:
    def __init__(self, api):
        self.api = api
        self.failed = {}   # ReplicaSet uid -> its last FailedCreate message

    def start(self):
        pass

    def tick(self):
        deps_res = self.api.registry.by_kind("apps/v1", "Deployment")
        rs_res = self.api.registry.by_kind("apps/v1", "ReplicaSet")
        deps, _ = self.api.list(deps_res)
        sets, _ = self.api.list(rs_res)
        if not deps and not sets:
            return
        for d in deps:
            self._deployment(deps_res, rs_res, d, [s for s in sets if ownedpods.owned(s, d)])
        pods_res = self.api.registry.by_kind("v1", "Pod")
        pods, _ = self.api.list(pods_res)
        sets, _ = self.api.list(rs_res)
        for s in sets:
            self._replicaset(rs_res, pods_res, s, [p for p in pods if ownedpods.owned(p, s)])

    # ---- Deployment -----------------------------------------------------

    def _deployment(self, deps_res, rs_res, d, sets):
        spec, md = d["spec"], d["metadata"]
        want = spec.get("replicas", 1)
        h = ownedpods.template_hash(spec.get("template", {}))
        name = "%s-%s" % (md["name"], h)
        new = next((s for s in sets if s["metadata"]["name"] == name), None)
        made = failed = None
        # One being deleted gets its status alone (syncStatusOnly).
        deleting = bool(md.get("deletionTimestamp"))
        if new is None and not deleting:
            new, failed = self._new_set(rs_res, d, name, h, want, len(sets) + 1)
            made = new
        for s in sets if not deleting else ():
            target = want if s is new else 0
            if s["spec"].get("replicas", 1) != target and not s["metadata"].get("deletionTimestamp"):
                self._scale(rs_res, d, s, target)
        live = sets + ([made] if made else [])
        count = lambda k, ss: sum((s.get("status") or {}).get(k, 0) for s in ss)
        replicas, ready = count("replicas", live), count("readyReplicas", live)
        updated = count("replicas", [new] if new else [])
        st = {"observedGeneration": md.get("generation", 1), "replicas": replicas, "updatedReplicas": updated,
              "readyReplicas": ready, "availableReplicas": ready}
        st = {k: v for k, v in st.items() if v or k == "observedGeneration"}
        # calculateStatus: the sets' desired replicas less those available.
        unavailable = sum(s["spec"].get("replicas", 1) for s in live) - ready
        if unavailable > 0:
            st["unavailableReplicas"] = unavailable
        old = {c["type"]: c for c in (d.get("status") or {}).get("conditions") or []}
        avail = ready >= want - _unavailable(d, want)
        if failed:
            progress = _cond(old, "Progressing", False, "ReplicaSetCreateError", failed)
        elif made:
            progress = _cond(old, "Progressing", True, "NewReplicaSetCreated", 'Created new replica set "%s"' % name)
        else:
            progress = _cond(old, "Progressing", True, "NewReplicaSetAvailable" if avail and updated == replicas
                             else "ReplicaSetUpdated", 'ReplicaSet "%s" %s.' % (
                                 name, "has successfully progressed" if avail else "is progressing"))
        st["conditions"] = [
            _cond(old, "Available", avail, "MinimumReplicasAvailable" if avail else "MinimumReplicasUnavailable",
                  "Deployment has minimum availability." if avail else "Deployment does not have minimum availability."),
            progress]
        _put_status(self.api, deps_res, d, st)

    def _new_set(self, rs_res, d, name, h, want, revision):
        """getNewReplicaSet: the set made at the replicas wanted (and the
        event of it), or (None, the ReplicaSetCreateError message)."""
        tmpl = copy.deepcopy(d["spec"].get("template", {}))
        tmd = tmpl.setdefault("metadata", {})
        tmd["labels"] = dict(tmd.get("labels") or {}, **{HASH_LABEL: h})
        sel = copy.deepcopy(d["spec"].get("selector") or {})
        sel["matchLabels"] = dict(sel.get("matchLabels") or {}, **{HASH_LABEL: h})
        obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": name, "namespace": d["metadata"]["namespace"], "labels": dict(tmd["labels"]),
                            "annotations": {REVISION: str(revision), "deployment.kubernetes.io/desired-replicas":
                                            str(want), "deployment.kubernetes.io/max-replicas":
                                            str(want + _surge(d, want))},
                            "ownerReferences": [_owner_ref("Deployment", d)]},
               "spec": {"replicas": want, "selector": sel, "template": tmpl}}
        uid = d["metadata"]["uid"]
        try:
            created, _ = self.api.create(rs_res, obj, obj["metadata"]["namespace"], validation="Ignore")
        except status.ApiError as e:
            msg = 'Failed to create new replica set "%s": %s' % (name, e.message)
            if self.failed.get(uid) != msg:
                self.failed[uid] = msg
                self.api.record_event(d, "Warning", "ReplicaSetCreateError", msg, "deployment-controller")
            return None, msg
        self.failed.pop(uid, None)
        self.api.record_event(d, "Normal", "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d" % (name, want),
                              "deployment-controller")
        return created, None

    def _scale(self, rs_res, d, s, target):
        was = s["spec"].get("replicas", 1)
        s["spec"]["replicas"] = target
        try:
            self.api.update(rs_res, s)
        except status.ApiError:
            return
        self.api.record_event(d, "Normal", "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d"
                              % ("up" if target > was else "down", s["metadata"]["name"], was, target),
                              "deployment-controller")

    # ---- ReplicaSet ------------------------------------------------------

    def _replicaset(self, rs_res, pods_res, s, pods):
        active = [p for p in pods if _active(p)]
        want = s["spec"].get("replicas", 1)
        # One being deleted makes and deletes no pods, its status kept up.
        for _ in range(want - len(active)) if not s["metadata"].get("deletionTimestamp") else ():
            self._create_pod(pods_res, s)
        if len(active) > want and not s["metadata"].get("deletionTimestamp"):
            for p in sorted(active, key=ownedpods.ready)[:len(active) - want]:
                ownedpods.delete(self.api, pods_res, s, p, "replicaset-controller")
        sel = selectors.from_label_selector(s["spec"].get("selector") or {})
        labelled = [p for p in active if sel.matches(p["metadata"].get("labels") or {})]
        ready = len([p for p in active if ownedpods.ready(p)])
        st = {"replicas": len(active), "fullyLabeledReplicas": len(labelled), "readyReplicas": ready,
              "availableReplicas": ready, "observedGeneration": s["metadata"].get("generation", 1)}
        _put_status(self.api, rs_res, s, {k: v for k, v in st.items() if v or k in ("replicas", "observedGeneration")})

    def _create_pod(self, pods_res, s):
        tmpl = copy.deepcopy(s["spec"].get("template", {}))
        md = tmpl.setdefault("metadata", {})
        md.update(generateName=s["metadata"]["name"] + "-", namespace=s["metadata"]["namespace"],
                  ownerReferences=[_owner_ref("ReplicaSet", s)])
        ownedpods.create(self.api, pods_res, s, {"apiVersion": "v1", "kind": "Pod", "metadata": md,
                                                 "spec": tmpl.get("spec", {})}, "replicaset-controller", self.failed)


def _rolling(d, key, want, up):
    """RollingUpdate's KEY (maxSurge, maxUnavailable: 25% unless given) as a
    count of WANT, a percentage rounded UP or down; 0 under Recreate."""
    strategy = d["spec"].get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    v = (strategy.get("rollingUpdate") or {}).get(key, "25%")
    if isinstance(v, str) and v.endswith("%"):
        return -(-want * int(v[:-1]) // 100) if up else want * int(v[:-1]) // 100
    return int(v)


def _surge(d, want):
    return _rolling(d, "maxSurge", want, True)


def _unavailable(d, want):
    return _rolling(d, "maxUnavailable", want, False)


def _cond(old, kind, ok, reason, message):
    now = clock.rfc3339()
    prev = old.get(kind) or {}
    same = prev.get("status") == ("True" if ok else "False")
    return {"type": kind, "status": "True" if ok else "False", "lastUpdateTime": now if not same or
            prev.get("reason") != reason else prev.get("lastUpdateTime", now),
            "lastTransitionTime": prev.get("lastTransitionTime", now) if same else now,
            "reason": reason, "message": message}
