"""The controllers of k3s's single process and its agent's kubelet, run in
one reconcile loop: k3s's own (CRD registration, deploy, Helm),
kube-controller-manager's (Job, DaemonSet, Deployment and ReplicaSet, resource claims, garbage collector,
namespace, service accounts, node lifecycle, pod GC), k3s's node controller, the
scheduler, and the kubelet of this node."""

import traceback

from .. import kubelet as kubeletmod
from .. import logs
from . import crds, daemonset, deploy, deployment, gc, helm, job, nodelifecycle, nodes, resourceclaim, scheduler, system


class Manager:
    def __init__(self, server):
        self.server = server
        self.api = server.api
        types = crds.K3sTypes(self.api)
        self.kubelet = kubeletmod.Kubelet(self.api, server.node, server.ip, server.wake,
                                          label_flags=server.opts["node_labels"],
                                          default_runtime=server.opts["default_runtime"],
                                          network=dict(server.network(), external_ips=server.opts["node_external_ip"]))
        self.controllers = [types, deploy.Deploy(self.api, types, server.opts["disable"]), helm.HelmController(self.api, types),
                            job.Jobs(self.api), daemonset.DaemonSets(self.api), deployment.Deployments(self.api),
                            # Before the scheduler: a template's claim is there when it looks.
                            resourceclaim.ResourceClaims(self.api), scheduler.Scheduler(self.api),
                            gc.Housekeeping(self.api), nodes.Nodes(self.api), self.kubelet,
                            # After the kubelet: a pass that comes late (a paused container)
                            # sees this node's renewal before it judges the node silent.
                            nodelifecycle.NodeLifecycle(self.api, server.opts["kcm_args"])]

    def agent_start(self):
        """What the agent does before the API is up: containerd's config,
        the image import, the packaged manifests."""
        self.kubelet.start_containerd()
        self.kubelet.images.import_dir()
        deploy.stage_packaged(self.server.opts["disable"])

    def api_ready(self):
        system.bootstrap(self.api, self.server.advertise)
        for c in self.controllers:
            c.start()

    def tick(self):
        for c in self.controllers:
            try:
                c.tick()
            except Exception as e:  # a stand-in bug: say it, keep the cluster going
                logs.error("SIMULATION: %s failed: %s: %s" % (type(c).__name__, type(e).__name__, e))
                traceback.print_exc()

    def next_deadline(self):
        return self.kubelet.next_deadline()

    def kubelet_of(self, node):
        return self.kubelet if node == self.kubelet.node else None

    def shutdown(self):
        self.kubelet.shutdown()
