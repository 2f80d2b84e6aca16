"""Discovery and OpenAPI v3, as kube-apiserver serves them.

- /api, /apis: legacy (APIVersions, APIGroupList) or, when the client asks
  for it in Accept, aggregated discovery (apidiscovery.k8s.io/v2
  APIGroupDiscoveryList), which kubectl 1.35 and helm ask for first
  (k8s.io/apiserver/pkg/endpoints/discovery/aggregated);
- /api/v1, /apis/G/V: APIResourceList, subresources as "pods/log";
- /openapi/v3 and /openapi/v3/<gv>: one document per group version. kubectl
  reads it to learn whether the server validates fields itself (a PATCH
  operation of the kind, tagged x-kubernetes-group-version-kind, with the
  fieldValidation query parameter: k8s.io/cli-runtime resource
  QueryParamVerifierV3); it then sends fieldValidation=Strict and leaves
  validation to the server. The schemas are left out: kubectl then computes
  a strategic merge patch from its compiled-in types, and a JSON merge
  patch for custom resources, as it does with a server without them.
"""

import hashlib
import json

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


# A subresource's kind where it is not its resource's.
SUBRESOURCE_KINDS = {"binding": "Binding", "eviction": "Eviction", "scale": "Scale", "exec": "PodExecOptions"}


def _subresource_verbs(sub):
    return {"log": ["get"], "exec": ["create", "get"], "binding": ["create"], "eviction": ["create"],
            "finalize": ["update"],
            "scale": ["get", "patch", "update"]}.get(sub, ["get", "patch", "update"])


def resource_list(registry, group, version):
    resources = []
    for r in registry.all():
        if r.group != group or r.version != version:
            continue
        entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                 "kind": r.kind, "verbs": r.verbs}
        if r.short_names:
            entry["shortNames"] = r.short_names
        if r.categories:
            entry["categories"] = r.categories
        resources.append(entry)
        for sub in r.subresources:
            kind = SUBRESOURCE_KINDS.get(sub, r.kind)
            e = {"name": r.plural + "/" + sub, "singularName": "", "namespaced": r.namespaced,
                 "kind": kind, "verbs": _subresource_verbs(sub)}
            if sub in ("eviction", "scale"):
                e["group"] = "policy" if sub == "eviction" else "autoscaling"
                e["version"] = "v1"
            resources.append(e)
    if not resources:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "%s/%s" % (group, version) if group else version, "resources": resources}


def legacy_versions(address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def group_list(registry):
    groups = []
    for g, versions in registry.groups():
        vs = [{"groupVersion": "%s/%s" % (g, v), "version": v} for v in versions]
        groups.append({"name": g, "versions": vs, "preferredVersion": vs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry, group):
    for g, versions in registry.groups():
        if g == group:
            vs = [{"groupVersion": "%s/%s" % (g, v), "version": v} for v in versions]
            return {"kind": "APIGroup", "apiVersion": "v1", "name": g, "versions": vs, "preferredVersion": vs[0]}
    return None


def _aggregated_group(registry, group, versions):
    out = []
    for v in versions:
        resources = []
        for r in registry.all():
            if r.group != group or r.version != v:
                continue
            entry = {"resource": r.plural,
                     "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
                     "scope": "Namespaced" if r.namespaced else "Cluster",
                     "singularResource": r.singular, "verbs": r.verbs}
            if r.short_names:
                entry["shortNames"] = r.short_names
            if r.categories:
                entry["categories"] = r.categories
            subs = []
            for sub in r.subresources:
                kind = SUBRESOURCE_KINDS.get(sub, r.kind)
                grp = {"eviction": "policy", "scale": "autoscaling"}.get(sub, r.group)
                ver = "v1" if sub in ("eviction", "scale") else r.version
                subs.append({"subresource": sub, "responseKind": {"group": grp, "version": ver, "kind": kind},
                             "verbs": _subresource_verbs(sub)})
            if subs:
                entry["subresources"] = subs
            resources.append(entry)
        out.append({"version": v, "resources": resources, "freshness": "Current"})
    md = {"name": group, "creationTimestamp": None} if group else {"creationTimestamp": None}
    return {"metadata": md, "versions": out}


def aggregated(registry, legacy):
    if legacy:
        items = [_aggregated_group(registry, "", ["v1"])]
    else:
        items = [_aggregated_group(registry, g, vs) for g, vs in registry.groups()]
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}


# ---- OpenAPI v3 -------------------------------------------------------

_WRITE_PARAMS = [
    {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
    {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
    {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
]


def _gvk(r):
    return {"group": r.group, "version": r.version, "kind": r.kind}


def openapi_doc(registry, group, version):
    paths = {}
    for r in registry.all():
        if r.group != group or r.version != version:
            continue
        tag = {"x-kubernetes-group-version-kind": _gvk(r)}
        base = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
        ns = "/namespaces/{namespace}" if r.namespaced else ""
        item = "%s%s/%s/{name}" % (base, ns, r.plural)
        coll = "%s%s/%s" % (base, ns, r.plural)
        ok = {"200": {"description": "OK"}}
        paths[coll] = {
            "get": dict(tag, **{"x-kubernetes-action": "list", "operationId": "list" + r.kind, "responses": ok}),
            "post": dict(tag, **{"x-kubernetes-action": "post", "operationId": "create" + r.kind,
                                 "parameters": _WRITE_PARAMS, "responses": ok}),
        }
        paths[item] = {
            "get": dict(tag, **{"x-kubernetes-action": "get", "operationId": "read" + r.kind, "responses": ok}),
            "put": dict(tag, **{"x-kubernetes-action": "put", "operationId": "replace" + r.kind,
                                "parameters": _WRITE_PARAMS, "responses": ok}),
            "patch": dict(tag, **{"x-kubernetes-action": "patch", "operationId": "patch" + r.kind,
                                  "parameters": _WRITE_PARAMS + [{"name": "force", "in": "query",
                                                                  "schema": {"type": "boolean"}}],
                                  "responses": ok}),
            "delete": dict(tag, **{"x-kubernetes-action": "delete", "operationId": "delete" + r.kind,
                                   "responses": ok}),
        }
        for sub in r.subresources:
            if sub == "status":
                paths[item + "/status"] = {
                    "get": dict(tag, **{"x-kubernetes-action": "get", "responses": ok}),
                    "patch": dict(tag, **{"x-kubernetes-action": "patch", "parameters": _WRITE_PARAMS,
                                          "responses": ok}),
                }
    if not paths:
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (k3s stand-in, SIMULATION)", "version": "unversioned"},
            "paths": paths, "components": {"schemas": {}}}


def openapi_root(registry):
    paths = {}
    gvs = [("", "v1")] + [(g, v) for g, vs in registry.groups() for v in vs]
    for g, v in gvs:
        doc = openapi_doc(registry, g, v)
        if doc is None:
            continue
        rel = "api/v1" if not g else "apis/%s/%s" % (g, v)
        h = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:128].upper()
        paths[rel] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (rel, h)}
    return {"paths": paths}
