"""What happens to an object between the request and the store: strict
field validation, defaulting, validation, and the admission plugins k3s
enables.

Each rule names its source:
- defaults: pkg/apis/core/v1/defaults.go (SetDefaults_Pod, _PodSpec,
  _Container, _Namespace), pkg/apis/apps/v1/defaults.go (DaemonSet),
  pkg/apis/batch/v1/defaults.go (Job), pkg/apis/core/helper/qos (qosClass);
- validation: pkg/apis/core/validation (ValidatePod, ValidatePodUpdate,
  ValidateNamespace), the job and daemonset strategies;
- admission: plugin/pkg/admission/namespace/lifecycle (NamespaceLifecycle),
  runtimeclass (RuntimeClass), priority (Priority),
  defaulttolerationseconds (DefaultTolerationSeconds), serviceaccount
  (ServiceAccount: the pod's account name).
"""

import copy
import re

from . import clock, schema, selectors, status

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")

# The two PriorityClasses every cluster has (pkg/apis/scheduling: SystemPriorityClasses).
SYSTEM_PRIORITY = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
POD_UPDATE_FORBIDDEN = ("pod updates may not change fields other than `spec.containers[*].image`,"
                        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                        "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                        "(allow it to be set to 1 if it was previously negative)")


def strict_check(res, obj, mode):
    """fieldValidation: Strict fails, Warn returns warnings, Ignore drops."""
    if mode not in ("Strict", "Warn"):
        return []
    if res.custom:
        version = next((v for v in res.crd.get("spec", {}).get("versions", []) if v.get("name") == res.version), {})
        unknown = schema.crd_unknown_fields((version.get("schema") or {}).get("openAPIV3Schema"), obj)
    else:
        s = schema.SCHEMAS.get((res.group, res.kind))
        unknown = schema.unknown_fields(s, obj) if s else []
    if not unknown:
        return []
    if mode == "Strict":
        detail = ", ".join('unknown field "%s"' % u for u in unknown)
        raise status.bad_request("%s in version \"%s\" cannot be handled as a %s: strict decoding error: %s"
                                 % (res.kind, res.api_version, res.kind, detail))
    return ['unknown field "%s"' % u for u in unknown]


def check_name(res, name):
    if not name:
        raise status.invalid(res.kind, res.group, "", [("metadata.name", "FieldValueRequired",
                                                         "Required value: name or generateName is required")])
    pattern, msg = (DNS1123_LABEL, LABEL_MSG) if res.kind == "Namespace" else (DNS1123_SUBDOMAIN, SUBDOMAIN_MSG)
    if len(name) > 253 or not pattern.match(name):
        raise status.invalid(res.kind, res.group, name, [("metadata.name", "FieldValueInvalid",
                                                           'Invalid value: "%s": %s' % (name, msg))])


# ---- defaults ---------------------------------------------------------

def pull_policy(image):
    """IfNotPresent, or Always for :latest and no tag (SetDefaults_Container)."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last:
        return "IfNotPresent"
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def _default_container(c):
    c.setdefault("imagePullPolicy", pull_policy(c.get("image", "")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    res = c.setdefault("resources", {})
    limits = res.get("limits") or {}
    if limits:
        req = res.setdefault("requests", {})
        for k, v in limits.items():
            req.setdefault(k, v)
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")


def default_pod_spec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        _default_container(c)


def qos_class(spec):
    """BestEffort, Burstable or Guaranteed (pkg/apis/core/helper/qos)."""
    cs = (spec.get("initContainers") or []) + (spec.get("containers") or [])
    requests = [c.get("resources", {}).get("requests") or {} for c in cs]
    limits = [c.get("resources", {}).get("limits") or {} for c in cs]
    compute = ("cpu", "memory")
    if not any(k in r for r in requests + limits for k in compute):
        return "BestEffort"
    for r, l in zip(requests, limits):
        for k in compute:
            if k not in l or r.get(k, l.get(k)) != l.get(k):
                return "Burstable"
    return "Guaranteed"


def _pod(api, obj, res):
    spec = obj.setdefault("spec", {})
    name = obj["metadata"].get("name", "")
    causes = []
    containers = spec.get("containers") or []
    if not containers:
        causes.append(("spec.containers", "FieldValueRequired", "Required value"))
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            if not c.get("name"):
                causes.append(("spec.%s[%d].name" % (field, i), "FieldValueRequired", "Required value"))
            if not c.get("image"):
                causes.append(("spec.%s[%d].image" % (field, i), "FieldValueRequired", "Required value"))
            causes += _extended_resources(field, i, c.get("resources") or {})
    if spec.get("restartPolicy", "Always") not in ("Always", "OnFailure", "Never"):
        causes.append(("spec.restartPolicy", "FieldValueNotSupported",
                       'Unsupported value: "%s": supported values: "Always", "OnFailure", "Never"'
                       % spec["restartPolicy"]))
    if causes:
        raise status.invalid("Pod", "", name, causes)
    default_pod_spec(spec)
    # ServiceAccount admission: the namespace's default account.
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    _admit_runtime_class(api, obj)
    _admit_priority(api, obj)
    # DefaultTolerationSeconds: tolerate a not-ready or unreachable node 300 s.
    tol = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key and t.get("effect") in (None, "NoExecute") for t in tol):
            tol.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def _extended_resources(field, i, res):
    """Extended resources (nvidia.com/gpu) are integers, requests equal to
    limits (validation.go: validateContainerResourceName and
    ValidateResourceRequirements' overcommit rule)."""
    causes = []
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    for k in set(limits) | set(requests):
        if "/" not in k or k.startswith("kubernetes.io/") or k.startswith("hugepages-"):
            continue
        for kind, vals in (("limits", limits), ("requests", requests)):
            v = vals.get(k)
            if v is not None and not re.match(r"^\d+$", str(v)):
                causes.append(("spec.%s[%d].resources.%s[%s]" % (field, i, kind, k), "FieldValueInvalid",
                               'Invalid value: "%s": must be an integer' % v))
        if k in requests and k not in limits:
            causes.append(("spec.%s[%d].resources.limits" % (field, i), "FieldValueRequired",
                           "Required value: Limit must be set for non overcommitable resources"))
        elif k in requests and str(requests[k]) != str(limits[k]):
            causes.append(("spec.%s[%d].resources.requests" % (field, i), "FieldValueInvalid",
                           'Invalid value: "%s": must be equal to %s limit of %s' % (requests[k], k, limits[k])))
    return causes


def _admit_runtime_class(api, obj):
    rc = obj["spec"].get("runtimeClassName")
    if rc and api.store.get(("node.k8s.io", "runtimeclasses"), "", rc) is None:
        raise status.forbidden("pods", "", obj["metadata"]["name"], 'pod rejected: RuntimeClass "%s" not found' % rc)


def _admit_priority(api, obj):
    spec = obj["spec"]
    pc = spec.get("priorityClassName")
    if not pc:
        spec.setdefault("priority", 0)
        return
    found = api.store.get(("scheduling.k8s.io", "priorityclasses"), "", pc)
    if found is None and pc not in SYSTEM_PRIORITY:
        raise status.forbidden("pods", "", obj["metadata"]["name"], "no PriorityClass with name %s was found" % pc)
    spec["priority"] = found.get("value", 0) if found else SYSTEM_PRIORITY[pc]


def _namespace(api, obj, res):
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj["status"] = {"phase": "Active"}


def _selector_and_template(kind, obj):
    """The apps workloads' validation (pkg/apis/apps/validation): a selector,
    and a template whose labels it matches."""
    spec = obj.setdefault("spec", {})
    name = obj["metadata"].get("name", "")
    tmpl = spec.setdefault("template", {})
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    sel = spec.get("selector")
    if not sel:
        raise status.invalid(kind, "apps", name, [("spec.selector", "FieldValueRequired", "Required value")])
    if not selectors.from_label_selector(sel).matches(labels):
        raise status.invalid(kind, "apps", name, [("spec.template.metadata.labels", "FieldValueInvalid",
                                                   "Invalid value: %s: `selector` does not match template `labels`"
                                                   % _go_map(labels))])
    default_pod_spec(tmpl.setdefault("spec", {}))
    return spec


def _deployment(api, obj, res):
    """Deployment's defaults (pkg/apis/apps/v1/defaults.go)."""
    spec = _selector_and_template("Deployment", obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if strategy.get("type") == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("maxUnavailable", "25%")
        strategy["rollingUpdate"].setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    obj["status"] = {}


def _replicaset(api, obj, res):
    _selector_and_template("ReplicaSet", obj).setdefault("replicas", 1)
    obj["status"] = {"replicas": 0}


def _daemonset(api, obj, res):
    spec = _selector_and_template("DaemonSet", obj)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    spec.setdefault("revisionHistoryLimit", 10)
    obj["status"] = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                     "numberReady": 0}


def _job(api, obj, res):
    spec = obj.setdefault("spec", {})
    md = obj["metadata"]
    tmpl = spec.setdefault("template", {})
    policy = (tmpl.get("spec") or {}).get("restartPolicy")
    if policy not in ("Never", "OnFailure"):
        raise status.invalid("Job", "batch", md.get("name", ""), [
            ("spec.template.spec.restartPolicy", "FieldValueNotSupported",
             'Unsupported value: "%s": supported values: "OnFailure", "Never"' % (policy or "Always"))])
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    # The job strategy's generated selector (pkg/registry/batch/job/strategy.go).
    uid = md["uid"]
    extra = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": md["name"],
             "controller-uid": uid, "job-name": md["name"]}
    if not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        tmd = tmpl.setdefault("metadata", {})
        tmd["labels"] = dict(tmd.get("labels") or {}, **extra)
    default_pod_spec(tmpl.setdefault("spec", {}))


def _crd(api, obj, res):
    spec = obj.get("spec", {})
    names = spec.get("names", {})
    obj["status"] = {
        "acceptedNames": copy.deepcopy(names),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": clock.rfc3339()},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": clock.rfc3339()}],
        "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")]}


def _go_map(m):
    return "map[string]string{" + ", ".join('"%s":"%s"' % (k, v) for k, v in sorted(m.items())) + "}"


def _resource_claim(api, obj, res):
    # pkg/registry/resource/resourceclaim/strategy.go PrepareForCreate: a
    # new claim's status is the server's (the scheduler's allocation).
    obj.pop("status", None)


ON_CREATE = {("", "Pod"): _pod, ("", "Namespace"): _namespace, ("apps", "DaemonSet"): _daemonset,
             ("apps", "Deployment"): _deployment, ("apps", "ReplicaSet"): _replicaset,
             ("batch", "Job"): _job, ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd,
             ("resource.k8s.io", "ResourceClaim"): _resource_claim}


def on_create(api, res, obj):
    """Default, validate and admit a new object (uid and name already set)."""
    md = obj["metadata"]
    if res.namespaced:
        ns = api.store.get(("", "namespaces"), "", md["namespace"])
        if ns is None:
            raise status.not_found("namespaces", "", md["namespace"])
        if ns.get("metadata", {}).get("deletionTimestamp") or ns.get("status", {}).get("phase") == "Terminating":
            raise status.forbidden(res.plural, res.group, md["name"],
                                   "unable to create new content in namespace %s because it is being terminated"
                                   % md["namespace"])
    fn = ON_CREATE.get((res.group, res.kind))
    if fn:
        fn(api, obj, res)


def on_update(api, res, old, new):
    """Validate an update of OLD into NEW (ValidatePodUpdate and kin)."""
    if res.kind == "Pod" and not res.group:
        a, b = _comparable_spec(old), _comparable_spec(new)
        if a != b:
            raise status.invalid("Pod", "", new["metadata"]["name"],
                                 [("spec", "FieldValueForbidden", "Forbidden: " + POD_UPDATE_FORBIDDEN)])
    if res.kind == "Job" and res.group == "batch":
        if (old.get("spec", {}).get("template") != new.get("spec", {}).get("template")
                or old.get("spec", {}).get("selector") != new.get("spec", {}).get("selector")):
            raise status.invalid("Job", "batch", new["metadata"]["name"],
                                 [("spec.template", "FieldValueInvalid",
                                   "Invalid value: %s: field is immutable" % "core.PodTemplateSpec{...}")])


def _comparable_spec(pod):
    """The spec less what a pod update may change."""
    spec = copy.deepcopy(pod.get("spec", {}))
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            c.pop("image", None)
    for k in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "nodeName"):
        spec.pop(k, None)
    if spec.get("schedulingGates") == []:
        spec.pop("schedulingGates")
    return spec
