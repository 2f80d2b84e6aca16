"""Watches: a chunked stream of {"type": …, "object": …} lines.

As k8s.io/apiserver's watch handler (pkg/endpoints/handlers/watch.go) and
the watch cache:
- resourceVersion unset or "0": ADDED for every object that matches now,
  then what changes;
- resourceVersion N: every change after N; one the history no longer
  holds is an ERROR event with a 410 Expired Status ("too old resource
  version"), after which a client lists again;
- sendInitialEvents=true (the streaming list kubectl's reflector may ask
  for): ADDED for every object, then a BOOKMARK annotated
  k8s.io/initial-events-end;
- a selector's view: an object that comes into it is ADDED, one that
  leaves it DELETED (the cacher's filter of old and new object);
- timeoutSeconds (else a random 30 to 60 minutes, as --min-request-timeout
  gives) ends the stream.
The switch SIM_WATCH_CUT: every stream open when its value changes breaks
off mid-stream, as when the API server restarts under its watchers.
"""

import json
import random
import time

from . import config
from . import store as storemod

CHECK_CLIENT = 5.0


def _line(etype, obj):
    return (json.dumps({"type": etype, "object": obj}, separators=(",", ":")) + "\n").encode("utf-8")


def serve(api, req, res, namespace, labels, fields):
    store = api.store
    timeout = req.param("timeoutSeconds")
    try:
        timeout = float(timeout) if timeout else random.uniform(1800, 3600)
    except ValueError:
        timeout = 1800
    deadline = time.monotonic() + timeout
    rv = req.param("resourceVersion") or ""
    initial_events = req.param("sendInitialEvents") == "true"
    bookmarks = req.flag("allowWatchBookmarks")

    def visible(obj):
        md = obj.get("metadata", {})
        if res.namespaced and namespace and md.get("namespace") != namespace:
            return None
        return labels.matches(md.get("labels")) and fields.matches(obj)

    def ident(obj):
        md = obj.get("metadata", {})
        return md.get("namespace", ""), md.get("name")

    with store.lock:
        now_items, now_rv = store.list(res.key, namespace if res.namespaced else None)
        current = {ident(o): o for o in now_items if visible(o)}
        last = int(now_rv)
    req.start_stream()
    matched = set(current)
    if rv not in ("", "0") and not initial_events:
        try:
            # Each replayed event is judged by the object before it, as the
            # cacher's is: what matched at RV, not what matches now.
            matched = {k for k, o in store.objects_at(int(rv), res.key).items() if visible(o)}
        except ValueError:
            pass
    if initial_events or rv in ("", "0"):
        for o in current.values():
            if not req.write_chunk(_line("ADDED", o)):
                return
        if initial_events and bookmarks:
            mark = {"kind": res.kind, "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(last),
                                 "annotations": {"k8s.io/initial-events-end": "true"}}}
            if not req.write_chunk(_line("BOOKMARK", mark)):
                return
    else:
        try:
            last = int(rv)
        except ValueError:
            last = int(now_rv)
    checked = time.monotonic()
    cut = config.switch("SIM_WATCH_CUT")
    while time.monotonic() < deadline:
        if config.switch("SIM_WATCH_CUT") != cut:
            # SIMULATION switch: the stream breaks off, as when the API
            # server restarts under its watchers (no final chunk).
            req.h.close_connection = True
            return
        with store.lock:
            try:
                events = store.events_after(last, res.key)
            except storemod.TooOld as e:
                events = e
            if not events:
                # Under the lock that writers notify with: no change is missed.
                store.changed.wait(min(1.0, max(deadline - time.monotonic(), 0.01)))
        if isinstance(events, storemod.TooOld):
            err = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": str(events), "reason": "Expired", "code": 410}
            req.write_chunk(_line("ERROR", err))
            break
        for erv, etype, obj in events:
            last = erv
            if res.namespaced and namespace and obj.get("metadata", {}).get("namespace") != namespace:
                continue
            k = ident(obj)
            now = visible(obj) and etype != "DELETED"
            was = k in matched
            if etype == "DELETED":
                out = "DELETED" if was else None
            elif now:
                out = "MODIFIED" if was else "ADDED"
            else:
                out = "DELETED" if was else None
            if now:
                matched.add(k)
            else:
                matched.discard(k)
            if out and not req.write_chunk(_line(out, obj)):
                return
        if time.monotonic() - checked > CHECK_CLIENT:
            checked = time.monotonic()
            if req.client_gone():
                return
    req.end_stream()
