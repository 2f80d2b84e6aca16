"""The types the API serves: Kubernetes' built-ins that k3s runs, and the
CustomResourceDefinitions stored in the API once they are Established.

Names, short names, categories, scopes and verbs are those of the real
API's discovery documents (the built-ins' registries in
pkg/registry/*/rest/storage_*.go and their strategies); a CRD's come from
its spec.names, as apiextensions-apiserver serves them.
"""

import threading

ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
NO_COLLECTION = ["create", "delete", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]


class Resource:
    def __init__(self, group, version, kind, plural, singular=None, namespaced=True,
                 short_names=(), categories=(), verbs=ALL, subresources=(), crd=None):
        self.group = group
        self.version = version
        self.kind = kind
        self.plural = plural
        self.singular = singular or kind.lower()
        self.namespaced = namespaced
        self.short_names = list(short_names)
        self.categories = list(categories)
        self.verbs = list(verbs)
        self.subresources = list(subresources)
        self.crd = crd              # the CustomResourceDefinition, for custom resources

    @property
    def api_version(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def group_version(self):
        return self.api_version

    @property
    def key(self):
        """The storage key: one per group and resource, as etcd's /registry/<group>/<plural>."""
        return (self.group, self.plural)

    @property
    def list_kind(self):
        return self.kind + "List"

    @property
    def custom(self):
        return self.crd is not None

    def path(self, namespace=None, name=None):
        base = "/api/v1" if not self.group else "/apis/%s/%s" % (self.group, self.version)
        if self.namespaced and namespace:
            base += "/namespaces/" + namespace
        base += "/" + self.plural
        return base + ("/" + name if name else "")


def _core(kind, plural, namespaced=True, short=(), cats=(), verbs=ALL, subs=()):
    return Resource("", "v1", kind, plural, namespaced=namespaced, short_names=short,
                    categories=cats, verbs=verbs, subresources=subs)


BUILTIN = [
    _core("Namespace", "namespaces", False, ["ns"], verbs=NO_COLLECTION, subs=["status", "finalize"]),
    _core("Node", "nodes", False, ["no"], subs=["status"]),
    _core("Pod", "pods", True, ["po"], ["all"], subs=["status", "log", "exec", "binding", "eviction"]),
    _core("Event", "events", True, ["ev"]),
    _core("ConfigMap", "configmaps", True, ["cm"]),
    _core("Secret", "secrets", True),
    _core("ServiceAccount", "serviceaccounts", True, ["sa"]),
    _core("Service", "services", True, ["svc"], ["all"], subs=["status"]),
    _core("Endpoints", "endpoints", True, ["ep"]),
    Resource("apps", "v1", "DaemonSet", "daemonsets", short_names=["ds"], categories=["all"], subresources=["status"]),
    Resource("apps", "v1", "Deployment", "deployments", short_names=["deploy"], categories=["all"], subresources=["status", "scale"]),
    Resource("apps", "v1", "ReplicaSet", "replicasets", short_names=["rs"], categories=["all"], subresources=["status", "scale"]),
    Resource("apps", "v1", "ControllerRevision", "controllerrevisions"),
    Resource("batch", "v1", "Job", "jobs", categories=["all"], subresources=["status"]),
    Resource("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False),
    Resource("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False, short_names=["pc"]),
    Resource("coordination.k8s.io", "v1", "Lease", "leases"),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    Resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    Resource("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
             namespaced=False, short_names=["crd", "crds"], subresources=["status"]),
    # Dynamic Resource Allocation, GA since 1.34 (pkg/registry/resource/*/storage): v1 alone is
    # served here (SIMULATION: the real server also serves v1beta1 and v1beta2, deprecated).
    Resource("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", namespaced=False),
    Resource("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", subresources=["status"]),
    Resource("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
    Resource("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", namespaced=False),
]

# The order /apis lists the groups in: the real server's priority order
# (pkg/controlplane/apiserver: legacy first, then by group priority).
GROUP_ORDER = ["apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "batch",
               "coordination.k8s.io", "node.k8s.io", "rbac.authorization.k8s.io", "scheduling.k8s.io",
               "apiextensions.k8s.io", "resource.k8s.io"]


class Registry:
    """Built-ins plus the Established CRDs of the store (refreshed on change)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._custom = []

    def set_crds(self, crds):
        custom = []
        for crd in crds:
            if not established(crd):
                continue
            spec = crd.get("spec", {})
            names = spec.get("names", {})
            for v in spec.get("versions", []):
                if not v.get("served", True):
                    continue
                subs = [s for s in ("status", "scale") if s in (v.get("subresources") or {})]
                custom.append(Resource(
                    spec.get("group", ""), v["name"], names.get("kind", ""), names.get("plural", ""),
                    singular=names.get("singular") or names.get("kind", "").lower(),
                    namespaced=spec.get("scope") == "Namespaced",
                    short_names=names.get("shortNames", []), categories=names.get("categories", []),
                    subresources=subs, crd=crd))
        with self._lock:
            self._custom = custom

    def all(self):
        with self._lock:
            return BUILTIN + self._custom

    def by_path(self, group, version, plural):
        for r in self.all():
            if r.group == group and r.version == version and r.plural == plural:
                return r
        return None

    def by_kind(self, api_version, kind):
        group, _, version = api_version.rpartition("/")
        for r in self.all():
            if r.group == group and r.version == version and r.kind == kind:
                return r
        return None

    def groups(self):
        """[(group, [versions])] in discovery order, the core group excluded."""
        seen = {}
        for r in self.all():
            if r.group:
                seen.setdefault(r.group, [])
                if r.version not in seen[r.group]:
                    seen[r.group].append(r.version)
        order = [g for g in GROUP_ORDER if g in seen] + sorted(g for g in seen if g not in GROUP_ORDER)
        return [(g, seen[g]) for g in order]


def established(crd):
    for c in crd.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "Established" and c.get("status") == "True":
            return True
    return False
