"""kube-controller-manager's housekeepers: the garbage collector, the
namespace controller and the service-account controller.

- Garbage collector (pkg/controller/garbagecollector): a dependent whose
  owner (by UID) is gone is deleted in the background; an owner with the
  foregroundDeletion finalizer has its dependents deleted, and the
  finalizer removed once those that block it (blockOwnerDeletion, such as
  a DaemonSet's or a Job's pods; not a template's claims since 1.35) are
  gone (garbagecollector.go processDeletingDependentsItem); with orphan,
  its dependents lose the owner reference, then the finalizer goes.
- Namespace controller (pkg/controller/namespace): a Terminating
  namespace's objects are deleted, then its "kubernetes" finalizer is
  removed and the namespace goes.
- Service-account controller: every namespace has its "default" account.
"""

from .. import status


class Housekeeping:
    def __init__(self, api):
        self.api = api

    def start(self):
        pass

    def _all(self):
        with self.api.store.lock:
            return [(key, obj) for key, objs in self.api.store.objects.items() for obj in objs.values()]

    def _res(self, key):
        for r in self.api.registry.all():
            if r.key == key:
                return r
        return None

    def _delete(self, key, obj, opts=None):
        res = self._res(key)
        if res is None:
            return
        try:
            self.api.delete(res, obj["metadata"].get("namespace"), obj["metadata"]["name"], opts)
        except status.ApiError:
            pass

    def tick(self):
        everything = self._all()
        by_uid = {o["metadata"].get("uid"): (k, o) for k, o in everything}
        dependents = {}
        for key, obj in everything:
            for ref in obj["metadata"].get("ownerReferences") or []:
                dependents.setdefault(ref.get("uid"), []).append((key, obj))
        for key, obj in everything:
            md = obj["metadata"]
            refs = md.get("ownerReferences") or []
            if refs and not md.get("deletionTimestamp") and all(r.get("uid") not in by_uid for r in refs):
                self._delete(key, obj, {"propagationPolicy": "Background"})
            fins = md.get("finalizers") or []
            if md.get("deletionTimestamp") and ("foregroundDeletion" in fins or "orphan" in fins):
                self._finish_owner(key, obj, dependents.get(md.get("uid"), []))
        self._namespaces(everything)

    def _finish_owner(self, key, owner, deps):
        fins = owner["metadata"]["finalizers"]
        if "orphan" in fins:
            for dkey, d in deps:
                d["metadata"]["ownerReferences"] = [r for r in d["metadata"].get("ownerReferences") or []
                                                    if r.get("uid") != owner["metadata"]["uid"]]
                self._update(dkey, d)
            fins.remove("orphan")
        else:
            for dkey, d in deps:
                if not d["metadata"].get("deletionTimestamp"):
                    self._delete(dkey, d, {"propagationPolicy": "Foreground"})
            # processDeletingDependentsItem: the owner waits only for the
            # dependents that block it (blockOwnerDeletion on their reference).
            uid = owner["metadata"]["uid"]
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion")
                   for _, d in deps for r in d["metadata"].get("ownerReferences") or []):
                return
            fins.remove("foregroundDeletion")
        self._update(key, owner)

    def _update(self, key, obj):
        res = self._res(key)
        try:
            self.api.update(res, obj, obj["metadata"].get("namespace"), check_rv=False, validation="Ignore")
        except status.ApiError:
            pass

    def _namespaces(self, everything):
        ns_res = self.api.registry.by_kind("v1", "Namespace")
        sa_res = self.api.registry.by_kind("v1", "ServiceAccount")
        accounts = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for k, o in everything
                    if k == sa_res.key}
        for key, ns in everything:
            if key != ns_res.key:
                continue
            name = ns["metadata"]["name"]
            if not ns["metadata"].get("deletionTimestamp"):
                if (name, "default") not in accounts:
                    try:
                        self.api.create(sa_res, {"metadata": {"name": "default"}}, name)
                    except status.ApiError:
                        pass
                continue
            inside = [(k, o) for k, o in everything if k != ns_res.key and o["metadata"].get("namespace") == name]
            for k, o in inside:
                if not o["metadata"].get("deletionTimestamp"):
                    self._delete(k, o)
            if inside:
                continue
            ns.setdefault("spec", {})["finalizers"] = [f for f in ns["spec"].get("finalizers") or []
                                                        if f != "kubernetes"]
            if not ns["spec"]["finalizers"] and not ns["metadata"].get("finalizers"):
                self.api.store.remove(ns_res.key, "", name)
            else:
                self._update(key, ns)
