"""The scheduler: binds each unbound pod to a node that fits
(pkg/scheduler, its default plugins):

- NodeUnschedulable, TaintToleration (NoSchedule and NoExecute taints need
  a toleration), NodeAffinity (nodeSelector and the required affinity's
  matchExpressions and matchFields), NodeResourcesFit for extended
  resources (the node's allocatable less what its bound, unfinished pods
  request; cpu and memory are not counted: SIMULATION);
- a pod no node fits stays Pending with PodScheduled False, reason
  Unschedulable, and the scheduler's message ("0/1 nodes are available: 1
  Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: …"),
  and a FailedScheduling
  event; it is tried again when anything changes;
- of the nodes that fit, the one with the most of the pod's extended
  resources left, then the fewest pods (the scoring plugins' lean, not
  their arithmetic: SIMULATION);
- binding sets spec.nodeName and PodScheduled True (the binding
  subresource), with a Scheduled event;
- DynamicResources (dynamicresources.go): a pod's ResourceClaims must be
  allocatable on the node from its ResourceSlices ("cannot allocate all
  claims"), or already allocated there ("resourceclaim not available on
  the node", both UnschedulableAndUnresolvable: preemption is not helpful,
  and the plugin's PostFilter says "still not schedulable"); before the
  binding each claim gets its allocation, the delete-protection finalizer
  and the pod in reservedFor (PreBind). A pod whose claim does not exist
  yet waits without a message, as PreEnqueue holds it. k3ssim/dra.py reads
  the claims;
- DRAExtendedResource (extendeddynamicresources.go, GA and locked on in
  1.37): an extended resource a DeviceClass maps (its extendedResourceName,
  or deviceclass.resource.kubernetes.io/<class>) is served by DRA on a node
  whose allocatable for it is 0 or absent (elsewhere the device plugin
  serves it, NodeResourcesFit counts it): the pod's special claim asks,
  per container and resource, container-<i>-request-<j> (i: the index
  among init containers then containers, j: the resource's among the
  container's sorted requests) for that count of the class's devices;
  PreBind creates it (generateName <pod>-extended-resources-, the pod its
  controller owner without blockOwnerDeletion, annotation resource.kubernetes.io/extended-resource-
  claim: "true"), allocates and reserves it as any claim, and writes
  status.extendedResourceClaimStatus {requestMappings [{containerName,
  resourceName, requestName}], resourceClaimName} with the binding. The
  requests follow createRequestsAndMappings (1.35 and later): an init
  container that runs before the others reuses their requests, and of
  the init containers' own only the largest is asked. A special claim
  left from an earlier cycle is deleted (its finalizer first), and the
  pod tried anew.
"""

from .. import clock, dra, selectors, status

EXT_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
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
        return any(selectors.node_term_matches(t, node) for t in terms)
    return True


def untolerated(pod, node, effects=("NoSchedule", "NoExecute")):
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in effects and not _tolerates(pod["spec"].get("tolerations"), taint):
            return taint
    return None


def requests(pod):
    """Extended resources the pod asks for (requests, defaulted from
    limits), as PodRequests counts them: the containers' and the restartable
    init containers' sum, or an init container's own if that is larger."""
    def extended(c):
        out = {}
        for k, v in dra.container_requests(c).items():
            if "/" in k and not k.startswith("kubernetes.io/"):
                try:
                    out[k] = int(v)
                except (TypeError, ValueError):
                    pass
        return out
    spec = pod.get("spec", {})
    total = {}
    for c in list(spec.get("containers") or []) + [c for c in spec.get("initContainers") or []
                                                   if c.get("restartPolicy") == "Always"]:
        for k, v in extended(c).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers") or []:
        if c.get("restartPolicy") != "Always":
            for k, v in extended(c).items():
                total[k] = max(total.get(k, 0), v)
    return total


def class_mapping(classes):
    """{extended resource: DeviceClass name} (extended/cache.go): each
    class's implicit name and its extendedResourceName; of two classes
    naming one resource the newer wins, on a tie the lower name
    (betterDeviceClass)."""
    out = {}
    order = sorted(classes.items(), key=lambda kv: (kv[1]["metadata"].get("creationTimestamp", ""), _neg(kv[0])))
    for name, c in order:
        out[CLASS_PREFIX + name] = name
        ern = (c.get("spec") or {}).get("extendedResourceName")
        if ern:
            out[ern] = name
    return out


def _neg(name):
    """A key that sorts names in reverse, so the lowest is applied last."""
    return [-ord(ch) for ch in name]


def _containers(pod):
    spec = pod.get("spec") or {}
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def _count(reqs, resource):
    try:
        return int(reqs.get(resource, 0) or 0)
    except (TypeError, ValueError):
        return 0


def _container_request(i, c, resource, class_name, reusable):
    """createResourceRequestAndMappings: the request container I needs for
    RESOURCE beyond what it may reuse of later containers' REUSABLE ones
    (or None), and its mappings."""
    reqs = dra.container_requests(c)
    want = _count(reqs, resource)
    if not want:
        return None, []
    got, maps = 0, []
    for r in reusable:
        if r is None:
            continue
        got += r["exactly"]["count"]
        maps.append({"containerName": c.get("name"), "resourceName": resource, "requestName": r["name"]})
        if got >= want:
            return None, maps
    name = "container-%d-request-%d" % (i, sorted(reqs).index(resource))
    maps.append({"containerName": c.get("name"), "resourceName": resource, "requestName": name})
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                      "count": want - got}}, maps


def requests_and_mappings(pod, dra_resources, mapping):
    """createRequestsAndMappings (Kubernetes 1.35 and later): per resource,
    a request for each long-lived container (a regular one, or an init
    container that restarts: a sidecar), and for the init containers that
    run before them one request, the largest, after reusing the requests of
    the long-lived containers that follow them; (requests by name,
    mappings)."""
    n_init = len((pod.get("spec") or {}).get("initContainers") or [])
    containers = _containers(pod)
    short = [i for i, c in enumerate(containers) if i < n_init and c.get("restartPolicy") != "Always"]
    long_ = [i for i in range(len(containers)) if i not in short]
    requests_, mappings = [], []
    for resource in sorted(dra_resources):
        class_name = mapping.get(resource)
        if not class_name:
            continue
        long_reqs, long_maps = [None] * len(containers), []
        for i in long_:
            long_reqs[i], maps = _container_request(i, containers[i], resource, class_name, [])
            long_maps += maps
        best, short_names, short_maps = None, set(), []
        for i in short:
            req, maps = _container_request(i, containers[i], resource, class_name, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if best is None or best["exactly"]["count"] < req["exactly"]["count"]:
                    best = req
            short_maps += maps
        for m in short_maps:
            if best is not None and m["requestName"] in short_names:
                m["requestName"] = best["name"]
        requests_ += ([best] if best else []) + [r for r in long_reqs if r]
        mappings += long_maps + short_maps
    return sorted(requests_, key=lambda r: r["name"]), mappings


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
        self.dra = self._dra_state()
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

    def _dra_state(self):
        """The DeviceClasses by name, the ResourceSlices, the claims by
        (namespace, name), and the devices they hold, read once a pass."""
        r = self.api.registry.by_kind
        classes, _ = self.api.list(r("resource.k8s.io/v1", "DeviceClass"))
        slices, _ = self.api.list(r("resource.k8s.io/v1", "ResourceSlice"))
        claims, _ = self.api.list(r("resource.k8s.io/v1", "ResourceClaim"))
        return {"classes": {c["metadata"]["name"]: c for c in classes}, "slices": slices,
                "claims": {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims},
                "taken": dra.held(claims)}

    def _claims_of(self, pod):
        """The pod's claims, or None while one is not there yet."""
        out = []
        for _, name in dra.pod_claims(pod):
            c = self.dra["claims"].get((pod["metadata"]["namespace"], name)) if name else None
            if c is None or c["metadata"].get("deletionTimestamp"):
                return None
            out.append(c)
        return out

    def _class_missing(self, claims):
        """PreFilter's validateDeviceClass (dynamicresources.go): a request of
        a claim still to allocate whose DeviceClass is not there stops the
        pod before any node is looked at, or None."""
        for c in claims:
            if (c.get("status") or {}).get("allocation"):
                continue
            for req in ((c.get("spec") or {}).get("devices") or {}).get("requests") or []:
                subs = [("%s/%s" % (req.get("name"), sub.get("name")), sub) for sub in req.get("firstAvailable") or []]
                for name, ex in subs or [(req.get("name"), req.get("exactly") or {})]:
                    cls = ex.get("deviceClassName")
                    if cls and cls not in self.dra["classes"]:
                        return "request %s: device class %s does not exist" % (name, cls)
        return None

    def _claims_why_not(self, claims, node):
        taken = set(self.dra["taken"])
        for c in claims:
            if (c.get("status") or {}).get("allocation"):
                if not dra.allocated_on(c, node):
                    return "resourceclaim not available on the node"
                continue
            alloc, why = dra.allocate(c, self.dra["classes"], self.dra["slices"], node, taken)
            if alloc is None:
                return why
        return None

    def _reserve(self, pod, claims, node):
        """PreBind: each claim allocated on NODE (unless it is) and reserved
        for the pod; False when a claim could not be written."""
        res = self.api.registry.by_kind("resource.k8s.io/v1", "ResourceClaim")
        ref = {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
        for c in claims:
            st = c.setdefault("status", {})
            if not st.get("allocation"):
                alloc, _ = dra.allocate(c, self.dra["classes"], self.dra["slices"], node, self.dra["taken"])
                if alloc is None:
                    return False
                # DRADeviceBindingConditions (beta, on since 1.36): PreBind stamps it.
                alloc["allocationTimestamp"] = clock.rfc3339()
                st["allocation"] = alloc
            if not any(r.get("uid") == ref["uid"] for r in st.get("reservedFor") or []):
                st["reservedFor"] = (st.get("reservedFor") or []) + [ref]
            try:
                if dra.FINALIZER not in (c["metadata"].get("finalizers") or []):
                    c["metadata"]["finalizers"] = (c["metadata"].get("finalizers") or []) + [dra.FINALIZER]
                    c = self.api.update(res, c, check_rv=False)[0]
                    c.setdefault("status", {}).update(st)
                self.api.update_status(res, c)
            except status.ApiError:
                return False
        return True

    def _leftover(self, pod):
        """findExtendedResourceClaim: a special claim of an earlier cycle."""
        uid = pod["metadata"]["uid"]
        return next((c for c in self.dra["claims"].values()
                     if (c["metadata"].get("annotations") or {}).get(EXT_ANNOTATION) == "true"
                     and any(o.get("uid") == uid and o.get("controller")
                             for o in c["metadata"].get("ownerReferences") or [])), None)

    def _extended_claim(self, pod, dra_served, mapping):
        """(the pod's special claim asking for the resources DRA_SERVED, its
        mappings), or (None, None) when there are none."""
        if not dra_served:
            return None, None
        md = pod["metadata"]
        reqs, maps = requests_and_mappings(pod, dra_served, mapping)
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"namespace": md["namespace"], "generateName": md["name"] + "-extended-resources-",
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": md["name"],
                                                  "uid": md["uid"], "controller": True}],
                             "annotations": {EXT_ANNOTATION: "true"}},
                "spec": {"devices": {"requests": reqs}}}, maps

    def _schedule(self, pods, pod, nodes, used):
        reasons = {}
        fits = []
        want = requests(pod)
        claims = self._claims_of(pod)
        if claims is None:
            return
        missing = self._class_missing(claims)
        if missing:
            return self._unschedulable(pods, pod, len(nodes), {}, prefilter=missing)
        mapping = class_mapping(self.dra["classes"])
        leftover = self._leftover(pod)
        if leftover is not None:
            # Filter refuses every node ("cannot schedule extended resource
            # claim") and PostFilter deletes the claim; the next pass tries
            # anew. SIMULATION: no event for this pass.
            return self._delete_claim(leftover)
        extended, made = {}, {}
        for n in nodes:
            # What DRA serves here: a mapped resource the node's allocatable lacks.
            dra_served = tuple(r for r in want if r in mapping and self._free(n, r, {}) <= 0)
            if dra_served not in made:
                made[dra_served] = self._extended_claim(pod, dra_served, mapping)
            ext, maps = made[dra_served]
            why = self._why_not(pod, n, {r: q for r, q in want.items() if r not in dra_served}, used)
            node_claims = claims + ([ext] if ext else [])
            if why is None and node_claims:
                c = self._claims_why_not(node_claims, n)
                why = [c] if c else None
            if why is None:
                fits.append(n)
                extended[n["metadata"]["name"]] = (ext, maps)
                continue
            for w in why:
                reasons[w] = reasons.get(w, 0) + 1
        if not fits:
            return self._unschedulable(pods, pod, len(nodes), reasons, any(r in mapping for r in want))
        # Scoring, as NodeResourcesFit's LeastAllocated and the balance
        # plugins lean: the most of what the pod asks for left, then the
        # fewest pods; ties by name.
        fit = min(fits, key=lambda n: (-sum(self._free(n, k, used) for k in want),
                                       used.get((n["metadata"]["name"], "pods"), 0), n["metadata"]["name"]))
        name = fit["metadata"]["name"]
        st = pod.setdefault("status", {})
        ext, maps = extended.get(name, (None, None))
        if ext is not None:
            ext = self._create_extended(ext)
            if ext is None:
                return
            st["extendedResourceClaimStatus"] = {"requestMappings": maps,
                                                 "resourceClaimName": ext["metadata"]["name"]}
        if (claims or ext) and not self._reserve(pod, claims + ([ext] if ext else []), fit):
            return
        for k, v in want.items():
            used[(name, k)] = used.get((name, k), 0) + v
        used[(name, "pods")] = used.get((name, "pods"), 0) + 1
        pod["spec"]["nodeName"] = name
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

    def _delete_claim(self, claim):
        """deleteClaim: the finalizer off, then the claim deleted."""
        res = self.api.registry.by_kind("resource.k8s.io/v1", "ResourceClaim")
        try:
            if dra.FINALIZER in (claim["metadata"].get("finalizers") or []):
                claim["metadata"]["finalizers"] = [f for f in claim["metadata"]["finalizers"] if f != dra.FINALIZER]
                self.api.update(res, claim, check_rv=False)
            self.api.delete(res, claim["metadata"]["namespace"], claim["metadata"]["name"])
        except status.ApiError:
            pass

    def _create_extended(self, claim):
        """PreBind's create of the special claim, or None."""
        try:
            made, _ = self.api.create(self.api.registry.by_kind("resource.k8s.io/v1", "ResourceClaim"), claim,
                                      claim["metadata"]["namespace"])
        except status.ApiError:
            return None
        return made

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

    def _unschedulable(self, pods, pod, n_nodes, reasons, mapped=False, prefilter=None):
        # FitError.Error(): PreFilter's message in place of the nodes' reasons.
        parts = prefilter or ", ".join("%d %s" % (n, r) for r, n in sorted(reasons.items()))
        only_resources = reasons and all(r.startswith("Insufficient") for r in reasons)
        preempt = ("%d %s" % (n_nodes, PREEMPT_NONE)) if only_resources else "%d %s" % (n_nodes, PREEMPT_USELESS)
        # DynamicResources' PostFilter speaks first, with claims or without:
        # a pod with claims, or asking a resource a DeviceClass maps (its
        # special claim is in PreFilter's state), is "still not schedulable".
        post = ("still not schedulable, " if ((pod.get("spec") or {}).get("resourceClaims") or mapped) and not prefilter
                else "no new claims to deallocate, ")
        if n_nodes == 0:
            msg = "no nodes available to schedule pods"
        else:
            msg = "0/%d nodes are available: %s. %spreemption: 0/%d nodes are available: %s" % (
                n_nodes, parts, post, n_nodes, preempt)
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
