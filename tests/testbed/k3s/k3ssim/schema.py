"""The fields strict validation knows, for the types users write.

With fieldValidation=Strict (what kubectl sends once the OpenAPI says the
server validates), the API server rejects a field that the type does not
have: "strict decoding error: unknown field \"spec.foo\"" (k8s.io/
apimachinery/pkg/runtime/serializer/json strict decoding). The structs
below are k8s.io/api's (core/v1 ObjectMeta, PodSpec, Container, …), cut to
the fields the stand-in models or passes through; a type not listed here
is not checked (SIMULATION). Custom resources are checked against their
CRD's openAPIV3Schema instead (admission.py).
"""

ANY = "any"            # a free-form value (a map of strings, a quantity, …)


def obj(*names, **typed):
    d = {n: ANY for n in names}
    d.update(typed)
    return d


def lst(s):
    return ("list", s)


def mp(s):
    return ("map", s)


OWNER = obj("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
META = obj("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
           "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
           "finalizers", "managedFields", ownerReferences=lst(OWNER))
ENV = obj("name", "value", "valueFrom")
PORT = obj("name", "hostPort", "containerPort", "protocol", "hostIP")
MOUNT = obj("name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr")
RESOURCES = obj("limits", "requests", "claims")
CONTAINER = obj("name", "image", "command", "args", "workingDir", "envFrom", "resizePolicy", "restartPolicy",
                "restartPolicyRules", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
                "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
                "securityContext", "stdin", "stdinOnce", "tty",
                ports=lst(PORT), env=lst(ENV), resources=RESOURCES, volumeMounts=lst(MOUNT))
TOLERATION = obj("key", "operator", "value", "effect", "tolerationSeconds")
POD_SPEC = obj("volumes", "activeDeadlineSeconds", "terminationGracePeriodSeconds", "dnsPolicy", "nodeSelector",
               "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
               "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
               "subdomain", "affinity", "schedulerName", "priorityClassName", "priority", "dnsConfig",
               "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
               "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
               "resourceClaims", "resources", "hostAliases", "restartPolicy", "ephemeralContainers",
               containers=lst(CONTAINER), initContainers=lst(CONTAINER), tolerations=lst(TOLERATION))
POD_TEMPLATE = obj(metadata=META, spec=POD_SPEC)

# k8s.io/api resource/v1 types.go: DeviceClass, ResourceClaim(Template), ResourceSlice.
SELECTOR = obj("cel")
OPAQUE = obj("opaque", "requests")
EXACT = obj("deviceClassName", "allocationMode", "count", "adminAccess", "tolerations", "capacity",
            selectors=lst(SELECTOR))
REQUEST = obj("name", "firstAvailable", exactly=EXACT)
CLAIM_SPEC = obj(devices=obj("constraints", requests=lst(REQUEST), config=lst(OPAQUE)))
DEVICE = obj("name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
             "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations")

SCHEMAS = {
    ("resource.k8s.io", "DeviceClass"): obj("apiVersion", "kind", metadata=META,
                                            spec=obj("extendedResourceName", selectors=lst(SELECTOR),
                                                     config=lst(obj("opaque")))),
    ("resource.k8s.io", "ResourceClaim"): obj("apiVersion", "kind", "status", metadata=META, spec=CLAIM_SPEC),
    ("resource.k8s.io", "ResourceClaimTemplate"): obj("apiVersion", "kind", metadata=META,
                                                      spec=obj(metadata=META, spec=CLAIM_SPEC)),
    ("resource.k8s.io", "ResourceSlice"): obj("apiVersion", "kind", metadata=META,
                                              spec=obj("driver", "nodeName", "nodeSelector", "allNodes",
                                                       "perDeviceNodeSelection", "sharedCounters",
                                                       pool=obj("name", "generation", "resourceSliceCount"),
                                                       devices=lst(DEVICE))),
    ("", "Pod"): obj("apiVersion", "kind", "status", metadata=META, spec=POD_SPEC),
    ("", "Namespace"): obj("apiVersion", "kind", "status", metadata=META, spec=obj("finalizers")),
    ("", "ConfigMap"): obj("apiVersion", "kind", "data", "binaryData", "immutable", metadata=META),
    ("", "Secret"): obj("apiVersion", "kind", "data", "stringData", "type", "immutable", metadata=META),
    ("", "ServiceAccount"): obj("apiVersion", "kind", "secrets", "imagePullSecrets",
                                "automountServiceAccountToken", metadata=META),
    ("apps", "DaemonSet"): obj("apiVersion", "kind", "status", metadata=META,
                               spec=obj("selector", "updateStrategy", "minReadySeconds", "revisionHistoryLimit",
                                        template=POD_TEMPLATE)),
    ("batch", "Job"): obj("apiVersion", "kind", "status", metadata=META,
                          spec=obj("parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy",
                                   "successPolicy", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes",
                                   "selector", "manualSelector", "ttlSecondsAfterFinished", "completionMode",
                                   "suspend", "podReplacementPolicy", "managedBy", template=POD_TEMPLATE)),
}


def unknown_fields(schema, value, path=""):
    """Paths (".spec.foo") of fields VALUE has that SCHEMA does not know."""
    out = []
    if schema == ANY or value is None:
        return out
    if isinstance(schema, tuple):
        kind, sub = schema
        if kind == "list" and isinstance(value, list):
            for i, v in enumerate(value):
                out += unknown_fields(sub, v, "%s[%d]" % (path, i))
        elif kind == "map" and isinstance(value, dict):
            for k, v in value.items():
                out += unknown_fields(sub, v, "%s[%s]" % (path, k))
        return out
    if isinstance(schema, dict) and isinstance(value, dict):
        for k, v in value.items():
            if k not in schema:
                out.append(("%s.%s" % (path, k)).lstrip("."))
            else:
                out += unknown_fields(schema[k], v, "%s.%s" % (path, k))
    return out


def crd_unknown_fields(schema, value, path=""):
    """The same against a CRD's structural openAPIV3Schema (apiextensions'
    pruning: x-kubernetes-preserve-unknown-fields keeps everything below)."""
    out = []
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return out
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is None and extra is None:
            return out
        for k, v in value.items():
            if path == "" and k in ("apiVersion", "kind", "metadata"):
                continue
            if props and k in props:
                out += crd_unknown_fields(props[k], v, "%s.%s" % (path, k))
            elif isinstance(extra, dict):
                out += crd_unknown_fields(extra, v, "%s[%s]" % (path, k))
            elif extra is not True:
                out.append(("%s.%s" % (path, k)).lstrip("."))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += crd_unknown_fields(schema["items"], v, "%s[%d]" % (path, i))
    return out
