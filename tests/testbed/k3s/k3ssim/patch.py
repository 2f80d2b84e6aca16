"""The three patch types the API accepts, applied on the server side.

- JSON patch (RFC 6902), application/json-patch+json;
- JSON merge patch (RFC 7386), application/merge-patch+json;
- strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch,
  patch.go: StrategicMergePatch), application/strategic-merge-patch+json,
  for built-in types only: lists whose Go field carries
  `patchStrategy:"merge"` merge by their `patchMergeKey`, others are
  replaced; the directives $patch (replace, delete, merge), $retainKeys,
  $setElementOrder/<field> and $deleteFromPrimitiveList/<field>.

The merge keys below are those of k8s.io/api's struct tags for the types
the stand-in serves (core/v1 ObjectMeta, PodSpec, Container, PodStatus,
NodeSpec, NodeStatus, ServiceSpec; the workloads' conditions).
"""

import copy

from . import status

# field name -> merge key ("" for a list of primitives merged as a set).
# A field named in CONTEXT has a key that depends on its parent field.
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "imagePullSecrets": "name", "env": "name", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "conditions": "type", "finalizers": "", "ownerReferences": "uid",
    "podIPs": "ip", "hostIPs": "ip", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name", "schedulingGates": "name", "podCIDRs": "",
}
CONTEXT = {("containers", "ports"): "containerPort", ("initContainers", "ports"): "containerPort",
           ("ephemeralContainers", "ports"): "containerPort", ("spec", "ports"): "port",
           ("status", "addresses"): "type"}


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise status.bad_request("the server rejected our request due to an error in our request")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise KeyError(p)
    return cur


def json_patch(doc, ops):
    """RFC 6902; an operation that does not apply is a 422, as the API says it."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise status.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    for op in ops:
        kind = op.get("op")
        parts = _pointer(op.get("path", ""))
        try:
            if kind == "test":
                if _walk(doc, parts) != op.get("value"):
                    raise status.ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
                continue
            if kind in ("move", "copy"):
                src = _pointer(op.get("from", ""))
                value = copy.deepcopy(_walk(doc, src))
                if kind == "move":
                    _remove(doc, src)
                doc = _add(doc, parts, value)
            elif kind == "add":
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            elif kind == "remove":
                _remove(doc, parts)
            elif kind == "replace":
                _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            else:
                raise status.bad_request("Unexpected kind: %s" % kind)
        except (KeyError, IndexError, ValueError, TypeError):
            raise status.ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
    return doc


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            i = int(last)
            if i > len(parent):
                raise IndexError(last)
            parent.insert(i, value)
    else:
        parent[last] = value
    return doc


def _remove(doc, parts):
    parent = _walk(doc, parts[:-1])
    if isinstance(parent, list):
        del parent[int(parts[-1])]
    else:
        del parent[parts[-1]]


def merge_patch(doc, patch):
    """RFC 7386: null deletes, maps merge, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge(doc, patch):
    if not isinstance(patch, dict):
        raise status.bad_request("unable to find api field in struct for the json field")
    return _smp_map(copy.deepcopy(doc) if isinstance(doc, dict) else {}, patch, "")


def _smp_map(orig, patch, parent):
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(orig.get(field), list):
                orig[field] = [x for x in orig[field] if x not in (v or [])]
            continue
        if v is None:
            orig.pop(k, None)
            continue
        cur = orig.get(k)
        if isinstance(v, dict):
            merged = _smp_map(cur if isinstance(cur, dict) else {}, v, k)
            if merged is None:
                orig.pop(k, None)
            else:
                orig[k] = merged
        elif isinstance(v, list):
            orig[k] = _smp_list(cur if isinstance(cur, list) else [], v, parent, k)
        else:
            orig[k] = copy.deepcopy(v)
        order = patch.get("$setElementOrder/" + k)
        if order is not None and isinstance(orig.get(k), list):
            orig[k] = _reorder(orig[k], order, _merge_key(parent, k))
    if isinstance(retain, list):
        for k in list(orig):
            if k not in retain:
                del orig[k]
    return orig


def _merge_key(parent, field):
    if (parent, field) in CONTEXT:
        return CONTEXT[(parent, field)]
    return MERGE_KEYS.get(field)


def _smp_list(orig, patch, parent, field):
    key = _merge_key(parent, field)
    if key is None:
        return [copy.deepcopy(x) for x in patch]
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    if key == "":
        out = list(orig)
        for x in patch:
            if x not in out:
                out.append(copy.deepcopy(x))
        return out
    out = [copy.deepcopy(x) for x in orig]
    for item in patch:
        if not isinstance(item, dict):
            continue
        kv = item.get(key)
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == kv), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
            continue
        if idx is None:
            out.append({k: copy.deepcopy(v) for k, v in item.items() if k != "$patch"})
        else:
            out[idx] = _smp_map(out[idx], item, field)
    return out


def _reorder(items, order, key):
    if not key:
        rank = {repr(v): i for i, v in enumerate(order)}
        return sorted(items, key=lambda x: rank.get(repr(x), len(rank)))
    rank = {repr(o.get(key)): i for i, o in enumerate(order) if isinstance(o, dict)}
    return sorted(items, key=lambda x: rank.get(repr(x.get(key)) if isinstance(x, dict) else "", len(rank)))
