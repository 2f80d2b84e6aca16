"""How kube-controller-manager's workload controllers make an owner's pod
(pkg/controller/controller_utils.go RealPodControl.CreatePods): the pod
created as the API admits it; a refusal is the owner's Warning
FailedCreate "Error creating: <the API's words>" (once while it repeats,
as the event recorder's aggregation shows it), a pod made its Normal
SuccessfulCreate "Created pod: <name>".
"""

from .. import status


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
