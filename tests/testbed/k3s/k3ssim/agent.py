"""`k3s agent`: a node that joins a server (k3s pkg/cli/agent, pkg/agent).

As the real agent (pkg/agent/run.go, pkg/agent/config/config.go; join.py):
1. the server URL and token from --server/--token (or --token-file,
   K3S_URL, K3S_TOKEN, K3S_TOKEN_FILE); the server's CA, verified as
   Go's TLS client verifies it (the URL's host among the certificate's
   SANs) and, with a secure token (K10<hash>::server:<password>), pinned
   by the token's hash; until then "Failed to validate connection to
   cluster at URL: …", again every 2 s;
2. the node's password (/etc/rancher/node/password, made once) and the
   token's password (basic auth node:<password>) get the server's config
   and the kubelet's client and serving certificates from the supervisor
   (supervisor.py); until the server answers, "Waiting to retrieve agent
   configuration; server is not ready: …", again every 2 s (the real
   agent: every 5 s, jittered);
   then the tunnel to every address the server advertises (tunnel.py),
   each connected once before the kubelet starts;
3. containerd's config and image import, the kubelet (the node
   registers without the control-plane labels, renews its Lease), and
   the kubelet's port 10250 on --bind-address (default 0.0.0.0) for the
   server's log requests (kubeletserver.py).
The node's address: --node-ip, else that of the interface of the default
route (k3s util.GetHostnameAndIPs, apimachinery ChooseHostInterface); its
name: --node-name, else the hostname.
SIGTERM stops its pods' processes and exits 0.
"""

import hashlib
import os
import secrets
import signal
import socket
import sys
import threading
from urllib.parse import urlsplit

from . import client, clock, config, join, kubelet, kubeletserver, logs, tunnel

RETRY = 2.0


def parse_args(argv):
    opts = {"server": os.environ.get("K3S_URL", ""), "token": os.environ.get("K3S_TOKEN", ""),
            "token_file": os.environ.get("K3S_TOKEN_FILE", ""), "node_name": os.environ.get("K3S_NODE_NAME"),
            "node_labels": [], "node_ip": None, "bind_address": None, "node_external_ip": [],
            "default_runtime": None}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in ("--server", "-s", "--token", "-t", "--token-file", "--node-name", "--node-label",
                    "--node-ip", "--bind-address", "--node-external-ip", "--default-runtime") and not eq:
            i += 1
            value = argv[i] if i < len(argv) else ""
        key = {"-s": "server", "--server": "server", "-t": "token", "--token": "token",
               "--token-file": "token_file", "--node-name": "node_name", "--node-ip": "node_ip",
               "--bind-address": "bind_address", "--default-runtime": "default_runtime"}.get(name)
        if key:
            opts[key] = value
        elif name == "--node-label":
            opts["node_labels"].append(value)
        elif name == "--node-external-ip":
            opts["node_external_ip"] += [v for v in value.split(",") if v]
        i += 1
    if opts["token_file"] and not opts["token"]:
        with open(opts["token_file"], encoding="utf-8") as f:
            opts["token"] = f.read().strip()
    return opts


def _fatal(msg):
    logs.server("fatal", msg)
    sys.exit(1)


def _node_password():
    path = config.NODE_PASSWORD_FILE
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        pw = secrets.token_hex(16)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(pw + "\n")
        return pw


def default_ip():
    """The address of the default route's interface (k3s GetHostnameAndIPs
    without --node-ip: apimachinery's ChooseHostInterface): the source
    address the kernel picks for a destination off every local network (a
    UDP socket's connect sends nothing); without a default route, the
    hostname's address, else loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("203.0.113.1", 9))
            return s.getsockname()[0]
    except OSError:
        pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class Agent:
    def __init__(self, opts):
        self.opts = opts
        self.node = opts["node_name"] or socket.gethostname().lower()
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.ip = opts["node_ip"] or default_ip()

    def _join(self):
        """The server's CA and the kubelet's certificates: (host, port, paths)."""
        url = urlsplit(self.opts["server"])
        if url.scheme != "https" or not url.hostname:
            _fatal("Error: --server must be an https URL, not %r" % self.opts["server"])
        host, port = url.hostname, url.port or 6443
        base = "https://%s:%d" % (host if ":" not in host else "[%s]" % host, port)
        token = self.opts["token"]
        if not token:
            _fatal("Error: --token is required")
        d = config.AGENT_DIR
        os.makedirs(d, exist_ok=True)
        ca_ctx = None
        while not self.stop.is_set():
            try:
                ca_path, ca_ctx = join.validate(base, host, port, token, d)
                break
            except join.JoinError as e:
                logs.error("Failed to validate connection to cluster at %s: %s" % (self.opts["server"], e))
                self.stop.wait(RETRY)
        while ca_ctx is not None and not self.stop.is_set():
            try:
                paths = join.configure(base, ca_ctx, token, self.node, self.ip, _node_password(), d)
                paths["server-ca"] = ca_path
                if not tunnel.setup(base, ca_ctx, token, paths, self.stop):
                    break
                return host, port, paths
            except join.JoinError as e:
                logs.info("Waiting to retrieve agent configuration; server is not ready: %s" % e)
                self.stop.wait(RETRY)
        sys.exit(0)

    def run(self):
        logs.info("Starting k3s agent %s (SIMULATION: the openshell k3s stand-in, not k3s)" % config.VERSION)
        for dd in (config.AGENT_DIR, config.SIM_DIR, config.SWITCH_DIR, config.RUN_DIR):
            os.makedirs(dd, exist_ok=True)
        host, port, paths = self._join()
        api = client.RemoteApi(host, port, paths["server-ca"], *paths["client-kubelet"])
        control = paths["control"]
        network = {"backend": control.get("FlannelBackend") or "vxlan",
                   "flannel_external_ip": bool(control.get("FlannelExternalIP")),
                   "external_ips": self.opts["node_external_ip"]}
        self.kubelet = kubelet.Kubelet(api, self.node, self.ip, self.wake, server=False,
                                       label_flags=self.opts["node_labels"], network=network,
                                       default_runtime=self.opts["default_runtime"],
                                       pod_cidr="10.42.%d.0/24" % (1 + int(hashlib.sha256(self.node.encode())
                                                                         .hexdigest(), 16) % 250))
        self.kubelet.start()
        listen = self.opts["bind_address"] or "0.0.0.0"
        try:
            kubeletserver.serve(api, self.kubelet, paths["serving-kubelet"][0], paths["serving-kubelet"][1],
                                paths["client-ca"], host=listen)
        except OSError as e:     # pkg/daemons/agent: the kubelet's exit is fatal
            self.kubelet.shutdown()
            _fatal("kubelet exited: listen tcp %s:%d: bind: %s" % (listen, kubeletserver.PORT,
                                                                   os.strerror(e.errno).lower()))
        logs.info("Running kubelet (SIMULATION) for node %s" % self.node)
        pace = clock.Pace(self.wake)
        while not self.stop.is_set():
            try:
                self.kubelet.tick()
            except Exception as e:  # the server gone for a moment: the kubelet tries again
                logs.error("SIMULATION: kubelet: %s: %s" % (type(e).__name__, e))
            pace.wait()
        self.kubelet.shutdown()

    def shutdown(self, *_):
        logs.info("Received SIGTERM, shutting down (SIMULATION)")
        self.stop.set()
        self.wake.set()


def main(argv):
    agent = Agent(parse_args(argv))
    signal.signal(signal.SIGTERM, agent.shutdown)
    signal.signal(signal.SIGINT, agent.shutdown)
    agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
