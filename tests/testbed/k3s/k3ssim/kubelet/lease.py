"""The node's Lease: the kubelet's heartbeat (k8s.io/component-helpers
apimachinery/lease/controller.go; pkg/kubelet/nodelease.go).

The Lease kube-node-lease/NODE (coordination.k8s.io/v1): holderIdentity
the node, leaseDurationSeconds 40 (the kubelet's nodeLeaseDurationSeconds),
renewTime a MicroTime, owned by the Node (an ownerReference with its uid,
once the node exists). Created when missing, renewed every 10 s (a quarter
of the duration, the controller's renewInterval); a failed renewal is
tried again at the next pass of the kubelet. kube-controller-manager
counts a renewal as a sign of life, as it does a new node status
(controllers/nodelifecycle.py).
"""

from .. import clock, status

DURATION = 40
RENEW_INTERVAL = DURATION * 0.25
NAMESPACE = "kube-node-lease"


class NodeLease:
    def __init__(self, kubelet):
        self.k = kubelet
        self.due = 0.0

    def renew(self):
        if clock.now() < self.due:
            return
        res = self.k.res("coordination.k8s.io/v1", "Lease")
        lease = self.k.api.find(res, NAMESPACE, self.k.node)
        spec = {"holderIdentity": self.k.node, "leaseDurationSeconds": DURATION,
                "renewTime": clock.rfc3339_micro()}
        if lease is None:
            md = {"name": self.k.node, "namespace": NAMESPACE}
            owner = self._owner()
            if owner:
                md["ownerReferences"] = [owner]
            try:
                self.k.api.create(res, {"metadata": md, "spec": spec}, NAMESPACE)
            except status.ApiError as e:
                if e.code != 409:
                    raise
                return
        else:
            lease["spec"] = dict(lease.get("spec") or {}, **spec)
            owner = None if lease["metadata"].get("ownerReferences") else self._owner()
            if owner:
                lease["metadata"]["ownerReferences"] = [owner]
            self.k.api.update(res, lease, NAMESPACE)
        self.due = clock.now() + RENEW_INTERVAL

    def _owner(self):
        node = self.k.api.find(self.k.res("v1", "Node"), None, self.k.node)
        if node is None:
            return None
        return {"apiVersion": "v1", "kind": "Node", "name": self.k.node, "uid": node["metadata"]["uid"]}
