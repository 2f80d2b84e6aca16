"""`k3s agent`: a node that joins a server (k3s pkg/cli/agent, pkg/agent).

As the real agent (pkg/agent/config/config.go get; pkg/clientaccess/token.go):
1. the server URL and token from --server/--token (or --token-file,
   K3S_URL, K3S_TOKEN, K3S_TOKEN_FILE); a secure token
   (K10<hash>::server:<password>) pins the server CA: /cacerts is fetched
   and its sha256 must be the token's ("token CA hash does not match the
   Cluster CA certificate hash"), else the agent exits 1;
2. the node's password (/etc/rancher/node/password, made once) and the
   token's password (basic auth node:<password>) get the kubelet's client
   and serving certificates from the supervisor (supervisor.py); until the
   server answers, "Waiting to retrieve agent configuration; server is not
   ready: …" and again every 2 s (the real agent: every 5 s);
3. containerd's config and image import, the kubelet (the node
   registers without the control-plane labels), and the kubelet's port
   10250 for the server's log requests (kubeletserver.py).
SIGTERM stops its pods' processes and exits 0.
"""

import base64
import hashlib
import os
import secrets
import signal
import socket
import ssl
import sys
import threading
import urllib.request
from urllib.parse import urlsplit

from . import client, config, kubelet, kubeletserver, logs

RETRY = 2.0


def parse_args(argv):
    opts = {"server": os.environ.get("K3S_URL", ""), "token": os.environ.get("K3S_TOKEN", ""),
            "token_file": os.environ.get("K3S_TOKEN_FILE", ""), "node_name": os.environ.get("K3S_NODE_NAME"),
            "node_labels": [], "node_ip": None}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in ("--server", "-s", "--token", "-t", "--token-file", "--node-name", "--node-label",
                    "--node-ip") and not eq:
            i += 1
            value = argv[i] if i < len(argv) else ""
        key = {"-s": "server", "--server": "server", "-t": "token", "--token": "token",
               "--token-file": "token_file", "--node-name": "node_name", "--node-ip": "node_ip"}.get(name)
        if key:
            opts[key] = value
        elif name == "--node-label":
            opts["node_labels"].append(value)
        i += 1
    if opts["token_file"] and not opts["token"]:
        with open(opts["token_file"], encoding="utf-8") as f:
            opts["token"] = f.read().strip()
    return opts


def _fatal(msg):
    logs.server("fatal", msg)
    sys.exit(1)


def _node_password():
    path = os.environ.get("SIM_NODE_PASSWORD_FILE", "/etc/rancher/node/password")
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


def _get(url, ctx, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        return resp.read().decode("ascii")


def _split_pem(text):
    blocks, cur = [], []
    for line in text.splitlines(keepends=True):
        cur.append(line)
        if line.startswith("-----END "):
            blocks.append("".join(cur))
            cur = []
    return blocks


class Agent:
    def __init__(self, opts):
        self.opts = opts
        self.node = opts["node_name"] or socket.gethostname()
        self.stop = threading.Event()
        self.wake = threading.Event()
        try:
            self.ip = opts["node_ip"] or socket.gethostbyname(socket.gethostname())
        except OSError:
            self.ip = "127.0.0.1"

    def _join(self):
        """Fetch the CA and the kubelet's certificates; (host, port, paths)."""
        url = urlsplit(self.opts["server"])
        if url.scheme != "https" or not url.hostname:
            _fatal("Error: --server must be an https URL, not %r" % self.opts["server"])
        base = "https://%s:%d" % (url.hostname, url.port or 6443)
        token = self.opts["token"]
        if not token:
            _fatal("Error: --token is required")
        want_hash, password = None, token
        if token.startswith("K10") and "::" in token:
            want_hash, _, creds = token[3:].partition("::")
            password = creds.rsplit(":", 1)[-1]
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        auth = "Basic " + base64.b64encode(("node:" + password).encode()).decode()
        headers = {"Authorization": auth, "k3s-Node-Name": self.node, "k3s-Node-Password": _node_password(),
                   "k3s-Node-IP": self.ip}
        d = config.AGENT_DIR
        os.makedirs(d, exist_ok=True)
        while not self.stop.is_set():
            try:
                ca = _get(base + "/cacerts", insecure)
                got = hashlib.sha256(ca.encode()).hexdigest()
                if want_hash and got != want_hash:
                    _fatal("Error: token CA hash does not match the Cluster CA certificate hash: %s != %s"
                           % (want_hash, got))
                ca_path = os.path.join(d, "server-ca.crt")
                with open(ca_path, "w", encoding="ascii") as f:
                    f.write(ca)
                verified = ssl.create_default_context(cafile=ca_path)
                verified.check_hostname = False
                client_pem = _split_pem(_get(base + "/v1-k3s/client-kubelet.crt", verified, headers))
                serving_pem = _split_pem(_get(base + "/v1-k3s/serving-kubelet.crt", verified, headers))
                client_ca = _get(base + "/v1-k3s/client-ca.crt", verified, headers)
                break
            except (OSError, ValueError) as e:
                why = getattr(e, "reason", e)
                code = getattr(e, "code", None)
                logs.info("Waiting to retrieve agent configuration; server is not ready: %s%s"
                          % ("%s " % code if code else "", why))
                self.stop.wait(RETRY)
        else:
            sys.exit(0)
        paths = {}
        for name, blocks in (("client-kubelet", client_pem), ("serving-kubelet", serving_pem)):
            paths[name] = (os.path.join(d, name + ".crt"), os.path.join(d, name + ".key"))
            _write(paths[name][0], "".join(b for b in blocks if "CERTIFICATE" in b), 0o644)
            _write(paths[name][1], "".join(b for b in blocks if "PRIVATE KEY" in b), 0o600)
        paths["client-ca"] = os.path.join(d, "client-ca.crt")
        _write(paths["client-ca"], client_ca, 0o644)
        paths["server-ca"] = ca_path
        return url.hostname, url.port or 6443, paths

    def run(self):
        logs.info("Starting k3s agent %s (SIMULATION: the openshell k3s stand-in, not k3s)" % config.VERSION)
        for dd in (config.AGENT_DIR, config.SIM_DIR, config.SWITCH_DIR, config.RUN_DIR):
            os.makedirs(dd, exist_ok=True)
        host, port, paths = self._join()
        logs.info("Connecting to proxy url=\"wss://%s:%d/v1-k3s/connect\"" % (host, port))
        api = client.RemoteApi(host, port, paths["server-ca"], *paths["client-kubelet"])
        self.kubelet = kubelet.Kubelet(api, self.node, self.ip, self.wake, server=False,
                                       label_flags=self.opts["node_labels"],
                                       pod_cidr="10.42.%d.0/24" % (1 + int(hashlib.sha256(self.node.encode())
                                                                         .hexdigest(), 16) % 250))
        self.kubelet.start()
        kubeletserver.serve(api, self.kubelet, paths["serving-kubelet"][0], paths["serving-kubelet"][1],
                            paths["client-ca"])
        logs.info("Running kubelet (SIMULATION) for node %s" % self.node)
        while not self.stop.is_set():
            try:
                self.kubelet.tick()
            except Exception as e:  # the server gone for a moment: the kubelet tries again
                logs.error("SIMULATION: kubelet: %s: %s" % (type(e).__name__, e))
            self.wake.wait(config.RECONCILE_PERIOD)
            self.wake.clear()
        self.kubelet.shutdown()

    def shutdown(self, *_):
        logs.info("Received SIGTERM, shutting down (SIMULATION)")
        self.stop.set()
        self.wake.set()


def _write(path, text, mode):
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv):
    agent = Agent(parse_args(argv))
    signal.signal(signal.SIGTERM, agent.shutdown)
    signal.signal(signal.SIGINT, agent.shutdown)
    agent.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
