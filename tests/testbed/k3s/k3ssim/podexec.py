"""…/pods/NAME/exec: a command in a pod's running container, as
kube-apiserver and the kubelet serve it to kubectl over a websocket
(apimachinery pkg/util/remotecommand and pkg/util/httpstream/wsstream;
client-go tools/remotecommand/websocket.go; the kubelet's
pkg/kubelet/cri/streaming/remotecommand; kubectl 1.30+ asks for a websocket
first).

- The request: GET or POST with command= (repeated), container=, stdin=,
  stdout=, stderr=, tty=, and an Upgrade to a websocket offering
  v5.channel.k8s.io, v4.channel.k8s.io, …; the first of these the server
  speaks is answered in Sec-WebSocket-Protocol.
- Refused before the upgrade, with the API's texts: no command ("you must
  specify at least 1 command"), an unknown container (podlogs' texts), a
  pod that ended ("cannot exec into a container in a completed pod;
  current phase is Succeeded"), a container not running ("unable to
  upgrade connection: container not found (\"C\")").
- Frames are binary, their first byte the stream: 0 stdin, 1 stdout, 2
  stderr, 3 the error stream, 4 resize; with v5 a client's 255 + 0 closes
  stdin. Pings are answered. At the end the error stream carries one
  metav1.Status: Success, or Failure with reason NonZeroExitCode and the
  exit code as its cause; then a close frame.
- A pod of another node: the API server passes the upgrade and then the
  bytes both ways to that kubelet's /exec/NS/POD/CONTAINER on 10250
  (UpgradeAwareHandler), as it does the log.
SIMULATION: no TTY (tty=true is served without one); the command runs in
the gateway's filesystem, in the pod's network namespace when it has one
(kubelet/podnet.py), with the container's environment.
"""

import json
import os
import select
import signal
import socket
import ssl
import subprocess
import threading
from urllib.parse import parse_qs, urlsplit

from . import podlogs, procs, status, websocket

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def _commands(req):
    return parse_qs(query(req), keep_blank_values=True).get("command", [])


def query(req):
    """The request's query as sent: command= repeats."""
    return urlsplit(req.h.path).query


def check(pod, req):
    """The API's refusals before any upgrade (pkg/registry/core/pod
    ExecLocation, streamLocation); the container's name."""
    if not _commands(req):
        raise status.bad_request("you must specify at least 1 command")
    name = podlogs._pick(pod, req.param("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        raise status.bad_request("pod %s does not have a host assigned" % pod["metadata"]["name"])
    return name


def serve(api, req, namespace, name, kubelet_of, proxy):
    pod = api.get(api.registry.by_kind("v1", "Pod"), namespace, name)
    container = check(pod, req)
    kubelet = kubelet_of(pod["spec"]["nodeName"])
    if kubelet is None:
        return proxy(req, pod, container)
    return run(kubelet, req, pod, container)


# ---- the exec ------------------------------------------------------------

def _data(ws, stream, payload):
    ws.send(2, bytes([stream]) + payload)


def _status(code):
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: error executing command, exit code %d" % code,
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def run(kubelet, req, pod, container):
    """The kubelet's side: the command in the container, its streams on the websocket."""
    worker = kubelet.workers.get(pod["metadata"]["uid"])
    cs = next((c for c in (worker.init + worker.main if worker else []) if c.spec["name"] == container), None)
    if cs is None or not (cs.run and cs.run.running):
        raise status.internal('unable to upgrade connection: container not found ("%s")' % container)
    argv = worker.exec_argv(cs, _commands(req))
    env = worker.exec_env(cs)
    websocket.upgrade(req, PROTOCOLS, "Upgrade request required")
    ws = websocket.Socket(req)
    done = threading.Event()
    code = {}

    def exited(c):
        code["c"] = 128 - c if c < 0 else c
        done.set()
    want_in = req.flag("stdin")
    try:
        p = procs.spawn(argv, exited, env=env, cwd="/", stdin=subprocess.PIPE if want_in else subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        _data(ws, ERROR, json.dumps({"metadata": {}, "status": "Failure", "message": str(e)}).encode())
        ws.close()
        return

    def pump(f, stream):
        for chunk in iter(lambda: f.read1(32768), b""):
            _data(ws, stream, chunk)
    pumps = [threading.Thread(target=pump, args=(p.stdout, STDOUT), daemon=True),
             threading.Thread(target=pump, args=(p.stderr, STDERR), daemon=True)]
    for t in pumps:
        t.start()

    def reader():
        while True:
            frame = ws.recv()
            if frame is None or frame[0] == 8:
                break
            op, data = frame
            if op == 2 and data and want_in and p.stdin:
                if data[0] == STDIN:
                    try:
                        p.stdin.write(data[1:])
                        p.stdin.flush()
                    except OSError:
                        pass
                elif data[0] == CLOSE and data[1:2] == bytes([STDIN]):
                    p.stdin.close()
        if not done.is_set():
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
    threading.Thread(target=reader, daemon=True).start()
    done.wait()
    for t in pumps:
        t.join(10)
    _data(ws, ERROR, json.dumps(_status(code.get("c", 1))).encode())
    ws.close()


# ---- a pod of another node ------------------------------------------------

def relay(req, host, port, path, ctx):
    """UpgradeAwareHandler: the client's upgrade to HOST:PORT's PATH, the
    answer back, then the bytes both ways until either side ends."""
    try:
        raw = socket.create_connection((host, port), timeout=30)
        up = ctx.wrap_socket(raw, server_hostname=host)
    except OSError as e:
        raise status.internal('error dialing backend: dial tcp %s:%s: %s' % (host, port, e))
    up.settimeout(None)
    # kubectl sends nothing before the 101: nothing waits in the request's
    # buffer, and the sockets alone carry the rest.
    keep = ("Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Protocol")
    head = "GET %s HTTP/1.1\r\nHost: %s:%s\r\n" % (path, host, port)
    head += "".join("%s: %s\r\n" % (k, req.headers[k]) for k in keep if req.headers.get(k))
    up.sendall((head + "\r\n").encode())
    req.sent = True
    req.h.close_connection = True
    client = req.h.connection
    req.h.wfile.flush()
    socks = [client, up]
    try:
        while True:
            ready, _, _ = select.select(socks, [], [])
            for s in ready:
                if not _pass(s, up if s is client else client):
                    return
    except (OSError, ssl.SSLError, ValueError):
        return
    finally:
        up.close()


def _pass(src, dst):
    """What SRC has, to DST (a TLS socket's records decrypted, all of them:
    select sees only the socket). False at its end."""
    data = src.recv(65536)
    if not data:
        return False
    dst.sendall(data)
    while src.pending():
        dst.sendall(src.recv(src.pending()))
    return True
