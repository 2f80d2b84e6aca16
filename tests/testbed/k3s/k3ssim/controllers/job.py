"""The Job controller (pkg/controller/job): pods until enough succeed.

- Pods from the template, named after the job, labelled with its
  controller-uid and job-name, owned by it (controller: true).
- restartPolicy OnFailure restarts the container in the same pod (the
  kubelet does); the job fails once the restarts reach backoffLimit.
  Never replaces a failed pod, one at a time, until backoffLimit failed
  pods.
- Status: active, ready, succeeded, failed, terminating, startTime, and
  at the end completionTime with the conditions SuccessCriteriaMet and
  Complete (or FailureTarget and Failed, BackoffLimitExceeded).
"""

import copy

from .. import clock, status
from . import ownedpods


class Jobs:
    def __init__(self, api):
        self.api = api
        self.failed = {}      # job uid -> last FailedCreate message

    def start(self):
        pass

    def tick(self):
        jobs_res = self.api.registry.by_kind("batch/v1", "Job")
        jobs, _ = self.api.list(jobs_res)
        if not jobs:
            return
        pods_res = self.api.registry.by_kind("v1", "Pod")
        pods, _ = self.api.list(pods_res)
        for job in jobs:
            if job["metadata"].get("deletionTimestamp") or _finished(job):
                continue
            self._sync(jobs_res, pods_res, job, [p for p in pods if ownedpods.owned(p, job)])

    def _sync(self, jobs_res, pods_res, job, pods):
        spec = job["spec"]
        st = copy.deepcopy(job.get("status") or {})
        now = clock.rfc3339()
        st.setdefault("startTime", now)
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        active = [p for p in live if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
        succeeded = len([p for p in pods if p.get("status", {}).get("phase") == "Succeeded"])
        failed = len([p for p in pods if p.get("status", {}).get("phase") == "Failed"])
        restarts = sum(c.get("restartCount", 0) for p in active
                       for c in p.get("status", {}).get("containerStatuses") or [])
        limit = spec.get("backoffLimit", 6)
        policy = spec.get("template", {}).get("spec", {}).get("restartPolicy")
        conds = []
        if succeeded >= spec.get("completions", 1):
            conds = [_cond("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", now),
                     _cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods", now)]
            st["completionTime"] = now
        elif failed > limit or (policy == "OnFailure" and restarts >= limit):
            conds = [_cond("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now),
                     _cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now)]
            for p in active:
                ownedpods.delete(self.api, pods_res, job, p, "job-controller")
            active = []
        elif not active and not spec.get("suspend"):
            self._create(pods_res, job)
        if conds:
            st["conditions"] = conds
        for k, v in (("active", len(active)), ("succeeded", succeeded), ("failed", failed)):
            if v:
                st[k] = v
            else:
                st.pop(k, None)
        st["ready"] = len([p for p in active if any(c.get("type") == "Ready" and c.get("status") == "True"
                                                     for c in p.get("status", {}).get("conditions") or [])])
        st["terminating"] = len([p for p in pods if p["metadata"].get("deletionTimestamp")])
        st.setdefault("uncountedTerminatedPods", {})
        if st != job.get("status"):
            job["status"] = st
            try:
                self.api.update_status(jobs_res, job)
            except status.ApiError:
                pass

    def _create(self, pods_res, job):
        tmpl = copy.deepcopy(job["spec"].get("template", {}))
        md = tmpl.setdefault("metadata", {})
        md["generateName"] = job["metadata"]["name"] + "-"
        md["namespace"] = job["metadata"]["namespace"]
        md["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
                                  "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
        ownedpods.create(self.api, pods_res, job, {"metadata": md, "spec": tmpl.get("spec", {})}, "job-controller",
                         self.failed)


def _cond(t, reason, message, now):
    return {"type": t, "status": "True", "reason": reason, "message": message, "lastProbeTime": now,
            "lastTransitionTime": now}


def _finished(job):
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in job.get("status", {}).get("conditions") or [])
