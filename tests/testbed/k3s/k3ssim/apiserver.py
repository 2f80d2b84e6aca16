"""The HTTP surface of port 6443: k3s's supervisor routes in front of the
Kubernetes API (k3s pkg/server/handlers/router.go), then the API's own
paths (k8s.io/apiserver/pkg/endpoints).

- /ping, /cacerts and /static/ answer anyone; /v1-k3s/ is the
  supervisor's, for agents with the node token (supervisor.py);
  everything else needs a client certificate of the client CA (401
  otherwise);
- until the API server is ready every API path is 503 "apiserver not
  ready" with Connection: close (k3s's APIServer handler while
  control.Runtime.APIServer is nil);
- /version, /readyz, /livez, /healthz; discovery and /openapi/v3
  (discovery.py); the resources' verbs (api.py), watches (watch.py), pod
  logs (podlogs.py) and server-side printing (tables.py).
"""

import json
import os
import threading

from . import api as apimod
from . import config, discovery, kubeletserver, podexec, podlogs, selectors, status, tables, watch

PATCH_TYPES = {"application/json-patch+json": "json", "application/merge-patch+json": "merge",
               "application/strategic-merge-patch+json": "strategic", "application/apply-patch+yaml": "apply"}
TABLE_CTYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
HEALTH_CHECKS = ["ping", "log", "etcd", "informer-sync", "poststarthook/start-apiserver-admission-initializer",
                 "poststarthook/generic-apiserver-start-informers", "poststarthook/crd-informer-synced",
                 "poststarthook/bootstrap-controller", "poststarthook/apiservice-registration-controller"]


def _version_info():
    v = config.VERSION
    core = v.lstrip("v").split("+")[0].split(".")
    return {"major": core[0], "minor": core[1] if len(core) > 1 else "0", "emulationMajor": core[0],
            "emulationMinor": core[1] if len(core) > 1 else "0", "minCompatibilityMajor": core[0],
            "minCompatibilityMinor": str(max(int(core[1]) - 1, 0)) if len(core) > 1 else "0",
            "gitVersion": v, "gitCommit": "0" * 40, "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.5", "compiler": "gc",
            "platform": "linux/amd64"}


class ApiServer:
    def __init__(self, api, pki, address, kubelet_of, supervisor=None):
        self.api = api
        self.pki = pki
        self.supervisor = supervisor
        self.address = address
        self.kubelet_of = kubelet_of
        self.ready = threading.Event()
        self._flaky_lock = threading.Lock()

    # ---- entry --------------------------------------------------------

    def __call__(self, req):
        path = req.path
        if path == "/ping":
            return req.send_text(200, "pong", "text/plain")
        if path == "/cacerts":
            with open(self.pki.server_ca[0], encoding="ascii") as f:
                return req.send_text(200, f.read(), "text/plain")
        if path.startswith("/static/"):
            return self._static(req, path[len("/static/"):])
        if path.startswith("/v1-k3s/") and self.supervisor is not None:
            if not self.ready.is_set():
                raise status.unavailable("runtime core not ready")
            return self.supervisor.handle(req, path)
        if req.user is None:
            raise status.unauthorized()
        if not self.ready.is_set():
            raise status.unavailable("apiserver not ready")
        self._flaky()
        if path == "/version":
            return req.send_json(200, _version_info())
        if path in ("/readyz", "/livez", "/healthz"):
            return self._health(req, path)
        if path in ("/api", "/apis"):
            return self._discovery_root(req, path == "/api")
        if path.startswith("/openapi/v3"):
            return self._openapi(req, path)
        if path == "/openapi/v2":
            # SIMULATION: an empty OpenAPI v2 Document (protobuf: no bytes).
            # A client finds no schema in it, so it validates nothing itself
            # and computes patches from its compiled-in types, as it does for
            # a kind that a real server's document lacks.
            return req.send_text(200, "", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
        parts = [p for p in path.split("/") if p]
        if parts and parts[0] == "api" and len(parts) >= 2:
            return self._group(req, "", parts[1], parts[2:])
        if parts and parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                doc = discovery.api_group(self.api.registry, parts[1])
                if doc is None:
                    raise status.not_found_path()
                return req.send_json(200, doc)
            return self._group(req, parts[1], parts[2], parts[3:])
        raise status.not_found_path()

    def _flaky(self):
        """SIM_API_FLAKY=N: the next N requests fail as while k3s restarts
        (its apiserver not ready yet)."""
        with self._flaky_lock:
            n = config.switch("SIM_API_FLAKY")
            if not n or not n.isdigit() or int(n) <= 0:
                return
            os.makedirs(config.SWITCH_DIR, exist_ok=True)
            with open(os.path.join(config.SWITCH_DIR, "SIM_API_FLAKY"), "w", encoding="ascii") as f:
                f.write(str(int(n) - 1))
        raise status.unavailable("apiserver not ready")

    def _static(self, req, rel):
        path = os.path.normpath(os.path.join(config.STATIC_DIR, rel))
        if not path.startswith(config.STATIC_DIR + os.sep) or not os.path.isfile(path):
            return req.send_text(404, "404 page not found\n")
        with open(path, "rb") as f:
            data = f.read()
        req._head(200, "application/octet-stream", len(data))
        req.h.wfile.write(data)

    def _health(self, req, path):
        if req.flag("verbose") or "verbose" in req.query:
            lines = ["[+]%s ok" % c for c in HEALTH_CHECKS]
            return req.send_text(200, "\n".join(lines) + "\n%s check passed\n" % path.strip("/"))
        return req.send_text(200, "ok")

    # ---- discovery ----------------------------------------------------

    def _discovery_root(self, req, legacy):
        reg = self.api.registry
        if req.accepts("as=APIGroupDiscoveryList") and "v=v2;" in (req.headers.get("Accept") or "") + ";":
            return req.send_json(200, discovery.aggregated(reg, legacy), discovery.AGGREGATED)
        if legacy:
            return req.send_json(200, discovery.legacy_versions(self.address))
        return req.send_json(200, discovery.group_list(reg))

    def _openapi(self, req, path):
        reg = self.api.registry
        rest = path[len("/openapi/v3"):].strip("/")
        if not rest:
            return req.send_json(200, discovery.openapi_root(reg))
        parts = rest.split("/")
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.openapi_doc(reg, "", parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            doc = discovery.openapi_doc(reg, parts[1], parts[2])
        else:
            doc = None
        if doc is None:
            raise status.not_found_path()
        return req.send_json(200, doc)

    # ---- resources ----------------------------------------------------

    def _group(self, req, group, version, rest):
        reg = self.api.registry
        if not rest:
            doc = discovery.resource_list(reg, group, version)
            if doc is None:
                raise status.not_found_path()
            return req.send_json(200, doc)
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        res = reg.by_path(group, version, rest[0])
        if res is None or len(rest) > 3 or (namespace is not None and not res.namespaced):
            raise status.not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub and sub not in res.subresources:
            raise status.not_found_path()
        if res.namespaced and name and namespace is None:
            raise status.not_found_path()
        m = req.method
        if sub == "log":
            if m != "GET":
                raise status.method_not_supported(res.plural + "/log", group, m.lower())
            return podlogs.serve(self.api, req, namespace, name, self.kubelet_of, self._log_proxy)
        if sub == "exec":
            if m not in ("GET", "POST"):
                raise status.method_not_supported(res.plural + "/exec", group, m.lower())
            return podexec.serve(self.api, req, namespace, name, self.kubelet_of, self._exec_proxy)
        if m in ("GET", "HEAD"):
            if name:
                return self._get(req, res, namespace, name)
            return self._list(req, res, namespace)
        if m == "POST":
            if sub == "binding":
                return self._bind(req, res, namespace, name)
            if sub == "eviction":
                return self._evict(req, res, namespace, name)
            if name:
                raise status.method_not_supported(res.plural, group, "create")
            return self._create(req, res, namespace)
        if m == "PUT" and name:
            return self._update(req, res, namespace, name, sub)
        if m == "PATCH" and name:
            return self._patch(req, res, namespace, name, sub)
        if m == "DELETE":
            if name:
                return self._delete(req, res, namespace, name)
            return self._delete_collection(req, res, namespace)
        raise status.method_not_supported(res.plural, group, m.lower())

    def _pod_node(self, pod):
        node = self.api.find(self.api.registry.by_kind("v1", "Node"), None, pod["spec"]["nodeName"])
        if node is None:
            raise status.not_found("nodes", "", pod["spec"]["nodeName"])
        return node

    def _log_proxy(self, req, pod, container):
        """A pod of another node: its kubelet serves the log."""
        cert, key = self.pki.apiserver_kubelet_client()
        return kubeletserver.proxy(req, self._pod_node(pod), pod, container, cert, key, self.pki.server_ca[0])

    def _exec_proxy(self, req, pod, container):
        """A pod of another node: the upgrade and its bytes go to its kubelet."""
        cert, key = self.pki.apiserver_kubelet_client()
        host, port = kubeletserver.address(self._pod_node(pod))
        path = "/exec/%s/%s/%s?%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"], container,
                                      podexec.query(req))
        return podexec.relay(req, host, port, path, kubeletserver.client_context(cert, key, self.pki.server_ca[0]))

    def _selectors(self, req, res):
        return (selectors.parse_labels(req.param("labelSelector")),
                selectors.parse_fields(req.param("fieldSelector"), res.key))

    def _get(self, req, res, namespace, name):
        obj = self.api.get(res, namespace, name)
        if req.accepts("as=Table"):
            return req.send_json(200, tables.table(res, [obj], obj["metadata"]["resourceVersion"],
                                                   req.param("includeObject", "Metadata")), TABLE_CTYPE)
        req.send_json(200, obj)

    def _list(self, req, res, namespace):
        labels, fields = self._selectors(req, res)
        if req.flag("watch"):
            return watch.serve(self.api, req, res, namespace, labels, fields)
        items, rv = self.api.list(res, namespace, labels, fields)
        if req.accepts("as=Table"):
            return req.send_json(200, tables.table(res, items, rv, req.param("includeObject", "Metadata")),
                                 TABLE_CTYPE)
        req.send_json(200, {"kind": res.list_kind, "apiVersion": res.api_version,
                            "metadata": {"resourceVersion": rv},
                            "items": [apimod.strip_list_item(res, o) for o in items]})

    def _validation(self, req):
        return req.param("fieldValidation") or "Warn"

    def _warn(self, warnings):
        return {"Warning": ", ".join('299 - "%s"' % w.replace('"', '\\"') for w in warnings)} if warnings else None

    def _create(self, req, res, namespace):
        obj = _body(req)
        out, warnings = self.api.create(res, obj, namespace, req.param("dryRun") == "All", self._validation(req))
        self.api.store.flush()
        req.send_json(201, out, extra=self._warn(warnings))

    def _update(self, req, res, namespace, name, sub):
        obj = _body(req)
        if not isinstance(obj, dict):
            raise status.bad_request("Object 'Kind' is missing")
        md = obj.setdefault("metadata", {})
        if md.get("name") and md["name"] != name:
            raise status.bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                                     % (md["name"], name))
        md["name"] = name
        if sub == "finalize":
            sub = None
        out, warnings = self.api.update(res, obj, namespace, sub, req.param("dryRun") == "All",
                                        self._validation(req))
        self.api.store.flush()
        req.send_json(200, out, extra=self._warn(warnings))

    def _patch(self, req, res, namespace, name, sub):
        ctype = (req.headers.get("Content-Type") or "").split(";")[0].strip()
        ptype = PATCH_TYPES.get(ctype)
        if ptype is None:
            raise status.unsupported_media(list(PATCH_TYPES))
        body = _body(req, yaml_ok=ptype == "apply")
        result = self.api.patch(res, namespace, name, ptype, body, sub, req.param("dryRun") == "All",
                                self._validation(req), req.param("fieldManager"), req.flag("force"))
        out, warnings = result
        self.api.store.flush()
        req.send_json(200, out, extra=self._warn(warnings))

    def _delete_options(self, req):
        opts = {}
        raw = req.body()
        if raw:
            try:
                opts = json.loads(raw.decode("utf-8")) or {}
            except ValueError as e:
                raise status.bad_request("couldn't get version/kind; json parse error: %s" % e)
        for k in ("gracePeriodSeconds", "propagationPolicy"):
            if req.param(k) is not None and k not in opts:
                opts[k] = int(req.param(k)) if k == "gracePeriodSeconds" else req.param(k)
        return opts

    def _deleted_body(self, res, obj, gone):
        if not gone or res.kind in ("Pod",) or res.custom:
            return obj
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": {"name": obj["metadata"]["name"], "group": res.group, "kind": res.plural,
                            "uid": obj["metadata"]["uid"]}}

    def _delete(self, req, res, namespace, name):
        obj, gone = self.api.delete(res, namespace, name, self._delete_options(req), req.param("dryRun") == "All")
        self.api.store.flush()
        req.send_json(200, self._deleted_body(res, obj, gone))

    def _delete_collection(self, req, res, namespace):
        labels, fields = self._selectors(req, res)
        opts = self._delete_options(req)
        items, rv = self.api.list(res, namespace, labels, fields)
        out = []
        for o in items:
            try:
                obj, _ = self.api.delete(res, o["metadata"].get("namespace"), o["metadata"]["name"], opts)
                if obj:
                    out.append(apimod.strip_list_item(res, obj))
            except status.ApiError as e:
                if e.code != 404:
                    raise
        self.api.store.flush()
        req.send_json(200, {"kind": res.list_kind, "apiVersion": res.api_version,
                            "metadata": {"resourceVersion": str(self.api.store.current_rv())}, "items": out})

    def _bind(self, req, res, namespace, name):
        binding = _body(req) or {}
        target = (binding.get("target") or {}).get("name")
        pod = self.api.get(res, namespace, name)
        if pod["spec"].get("nodeName"):
            raise status.conflict("pods", "", name, 'pod %s is already assigned to node "%s"'
                                  % (name, pod["spec"]["nodeName"]))
        pod["spec"]["nodeName"] = target
        self.api.store.update(res.key, pod)
        self.api.store.flush()
        req.send_json(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})

    def _evict(self, req, res, namespace, name):
        ev = _body(req) or {}
        self.api.delete(res, namespace, name, ev.get("deleteOptions"))
        self.api.store.flush()
        req.send_json(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})


def _body(req, yaml_ok=False):
    raw = req.body()
    if not raw:
        return None
    if "protobuf" in (req.headers.get("Content-Type") or ""):
        # SIMULATION: no protobuf decoding (kubectl's typed clients send it,
        # as `kubectl create namespace`; apply, create -f, patch, label and
        # delete send JSON).
        raise status.unsupported_media(["application/json", "application/yaml"])
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        if yaml_ok:
            import yaml
            try:
                return yaml.safe_load(raw)
            except yaml.YAMLError as ye:
                raise status.bad_request("error decoding YAML: %s" % ye)
        raise status.bad_request("couldn't get version/kind; json parse error: %s" % e)
