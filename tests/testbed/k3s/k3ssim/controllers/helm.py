"""k3s's Helm controller (k3s-io/helm-controller pkg/controllers/chart/chart.go)
for the HelmCharts of kube-system.

- OnChange: the chart is claimed (annotation helmcharts.cattle.io/managed-by)
  and given the finalizer wrangler.cattle.io/on-helm-chart-remove; then its
  objects are applied: the Secret chart-values-NAME (values-01_HelmChart.yaml
  from spec.valuesContent, values-10_HelmChartConfig.yaml from the
  HelmChartConfig of the same name), the ConfigMap chart-content-NAME, the
  ServiceAccount helm-NAME, the ClusterRoleBinding helm-kube-system-NAME,
  and the Job helm-install-NAME (klipper-helm, restartPolicy OnFailure,
  backoffLimit 1000, args install --namespace … [--create-namespace]
  [--version …], the values' hash in the configHash annotation). A job
  whose spec must change is deleted (Foreground) and made again: a changed
  HelmChart or HelmChartConfig upgrades the release. The status says
  JobCreated with the job's name; an ApplyJob event is recorded.
- OnRemove: the install job gives way to helm-delete-NAME (args delete);
  once it succeeded the objects go and the finalizer is removed.
"""

import base64
import copy
import hashlib

from .. import config, status

FINALIZER = "wrangler.cattle.io/on-helm-chart-remove"
MANAGED_BY = "helmcharts.cattle.io/managed-by"
LABEL = "helmcharts.helm.cattle.io/chart"
HASH = "helmcharts.helm.cattle.io/configHash"


class HelmController:
    def __init__(self, api, k3s_types):
        self.api = api
        self.types = k3s_types

    def start(self):
        pass

    def r(self, api_version, kind):
        return self.api.registry.by_kind(api_version, kind)

    def tick(self):
        if not self.types.registered():
            return
        charts, _ = self.api.list(self.r("helm.cattle.io/v1", "HelmChart"), "kube-system")
        for chart in charts:
            if not (chart.get("spec", {}).get("chart") or chart.get("spec", {}).get("chartContent")):
                continue
            try:
                if chart["metadata"].get("deletionTimestamp"):
                    self._remove(chart)
                else:
                    self._change(chart)
            except status.ApiError:
                pass

    # ---- OnChange -------------------------------------------------------

    def _change(self, chart):
        res = self.r("helm.cattle.io/v1", "HelmChart")
        md = chart["metadata"]
        ann = md.setdefault("annotations", {})
        fins = md.setdefault("finalizers", [])
        if MANAGED_BY not in ann or FINALIZER not in fins:
            ann.setdefault(MANAGED_BY, "helm-controller")
            if FINALIZER not in fins:
                fins.append(FINALIZER)
            self.api.update(res, chart, "kube-system", validation="Ignore")
            return
        job = self._objects(chart, "install")
        if self._apply_job(job):
            self.api.record_event(chart, "Normal", "ApplyJob", "Applying HelmChart using Job kube-system/%s"
                                  % job["metadata"]["name"], "helm-controller")
        st = {"jobName": job["metadata"]["name"], "conditions": [
            {"type": "JobCreated", "status": "True", "reason": "Job created",
             "message": "Applying HelmChart using Job kube-system/%s" % job["metadata"]["name"]},
            {"type": "Failed", "status": "False"}]}
        if chart.get("status") != st:
            chart["status"] = st
            self.api.update_status(res, chart)

    def _objects(self, chart, action):
        """Apply the values Secret, content ConfigMap, account and binding;
        return the Job the chart wants."""
        name = chart["metadata"]["name"]
        spec = chart.get("spec", {})
        data = {}
        if spec.get("valuesContent"):
            data["values-01_HelmChart.yaml"] = spec["valuesContent"]
        if spec.get("repoCA"):
            data["ca-file.pem"] = spec["repoCA"]
        cfg = self.api.find(self.r("helm.cattle.io/v1", "HelmChartConfig"), "kube-system", name)
        failure = spec.get("failurePolicy") or "reinstall"
        if cfg:
            if cfg.get("spec", {}).get("valuesContent"):
                data["values-10_HelmChartConfig.yaml"] = cfg["spec"]["valuesContent"]
            failure = cfg.get("spec", {}).get("failurePolicy") or failure
        content = {}
        if spec.get("chartContent"):
            content[name + ".tgz.base64"] = spec["chartContent"]
        owned = {"annotations": {"objectset.rio.cattle.io/owner-gvk": "helm.cattle.io/v1, Kind=HelmChart",
                                 "objectset.rio.cattle.io/owner-name": name,
                                 "objectset.rio.cattle.io/owner-namespace": "kube-system"}}
        self._put(self.r("v1", "Secret"), "kube-system", dict(
            metadata=dict(owned, name="chart-values-" + name), type="Opaque",
            data={k: base64.b64encode(v.encode()).decode() for k, v in data.items()}))
        self._put(self.r("v1", "ConfigMap"), "kube-system", dict(metadata=dict(owned, name="chart-content-" + name),
                                                                  data=content))
        self._put(self.r("v1", "ServiceAccount"), "kube-system", dict(metadata=dict(owned, name="helm-" + name),
                                                                       automountServiceAccountToken=True))
        self._put(self.r("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), None, dict(
            metadata=dict(owned, name="helm-kube-system-" + name),
            roleRef={"kind": "ClusterRole", "apiGroup": "rbac.authorization.k8s.io", "name": "cluster-admin"},
            subjects=[{"name": "helm-" + name, "kind": "ServiceAccount", "namespace": "kube-system"}]))
        h = hashlib.sha256()
        for d in (content, data):
            for k in sorted(d):
                h.update(k.encode())
                h.update(d[k].encode())
        return self._job(chart, action, failure, "SHA256=" + h.hexdigest().upper())

    def _job(self, chart, action, failure, digest):
        name = chart["metadata"]["name"]
        spec = chart.get("spec", {})
        tns = spec.get("targetNamespace") or "kube-system"
        args = ["delete"] if action == "delete" else ["install"]
        if action == "install":
            if spec.get("targetNamespace"):
                args += ["--namespace", spec["targetNamespace"]]
            if spec.get("createNamespace"):
                args.append("--create-namespace")
            if spec.get("version"):
                args += ["--version", spec["version"]]
            for k in sorted(spec.get("set") or {}):
                args += ["--set", "%s=%s" % (k, spec["set"][k])]
        chart_name = name + "/" + spec["chart"] if spec.get("repo") else spec.get("chart", "")
        env = [("NAME", name), ("VERSION", spec.get("version", "")), ("REPO", spec.get("repo", "")),
               ("HELM_DRIVER", "secret"), ("CHART_NAMESPACE", "kube-system"), ("CHART", chart_name),
               ("HELM_VERSION", spec.get("helmVersion", "")), ("TARGET_NAMESPACE", tns),
               ("AUTH_PASS_CREDENTIALS", str(bool(spec.get("authPassCredentials"))).lower()),
               ("INSECURE_SKIP_TLS_VERIFY", str(bool(spec.get("insecureSkipTLSVerify"))).lower()),
               ("PLAIN_HTTP", str(bool(spec.get("plainHTTP"))).lower()), ("FAILURE_POLICY", failure)]
        return {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "helm-%s-%s" % (action, name), "namespace": "kube-system", "labels": {LABEL: name},
                             "annotations": {"objectset.rio.cattle.io/owner-name": name}},
                "spec": {"backoffLimit": spec.get("backOffLimit", 1000), "template": {
                    "metadata": {"labels": {LABEL: name}, "annotations": {HASH: digest}},
                    "spec": {"restartPolicy": "OnFailure", "serviceAccountName": "helm-" + name,
                             "nodeSelector": {"kubernetes.io/os": "linux"},
                             "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                             "containers": [{"name": "helm", "image": spec.get("jobImage") or config.HELM_JOB_IMAGE,
                                             "imagePullPolicy": "IfNotPresent", "args": args,
                                             "env": [{"name": k, "value": v} for k, v in env],
                                             "volumeMounts": [{"name": "values", "mountPath": "/config"},
                                                              {"name": "content", "mountPath": "/chart"}]}],
                             "volumes": [{"name": "values", "secret": {"secretName": "chart-values-" + name}},
                                         {"name": "content", "configMap": {"name": "chart-content-" + name}}]}}}}

    def _put(self, res, ns, obj):
        cur = self.api.find(res, ns, obj["metadata"]["name"])
        if cur is None:
            self.api.create(res, obj, ns, validation="Ignore")
            return
        changed = {k: v for k, v in obj.items() if k != "metadata"}
        if any(cur.get(k) != v for k, v in changed.items()):
            cur.update(copy.deepcopy(changed))
            self.api.update(res, cur, ns, check_rv=False, validation="Ignore")

    def _apply_job(self, job):
        """Create the job, or replace one whose spec differs: True when a
        job was created."""
        res = self.r("batch/v1", "Job")
        name = job["metadata"]["name"]
        other = ("helm-delete-" if name.startswith("helm-install-") else "helm-install-") + name.split("-", 2)[2]
        if self.api.find(res, "kube-system", other):
            self.api.delete(res, "kube-system", other, {"propagationPolicy": "Foreground"})
        cur = self.api.find(res, "kube-system", name)
        if cur is not None:
            if cur["metadata"].get("deletionTimestamp"):
                return False
            want = job["spec"]["template"]
            have = cur["spec"].get("template", {})
            if (have.get("metadata", {}).get("annotations", {}).get(HASH) == want["metadata"]["annotations"][HASH]
                    and have.get("spec", {}).get("containers", [{}])[0].get("args")
                    == want["spec"]["containers"][0]["args"]
                    and have.get("spec", {}).get("containers", [{}])[0].get("image")
                    == want["spec"]["containers"][0]["image"]):
                return False
            self.api.delete(res, "kube-system", name, {"propagationPolicy": "Foreground"})
            return False
        self.api.create(res, job, "kube-system", validation="Ignore")
        return True

    # ---- OnRemove -------------------------------------------------------

    def _remove(self, chart):
        res = self.r("helm.cattle.io/v1", "HelmChart")
        name = chart["metadata"]["name"]
        if FINALIZER not in (chart["metadata"].get("finalizers") or []):
            return
        job = self._objects(chart, "delete")
        self._apply_job(job)
        cur = self.api.find(self.r("batch/v1", "Job"), "kube-system", job["metadata"]["name"])
        if not cur or not cur.get("status", {}).get("succeeded"):
            if chart.get("status", {}).get("jobName") != job["metadata"]["name"]:
                chart.setdefault("status", {})["jobName"] = job["metadata"]["name"]
                self.api.update_status(res, chart)
            return
        self.api.record_event(chart, "Normal", "RemoveJob", "Uninstalled HelmChart using Job kube-system/%s, "
                              "removing resources" % job["metadata"]["name"], "helm-controller")
        for r, ns, n in ((self.r("batch/v1", "Job"), "kube-system", job["metadata"]["name"]),
                         (self.r("v1", "Secret"), "kube-system", "chart-values-" + name),
                         (self.r("v1", "ConfigMap"), "kube-system", "chart-content-" + name),
                         (self.r("v1", "ServiceAccount"), "kube-system", "helm-" + name),
                         (self.r("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), None,
                          "helm-kube-system-" + name)):
            try:
                self.api.delete(r, ns, n, {"propagationPolicy": "Background"})
            except status.ApiError:
                pass
        chart = self.api.find(res, "kube-system", name)
        if chart:
            chart["metadata"]["finalizers"] = [f for f in chart["metadata"].get("finalizers") or [] if f != FINALIZER]
            self.api.update(res, chart, "kube-system", check_rv=False, validation="Ignore")
