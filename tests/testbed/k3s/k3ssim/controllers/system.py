"""What the API server makes for itself once it runs: the system
namespaces (pkg/controlplane/controller/systemnamespaces) and the
built-in PriorityClasses (pkg/registry/scheduling/rest: the
system-node-critical and system-cluster-critical classes)."""

from .. import admission, status

NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"]


def bootstrap(api):
    ns = api.registry.by_kind("v1", "Namespace")
    for name in NAMESPACES:
        if api.find(ns, None, name) is None:
            api.create(ns, {"metadata": {"name": name}})
    pc = api.registry.by_kind("scheduling.k8s.io/v1", "PriorityClass")
    for name, value in admission.SYSTEM_PRIORITY.items():
        if api.find(pc, None, name) is None:
            try:
                api.create(pc, {"metadata": {"name": name}, "value": value, "preemptionPolicy":
                                "PreemptLowerPriority", "description": "Used for system critical pods that must "
                                "not be moved from their current node." if name == "system-node-critical" else
                                "Used for system critical pods that must run in the cluster, but can be moved to "
                                "another node if necessary."})
            except status.ApiError:
                pass
