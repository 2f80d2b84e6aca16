"""The kubelet's own HTTPS port, 10250, on a node apart from the server:
the API server reaches a pod's log there (pkg/kubelet/server/server.go:
/containerLogs/{namespace}/{pod}/{container}), with its kubelet client
certificate (client CA), and the kubelet answers with its serving
certificate (server CA), as kube-apiserver and an agent's kubelet do.
"""

import http.client
import ssl
from urllib.parse import unquote

from . import httpserver, podexec, podlogs, status

PORT = 10250


def serve(api, kubelet, cert, key, client_ca, host="0.0.0.0", port=PORT):
    """Listen on HOST (k3s: the agent's --bind-address, else 0.0.0.0:
    AgentConfig.ListenAddress, the kubelet's `address`)."""
    def app(req):
        if req.user is None:
            raise status.unauthorized()
        parts = [unquote(p) for p in req.path.split("/") if p]
        if len(parts) != 4 or parts[0] not in ("containerLogs", "exec"):
            return req.send_text(404, "404 page not found\n")
        req.query["container"] = parts[3]
        if parts[0] == "exec":
            return podexec.serve(api, req, parts[1], parts[2], lambda node: kubelet, None)
        podlogs.serve(api, req, parts[1], parts[2], lambda node: kubelet)
    return httpserver.serve(host, port, app, cert, key, client_ca)


def address(node):
    """Where NODE's kubelet listens: its InternalIP and daemonEndpoints port."""
    addrs = {a.get("type"): a.get("address") for a in node.get("status", {}).get("addresses") or []}
    port = ((node.get("status", {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port", PORT)
    return addrs.get("InternalIP"), port


def client_context(cert, key, ca):
    """The API server's TLS to a kubelet: its client certificate, the
    kubelet's serving certificate checked by the server CA."""
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    ctx.load_cert_chain(cert, key)
    return ctx


def proxy(req, node, pod, container, cert, key, ca):
    """Stream a pod's log from NODE's kubelet back to REQ's client."""
    host, port = address(node)
    ctx = client_context(cert, key, ca)
    q = "&".join("%s=%s" % (k, v) for k, v in req.query.items() if k != "container")
    path = "/containerLogs/%s/%s/%s%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"], container,
                                         "?" + q if q else "")
    try:
        conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=30)
        conn.request("GET", path)
        resp = conn.getresponse()
    except OSError as e:
        raise status.internal('Get "https://%s:%s%s": %s' % (host, port, path, e))
    ctype = resp.getheader("Content-Type", "text/plain")
    if resp.getheader("Transfer-Encoding", "") != "chunked":
        data = resp.read()
        req._head(resp.status, ctype, len(data))
        req.h.wfile.write(data)
        return
    req.start_stream(resp.status, ctype)
    conn.sock.settimeout(None)
    while True:
        chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(4096)
        if not chunk:
            break
        if not req.write_chunk(chunk):
            conn.close()
            return
    req.end_stream()

