"""How kube-controller-manager's workload controllers (Job, DaemonSet,
ReplicaSet) handle their pods (pkg/controller/controller_utils.go
RealPodControl, FilterActivePods, IsPodReady; metav1.IsControlledBy): an
owner's pods are those it controls (its UID in a controller reference); a
pod made as the API admits it, a refusal the owner's Warning FailedCreate
"Error creating: <the API's words>" (once while it repeats, as the event
recorder's aggregation shows it), a pod made its Normal SuccessfulCreate
"Created pod: <name>"; a pod deleted its SuccessfulDelete "Deleted pod:
<name>". A template's revision is named by a hash of it, a 32-bit FNV of
the object written as apimachinery's rand.SafeEncodeString writes its
decimal digits (pkg/controller/controller_utils.go ComputeHash: a
ReplicaSet's pod-template-hash, and through daemon/update.go snapshot a
DaemonSet's controller-revision-hash; apimachinery pkg/util/rand);
Go's DeepHashObject prints the object as the stand-in cannot, so the
value differs from k3s's, its form does not.
"""

import json

from .. import status

SAFE = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand SafeEncodeString's alphabet


def template_hash(tmpl):
    """TMPL's revision hash: FNV-1a 32 of its JSON, SafeEncodeString'd."""
    value = 0x811c9dc5
    for b in json.dumps(tmpl, sort_keys=True).encode():
        value = ((value ^ b) * 0x01000193) & 0xffffffff
    return "".join(SAFE[ord(c) % len(SAFE)] for c in str(value))


def create(api, pods_res, owner, pod, component, failed):
    """Create POD (its metadata's namespace) for OWNER, the events under
    COMPONENT; FAILED: {owner uid: its last FailedCreate}. The pod, or None."""
    uid = owner["metadata"]["uid"]
    try:
        created, _ = api.create(pods_res, pod, pod["metadata"]["namespace"], validation="Ignore")
    except status.ApiError as e:
        msg = "Error creating: " + e.message
        if failed.get(uid) != msg:
            failed[uid] = msg
            api.record_event(owner, "Warning", "FailedCreate", msg, component)
        return None
    failed.pop(uid, None)
    api.record_event(owner, "Normal", "SuccessfulCreate", "Created pod: " + created["metadata"]["name"], component)
    return created


def owned(obj, owner):
    """Does OWNER control OBJ?"""
    return any(r.get("uid") == owner["metadata"]["uid"] and r.get("controller")
               for r in obj["metadata"].get("ownerReferences") or [])


def ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in pod.get("status", {}).get("conditions") or [])


def delete(api, pods_res, owner, pod, component):
    """Delete OWNER's POD; gone already is no error."""
    try:
        api.delete(pods_res, pod["metadata"]["namespace"], pod["metadata"]["name"])
    except status.ApiError:
        return
    api.record_event(owner, "Normal", "SuccessfulDelete", "Deleted pod: " + pod["metadata"]["name"], component)
