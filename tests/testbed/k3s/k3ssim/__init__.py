"""SIMULATION: the k3s stand-in of the openshell test bed. Not k3s.

A Kubernetes API server (HTTPS on 6443, k3s's certificates and paths) with
the controllers, kubelet, scheduler and device plugin that a single-node
k3s with the NVIDIA device plugin runs, so that the REAL kubectl (inside the
gateway container and on the host) and openshell talk to it as to k3s.
What each part follows in the real sources: docs/k3s-standin.md.

Layout, one responsibility a file:
  server.py      `k3s server`: the process, its start and its stop
  apiserver.py   the HTTP(S) surface: routing, verbs, watch, logs
  store.py       objects, resourceVersions, the watch history, persistence
  registry.py    the types served (built-in, and CRDs once registered)
  discovery.py   /api, /apis (legacy and aggregated), /openapi/v3
  admission.py   defaulting, validation, admission plugins
  schema.py      the fields strict validation knows
  patch.py       JSON, merge and strategic-merge patches
  selectors.py   label, field and node selectors
  dra.py         a pod's ResourceClaims and their allocation from ResourceSlices
  tables.py      server-side printing (kubectl get without -o)
  status.py      errors as the API's Status bodies
  pki.py         k3s's CAs and certificates (openssl)
  controllers/   k3s's and kube-controller-manager's controllers (the resource
                 claim controller among them), the scheduler
  kubelet/       the node: status, device manager, pods, container runtime
  programs/      the simulated images' programs (helm job, device plugin, ...)
"""
