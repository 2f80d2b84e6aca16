"""kube-controller-manager's resource claim controller
(pkg/controller/resourceclaim/controller.go):

- a pod's claim from a ResourceClaimTemplate: made with generateName
  "<pod>-<podClaimName>-" (each cut in proportion past 57 characters),
  the pod as its controller owner (no blockOwnerDeletion since 1.35), the annotation
  resource.kubernetes.io/pod-claim-name, the template's labels and
  annotations and its spec; its name goes to the pod's
  status.resourceClaimStatuses;
- a claim's reservedFor loses the pods that are gone or done; with none
  left its allocation is dropped (reservedFor left out), then the
  delete-protection finalizer, a claim being deleted included;
- a claim whose controller owner is a pod that is done is deleted (a pod
  deleted takes its claims along by their owner reference: the garbage
  collector, gc.py).

SIMULATION: a template that does not exist makes no claim and no event.
"""

from .. import dra, status

POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def _generate_name(pod, claim):
    # controller.go: past 57 characters (63 less "-" and a 5-character
    # suffix) both names are cut in proportion to their lengths.
    name = pod + "-" + claim + "-"
    if len(name) > 57:
        name = pod[:len(pod) * 57 // len(name)] + "-" + claim[:len(claim) * 57 // len(name)]
    return name


def _done(pod):
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _gone(pod):
    """controller.go's isPodDone: done, or deleted before it was scheduled."""
    return _done(pod) or (bool(pod["metadata"].get("deletionTimestamp")) and not pod["spec"].get("nodeName"))


class ResourceClaims:
    def __init__(self, api):
        self.api = api

    def start(self):
        pass

    def _res(self, kind):
        return self.api.registry.by_kind("resource.k8s.io/v1", kind)

    def tick(self):
        pods_res = self.api.registry.by_kind("v1", "Pod")
        pods, _ = self.api.list(pods_res)
        for pod in pods:
            if not pod["metadata"].get("deletionTimestamp") and not _done(pod):
                self._make_claims(pods_res, pod)
        self._release({p["metadata"]["uid"]: p for p in pods})

    def _owned(self, pod, pc_name):
        """A claim already made for the pod's claim PC_NAME (controller.go
        findPodResourceClaim: owned by the pod, annotated with the name)."""
        claims, _ = self.api.list(self._res("ResourceClaim"), pod["metadata"]["namespace"])
        for c in claims:
            if ((c["metadata"].get("annotations") or {}).get(POD_CLAIM_NAME) == pc_name
                    and any(r.get("uid") == pod["metadata"]["uid"] and r.get("controller")
                            for r in c["metadata"].get("ownerReferences") or [])):
                return c
        return None

    def _make_claims(self, pods_res, pod):
        made = []
        ns = pod["metadata"]["namespace"]
        for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
            tname = pc.get("resourceClaimTemplateName")
            if not tname or any(name == pc.get("name") for name, got in dra.pod_claims(pod) if got):
                continue
            have = self._owned(pod, pc["name"])
            if have is not None:
                made.append({"name": pc["name"], "resourceClaimName": have["metadata"]["name"]})
                continue
            tmpl = self.api.find(self._res("ResourceClaimTemplate"), ns, tname)
            if tmpl is None:
                continue
            tmeta = (tmpl.get("spec") or {}).get("metadata") or {}
            claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"generateName": _generate_name(pod["metadata"]["name"], pc["name"]),
                                  "namespace": ns,
                                  "labels": dict(tmeta.get("labels") or {}),
                                  "annotations": dict(tmeta.get("annotations") or {}, **{POD_CLAIM_NAME: pc["name"]}),
                                  "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                                       "name": pod["metadata"]["name"],
                                                       # No blockOwnerDeletion since 1.35 (#134956).
                                                       "uid": pod["metadata"]["uid"], "controller": True}]},
                     "spec": (tmpl.get("spec") or {}).get("spec") or {}}
            try:
                obj, _ = self.api.create(self._res("ResourceClaim"), claim)
            except status.ApiError:
                continue
            made.append({"name": pc["name"], "resourceClaimName": obj["metadata"]["name"]})
        if made:
            st = pod.setdefault("status", {})
            st["resourceClaimStatuses"] = (st.get("resourceClaimStatuses") or []) + made
            try:
                self.api.update_status(pods_res, pod)
            except status.ApiError:
                pass

    def _release(self, pods):
        res = self._res("ResourceClaim")
        claims, _ = self.api.list(res)
        for c in claims:
            st = c.get("status") or {}
            keep = [r for r in st.get("reservedFor") or [] if r.get("uid") in pods and not _gone(pods[r["uid"]])]
            try:
                if keep != (st.get("reservedFor") or []) or (not keep and st.get("allocation")):
                    # None left: the allocation goes too (an empty list is left out).
                    if keep:
                        st["reservedFor"] = keep
                    else:
                        st.pop("reservedFor", None)
                        st.pop("allocation", None)
                    c["status"] = st
                    c = self.api.update_status(res, c)
                if not keep and dra.FINALIZER in (c["metadata"].get("finalizers") or []):
                    c["metadata"]["finalizers"] = [f for f in c["metadata"]["finalizers"] if f != dra.FINALIZER]
                    c = self.api.update(res, c, check_rv=False)[0]
                # owningPod: the pod that is the claim's controller owner.
                owner = next((r for r in c["metadata"].get("ownerReferences") or []
                              if r.get("kind") == "Pod" and r.get("controller")), None)
                if (owner and owner.get("uid") in pods and _gone(pods[owner["uid"]])
                        and not c["metadata"].get("deletionTimestamp")):
                    self.api.delete(res, c["metadata"]["namespace"], c["metadata"]["name"])
            except status.ApiError:
                continue
