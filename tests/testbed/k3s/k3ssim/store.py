"""The datastore: every object, one resourceVersion counter, and the event
history that watches read.

Like etcd behind the API server (k8s.io/apiserver/pkg/storage): each write
gets the next resourceVersion, which is the object's metadata.resourceVersion
and the event's; a watch from resourceVersion N receives every event after
N, and one older than the history holds is answered 410 Gone ("too old
resource version"). The store survives a restart in the volume, as k3s's
kine database does (server/db/): objects keep their UIDs and versions.
"""

import collections
import copy
import itertools
import json
import os
import threading
import uuid

from . import clock

HISTORY = 8192

# Types whose objects carry metadata.generation (their strategies'
# PrepareForCreate set it; pods since PodObservedGenerationTracking).
GENERATION = {("apps", "daemonsets"), ("apps", "deployments"), ("apps", "replicasets"), ("batch", "jobs"),
              ("", "pods"), ("apiextensions.k8s.io", "customresourcedefinitions"),
              ("scheduling.k8s.io", "priorityclasses")}


class TooOld(Exception):
    def __init__(self, want, oldest):
        super().__init__("too old resource version: %d (%d)" % (want, oldest))


class Store:
    def __init__(self, path):
        self.path = path
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 0
        self.objects = {}                 # (group, plural) -> {(namespace, name): object}
        self.history = collections.deque(maxlen=HISTORY)   # (rv, type, key, object)
        self.dirty = False
        self.listeners = []               # called (key, type, object) after each write
        self._load()

    # ---- persistence -------------------------------------------------

    def _load(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return
        self.rv = int(data.get("resourceVersion", 0))
        for entry in data.get("objects", []):
            key = (entry["group"], entry["resource"])
            obj = entry["object"]
            md = obj.get("metadata", {})
            self.objects.setdefault(key, {})[(md.get("namespace", ""), md["name"])] = obj

    def flush(self):
        """Write the store to the volume if anything changed (atomically)."""
        with self.lock:
            if not self.dirty:
                return
            entries = [{"group": k[0], "resource": k[1], "object": o}
                       for k, objs in self.objects.items() for o in objs.values()]
            data = json.dumps({"resourceVersion": self.rv, "objects": entries}, separators=(",", ":"))
            self.dirty = False
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = "%s.%d.tmp" % (self.path, threading.get_ident())
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, self.path)

    # ---- reads -------------------------------------------------------

    def get(self, key, namespace, name):
        with self.lock:
            obj = self.objects.get(key, {}).get((namespace or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def list(self, key, namespace=None):
        """Objects of a type, sorted by namespace and name as etcd's keys are."""
        with self.lock:
            objs = self.objects.get(key, {})
            items = [copy.deepcopy(o) for (ns, _), o in sorted(objs.items())
                     if namespace is None or ns == namespace]
            return items, str(self.rv)

    def current_rv(self):
        with self.lock:
            return self.rv

    # ---- writes ------------------------------------------------------

    def _commit(self, key, etype, obj):
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        snapshot = copy.deepcopy(obj)
        self.history.append((self.rv, etype, key, snapshot))
        self.dirty = True
        self.changed.notify_all()
        for listener in list(self.listeners):
            listener(key, etype, snapshot)
        return copy.deepcopy(obj)

    def create(self, key, obj):
        """Store a new object (the caller checked it does not exist)."""
        with self.lock:
            md = obj.setdefault("metadata", {})
            md["uid"] = md.get("uid") or str(uuid.uuid4())
            md["creationTimestamp"] = clock.rfc3339()
            if key in GENERATION or key[0] not in KNOWN_GROUPS:
                md["generation"] = 1
            md.pop("deletionTimestamp", None)
            self.objects.setdefault(key, {})[(md.get("namespace", ""), md["name"])] = obj
            return self._commit(key, "ADDED", obj)

    def update(self, key, obj):
        """Replace an object (the caller checked the precondition)."""
        with self.lock:
            md = obj["metadata"]
            self.objects.setdefault(key, {})[(md.get("namespace", ""), md["name"])] = obj
            return self._commit(key, "MODIFIED", obj)

    def remove(self, key, namespace, name):
        """Delete an object for good; returns it as it was, or None."""
        with self.lock:
            obj = self.objects.get(key, {}).pop((namespace or "", name), None)
            if obj is None:
                return None
            return self._commit(key, "DELETED", obj)

    # ---- watch -------------------------------------------------------

    def objects_at(self, rv, key):
        """{(namespace, name): object} of type KEY as they were at version RV:
        now's, each change after RV undone (an object made since gone, one
        changed or deleted since as the history last held it before the
        change; where the history no longer reaches, as the change left it).
        For a watch from RV, which judges each event by the object before it."""
        with self.lock:
            now = {k: copy.deepcopy(o) for k, o in self.objects.get(key, {}).items()}
            mine = [(r, t, o) for r, t, k, o in self.history if k == key]
            for i in range(len(mine) - 1, -1, -1):
                r, t, o = mine[i]
                if r <= rv:
                    break
                md = o.get("metadata", {})
                ident = (md.get("namespace", ""), md.get("name"))
                if t == "ADDED":
                    now.pop(ident, None)
                    continue
                before = next((p for _, pt, p in reversed(mine[:i])
                               if (p.get("metadata", {}).get("namespace", ""), p.get("metadata", {}).get("name")) == ident
                               and pt != "DELETED"), o)
                now[ident] = copy.deepcopy(before)
            return now

    def events_after(self, rv, key):
        """Events of type KEY after resourceVersion RV; TooOld when the
        history no longer reaches back that far."""
        with self.lock:
            oldest = self.history[0][0] if self.history else self.rv + 1
            if rv < oldest - 1:
                raise TooOld(rv, oldest)
            start = max(rv - oldest + 1, 0) if self.history else 0
            return [(r, t, copy.deepcopy(o)) for r, t, k, o in itertools.islice(self.history, start, None)
                    if r > rv and k == key]


# Groups of built-in types: any other group's objects are custom resources,
# which always carry a generation (apiextensions' strategy).
KNOWN_GROUPS = {"", "apps", "batch", "node.k8s.io", "scheduling.k8s.io", "coordination.k8s.io",
                "rbac.authorization.k8s.io", "apiextensions.k8s.io", "events.k8s.io"}
