"""k3s's own types: the CustomResourceDefinitions it registers once its API
server is ready (pkg/server/server.go startOnAPIServerReady ->
runControllers -> pkg/server/context.go registerCRDs), SIM_K3S_CRD_DELAY
seconds later here. Until then kubectl knows no HelmChart ("the server
doesn't have a resource type", "no matches for kind"). The definitions
follow k3s-io/helm-controller's generated CRDs (pkg/crds/yaml/generated)
and k3s's Addon (pkg/apis/k3s.cattle.io/v1).
"""

from .. import clock, config, logs

S = {"type": "string"}
B = {"type": "boolean"}
I = {"type": "integer"}
OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
REF = {"type": "object", "properties": {"name": S}}
CONDITIONS = {"type": "array", "items": {"type": "object", "properties": {
    "type": S, "status": S, "reason": S, "message": S, "lastTransitionTime": S, "lastUpdateTime": S}}}

HELMCHART_SPEC = {"type": "object", "properties": {
    "authPassCredentials": B, "authSecret": REF, "backOffLimit": I, "bootstrap": B, "chart": S, "chartContent": S,
    "createNamespace": B, "dockerRegistrySecret": REF, "failurePolicy": dict(S, default="reinstall"),
    "helmVersion": S, "insecureSkipTLSVerify": B, "jobImage": S, "plainHTTP": B, "podSecurityContext": OPEN,
    "repo": S, "repoCA": S, "repoCAConfigMap": REF, "securityContext": OPEN,
    "set": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": True}},
    "takeOwnership": B, "targetNamespace": S, "timeout": S, "valuesContent": S,
    "valuesSecrets": {"type": "array", "items": OPEN}, "version": S}}


def _crd(group, kind, plural, spec_schema, columns=(), status_schema=None, short=()):
    props = {"apiVersion": S, "kind": S, "metadata": {"type": "object"}, "spec": spec_schema}
    version = {"name": "v1", "served": True, "storage": True,
               "schema": {"openAPIV3Schema": {"type": "object", "properties": props}}}
    if status_schema:
        props["status"] = status_schema
        version["subresources"] = {"status": {}}
    if columns:
        version["additionalPrinterColumns"] = list(columns)
    names = {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower()}
    if short:
        names["shortNames"] = list(short)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "%s.%s" % (plural, group)},
            "spec": {"group": group, "names": names, "scope": "Namespaced", "versions": [version]}}


CRDS = [
    _crd("helm.cattle.io", "HelmChart", "helmcharts", HELMCHART_SPEC, [
        {"jsonPath": ".spec.repo", "name": "Repo", "type": "string"},
        {"jsonPath": ".spec.chart", "name": "Chart", "type": "string"},
        {"jsonPath": ".spec.version", "name": "Version", "type": "string"},
        {"jsonPath": ".spec.targetNamespace", "name": "TargetNamespace", "type": "string"},
        {"jsonPath": ".spec.bootstrap", "name": "Bootstrap", "type": "boolean"},
        {"jsonPath": ".status.conditions[?(@.type=='Failed')].status", "name": "Failed", "type": "string"},
        {"jsonPath": ".status.jobName", "name": "Job", "priority": 10, "type": "string"}],
        {"type": "object", "properties": {"jobName": S, "conditions": CONDITIONS}}),
    _crd("helm.cattle.io", "HelmChartConfig", "helmchartconfigs", {"type": "object", "properties": {
        "failurePolicy": dict(S, default="reinstall"), "valuesContent": S,
        "valuesSecrets": {"type": "array", "items": OPEN}}}),
    _crd("k3s.cattle.io", "Addon", "addons", {"type": "object", "properties": {"checksum": S, "source": S}},
         [{"jsonPath": ".spec.source", "name": "Source", "type": "string"},
          {"jsonPath": ".spec.checksum", "name": "Checksum", "type": "string"}]),
]


class K3sTypes:
    """Registers the CRDs SIM_K3S_CRD_DELAY after the API is ready; they
    stay in the datastore, so a restarted k3s has them at once."""

    def __init__(self, api):
        self.api = api
        self.ready_at = None

    def start(self):
        self.ready_at = clock.now()

    def registered(self):
        res = self.api.registry.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        return all(self.api.find(res, None, c["metadata"]["name"]) for c in CRDS)

    def tick(self):
        if self.ready_at is None or self.registered() or clock.now() - self.ready_at < config.CRD_DELAY:
            return
        res = self.api.registry.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        for crd in CRDS:
            if self.api.find(res, None, crd["metadata"]["name"]) is None:
                self.api.create(res, crd)
        logs.info("Registered CRDs %s" % ", ".join(c["metadata"]["name"] for c in CRDS))
