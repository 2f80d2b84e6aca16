"""Server-side printing: the meta.k8s.io/v1 Table that `kubectl get`
without -o asks for (Accept: application/json;as=Table;v=v1;g=meta.k8s.io).

Columns and cells follow pkg/printers/internalversion/printers.go
(printPod, printNode, printNamespace, printDaemonSet, printJob,
printEvent, printRuntimeClass, printResourceClaim, …); custom resources print their CRD's
additionalPrinterColumns (apiextensions-apiserver tableconvertor), else
NAME and AGE.
"""

from . import clock

NAME_DESC = ("Name must be unique within a namespace. Is required when creating resources, although some "
             "resources may allow a client to request the generation of an appropriate name automatically. "
             "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
             "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
AGE_DESC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
            "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
            "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
            "Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
            "api-conventions.md#metadata")


def col(name, typ="string", priority=0, fmt="", desc=""):
    return {"name": name, "type": typ, "format": fmt, "description": desc, "priority": priority}


NAME = col("Name", fmt="name", desc=NAME_DESC)
AGE = col("Age", desc=AGE_DESC)


def _age(o):
    return clock.age(o.get("metadata", {}).get("creationTimestamp"))


def pod_status_reason(p):
    """The STATUS column of kubectl get pods (printPod)."""
    st = p.get("status", {})
    reason = st.get("reason") or st.get("phase") or "Unknown"
    init = (p.get("spec", {}).get("initContainers") or [])
    init_status = st.get("initContainerStatuses") or []
    initializing = False
    for i, cs in enumerate(init_status):
        state = cs.get("state", {})
        term = state.get("terminated")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            reason = "Init:" + (term.get("reason") or ("Signal:%d" % term["signal"] if term.get("signal")
                                                       else "ExitCode:%d" % term.get("exitCode", 0)))
        elif state.get("waiting", {}).get("reason") and state["waiting"]["reason"] != "PodInitializing":
            reason = "Init:" + state["waiting"]["reason"]
        else:
            reason = "Init:%d/%d" % (i, len(init))
        initializing = True
        break
    if not initializing:
        running = False
        for cs in reversed(st.get("containerStatuses") or []):
            state = cs.get("state", {})
            if state.get("waiting", {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated", {}).get("reason"):
                reason = state["terminated"]["reason"]
            elif state.get("terminated"):
                t = state["terminated"]
                reason = "Signal:%d" % t["signal"] if t.get("signal") else "ExitCode:%d" % t.get("exitCode", 0)
            elif state.get("running") and cs.get("ready"):
                running = True
        if reason == "Completed" and running:
            reason = "Running"
    if p.get("metadata", {}).get("deletionTimestamp"):
        reason = "Terminating"
    return reason


def _pod_row(p):
    st = p.get("status", {})
    cs = st.get("containerStatuses") or []
    total = len(p.get("spec", {}).get("containers") or [])
    ready = sum(1 for c in cs if c.get("ready"))
    restarts = sum(c.get("restartCount", 0) for c in cs)
    return [p["metadata"]["name"], "%d/%d" % (ready, total), pod_status_reason(p), restarts, _age(p),
            st.get("podIP") or "<none>", p.get("spec", {}).get("nodeName") or "<none>",
            st.get("nominatedNodeName") or "<none>", "<none>"]


def _node_row(n):
    conds = {c.get("type"): c.get("status") for c in n.get("status", {}).get("conditions") or []}
    state = "Ready" if conds.get("Ready") == "True" else "NotReady" if "Ready" in conds else "Unknown"
    if n.get("spec", {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (n["metadata"].get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/"))
    info = n.get("status", {}).get("nodeInfo", {})
    addrs = {a.get("type"): a.get("address") for a in n.get("status", {}).get("addresses") or []}
    return [n["metadata"]["name"], state, ",".join(roles) or "<none>", _age(n), info.get("kubeletVersion", ""),
            addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"), info.get("osImage", "<unknown>"),
            info.get("kernelVersion", "<unknown>"), info.get("containerRuntimeVersion", "<unknown>")]


def _ds_row(d):
    s = d.get("status", {})
    sel = d.get("spec", {}).get("template", {}).get("spec", {}).get("nodeSelector") or {}
    return [d["metadata"]["name"], s.get("desiredNumberScheduled", 0), s.get("currentNumberScheduled", 0),
            s.get("numberReady", 0), s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0),
            ",".join("%s=%s" % kv for kv in sorted(sel.items())) or "<none>", _age(d)]


def _job_row(j):
    s = j.get("status", {})
    conds = {c.get("type"): c.get("status") for c in s.get("conditions") or []}
    state = ("Complete" if conds.get("Complete") == "True" else "Failed" if conds.get("Failed") == "True"
             else "Suspended" if j.get("spec", {}).get("suspend") else "Running")
    start, end = clock.parse(s.get("startTime")), clock.parse(s.get("completionTime"))
    duration = clock.human_duration(((end or clock.utcnow()) - start).total_seconds()) if start else ""
    return [j["metadata"]["name"], state, "%d/%d" % (s.get("succeeded", 0), j.get("spec", {}).get("completions", 1)),
            duration, _age(j)]


def _event_row(e):
    io = e.get("involvedObject", {})
    last = e.get("lastTimestamp") or e.get("eventTime") or e["metadata"].get("creationTimestamp")
    seen = clock.age(last)
    if e.get("count", 1) > 1:
        seen = "%s (x%d over %s)" % (seen, e["count"], clock.age(e.get("firstTimestamp") or last))
    return [seen, e.get("type", ""), e.get("reason", ""),
            "%s/%s" % (io.get("kind", "").lower(), io.get("name", "")), e.get("message", "")]


TABLES = {
    ("", "Pod"): ([NAME, col("Ready"), col("Status"), col("Restarts", "string"), AGE, col("IP", priority=1),
                   col("Node", priority=1), col("Nominated Node", priority=1), col("Readiness Gates", priority=1)],
                  _pod_row),
    ("", "Node"): ([NAME, col("Status"), col("Roles"), AGE, col("Version"), col("Internal-IP", priority=1),
                    col("External-IP", priority=1), col("OS-Image", priority=1), col("Kernel-Version", priority=1),
                    col("Container-Runtime", priority=1)], _node_row),
    ("", "Namespace"): ([NAME, col("Status"), AGE],
                        lambda n: [n["metadata"]["name"], n.get("status", {}).get("phase", ""), _age(n)]),
    ("apps", "DaemonSet"): ([NAME, col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"),
                             col("Up-to-date", "integer"), col("Available", "integer"), col("Node Selector"), AGE],
                            _ds_row),
    ("batch", "Job"): ([NAME, col("Status"), col("Completions"), col("Duration"), AGE], _job_row),
    ("", "Event"): ([col("Last Seen"), col("Type"), col("Reason"), col("Object"), col("Message")], _event_row),
    ("node.k8s.io", "RuntimeClass"): ([NAME, col("Handler"), AGE],
                                      lambda r: [r["metadata"]["name"], r.get("handler", ""), _age(r)]),
    ("", "ConfigMap"): ([NAME, col("Data", "integer"), AGE],
                        lambda c: [c["metadata"]["name"], len(c.get("data") or {}) + len(c.get("binaryData") or {}),
                                   _age(c)]),
    ("", "Secret"): ([NAME, col("Type"), col("Data", "integer"), AGE],
                     lambda s: [s["metadata"]["name"], s.get("type", "Opaque"), len(s.get("data") or {}), _age(s)]),
    ("", "ServiceAccount"): ([NAME, col("Secrets", "integer"), AGE],
                             lambda s: [s["metadata"]["name"], len(s.get("secrets") or []), _age(s)]),
    ("resource.k8s.io", "DeviceClass"): ([NAME, AGE], lambda d: [d["metadata"]["name"], _age(d)]),
    ("resource.k8s.io", "ResourceClaim"): ([NAME, col("State"), AGE],
                                           lambda c: [c["metadata"]["name"], _claim_state(c), _age(c)]),
    ("resource.k8s.io", "ResourceClaimTemplate"): ([NAME, AGE], lambda t: [t["metadata"]["name"], _age(t)]),
    ("resource.k8s.io", "ResourceSlice"): (
        [NAME, col("Node"), col("Driver"), col("Pool"), AGE],
        lambda r: [r["metadata"]["name"], (r.get("spec") or {}).get("nodeName", ""),
                   (r.get("spec") or {}).get("driver", ""), ((r.get("spec") or {}).get("pool") or {}).get("name", ""),
                   _age(r)]),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        [NAME, col("Created At", "date")],
        lambda c: [c["metadata"]["name"], c["metadata"].get("creationTimestamp", "")]),
}


def _claim_state(c):
    """printers.go's resourceClaimState: deleted, pending, allocated, reserved."""
    states = ["deleted"] if c["metadata"].get("deletionTimestamp") else []
    st = c.get("status") or {}
    if not st.get("allocation"):
        if not states:
            states.append("pending")
    else:
        states.append("allocated")
        if st.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _jsonpath(obj, path):
    """A CRD printer column's simple JSONPath (.a.b, .a[0].b)."""
    cur = obj
    for part in path.strip(".").replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("[") and isinstance(cur, list):
            try:
                cur = cur[int(part[1:-1])]
            except (ValueError, IndexError):
                return None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def _custom(res):
    version = next((v for v in res.crd.get("spec", {}).get("versions", []) if v.get("name") == res.version), {})
    extra = version.get("additionalPrinterColumns") or []
    cols = [NAME] + [col(c["name"], c.get("type", "string"), c.get("priority", 0), c.get("format", ""),
                         c.get("description", "")) for c in extra]
    if not any(c["jsonPath"] == ".metadata.creationTimestamp" for c in extra):
        cols.append(AGE)

    def row(o):
        cells = [o["metadata"]["name"]]
        for c in extra:
            v = _jsonpath(o, c["jsonPath"])
            if c["jsonPath"] == ".metadata.creationTimestamp":
                v = clock.age(v)
            cells.append(v)
        if len(cells) < len(cols):
            cells.append(_age(o))
        return cells
    return cols, row


def table(res, items, rv, include="Metadata"):
    if res.custom:
        cols, row = _custom(res)
    else:
        cols, row = TABLES.get((res.group, res.kind), ([NAME, AGE], lambda o: [o["metadata"]["name"], _age(o)]))
    rows = []
    for o in items:
        r = {"cells": row(o)}
        if include == "Object":
            r["object"] = o
        elif include != "None":
            r["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                           "metadata": o.get("metadata", {})}
        rows.append(r)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
            "columnDefinitions": cols, "rows": rows}
