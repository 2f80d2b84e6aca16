"""k3s's deploy controller (pkg/deploy/controller.go): the manifests in
server/manifests become objects.

- Every *.yaml, *.yml and *.json file (dot-files skipped) is read as a
  stream of YAML documents and each object applied (created, or updated
  in place), once k3s's CRDs are registered (the controller starts after
  them). An Addon named after the file (up to its first period) is made
  first, with the file's path; once every object applied, it gets the
  file's checksum and the kinds applied (annotation
  addon.k3s.cattle.io/gvks). The first pass applies every file; later
  passes, every 15 s (the knob SIM_K3S_DEPLOY_PERIOD), apply a file whose
  modification time changed and whose checksum is not its Addon's.
- A file that goes away uninstalls nothing: the controller has no path
  for a vanished file, so its objects and their Addon stay.
- A file the server's --disable names (its name less its extension) is
  deleted on every pass: the objects its Addon owned, then the file, then
  the Addon.
- k3s stages its packaged manifests there at start (pkg/deploy/stage.go),
  less those --disable names; the stand-in stages runtimes.yaml, the
  RuntimeClasses k3s always creates (issue k3s#8700: whatever runtimes
  exist). Its other packaged components (CoreDNS, local-path,
  metrics-server) are not simulated.
"""

import hashlib
import os

import yaml

from .. import clock, config, logs, status

RUNTIMES = ["nvidia", "nvidia-experimental", "crun", "lunatic", "slight", "spin", "wws", "wasmedge", "wasmer",
            "wasmtime"]


GVK_ANNOTATION = "addon.k3s.cattle.io/gvks"
OWNER_GVK = "k3s.cattle.io/v1, Kind=Addon"


def stage_packaged(skips=()):
    if "runtimes" in skips or "runtimes.yaml" in skips:
        return
    docs = ["apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: %s\nhandler: %s\n" % (h, h)
            for h in RUNTIMES]
    path = os.path.join(config.MANIFESTS_DIR, "runtimes.yaml")
    os.makedirs(config.MANIFESTS_DIR, exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("---\n".join(docs))
    os.replace(path + ".tmp", path)


def _basename(name):
    """An Addon's name: the file name up to its first period."""
    return name.split(".", 1)[0]


def _gvk(obj):
    """wrangler's GroupVersionKind.String(): "group/version, Kind=kind"."""
    api_version = obj.get("apiVersion", "")
    return "%s, Kind=%s" % (api_version if "/" in api_version else "/" + api_version, obj.get("kind", ""))


def _objects(data):
    docs = [d for d in yaml.safe_load_all(data) if d]
    return [o for d in docs for o in (d.get("items", []) if d.get("kind", "").endswith("List") else [d])
            if isinstance(o, dict) and o.get("kind")]


class Deploy:
    def __init__(self, api, k3s_types, disables=()):
        self.api = api
        self.types = k3s_types
        self.disables = set(disables)
        self.mtimes = {}      # path -> modification time applied
        self.next = None      # when to list the directory again; None: not started

    def start(self):
        pass

    def tick(self):
        if not self.types.registered():
            return
        force = self.next is None
        if not force and clock.now() < self.next:
            return
        self.next = clock.now() + config.DEPLOY_PERIOD
        try:
            names = sorted(os.listdir(config.MANIFESTS_DIR))
        except OSError:
            return
        for name in names:
            if name.startswith(".") or not name.endswith((".yaml", ".yml", ".json")):
                continue
            path = os.path.join(config.MANIFESTS_DIR, name)
            if os.path.splitext(name)[0] in self.disables:
                self._delete(path, _basename(name))
                continue
            try:
                mtime = os.stat(path).st_mtime
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if not force and self.mtimes.get(path) == mtime:
                continue
            if self._deploy(path, _basename(name), data, not force):
                self.mtimes[path] = mtime

    def _deploy(self, path, addon_name, data, compare):
        res = self.api.registry.by_kind("k3s.cattle.io/v1", "Addon")
        addon = self.api.find(res, "kube-system", addon_name)
        try:
            if addon is None:  # first, for the events of what follows
                addon, _ = self.api.create(res, {"metadata": {"name": addon_name, "namespace": "kube-system"},
                                              "spec": {"source": path}}, "kube-system")
        except status.ApiError as e:
            logs.error("Failed to process config: failed to process %s: %s" % (path, e.message))
            return False
        checksum = hashlib.sha256(data).hexdigest()
        if compare and addon.get("spec", {}).get("checksum") == checksum:
            return True
        try:
            objs = _objects(data)
        except yaml.YAMLError as e:
            logs.error("Failed to process config: failed to process %s: %s" % (path, e))
            return False
        ok = True
        for obj in objs:
            ok = self._apply(path, addon_name, obj) and ok
        if not ok:
            return False
        addon = dict(addon, spec={"source": path, "checksum": checksum})
        addon["metadata"] = dict(addon["metadata"], annotations=dict(
            addon["metadata"].get("annotations") or {}, **{GVK_ANNOTATION: ";".join(sorted({_gvk(o) for o in objs}))}))
        try:
            self.api.update(res, addon, "kube-system", check_rv=False)
        except status.ApiError as e:
            logs.error("Failed to process config: failed to process %s: %s" % (path, e.message))
            return False
        return True

    def _delete(self, path, addon_name):
        """A disabled file: the objects its Addon owned (the kinds the
        Addon recorded and the file's) go, then the file, then the Addon."""
        res = self.api.registry.by_kind("k3s.cattle.io/v1", "Addon")
        addon = self.api.find(res, "kube-system", addon_name) or {}
        recorded = ((addon.get("metadata") or {}).get("annotations") or {}).get(GVK_ANNOTATION, "")
        gvks = {g for g in recorded.split(";") if ", Kind=" in g}
        try:
            with open(path, "rb") as f:
                gvks |= {_gvk(o) for o in _objects(f.read())}
        except (OSError, yaml.YAMLError):
            pass
        for gvk in sorted(gvks):
            group_version, _, kind = gvk.partition(", Kind=")
            kres = self.api.registry.by_kind(group_version.lstrip("/"), kind)
            for o in self.api.list(kres)[0] if kres else []:
                ann = o.get("metadata", {}).get("annotations") or {}
                if ann.get("objectset.rio.cattle.io/owner-name") == addon_name and \
                        ann.get("objectset.rio.cattle.io/owner-gvk") == OWNER_GVK:
                    try:
                        self.api.delete(kres, o["metadata"].get("namespace"), o["metadata"]["name"])
                    except status.ApiError:
                        pass
        try:
            os.remove(path)
        except OSError:
            pass
        if addon:
            try:
                self.api.delete(res, "kube-system", addon_name)
            except status.ApiError:
                pass

    def _apply(self, path, addon_name, obj):
        if not isinstance(obj, dict) or not obj.get("kind"):
            return True
        try:
            res = self.api.resource(obj.get("apiVersion", ""), obj["kind"])
        except status.ApiError:
            logs.error('Failed to process config: failed to process %s: no matches for kind "%s" in version "%s"'
                       % (path, obj["kind"], obj.get("apiVersion", "")))
            return False
        md = obj.setdefault("metadata", {})
        ns = md.get("namespace") or ("kube-system" if res.namespaced else None)
        # wrangler's apply marks what it owns (objectset annotations and label).
        md.setdefault("labels", {})["objectset.rio.cattle.io/hash"] = hashlib.sha1(
            ("deploy/" + addon_name).encode()).hexdigest()
        md.setdefault("annotations", {}).update({
            "objectset.rio.cattle.io/id": "", "objectset.rio.cattle.io/owner-gvk": OWNER_GVK,
            "objectset.rio.cattle.io/owner-name": addon_name, "objectset.rio.cattle.io/owner-namespace": "kube-system"})
        try:
            cur = self.api.find(res, ns, md.get("name"))
            if cur is None:
                self.api.create(res, obj, ns, validation="Ignore")
            else:
                new = dict(obj)
                new["metadata"] = dict(cur["metadata"], labels=dict(cur["metadata"].get("labels") or {},
                                                                       **md["labels"]),
                                       annotations=dict(cur["metadata"].get("annotations") or {},
                                                        **md["annotations"]))
                if "status" in cur:
                    new["status"] = cur["status"]
                if _content(new) != _content(cur):
                    self.api.update(res, new, ns, check_rv=False, validation="Ignore")
        except status.ApiError as e:
            logs.error("Failed to process config: failed to process %s: %s" % (path, e.message))
            return False
        return True


def _content(obj):
    md = {k: v for k, v in obj.get("metadata", {}).items() if k in ("labels", "annotations")}
    return dict({k: v for k, v in obj.items() if k not in ("metadata", "status")}, metadata=md)
