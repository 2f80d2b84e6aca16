"""Dynamic Resource Allocation's claims, read as kube-scheduler's
dynamicresources plugin and its structured allocator read them
(pkg/scheduler/framework/plugins/dynamicresources, k8s.io/dynamic-resource-
allocation structured/internal/stable/allocator_stable.go):

- a pod's claims: spec.resourceClaims, each a resourceClaimName or, from a
  template, the name status.resourceClaimStatuses gives once the claim
  controller made it;
- a request (exactly: a deviceClassName, a count, allocationMode ExactCount
  or All) is met by devices of the ResourceSlices that reach the node
  (nodeName, allNodes, or a nodeSelector matching it) which the class's and
  the request's CEL selectors accept and no other claim holds; one of
  firstAvailable's subrequests (DRAPrioritizedList, on since 1.34) by the
  first of them in order that can be met, its results' request
  "<request>/<subrequest>";
- an allocation: results {request, driver, pool, device}, the class's
  config (naming the request or subrequest it served) and the claim's (a
  subrequest not chosen dropped from it, a config left naming none
  dropped, one naming as many requests as the claim has naming none), and
  a nodeSelector naming the node (allocator_stable.go).

SIMULATION: CEL is read as a conjunction (&&) of comparisons (== or !=) of
device.driver or device.attributes['DOMAIN'].NAME with a quoted string, an
integer or a boolean; a selector outside that subset, or an attribute a
device lacks (a runtime error for the real scheduler), matches no device.
firstAvailable is greedy: each request takes the first subrequest that
fits alone, where the real allocator searches every combination across
requests and claims. No constraints, adminAccess, capacity or counters; the
allocation's nodeSelector always names the node (the real one is nil for
an allNodes slice, the slice's own for a nodeSelector one); a class's
config is listed once per request; pool generations are not compared.
"""

import re

from . import selectors

DRIVER_ATTR = re.compile(r"^device\.driver$")
ATTR = re.compile(r"""^device\.attributes\[["']([^"']+)["']\]\.([A-Za-z0-9_]+)$""")
CMP = re.compile(r"""^(.+?)\s*(==|!=)\s*(".*"|'.*'|-?[0-9]+|true|false)$""")
FINALIZER = "resource.kubernetes.io/delete-protection"

# What a kubelet plugin's call answers while it is still running (SIMULATION:
# a call that takes long, such as waiting for an MPS control daemon,
# answers so on each of the kubelet's passes, so that the stand-in's one
# loop goes on; the real kubelet waits on the gRPC call in the pod's worker).
PENDING = object()


def container_requests(c):
    """A container's requests, defaulted from its limits as the API's
    defaulting does (core/v1 defaults.go SetDefaults_ResourceRequirements)."""
    r = c.get("resources") or {}
    return dict(r.get("limits") or {}, **(r.get("requests") or {}))


def extended_status(pod):
    """The pod's status.extendedResourceClaimStatus (the scheduler's special
    claim for its extended resources, and which container's requests it
    serves), or {}."""
    return (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}


def pod_claims(pod):
    """[(podClaimName, claim name or None)] in spec order: None for a
    template's claim not made yet."""
    made = {s.get("name"): s.get("resourceClaimName")
            for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    out = []
    for c in (pod.get("spec") or {}).get("resourceClaims") or []:
        out.append((c.get("name"), c.get("resourceClaimName") or made.get(c.get("name"))))
    return out


def _literal(text):
    if text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def _attribute(device, driver, domain, name):
    attrs = device.get("attributes") or {}
    # The driver's own domain may be left out of a device's attribute names.
    value = attrs.get("%s/%s" % (domain, name))
    if value is None and domain == driver:
        value = attrs.get(name)
    if not isinstance(value, dict) or not value:
        return None
    return next(iter(value.values()))


def cel_matches(expression, device, driver):
    """Whether the selector accepts the device (the subset above)."""
    for term in expression.split("&&"):
        m = CMP.match(term.strip().strip("()").strip())
        if not m:
            return False
        lhs, op, rhs = m.group(1).strip(), m.group(2), _literal(m.group(3))
        if DRIVER_ATTR.match(lhs):
            value = driver
        else:
            a = ATTR.match(lhs)
            if not a:
                return False
            value = _attribute(device, driver, a.group(1), a.group(2))
        if (value == rhs) != (op == "=="):
            return False
    return True


def _selectors_match(selectors, device, driver):
    return all(cel_matches(((s.get("cel") or {}).get("expression") or ""), device, driver)
               for s in selectors or [])


def slice_reaches(rs, node):
    spec = rs.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"] == node["metadata"]["name"]
    if spec.get("allNodes"):
        return True
    sel = spec.get("nodeSelector")
    return bool(sel) and any(selectors.node_term_matches(t, node) for t in sel.get("nodeSelectorTerms") or [])


def held(claims):
    """(driver, pool, device) of every allocated device."""
    out = set()
    for c in claims:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            out.add((r.get("driver"), r.get("pool"), r.get("device")))
    return out


def _meet(name, ex, classes, slices, node, taken, mine):
    """The devices one request (exactly) gets on NODE: (keys, class, None)
    or (None, None, reason)."""
    cls = classes.get(ex.get("deviceClassName"))
    if cls is None:
        return None, None, "request %s: device class %s does not exist" % (name, ex.get("deviceClassName"))
    want = None if ex.get("allocationMode") == "All" else int(ex.get("count") or 1)
    found = []
    for rs in slices:
        if not slice_reaches(rs, node):
            continue
        spec = rs.get("spec") or {}
        driver, pool = spec.get("driver"), (spec.get("pool") or {}).get("name")
        for d in spec.get("devices") or []:
            key = (driver, pool, d.get("name"))
            if not _selectors_match((cls.get("spec") or {}).get("selectors"), d, driver):
                continue
            if not _selectors_match(ex.get("selectors"), d, driver):
                continue
            if key in taken or key in mine:
                if want is None:
                    # All: every matching device, or none.
                    return None, None, "cannot allocate all claims"
                continue
            found.append(key)
            if want is not None and len(found) == want:
                break
        if want is not None and len(found) == want:
            break
    if not found or (want is not None and len(found) < want):
        return None, None, "cannot allocate all claims"
    return found, cls, None


def allocate(claim, classes, slices, node, taken):
    """The claim's allocation on NODE, or None with the reason. TAKEN: the
    devices held (held()), to which this allocation's are added."""
    results, config = [], []
    mine = set()
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    for req in requests:
        subs = [("%s/%s" % (req.get("name"), sub.get("name")), sub) for sub in req.get("firstAvailable") or []]
        why = "cannot allocate all claims"
        for name, ex in subs or [(req.get("name"), req.get("exactly") or {})]:
            found, cls, why = _meet(name, ex, classes, slices, node, taken, mine)
            if found:
                break
        if not found:
            return None, why
        mine.update(found)
        results += [{"request": name, "driver": k[0], "pool": k[1], "device": k[2]} for k in found]
        for c in (cls.get("spec") or {}).get("config") or []:
            config.append(dict(c, source="FromClass", requests=[name]))
    chosen = {r["request"] for r in results}
    for c in ((claim.get("spec") or {}).get("devices") or {}).get("config") or []:
        named = c.get("requests") or []
        # A subrequest not chosen drops out of the config, and a config left
        # naming none goes; one naming as many as the claim has names none.
        kept = [n for n in named if "/" not in n or n in chosen]
        if named and not kept:
            continue
        config.append(dict(c, source="FromClaim", requests=[] if len(kept) == len(requests) else kept))
    taken.update(mine)
    devices = {"results": results}
    if config:
        devices["config"] = config
    return {"devices": devices, "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node["metadata"]["name"]]}]}]}}, None


def allocated_on(claim, node):
    sel = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    return not sel or any(selectors.node_term_matches(t, node) for t in sel.get("nodeSelectorTerms") or [])
