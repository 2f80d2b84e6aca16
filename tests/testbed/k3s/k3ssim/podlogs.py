"""GET …/pods/NAME/log: a container's log, as the API server and the
kubelet serve it.

- The container: ?container=, else the pod's only one; several without a
  name, or an unknown name, are 400s with the API's messages
  (pkg/registry/core/pod/strategy.go, validateContainer).
- Which run: the kubelet's validateContainerLogStatus
  (pkg/kubelet/kubelet_pods.go): the running container, else the one that
  terminated, else the last state's (a crash loop shows the last run),
  else "is waiting to start: REASON"; ?previous=true the last terminated
  run, or "previous terminated container … not found".
- The file is in the CRI format (`TIME STREAM F|P TEXT`,
  /var/log/pods/NS_NAME_UID/CONTAINER/N.log); tailLines, limitBytes,
  sinceSeconds, sinceTime and timestamps as the kubelet's ReadLogs
  (pkg/kubelet/kuberuntime/logs) applies them.
- follow=true streams what the container writes. Like ReadLogs, at the
  end of the file it first asks whether the container still runs (ends if
  not), then waits for the file to change or for stateCheckPeriod (5 s),
  and reads on: a container that exits just after its last line ends the
  stream up to 5 s later.
"""

import datetime
import os
import time

from . import clock, status

STATE_CHECK_PERIOD = 5.0
POLL = 0.05


def _pick(pod, name):
    spec = pod.get("spec", {})
    containers = [c["name"] for c in spec.get("containers") or []]
    every = [c["name"] for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
             + (spec.get("ephemeralContainers") or [])]
    if not name:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise status.bad_request("a container name must be specified for pod %s" % pod["metadata"]["name"])
        raise status.bad_request("a container name must be specified for pod %s, choose one of: [%s]"
                                 % (pod["metadata"]["name"], " ".join(every)))
    if name not in every:
        raise status.bad_request("container %s is not valid for pod %s" % (name, pod["metadata"]["name"]))
    return name


def container_status(pod, name):
    st = pod.get("status", {})
    for cs in (st.get("containerStatuses") or []) + (st.get("initContainerStatuses") or []):
        if cs.get("name") == name:
            return cs
    return None


def _container_id(pod, name, previous):
    cs = container_status(pod, name) or {}
    podname = pod["metadata"]["name"]
    state, last = cs.get("state") or {}, cs.get("lastState") or {}
    if previous:
        t = last.get("terminated")
        if not t or not t.get("containerID"):
            raise status.bad_request('previous terminated container "%s" in pod "%s" not found' % (name, podname))
        return t["containerID"]
    if state.get("running"):
        return cs.get("containerID")
    if state.get("terminated"):
        cid = state["terminated"].get("containerID") or (last.get("terminated") or {}).get("containerID")
        if not cid:
            raise status.bad_request('container "%s" in pod "%s" is terminated' % (name, podname))
        return cid
    if last.get("terminated"):
        if not last["terminated"].get("containerID"):
            raise status.bad_request('container "%s" in pod "%s" is terminated' % (name, podname))
        return last["terminated"]["containerID"]
    waiting = state.get("waiting")
    if waiting is not None:
        reason = waiting.get("reason", "")
        what = {"ErrImagePull": "image can't be pulled",
                "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise status.bad_request('container "%s" in pod "%s" is waiting to start: %s' % (name, podname, what))
    raise status.bad_request('container "%s" in pod "%s" is waiting to start - no logs yet' % (name, podname))


def _parse(line):
    """(time, text with its newline or without, for a partial line)."""
    parts = line.rstrip("\n").split(" ", 3)
    if len(parts) < 4:
        return None, line
    ts, _stream, tag, text = parts
    return ts, text + ("" if tag == "P" else "\n")


class _Options:
    def __init__(self, req):
        self.timestamps = req.flag("timestamps")
        self.follow = req.flag("follow")
        self.tail = _int(req.param("tailLines"))
        self.limit = _int(req.param("limitBytes"))
        since = None
        if req.param("sinceSeconds"):
            s = _int(req.param("sinceSeconds"))
            if s is not None:
                since = clock.utcnow() - datetime.timedelta(seconds=s)
        elif req.param("sinceTime"):
            since = clock.parse(req.param("sinceTime"))
        self.since = since


def _int(v):
    try:
        return int(v) if v not in (None, "") else None
    except ValueError:
        raise status.bad_request("invalid number: %s" % v)


def _render(ts, text, opts):
    if opts.since is not None:
        t = clock.parse(ts[:26] + "Z") if ts else None
        if t is not None and t < opts.since:
            return ""
    return ("%s %s" % (ts, text)) if opts.timestamps else text


def serve(api, req, namespace, name, kubelet_of, proxy=None):
    """KUBELET_OF(node) is the node's kubelet in this process, or None:
    then PROXY(req, pod, container) asks that node's kubelet server."""
    pods = api.registry.by_kind("v1", "Pod")
    pod = api.get(pods, namespace, name)
    container = _pick(pod, req.param("container"))
    if not pod.get("spec", {}).get("nodeName"):
        req.send_text(200, "")
        return
    kubelet = kubelet_of(pod["spec"]["nodeName"])
    if kubelet is None and proxy is not None:
        return proxy(req, pod, container)
    previous = req.flag("previous")
    cid = _container_id(pod, container, previous)
    path = kubelet.log_path(pod, container, cid) if kubelet else None
    opts = _Options(req)
    lines = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
            offset = f.tell()
    except (OSError, TypeError):
        offset = 0
    complete = [l for l in lines if l.endswith("\n")]
    if opts.tail is not None and opts.tail >= 0:
        complete = complete[-opts.tail:] if opts.tail else []
    out = "".join(_render(*_parse(l), opts) for l in complete)
    if opts.limit is not None:
        out = out.encode("utf-8")[:opts.limit].decode("utf-8", "ignore")
    if not opts.follow:
        req.send_text(200, out)
        return
    req.start_stream(200, "text/plain")
    sent = len(out.encode("utf-8"))
    if out and not req.write_chunk(out.encode("utf-8")):
        return
    _follow(api, req, pods, pod, container, cid, path, offset, opts, sent)
    req.end_stream()


def _running(api, pods, pod, container, cid):
    cur = api.find(pods, pod["metadata"]["namespace"], pod["metadata"]["name"])
    if cur is None or cur["metadata"]["uid"] != pod["metadata"]["uid"]:
        return False
    cs = container_status(cur, container) or {}
    return bool((cs.get("state") or {}).get("running")) and cs.get("containerID") == cid


def _follow(api, req, pods, pod, container, cid, path, offset, opts, sent):
    pending = ""
    while True:
        chunk = ""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                f.seek(offset)
                chunk = f.read()
                offset = f.tell()
        except (OSError, TypeError):
            pass
        if chunk:
            pending += chunk
            *full, pending = pending.split("\n")
            data = "".join(_render(*_parse(l + "\n"), opts) for l in full).encode("utf-8")
            if opts.limit is not None:
                data = data[:max(opts.limit - sent, 0)]
            sent += len(data)
            if data and not req.write_chunk(data):
                return
            if opts.limit is not None and sent >= opts.limit:
                return
            continue
        # At the end: the kubelet's waitLogs.
        if not _running(api, pods, pod, container, cid):
            return
        size = _size(path)
        waited = 0.0
        while waited < STATE_CHECK_PERIOD and _size(path) == size:
            time.sleep(POLL)
            waited += POLL
            if req.client_gone():
                return


def _size(path):
    try:
        return os.stat(path).st_size
    except (OSError, TypeError):
        return -1
