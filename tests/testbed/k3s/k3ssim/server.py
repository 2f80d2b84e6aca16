"""`k3s server`: the process that the entrypoint execs (PID 1).

What it does, in k3s's order (pkg/cli/server/server.go, pkg/server/
server.go, pkg/daemons/control):
1. certificates and the node token in server/ (kept in the volume), the
   admin kubeconfig /etc/rancher/k3s/k3s.yaml (0600, written at every
   start);
2. the supervisor listener on 6443, answering 503 "apiserver not ready"
   until the API server is up (SIM_K3S_READY_DELAY), then the API;
3. once ready: "Kube API server is now running" and "k3s is up and
   running" in the log, the system namespaces, then the agent's kubelet
   registers the node; SIM_K3S_CRD_DELAY later k3s registers its CRDs
   (pkg/server/context.go registerCRDs) and starts its deploy and Helm
   controllers.
Every controller and the kubelet run in one reconcile loop, every
SIM_K3S_RECONCILE_PERIOD seconds and at once when the store changes
(every SIM_K3S_IDLE_PERIOD once nothing has for SIM_K3S_IDLE_AFTER: clock.Pace).
SIGTERM stops the pods' processes and exits 0.
"""

import os
import signal
import socket
import sys
import threading
import time

import yaml

from . import api as apimod
from . import apiserver, clock, config, httpserver, logs, pki, registry, store, supervisor


def parse_args(argv):
    """The k3s server flags the stand-in honours; others are accepted and
    ignored, as the simulation has nothing they would change."""
    opts = {"tls_san": [], "disable": [], "node_name": None, "port": 6443, "bind": "0.0.0.0",
            "node_labels": [], "token": None, "kcm_args": [], "advertise_address": None,
            "advertise_port": None, "node_ip": [], "node_external_ip": [], "flannel_backend": "vxlan",
            "flannel_external_ip": False, "default_runtime": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and not a.startswith("--") and len(a) > 2:
            a = "-" + a   # urfave/cli takes a long flag with one dash too
        name, eq, value = a.partition("=")
        takes = name in ("--tls-san", "--disable", "--node-name", "--https-listen-port", "--bind-address",
                         "--node-label", "--token", "--write-kubeconfig-mode", "--data-dir", "--node-ip",
                         "--cluster-cidr", "--service-cidr", "--kubelet-arg", "--kube-apiserver-arg",
                         "--advertise-address", "--advertise-port", "--node-external-ip",
                         "--flannel-backend", "--kube-controller-manager-arg", "--default-runtime")
        if takes and not eq:
            i += 1
            value = argv[i] if i < len(argv) else ""
        if name == "--tls-san":
            opts["tls_san"] += [v for v in value.split(",") if v]
        elif name == "--disable":
            opts["disable"] += [v.strip() for v in value.split(",") if v.strip()]   # k3s trims each
        elif name == "--node-name":
            opts["node_name"] = value
        elif name == "--https-listen-port":
            opts["port"] = int(value)
        elif name == "--bind-address":
            opts["bind"] = value
        elif name == "--node-label":
            opts["node_labels"].append(value)
        elif name == "--token":
            opts["token"] = value
        elif name == "--kube-controller-manager-arg":
            opts["kcm_args"].append(value)
        elif name == "--advertise-address":
            opts["advertise_address"] = value
        elif name == "--advertise-port":
            opts["advertise_port"] = int(value)
        elif name == "--default-runtime":
            opts["default_runtime"] = value
        elif name == "--flannel-backend":
            opts["flannel_backend"] = value
        elif name == "--flannel-external-ip":
            opts["flannel_external_ip"] = value.lower() not in ("false", "0") if eq else True
        elif name in ("--node-ip", "--node-external-ip"):
            opts[name[2:].replace("-", "_")] += [v for v in value.split(",") if v]
        i += 1
    return opts


def node_address():
    """The container's address on its network: what its hostname resolves
    to (Docker writes it into /etc/hosts), else loopback."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def advertised(opts, node_ip):
    """The address and port the server gives its agents (pkg/cli/server/server.go
    run: --advertise-address, else the first --node-external-ip, else the
    first --node-ip, else the node's own address, which k3s leaves
    kube-apiserver to pick: the default route's interface, the container's
    bridge address; pkg/daemons/control/server.go defaults: --advertise-port,
    else the listen port). k3s adds the address to the serving SANs."""
    addr = opts["advertise_address"] or (opts["node_external_ip"] or opts["node_ip"] or [node_ip])[0]
    return addr, opts["advertise_port"] or opts["port"]


def write_kubeconfig(keys, port):
    with open(keys.admin[0], encoding="ascii") as f:
        cert = f.read()
    with open(keys.client_ca[0], encoding="ascii") as f:
        cert += f.read()
    import base64
    doc = {"apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": "default",
           "clusters": [{"name": "default", "cluster": {
               "certificate-authority-data": pki.b64(keys.server_ca[0]),
               "server": "https://127.0.0.1:%d" % port}}],
           "contexts": [{"name": "default", "context": {"cluster": "default", "user": "default"}}],
           "users": [{"name": "default", "user": {
               "client-certificate-data": base64.b64encode(cert.encode()).decode(),
               "client-key-data": pki.b64(keys.admin[1])}}]}
    os.makedirs(os.path.dirname(config.KUBECONFIG), exist_ok=True)
    tmp = config.KUBECONFIG + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, default_flow_style=False, sort_keys=True)
    os.chmod(tmp, 0o600)
    os.replace(tmp, config.KUBECONFIG)
    logs.info("Wrote kubeconfig " + config.KUBECONFIG)


def node_token(keys):
    """The server token (server/token): K10<CA hash>::server:<password>,
    made once (pkg/cli/server/server.go, pkg/clientaccess/token.go)."""
    try:
        with open(config.TOKEN_FILE, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        pass
    token = "K10%s::server:%s" % (keys.ca_hash(), os.urandom(16).hex())
    fd = os.open(config.TOKEN_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")
    return token


class Server:
    def __init__(self, opts):
        self.opts = opts
        self.node = opts["node_name"] or os.environ.get("SIM_NODE_NAME") or socket.gethostname()
        self.ip = node_address()
        self.stop = threading.Event()
        self.wake = threading.Event()

    def start(self):
        logs.info("Starting k3s %s (SIMULATION: the openshell k3s stand-in, not k3s)" % config.VERSION)
        for d in (config.SERVER_DIR, config.MANIFESTS_DIR, config.SIM_DIR, config.SWITCH_DIR, config.RUN_DIR):
            os.makedirs(d, exist_ok=True)
        self.advertise = advertised(self.opts, self.ip)
        self.keys = pki.PKI(self.node, self.ip, self.opts["tls_san"] + [self.advertise[0]])
        self.token = node_token(self.keys)
        write_kubeconfig(self.keys, self.opts["port"])
        self.store = store.Store(config.DB_FILE)
        self.registry = registry.Registry()
        self.api = apimod.Api(self.store, self.registry)
        self._refresh_crds()
        self.store.listeners.append(self._on_change)
        from . import controllers
        self.manager = controllers.Manager(self)
        self.manager.agent_start()
        self.http = apiserver.ApiServer(self.api, self.keys, "%s:%d" % (self.ip, self.opts["port"]),
                                        self.manager.kubelet_of, supervisor.Supervisor(self.api, self.keys, self.token,
                                                                              self.opts["port"], self.advertise,
                                                                              self.network()))
        httpserver.serve(self.opts["bind"], self.opts["port"], self.http, self.keys.serving[0],
                         self.keys.serving[1], self.keys.client_ca[0])
        logs.info("Running kube-apiserver (SIMULATION) on %s:%d" % (self.opts["bind"], self.opts["port"]))

    def network(self):
        """What flannel on every node is told (the agents: by /v1-k3s/config)."""
        return {"backend": self.opts["flannel_backend"], "flannel_external_ip": self.opts["flannel_external_ip"]}

    def _refresh_crds(self):
        crds, _ = self.store.list(("apiextensions.k8s.io", "customresourcedefinitions"))
        self.registry.set_crds(crds)

    def _on_change(self, key, etype, obj):
        if key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            self._refresh_crds()
        self.wake.set()

    def run(self):
        t0 = clock.now()
        pace = clock.Pace(self.wake)
        while not self.stop.is_set():
            if not self.http.ready.is_set():
                if not config.switch_on("SIM_K3S_NEVER_READY") and clock.now() - t0 >= config.READY_DELAY:
                    self.http.ready.set()
                    clock.stamp("api-ready")
                    logs.info("Kube API server is now running")
                    logs.info("k3s is up and running")
                    self.manager.api_ready()
            else:
                self.manager.tick()
                self.store.flush()
            pace.wait()

    def shutdown(self, *_):
        logs.info("Received SIGTERM, shutting down (SIMULATION)")
        self.stop.set()
        self.wake.set()


def main(argv):
    srv = Server(parse_args(argv))
    signal.signal(signal.SIGTERM, srv.shutdown)
    signal.signal(signal.SIGINT, srv.shutdown)
    srv.start()
    try:
        srv.run()
    finally:
        srv.manager.shutdown()
        srv.store.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
