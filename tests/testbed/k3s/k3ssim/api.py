"""The API's verbs on objects: create, get, list, update, patch, delete.

Both the HTTP surface (apiserver.py) and the controllers go through here,
so a controller's write meets the same admission and conflicts as a
client's (a DaemonSet's pod is refused for a missing RuntimeClass, as the
DaemonSet controller's is). Semantics follow k8s.io/apiserver's generic
registry (pkg/registry/generic/registry/store.go):
- create: name or generateName, namespace from the path, AlreadyExists;
- update: the resourceVersion precondition (Conflict), status kept apart
  where the type has a status subresource, generation bumped by a spec
  change;
- delete: preconditions, graceful deletion of a bound pod
  (deletionTimestamp and deletionGracePeriodSeconds; the kubelet finishes
  it), finalizers (the object stays, marked, until they are gone), the
  propagation policy's finalizers (foregroundDeletion, orphan), and a
  Namespace's Terminating phase for the namespace controller.
"""

import copy
import datetime
import random
import uuid

from . import admission, clock, patch, selectors, status

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery's utilrand alphanums


def random_suffix(n=5):
    return "".join(random.choice(ALPHABET) for _ in range(n))


def strip_list_item(res, obj):
    """Built-in lists carry items without kind and apiVersion."""
    if not res.custom:
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
    return obj


class Api:
    def __init__(self, store, registry):
        self.store = store
        self.registry = registry
        self.correlator = Correlator()
        self.event_lock = store.lock

    # ---- helpers ----------------------------------------------------

    def resource(self, api_version, kind):
        res = self.registry.by_kind(api_version, kind)
        if res is None:
            raise status.not_found_path()
        return res

    def _key_ns(self, res, namespace):
        return res.key, (namespace or "") if res.namespaced else ""

    # ---- reads ------------------------------------------------------

    def get(self, res, namespace, name):
        key, ns = self._key_ns(res, namespace)
        obj = self.store.get(key, ns, name)
        if obj is None:
            raise status.not_found(res.plural, res.group, name)
        return obj

    def find(self, res, namespace, name):
        key, ns = self._key_ns(res, namespace)
        return self.store.get(key, ns, name)

    def list(self, res, namespace=None, label_selector=None, field_selector=None):
        items, rv = self.store.list(res.key, namespace if res.namespaced else None)
        ls = selectors.parse_labels(label_selector) if isinstance(label_selector, str) else label_selector
        fs = selectors.parse_fields(field_selector, res.key) if isinstance(field_selector, str) else field_selector
        out = [o for o in items if (ls is None or ls.matches(o.get("metadata", {}).get("labels")))
               and (fs is None or fs.matches(o))]
        return out, rv

    # ---- create -----------------------------------------------------

    def create(self, res, obj, namespace=None, dry_run=False, validation="Strict"):
        """Returns (object, warnings)."""
        if not isinstance(obj, dict):
            raise status.bad_request("Object 'Kind' is missing in '%s'" % obj)
        obj = copy.deepcopy(obj)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            ns = namespace or md.get("namespace") or "default"
            if md.get("namespace") and md["namespace"] != ns:
                raise status.bad_request("the namespace of the provided object does not match the namespace "
                                         "sent on the request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        if not md.get("name") and md.get("generateName"):
            # names.SimpleNameGenerator: the base cut to 58 characters, then 5 random ones.
            md["name"] = md["generateName"][:58] + random_suffix()
        admission.check_name(res, md.get("name"))
        warnings = admission.strict_check(res, obj, validation)
        for k in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation", "selfLink", "managedFields"):
            md.pop(k, None)
        if res.custom and "status" in res.subresources:
            obj.pop("status", None)
        key, ns = self._key_ns(res, md.get("namespace"))
        if self.store.get(key, ns, md["name"]) is not None:
            raise status.already_exists(res.plural, res.group, md["name"])
        md["uid"] = str(uuid.uuid4())
        admission.on_create(self, res, obj)
        if dry_run:
            md["creationTimestamp"] = clock.rfc3339()
            return obj, warnings
        with self.store.lock:
            if self.store.get(key, ns, md["name"]) is not None:
                raise status.already_exists(res.plural, res.group, md["name"])
            made = self.store.create(key, obj)
        if res.kind == "Pod" and res.group == "":
            clock.stamp("pod-created %s/%s" % (ns, md["name"]))
        return made, warnings

    # ---- update -----------------------------------------------------

    def update(self, res, new, namespace=None, subresource=None, dry_run=False, validation="Strict",
               check_rv=True):
        if not isinstance(new, dict):
            raise status.bad_request("Object 'Kind' is missing")
        md = new.setdefault("metadata", {})
        name = md.get("name")
        key, ns = self._key_ns(res, namespace or md.get("namespace"))
        with self.store.lock:
            old = self.store.get(key, ns, name)
            if old is None:
                raise status.not_found(res.plural, res.group, name)
            want_rv = md.get("resourceVersion")
            if check_rv and want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise status.modified(res.plural, res.group, name)
            warnings = admission.strict_check(res, new, validation) if subresource is None else []
            merged = self._merge(res, old, copy.deepcopy(new), subresource)
            if subresource is None:
                admission.on_update(self, res, old, merged)
            if dry_run:
                return merged, warnings
            return self._store_update(res, key, ns, old, merged), warnings

    def _merge(self, res, old, new, subresource):
        """The object the store keeps: what the request may change, laid
        over what the server owns."""
        if subresource == "status":
            out = copy.deepcopy(old)
            out["status"] = new.get("status", {})
            return out
        md, omd = new["metadata"], old["metadata"]
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace",
                  "generation"):
            if k in omd:
                md[k] = omd[k]
            else:
                md.pop(k, None)
        new["apiVersion"], new["kind"] = res.api_version, res.kind
        if "status" in res.subresources:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if "generation" in omd and _spec(new) != _spec(old):
            md["generation"] = omd["generation"] + 1
        return new

    def _store_update(self, res, key, ns, old, obj):
        # The generic store's ShouldDeleteDuringUpdate: the last finalizer
        # of an object marked for deletion (grace 0) is gone.
        omd = old["metadata"]
        if (omd.get("deletionTimestamp") and omd.get("deletionGracePeriodSeconds") == 0
                and not obj["metadata"].get("finalizers")):
            self.store.update(key, obj)
            return self.store.remove(key, ns, obj["metadata"]["name"])
        return self.store.update(key, obj)

    def update_status(self, res, obj):
        return self.update(res, obj, subresource="status", check_rv=False)[0]

    # ---- patch ------------------------------------------------------

    def patch(self, res, namespace, name, ptype, body, subresource=None, dry_run=False, validation="Strict",
              field_manager=None, force=False):
        key, ns = self._key_ns(res, namespace)
        with self.store.lock:
            old = self.store.get(key, ns, name)
            if ptype == "apply":
                if not field_manager:
                    raise status.invalid("PatchOptions", "meta.k8s.io", "", [
                        ("fieldManager", "FieldValueRequired", "Required value: is required for apply patch")])
                if old is None:
                    body = copy.deepcopy(body)
                    body.setdefault("metadata", {})["name"] = name
                    return self.create(res, body, namespace, dry_run, validation)
            if old is None:
                raise status.not_found(res.plural, res.group, name)
            if ptype == "json":
                new = patch.json_patch(old, body)
            elif ptype == "merge":
                new = patch.merge_patch(old, body)
            elif ptype in ("strategic", "apply"):
                if ptype == "strategic" and res.custom:
                    raise status.unsupported_media(["application/json-patch+json", "application/merge-patch+json",
                                                    "application/apply-patch+yaml"])
                new = patch.merge_patch(old, body) if res.custom else patch.strategic_merge(old, body)
            else:
                raise status.unsupported_media(["application/json-patch+json", "application/merge-patch+json",
                                                "application/apply-patch+yaml",
                                                "application/strategic-merge-patch+json"])
            if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
                raise status.bad_request("the patch produced an object without metadata")
            new["metadata"]["name"] = name
            return self.update(res, new, namespace, subresource, dry_run, validation)

    # ---- delete -----------------------------------------------------

    def delete(self, res, namespace, name, options=None, dry_run=False):
        """Returns (object or None, gone): the object as it now is, and
        whether it left the store."""
        opts = options or {}
        key, ns = self._key_ns(res, namespace)
        with self.store.lock:
            obj = self.store.get(key, ns, name)
            if obj is None:
                raise status.not_found(res.plural, res.group, name)
            pre = opts.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != obj["metadata"]["uid"]:
                raise status.conflict(res.plural, res.group, name,
                                      "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                                      % (pre["uid"], obj["metadata"]["uid"]))
            if pre.get("resourceVersion") and pre["resourceVersion"] != obj["metadata"]["resourceVersion"]:
                raise status.conflict(res.plural, res.group, name,
                                      "Precondition failed: ResourceVersion in precondition: %s, "
                                      "ResourceVersion in object meta: %s"
                                      % (pre["resourceVersion"], obj["metadata"]["resourceVersion"]))
            if dry_run:
                return obj, False
            md = obj["metadata"]
            if res.kind == "Pod" and not res.group:
                grace = self._pod_grace(obj, opts)
                if grace > 0 and not md.get("deletionTimestamp"):
                    md["deletionTimestamp"] = clock.rfc3339(clock.utcnow() + datetime.timedelta(seconds=grace))
                    md["deletionGracePeriodSeconds"] = grace
                    return self.store.update(key, obj), False
                if grace > 0:
                    return obj, False
                # Grace 0: gone at once, unless finalizers (its own, or the
                # propagation policy's below) keep it (store.go Delete).
            if res.kind == "Namespace" and not res.group:
                if not md.get("deletionTimestamp"):
                    md["deletionTimestamp"] = clock.rfc3339()
                    obj.setdefault("status", {})["phase"] = "Terminating"
                    return self.store.update(key, obj), False
                return obj, False
            policy = opts.get("propagationPolicy") or ("Orphan" if opts.get("orphanDependents") else "Background")
            fins = list(md.get("finalizers") or [])
            if not md.get("deletionTimestamp"):
                if policy == "Foreground" and "foregroundDeletion" not in fins:
                    fins.append("foregroundDeletion")
                elif policy == "Orphan" and "orphan" not in fins:
                    fins.append("orphan")
            if fins:
                if md.get("deletionTimestamp") and md.get("finalizers") == fins and \
                        md.get("deletionGracePeriodSeconds") == 0:
                    return obj, False
                md["finalizers"] = fins
                md.setdefault("deletionTimestamp", clock.rfc3339())
                md["deletionGracePeriodSeconds"] = 0
                return self.store.update(key, obj), False
            return self.store.remove(key, ns, name), True

    def _pod_grace(self, pod, opts):
        """The pod strategy's CheckGracefulDelete: 0 for a pod that never
        ran on a node or has finished; else the option, else the spec's."""
        if not pod.get("spec", {}).get("nodeName"):
            return 0
        if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        g = opts.get("gracePeriodSeconds")
        if g is None:
            g = pod["spec"].get("terminationGracePeriodSeconds", 30)
        return max(int(g), 0)

    # ---- events -----------------------------------------------------

    def record_event(self, involved, etype, reason, message, component, host=None):
        """An Event about INVOLVED, through client-go's EventCorrelator
        (tools/record/events_cache.go): the spam filter (a token bucket of
        25 per source and object, one more every 5 minutes), the aggregator
        (from the 10th distinct message of the same source, object, type
        and reason within 10 minutes, one event "(combined from similar
        events): MESSAGE"), and the logger (the same message again raises
        its event's count)."""
        ns = involved["metadata"].get("namespace") or "default"
        res = self.registry.by_kind("v1", "Event")
        ref = {"kind": involved.get("kind"), "namespace": involved["metadata"].get("namespace", ""),
               "name": involved["metadata"]["name"], "uid": involved["metadata"].get("uid"),
               "apiVersion": involved.get("apiVersion"),
               "resourceVersion": involved["metadata"].get("resourceVersion")}
        ref = {k: v for k, v in ref.items() if v}
        source = {"component": component}
        if host:
            source["host"] = host
        obj_key = (component, host, ref.get("kind"), ref.get("namespace"), ref["name"], ref.get("uid"))
        message = self.correlator.correlate(obj_key, etype, reason, message)
        if message is None:
            return None
        now = clock.rfc3339()
        name = self.correlator.event_name(obj_key, etype, reason, message, ref["name"])
        with self.event_lock:
            ev = self.find(res, ns, name)
            if ev is not None:
                ev["count"] = ev.get("count", 1) + 1
                ev["lastTimestamp"] = now
                ev["message"] = message
                return self.update(res, ev, ns, check_rv=False)[0]
            ev = {"metadata": {"name": name, "namespace": ns}, "involvedObject": ref, "reason": reason,
                  "message": message, "source": source, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                  "type": etype, "eventTime": None, "reportingComponent": component,
                  "reportingInstance": host or ""}
            return self.create(res, ev, ns)[0]


class Correlator:
    """client-go's EventCorrelator state, for every source in the process."""

    BURST, REFILL = 25, 300.0
    MAX_SIMILAR, INTERVAL = 10, 600.0

    def __init__(self):
        self.buckets = {}      # object key -> (tokens, last refill)
        self.similar = {}      # (object key, type, reason) -> {message: first seen}
        self.names = {}        # (object key, type, reason, message) -> event name

    def correlate(self, obj_key, etype, reason, message):
        now = clock.now()
        tokens, last = self.buckets.get(obj_key, (self.BURST, now))
        tokens = min(self.BURST, tokens + (now - last) / self.REFILL)
        if tokens < 1:
            self.buckets[obj_key] = (tokens, now)
            return None
        self.buckets[obj_key] = (tokens - 1, now)
        seen = self.similar.setdefault((obj_key, etype, reason), {})
        for m, t in list(seen.items()):
            if now - t > self.INTERVAL:
                del seen[m]
        seen.setdefault(message, now)
        if len(seen) >= self.MAX_SIMILAR:
            return "(combined from similar events): " + message
        return message

    def event_name(self, obj_key, etype, reason, message, obj_name):
        key = (obj_key, etype, reason,
               "(combined)" if message.startswith("(combined from similar events): ") else message)
        if key not in self.names:
            self.names[key] = "%s.%x" % (obj_name, random.getrandbits(64))
        return self.names[key]


def _spec(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}

