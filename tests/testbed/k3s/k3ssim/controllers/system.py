"""What the API server makes for itself once it runs: the system
namespaces (pkg/controlplane/controller/systemnamespaces), the
built-in PriorityClasses (pkg/registry/scheduling/rest: the
system-node-critical and system-cluster-critical classes), and the
Service default/kubernetes at the service range's first address with its
Endpoints, the address and port the server advertises
(pkg/controlplane/controller/kubernetesservice; k3s passes kube-apiserver
--advertise-address and its own --advertise-port)."""

from .. import admission, config, status

NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"]


KUBERNETES_SERVICE_IP = config.KUBERNETES_SERVICE_IP


def bootstrap(api, advertise):
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
    _kubernetes_service(api, advertise)


def _kubernetes_service(api, advertise):
    addr, port = advertise
    labels = {"component": "apiserver", "provider": "kubernetes"}
    svc = api.registry.by_kind("v1", "Service")
    if api.find(svc, "default", "kubernetes") is None:
        api.create(svc, {"metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
                         "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP,
                                  "clusterIPs": [KUBERNETES_SERVICE_IP], "sessionAffinity": "None",
                                  "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]}})
    ep = api.registry.by_kind("v1", "Endpoints")
    want = [{"addresses": [{"ip": addr}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
    old = api.find(ep, "default", "kubernetes")
    if old is None:
        api.create(ep, {"metadata": {"name": "kubernetes", "namespace": "default",
                                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}}, "subsets": want})
    elif old.get("subsets") != want:
        api.update(ep, dict(old, subsets=want), check_rv=False)
