"""Label and field selectors, as k8s.io/apimachinery/pkg/labels and
pkg/fields parse them, and the fields each type lets a selector name
(the registries' GetAttrs / field label conversion funcs: pkg/registry/core/
pod/strategy.go ToSelectableFields, pkg/apis/core/v1/conversion.go).
"""

import re

from . import status

_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class LabelSelector:
    """Requirements (key, op, values); an empty selector matches everything."""

    def __init__(self, reqs):
        self.reqs = reqs

    def matches(self, labels):
        labels = labels or {}
        for key, op, values in self.reqs:
            have = key in labels
            v = labels.get(key)
            if op == "exists" and not have:
                return False
            if op == "!" and have:
                return False
            if op in ("=", "==", "in") and (not have or v not in values):
                return False
            if op in ("!=", "notin") and have and v in values:
                return False
            if op in (">", "<"):
                try:
                    n, want = int(v), int(values[0])
                except (TypeError, ValueError):
                    return False
                if (op == ">" and not n > want) or (op == "<" and not n < want):
                    return False
        return True


def _split_top(text):
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def parse_labels(text):
    if not text or not text.strip():
        return LabelSelector([])
    reqs = []
    for part in _split_top(text):
        p = part.strip()
        m = re.match(r"^(\S+)\s+(in|notin)\s+\((.*)\)$", p)
        if m:
            key, op, vals = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",") if v.strip()]
        elif p.startswith("!"):
            key, op, vals = p[1:].strip(), "!", []
        else:
            m = re.match(r"^([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$", p)
            if m:
                key, op, vals = m.group(1), m.group(2), [m.group(3).strip()]
            elif re.match(r"^[^=!<>\s()]+$", p):
                key, op, vals = p, "exists", []
            else:
                raise status.bad_request("unable to parse requirement: found '%s', expected: identifier" % p)
        if not _KEY.match(key):
            raise status.bad_request("unable to parse requirement: values[0][%s]: Invalid value: \"%s\": "
                                     "name part must consist of alphanumeric characters, '-', '_' or '.'" % (key, key))
        reqs.append((key, op, vals))
    return LabelSelector(reqs)


def from_label_selector(sel):
    """A metav1.LabelSelector (matchLabels, matchExpressions) of an object."""
    if sel is None:
        return None
    reqs = [(k, "=", [v]) for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(e.get("operator"))
        if op:
            reqs.append((e.get("key", ""), op, list(e.get("values") or [])))
    return LabelSelector(reqs)


def _get(obj, dotted):
    cur = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


# The fields each type can select on, besides metadata.name and
# metadata.namespace (which every type has).
FIELDS = {
    ("", "pods"): ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                   "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"],
    ("", "events"): ["involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                     "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                     "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"],
    ("", "nodes"): ["spec.unschedulable"],
    ("", "namespaces"): ["status.phase"],
    ("", "secrets"): ["type"],
    ("batch", "jobs"): ["status.successful"],
}


class FieldSelector:
    def __init__(self, reqs):
        self.reqs = reqs

    def matches(self, obj):
        for field, op, value in self.reqs:
            v = _field_value(obj, field)
            if (op == "=") != (v == value):
                return False
        return True

    def name(self):
        """The metadata.name this selector pins, or None (a watch of one object)."""
        for field, op, value in self.reqs:
            if field == "metadata.name" and op == "=":
                return value
        return None


def _field_value(obj, field):
    if field == "source":
        v = _get(obj, "source.component")
    elif field == "status.successful":
        v = _get(obj, "status.succeeded")
    elif field == "status.podIPs":
        v = _get(obj, "status.podIP")
    else:
        v = _get(obj, field)
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def parse_fields(text, key):
    if not text or not text.strip():
        return FieldSelector([])
    allowed = ["metadata.name", "metadata.namespace"] + FIELDS.get(key, [])
    reqs = []
    for part in text.split(","):
        m = re.match(r"^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise status.bad_request("invalid selector: '%s'; can't understand '%s'" % (text, part))
        field, op, value = m.group(1), m.group(2), m.group(3)
        if field not in allowed:
            raise status.bad_request('field label not supported: %s' % field)
        reqs.append((field, "!=" if op == "!=" else "=", value))
    return FieldSelector(reqs)


def node_term_matches(term, node):
    """A NodeSelectorTerm (matchExpressions, matchFields on metadata.name)
    against a node (k8s.io/component-helpers scheduling/corev1/nodeaffinity):
    an empty term matches no node."""
    if not term.get("matchExpressions") and not term.get("matchFields"):
        return False
    labels = node["metadata"].get("labels") or {}
    for e in term.get("matchExpressions") or []:
        key, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        v = labels.get(key)
        if op == "In" and v not in vals:
            return False
        if op == "NotIn" and v in vals:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op in ("Gt", "Lt"):
            try:
                n, want = int(v), int(vals[0])
            except (TypeError, ValueError, IndexError):
                return False
            if (op == "Gt" and not n > want) or (op == "Lt" and not n < want):
                return False
    for e in term.get("matchFields") or []:
        if e.get("key") == "metadata.name":
            name = node["metadata"]["name"]
            if (e.get("operator") == "In") != (name in (e.get("values") or [])):
                return False
    return True
