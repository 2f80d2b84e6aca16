"""k3s's supervisor endpoints for agents, on port 6443 beside the API
(k3s pkg/server/handlers/router.go, handlers.go; pkg/nodepassword).

- Authentication: HTTP basic auth `node:<password>`, the password part of
  the server token (`K10<CA hash>::server:<password>`); else 401.
- A node's password (header k3s-Node-Password) is kept hashed in the Secret
  kube-system/NODE.node-password.k3s on its first request; another password
  for that name is 403 "Node password rejected, duplicate hostname or …".
- /v1-k3s/client-kubelet.crt: the node's client certificate (CN
  system:node:NODE, O system:nodes), the client CA and the key;
  /v1-k3s/serving-kubelet.crt: its serving certificate (server CA; SANs
  the node's name, localhost, 127.0.0.1 and the k3s-Node-IP addresses);
  /v1-k3s/server-ca.crt, /v1-k3s/client-ca.crt; /v1-k3s/readyz;
  /v1-k3s/config: the server's configuration an agent needs
  (pkg/server/handlers/handlers.go, config.Control as JSON; SIMULATION:
  the fields of k3s's defaults that say where the API is and how the
  cluster is laid out, not the whole struct).
- /v1-k3s/apiservers: the API servers an agent's tunnel and load balancer
  use, a JSON array of "host:port" (handlers.go APIServers: the addresses
  of the kubernetes EndpointSlices, which the API server fills with its
  advertised address and port; SIMULATION: served from that address and
  port directly, the stand-in keeps no kubernetes Service).
- /v1-k3s/connect: the agents' tunnels (pkg/daemons/control/tunnel.go, a
  rancher/remotedialer server), for a node's kubelet client certificate: a
  websocket upgrade, held open until the agent closes it. SIMULATION: the
  tunnel carries nothing; the API server reaches kubelets directly (see
  control_config's EgressSelectorMode).
"""

import base64
import hashlib
import hmac
import json
import select
import ssl

from . import config, status, websocket

REJECTED = ("Node password rejected, duplicate hostname or contents of '/etc/rancher/node/password' may not match "
            "server node-passwd entry, try enabling a unique node name with the --with-node-id flag")


class Supervisor:
    def __init__(self, api, pki, token, port=6443, advertise=None, network=None):
        self.port = port
        self.network = network or {"backend": "vxlan", "flannel_external_ip": False}
        self.advertise = advertise or ("127.0.0.1", port)
        self.api = api
        self.pki = pki
        self.password = token.rsplit(":", 1)[-1]

    def control_config(self):
        return {"HTTPSPort": self.port, "SupervisorPort": self.port, "APIServerPort": 6443,
                "ClusterDomain": "cluster.local", "ClusterDNS": "10.43.0.10", "ClusterIPRange": config.CLUSTER_CIDR,
                "ServiceIPRange": config.SERVICE_CIDR, "ServiceNodePortRange": "30000-32767",
                "FlannelBackend": self.network["backend"], "FlannelExternalIP": self.network["flannel_external_ip"],
                "EgressSelectorMode": "disabled", "DisableCCM": False, "DisableNPC": False, "DisableKubeProxy": False, "SystemDefaultRegistry": ""}

    def _authenticated(self, req):
        auth = req.headers.get("Authorization") or ""
        if not auth.startswith("Basic "):
            return False
        try:
            user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        return user == "node" and hmac.compare_digest(pw, self.password)

    def _node(self, req):
        node = req.headers.get("k3s-Node-Name") or ""
        if not node:
            raise status.bad_request("node name not set in k3s-Node-Name header")
        pw = req.headers.get("k3s-Node-Password") or ""
        res = self.api.registry.by_kind("v1", "Secret")
        name = node + ".node-password.k3s"
        digest = hashlib.sha256(pw.encode()).hexdigest()
        cur = self.api.find(res, "kube-system", name)
        if cur is None:
            self.api.create(res, {"metadata": {"name": name, "labels": {"k3s.io/node-name": node}},
                                  "type": "k3s.cattle.io/node-password",
                                  "immutable": True,
                                  "data": {"hash": base64.b64encode(digest.encode()).decode()}}, "kube-system")
        elif base64.b64decode(cur.get("data", {}).get("hash", "")).decode() != digest:
            raise status.ApiError(403, "Forbidden", REJECTED)
        return node

    def _connect(self, req):
        """A tunnel: the node's client certificate, a websocket handshake
        (RFC 6455 section 4.2.2), then nothing but the wait for its end."""
        cn = (req.user or (None, []))[0] or ""
        if not cn.startswith("system:node:"):
            raise status.unauthorized()
        websocket.upgrade(req)
        sock = req.h.connection
        try:
            while True:
                select.select([sock], [], [])
                if not sock.recv(4096):
                    return
        except (OSError, ssl.SSLError, ValueError):
            return

    def handle(self, req, path):
        if path == "/v1-k3s/connect":
            return self._connect(req)
        if not self._authenticated(req):
            raise status.unauthorized()
        if path == "/v1-k3s/apiservers":
            return req.send_json(200, ["%s:%d" % self.advertise] if ":" not in self.advertise[0]
                                 else ["[%s]:%d" % self.advertise])
        if path == "/v1-k3s/readyz":
            return req.send_text(200, "ok", "text/plain")
        if path == "/v1-k3s/config":
            return req.send_text(200, json.dumps(self.control_config()), "application/json")
        if path == "/v1-k3s/server-ca.crt":
            return req.send_text(200, _read(self.pki.server_ca[0]), "text/plain")
        if path == "/v1-k3s/client-ca.crt":
            return req.send_text(200, _read(self.pki.client_ca[0]), "text/plain")
        if path == "/v1-k3s/client-kubelet.crt":
            node = self._node(req)
            crt, key = self.pki.kubelet_client(node)
            return req.send_text(200, _read(crt) + _read(self.pki.client_ca[0]) + _read(key), "text/plain")
        if path == "/v1-k3s/serving-kubelet.crt":
            node = self._node(req)
            ips = [i.strip() for i in (req.headers.get("k3s-Node-IP") or "").split(",")]
            crt, key = self.pki.kubelet_serving(node, ips)
            return req.send_text(200, _read(crt) + _read(self.pki.server_ca[0]) + _read(key), "text/plain")
        raise status.not_found_path()


def _read(path):
    with open(path, encoding="ascii") as f:
        return f.read()
