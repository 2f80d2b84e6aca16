"""The agent's tunnel to its servers (k3s pkg/agent/tunnel/tunnel.go Setup,
pkg/agent/config WaitForAPIServers; rancher/remotedialer client.go).

- The supervisor's /v1-k3s/apiservers (basic auth with the token) lists the
  servers as their API server advertises itself ("host:port"); until it
  answers, "Failed to retrieve list of apiservers from server: …", again
  every 5 s. "Got apiserver addresses from supervisor: [A:P …]".
- For each address, a websocket to wss://A:P/v1-k3s/connect with the
  kubelet's client certificate, the server verified by its CA and by the
  address among its SANs, as Go's TLS client does. Each try logs
  "Connecting to proxy" url=…; a failed one "Remotedialer proxy error;
  reconnecting..." error=… url=…, again 1 s later (endpointDebounceDelay); a
  made one "Remotedialer connected to proxy" url=…. A tunnel that ends is
  dialled again.
- Setup returns once every address has connected once; the kubelet starts
  only then (pkg/agent/run.go: tunnelSetup before agent.Agent). So an agent
  whose host cannot reach the address its server advertises (a container's
  bridge address on another machine) never registers its node.
SIMULATION: the tunnel carries no traffic; the server reaches kubelets
directly (supervisor.py).
"""

import base64
import json
import os
import socket
import ssl
import threading

from . import join, logs, websocket

LIST_RETRY = 5.0
DEBOUNCE = 1.0


def apiservers(base, ctx, token, stop):
    """The addresses the supervisor lists; None when stopped first."""
    url = base + "/v1-k3s/apiservers"
    logs.info("Getting list of apiserver endpoints from server")
    while not stop.is_set():
        try:
            code, reason, body = join.get(url, ctx, join.node_auth(token))
            if code != 200:
                raise join.JoinError("%s: %d %s" % (url, code, reason))
            addrs = json.loads(body)
            if addrs:
                logs.info("Got apiserver addresses from supervisor: [%s]" % " ".join(addrs))
                return addrs
            logs.info("Waiting for supervisor to provide apiserver addresses")
        except (join.JoinError, ValueError) as e:
            logs.error("Failed to retrieve list of apiservers from server: %s" % e)
        stop.wait(LIST_RETRY)
    return None


def _split(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _dial(address, ca, cert, key):
    """A websocket to ADDRESS's /v1-k3s/connect: the socket, upgraded.
    Raises OSError with Go's text for what failed."""
    host, port = _split(address)
    try:
        s = join.tls_connect(host, port, ca, cert, key)
    except join.TLSError as e:
        raise OSError(str(e))
    except (socket.timeout, TimeoutError):
        raise OSError("dial tcp %s: i/o timeout" % address)
    except ssl.SSLError as e:
        raise OSError("remote error: tls: %s" % e.reason)
    except OSError as e:
        raise OSError(join.dial_error(address, e) or "dial tcp %s: %s" % (address, e))
    try:
        wskey = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET /v1-k3s/connect HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (address, wskey)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                raise OSError("websocket: bad handshake")
            head += chunk
        if not websocket.handshake_ok(head.split(b"\r\n\r\n")[0], wskey):
            raise OSError("websocket: bad handshake")
        s.settimeout(None)
        return s
    except OSError as e:
        s.close()
        raise OSError(str(e) if not isinstance(e, ssl.SSLError) else "remote error: tls: %s" % e.reason)


def _connection(address, paths, stop, connected):
    url = "wss://%s/v1-k3s/connect" % address
    while not stop.is_set():
        logs.info("Connecting to proxy", url=url)
        try:
            s = _dial(address, paths["server-ca"], *paths["client-kubelet"])
        except OSError as e:
            logs.server("error", "Remotedialer proxy error; reconnecting...", error=str(e), url=url)
            stop.wait(DEBOUNCE)
            continue
        logs.info("Remotedialer connected to proxy", url=url)
        connected.set()
        with s:
            try:
                while not stop.is_set() and s.recv(4096):
                    pass
            except (OSError, ssl.SSLError):
                pass
        stop.wait(DEBOUNCE)


def setup(base, ctx, token, paths, stop):
    """The tunnels, one thread each; returns once each has connected once
    (False when stopped first)."""
    addrs = apiservers(base, ctx, token, stop)
    if addrs is None:
        return False
    events = []
    for a in addrs:
        ev = threading.Event()
        events.append(ev)
        threading.Thread(target=_connection, args=(a, paths, stop, ev), name="tunnel " + a, daemon=True).start()
    for ev in events:
        while not ev.wait(0.5):
            if stop.is_set():
                return False
    return True
