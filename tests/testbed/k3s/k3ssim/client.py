"""A client of the API over HTTPS, for a node that runs apart from the
server (`k3s agent`): the same verbs as api.Api, so the kubelet and the
programs work alike on either side, as client-go's typed clients do.

It authenticates with the node's client certificate (CN system:node:NAME)
and checks the server's against the server CA, as the real agent's
kubelet does with the kubeconfig k3s writes for it. A Status body comes
back as status.ApiError.
"""

import http.client
import json
import ssl
import threading
from urllib.parse import quote, urlencode

from . import api as apimod
from . import registry, status


class RemoteApi:
    def __init__(self, host, port, ca, cert, key, timeout=30):
        self.host = host
        self.port = port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.check_hostname = False          # the agent dials by address
        self.ctx.load_cert_chain(cert, key)
        self.timeout = timeout
        self.local = threading.local()
        self.registry = registry.Registry()
        self.correlator = apimod.Correlator()
        self.event_lock = threading.Lock()
        self.refresh_types()

    # ---- transport ---------------------------------------------------

    def _conn(self):
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout)
            self.local.conn = c
        return c

    def request(self, method, path, body=None, query=None, ctype="application/json"):
        url = path + ("?" + urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json", "User-Agent": "k3s-sim-agent"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in (0, 1):
            try:
                conn = self._conn()
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (OSError, http.client.HTTPException):
                self.local.conn = None
                if attempt:
                    raise status.unavailable("the server is unreachable (SIMULATION agent)")
        if resp.getheader("Connection", "").lower() == "close":
            self.local.conn = None
        try:
            doc = json.loads(raw.decode("utf-8")) if raw else None
        except ValueError:
            doc = None
        if resp.status >= 400:
            if isinstance(doc, dict) and doc.get("kind") == "Status":
                raise status.ApiError(doc.get("code", resp.status), doc.get("reason", ""), doc.get("message", ""),
                                      doc.get("details"))
            raise status.ApiError(resp.status, "InternalError", raw.decode("utf-8", "replace"))
        return doc

    def refresh_types(self):
        crds = self.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        self.registry.set_crds([dict(o, kind="CustomResourceDefinition") for o in (crds or {}).get("items", [])])

    # ---- the verbs of api.Api -------------------------------------------

    def resource(self, api_version, kind):
        res = self.registry.by_kind(api_version, kind)
        if res is None:
            self.refresh_types()
            res = self.registry.by_kind(api_version, kind)
        if res is None:
            raise status.not_found_path()
        return res

    def _path(self, res, namespace=None, name=None, sub=None):
        p = res.path(namespace if res.namespaced else None, quote(name) if name else None)
        return p + ("/" + sub if sub else "")

    def get(self, res, namespace, name):
        return self.request("GET", self._path(res, namespace, name))

    def find(self, res, namespace, name):
        try:
            return self.get(res, namespace, name)
        except status.ApiError as e:
            if e.code == 404:
                return None
            raise

    def list(self, res, namespace=None, label_selector=None, field_selector=None):
        q = {}
        if label_selector:
            q["labelSelector"] = label_selector
        if field_selector:
            q["fieldSelector"] = field_selector
        doc = self.request("GET", self._path(res, namespace), query=q)
        items = [dict(o, apiVersion=res.api_version, kind=res.kind) for o in doc.get("items", [])]
        return items, doc.get("metadata", {}).get("resourceVersion", "")

    def create(self, res, obj, namespace=None, dry_run=False, validation="Strict"):
        ns = namespace or obj.get("metadata", {}).get("namespace") or ("default" if res.namespaced else None)
        body = dict(obj, apiVersion=res.api_version, kind=res.kind)
        return self.request("POST", self._path(res, ns), body, {"fieldValidation": validation}), []

    def update(self, res, obj, namespace=None, subresource=None, dry_run=False, validation="Strict",
               check_rv=True):
        md = dict(obj.get("metadata", {}))
        if not check_rv:
            md.pop("resourceVersion", None)
        body = dict(obj, metadata=md, apiVersion=res.api_version, kind=res.kind)
        ns = namespace or md.get("namespace")
        return self.request("PUT", self._path(res, ns, md["name"], subresource), body,
                            {"fieldValidation": validation}), []

    def update_status(self, res, obj):
        return self.update(res, obj, subresource="status", check_rv=False)[0]

    def patch(self, res, namespace, name, ptype, body, subresource=None, dry_run=False, validation="Strict",
              field_manager=None, force=False):
        ctype = {"json": "application/json-patch+json", "merge": "application/merge-patch+json",
                 "strategic": "application/strategic-merge-patch+json"}[ptype]
        return self.request("PATCH", self._path(res, namespace, name, subresource), body, None, ctype), []

    def delete(self, res, namespace, name, options=None, dry_run=False):
        doc = self.request("DELETE", self._path(res, namespace, name), options or {})
        return doc, bool(doc and doc.get("kind") == "Status")

    record_event = apimod.Api.record_event
