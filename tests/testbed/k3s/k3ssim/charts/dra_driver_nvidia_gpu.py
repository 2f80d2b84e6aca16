"""kubernetes-sigs/dra-driver-nvidia-gpu's Helm chart (deployments/helm/dra-driver-nvidia-gpu,
tag v0.4.1), written out: its values.yaml defaults and the objects its templates render.

- validation.yaml: fails on a 'namespace' value, the "default" namespace without
  allowDefaultNamespace, resources.gpus.enabled without gpuResourcesEnabledOverride, nvidiaCtkPath;
- _helpers.tpl: name (nameOverride or the chart's) prefixes the objects; serviceAccountName
  (<fullname>-service-account); labels, templateLabels, selectorLabels (<name>-component: <c>);
  fullimage (tag v<appVersion>); namespaces (the release's plus the controller's
  ADDITIONAL_NAMESPACES); resourceApiVersion: the value, else the highest .Capabilities has,
  taken to be resource.k8s.io/v1 (Kubernetes 1.37 serves it);
- rbac-compute-domain-daemon.yaml; rbac-controller.yaml, rbac-kubeletplugin.yaml
  (serviceAccount.create): accounts, cluster roles, per-namespace roles;
- deviceclass-gpu.yaml (extendedResourceName nvidia.com/gpu under v1 only), -mig, -vfio-gpu
  (resources.gpus.enabled); deviceclass-compute-domain-* (resources.computeDomains.enabled);
- kubeletplugin.yaml: the <name>-kubelet-plugin DaemonSet, init-container then the
  compute-domains and gpus containers as enabled;
- controller.yaml: the <name>-controller Deployment (resources.computeDomains.enabled).
Not rendered: crds/ (ComputeDomain, ComputeDomainClique), validatingadmissionpolicy*.yaml (rendered
always; admissionregistration.k8s.io is not served here), networkpolicy-*.yaml and webhook-*.yaml
(off by default), the OpenShift bindings (no SCC API). Helm's install labels and annotates every object as its release's
(pkg/action/install.go setMetadataVisitor) and orders them (releaseutil/kind_sorter.go).
"""

import copy
import posixpath

from . import RenderError

CHART = "dra-driver-nvidia-gpu"

_AFF_KEYS = [("feature.node.kubernetes.io/pci-10de.present", "true"),
             ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
             ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
             ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"), ("nvidia.com/gpu.present", "true")]
_CTR = lambda port: {"env": [], "securityContext": {"privileged": True}, "resources": {}, "healthcheckPort": port}
DEFAULTS = {
    "nvidiaDriverRoot": "/", "nvidiaCDIHookPath": "", "altProcDevices": "", "nameOverride": "",
    "fullnameOverride": "", "namespaceOverride": "", "selectorLabelsOverride": {},
    "gpuResourcesEnabledOverride": False, "allowDefaultNamespace": False, "resourceApiVersion": "",
    "imagePullSecrets": [],
    "image": {"repository": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
              "pullPolicy": "IfNotPresent", "tag": ""},
    "serviceAccount": {"create": True, "annotations": {}, "name": ""},
    "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}},
    "featureGates": {}, "logVerbosity": "4",
    "webhook": {"enabled": False, "replicas": 1, "servicePort": 443, "containerPort": 443,
                "priorityClassName": "system-cluster-critical", "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "maxUnavailable": "100%"}}, "podAnnotations": {}, "podSecurityContext": {}, "nodeSelector": {},
                "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}], "affinity": {},
                "containers": {"webhook": {"securityContext": {"privileged": False}, "resources": {}}},
                "serviceAccount": {"create": True, "name": ""}, "failurePolicy": "Fail",
                "tls": {"mode": "cert-manager", "secret": {"name": "", "caBundle": ""},
                        "certManager": {"issuerType": "selfsigned", "issuerName": "", "dnsNames": []}}},
    "controller": {
        "replicas": 1,
        "leaderElection": {"enabled": False, "leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"},
        "metrics": {"enabled": True, "httpEndpoint": ":8080", "metricsPath": "/metrics", "profilePath": ""},
        "priorityClassName": "system-node-critical", "podAnnotations": {}, "podSecurityContext": {}, "nodeSelector": {},
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "containers": {"computeDomain": {"securityContext": {}, "env": [], "resources": {}}},
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
            "preference": {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane",
                                                 "operator": "Exists"}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"dra-driver-nvidia-gpu-component": "controller"}},
                "topologyKey": "kubernetes.io/hostname"}}]}},
        "networkPolicy": {"enabled": False}},
    "kubeletPlugin": {
        "metrics": {"enabled": True, "gpuHttpEndpoint": ":8080", "computeDomainHttpEndpoint": ":8081",
                    "metricsPath": "/metrics"},
        "priorityClassName": "system-node-critical",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
        "podAnnotations": {}, "podSecurityContext": {}, "nodeSelector": {},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "kubeletRegistrarDirectoryPath": "/var/lib/kubelet/plugins_registry",
        "kubeletPluginsDirectoryPath": "/var/lib/kubelet/plugins",
        "containers": {"init": {"securityContext": {}, "resources": {}}, "computeDomains": _CTR(51515),
                       "gpus": _CTR(51516)},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": k, "operator": "In", "values": [x]}]} for k, x in _AFF_KEYS]}}},
        "networkPolicy": {"enabled": False}},
}

_WHERE = "execution error at (%s/templates/validation.yaml:%%d:4): " % CHART
_HELM_OPTS = "\nSee: https://helm.sh/docs/helm/helm_install/#options"
GPUS_ERROR = (_WHERE % 42 + "\n\nThe default value of 'resources.gpus.enabled == true'. However, when "
              "'resources.gpus.enabled=true' this DRA driver cannot be deployed alongside the standard GPU device "
              "plugin on the same node. To avoid potential collisions between these two components, we will not allow "
              "this default to take effect until KEP 5004 has reached GA in upstream Kubernetes.\n\n"
              "If you are sure you have disabled the deployment of the standard GPU device plugin and want to remove "
              "this error and force 'resources.gpus.enabled=true', you must also:\n\n"
              "    --set 'gpuResourcesEnabledOverride=true'\n\n"
              "Once KEP 5004 has reached GA, this DRA driver will be able to honour extended resource requests for "
              "'nvidia.com/gpu' alongside requests made using ResourceClaims, essentially obsoleting the need for the "
              "standard GPU device plugin altogether. If you want to try this feature now, you can enable it in "
              "upstream Kubernetes v1.35+ by setting the 'DRAExtendedResource' feature gate on the 'kube-apiserver', "
              "'kube-scheduler', 'kube-controller-manager', and 'kubelet'.")
DEFAULT_NS_ERROR = (_WHERE % 30 + "\nRunning in the 'default' namespace is not recommended.\n"
                    "Set 'allowDefaultNamespace=true' to bypass this error.\nOtherwise, use --namespace (with "
                    "--create-namespace as necessary) to run in a specific namespace." + _HELM_OPTS)
NAMESPACE_ERROR = (_WHERE % 21 + "\nValue 'namespace' set to %s\nSetting an explicit 'namespace' in values.yaml or "
                   "via --set on the command line is no longer supported.\nUse --namespace (with --create-namespace "
                   "as necessary) instead." + _HELM_OPTS)
CTK_ERROR = (_WHERE % 52 + "\nSetting a user-defined nvidiaCtkPath is no longer supported. It can simply be removed "
             "without consequence.\nIt was previously required to point the DRA driver at the host-path to the "
             "nvidia-ctk binary.\nThis, in turn, was used to execute any CDI hooks injected into containers by the DRA "
             "driver.\nNow a diffent binary is used called nvidia-cdi-hook that is installed by the DRA driver itself."
             "\nThis renders the need for passing this user-defined flag obsolete.")
# pkg/release/util/kind_sorter.go InstallOrder, for the kinds rendered here (unknown kinds last).
_ORDER = ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "DaemonSet", "Deployment"]
# kubeletplugin.yaml's script for both plugin containers (command bash -c), byte for byte.
_SCRIPT = """# Conditionally mask the params file to prevent this container from
# recreating any missing GPU device nodes. This is necessary, for
# example, when running under nvkind to limit the set GPUs governed
# by the plugin even though it has cgroup access to all of them.
if [ "${MASK_NVIDIA_DRIVER_PARAMS}" = "true" ]; then
  cp /proc/driver/nvidia/params /root/gpu-params
  sed -i 's/^ModifyDeviceFiles: 1$/ModifyDeviceFiles: 0/' /root/gpu-params
  mount --bind /root/gpu-params /proc/driver/nvidia/params
fi
%s -v $(LOG_VERBOSITY)"""


def _name(v):
    return (v.get("nameOverride") or CHART)[:63].rstrip("-")


def _fullname(release, v):
    if v.get("fullnameOverride"):
        return v["fullnameOverride"][:63].rstrip("-")
    name = v.get("nameOverride") or CHART
    return (release if name in release else "%s-%s" % (release, name))[:63].rstrip("-")


def _namespaces(ns, v):
    out = [ns]
    for e in v["controller"]["containers"]["computeDomain"].get("env") or []:
        if e.get("name") == "ADDITIONAL_NAMESPACES" and e.get("value"):
            out += [x.strip() for x in str(e["value"]).split(",") if x.strip() and x.strip() not in out]
    return out


def validate(namespace, v):
    """templates/validation.yaml, its first failing check."""
    if v.get("namespace"):
        raise RenderError(NAMESPACE_ERROR % _s(v["namespace"]))
    if namespace == "default" and not v.get("namespaceOverride") and not v.get("allowDefaultNamespace"):
        raise RenderError(DEFAULT_NS_ERROR)
    if v["resources"]["gpus"].get("enabled") and not v.get("gpuResourcesEnabledOverride"):
        raise RenderError(GPUS_ERROR)
    if v.get("nvidiaCtkPath"):
        raise RenderError(CTK_ERROR)


def render(release, namespace, v, meta):
    ns = v.get("namespaceOverride") or namespace
    validate(ns, v)
    name, version, app = _name(v), meta.get("version", ""), meta.get("appVersion") or meta.get("version", "")
    pod_labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}
    labels = dict({"helm.sh/chart": ("%s-%s" % (name, version)).replace("+", "_")[:63].rstrip("-"),
                   "app.kubernetes.io/version": app, "app.kubernetes.io/managed-by": "Helm"}, **pod_labels)
    image = "%s:%s" % (v["image"]["repository"], v["image"].get("tag") or "v" + app)
    sac = v["serviceAccount"]
    sa = (sac.get("name") or _fullname(release, v) + "-service-account") if sac.get("create") else (
        sac.get("name") or "default")
    api = v.get("resourceApiVersion") or "resource.k8s.io/v1"
    gpus, cds = v["resources"]["gpus"].get("enabled"), v["resources"]["computeDomains"].get("enabled")
    nss, objs, rbac = _namespaces(ns, v), [], "rbac.authorization.k8s.io"

    def add(kind, obj_name, obj_ns=None, lab=None, api_version=rbac + "/v1", **rest):
        md = dict({"name": obj_name}, **({"namespace": obj_ns} if obj_ns else {}))
        md["labels"] = dict(lab or {}, **{"app.kubernetes.io/managed-by": "Helm"})
        md["annotations"] = {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}
        objs.append(dict({"apiVersion": api_version, "kind": kind, "metadata": md}, **rest))
        return md

    def device_class(dc, driver, cel, ext=False):
        spec = {"selectors": [{"cel": {"expression": "device.driver == '%s' && device.attributes['%s'].%s"
                                                     % (driver, driver, cel)}}]}
        if ext and api == "resource.k8s.io/v1":
            spec["extendedResourceName"] = "nvidia.com/gpu"
        add("DeviceClass", dc, api_version=api, spec=spec)

    def workload(kind, component, spec_of):
        select = dict(v.get("selectorLabelsOverride") or {"%s-component" % name: component})
        spec, pod, comp = spec_of(v, name, ns, sa, image)
        pod.update(priorityClassName=comp.get("priorityClassName"), imagePullSecrets=v.get("imagePullSecrets"),
                   securityContext=comp.get("podSecurityContext") or {}, nodeSelector=comp.get("nodeSelector"),
                   affinity=comp.get("affinity"), tolerations=comp.get("tolerations"))
        md = dict({"annotations": comp["podAnnotations"]} if comp.get("podAnnotations") else {},
                  labels=dict(pod_labels, **select))
        spec.update(selector={"matchLabels": select}, template={"metadata": md, "spec": _prune(pod)})
        add(kind, "%s-%s" % (name, component), ns, labels, "apps/v1", spec=_prune(spec))

    def account(role, rules, ns_rules):
        """rbac-controller.yaml, rbac-kubeletplugin.yaml."""
        subj, cr = [{"kind": "ServiceAccount", "name": "%s-%s" % (sa, role), "namespace": ns}], name + "-clusterrole-"
        add("ClusterRole", cr + role, rules=rules)
        md = add("ServiceAccount", "%s-%s" % (sa, role), ns, labels, "v1")
        md["annotations"].update(sac.get("annotations") or {})
        crb = "%s-clusterrole-binding-%s" % (name, role) + ("-" + ns if role == "controller" else "")
        add("ClusterRoleBinding", crb, subjects=subj,
            roleRef={"kind": "ClusterRole", "name": cr + role, "apiGroup": rbac})
        for n in nss:
            add("Role", "%s-role-%s" % (name, role), n, rules=ns_rules)
            add("RoleBinding", "%s-role-binding-%s" % (name, role), n, subjects=subj,
                roleRef={"kind": "Role", "name": "%s-role-%s" % (name, role), "apiGroup": rbac})

    rule = lambda g, r, verbs: {"apiGroups": [g], "resources": r.split(","), "verbs": verbs.split(",")}
    watch, edit = "get,list,watch", "get,list,watch,create,update,patch,delete"
    if cds:
        workload("Deployment", "controller", _controller)
        device_class("compute-domain-daemon.nvidia.com", "compute-domain.nvidia.com", "type == 'daemon'")
        device_class("compute-domain-default-channel.nvidia.com", "compute-domain.nvidia.com",
                     "type == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0")
    if gpus:
        device_class("gpu.nvidia.com", "gpu.nvidia.com", "type == 'gpu'", ext=True)
        device_class("mig.nvidia.com", "gpu.nvidia.com", "type == 'mig'")
        device_class("vfio.gpu.nvidia.com", "gpu.nvidia.com", "type == 'vfio'")
    if gpus or cds:
        workload("DaemonSet", "kubelet-plugin", _kubelet_plugin)
    # rbac-compute-domain-daemon.yaml, whatever is enabled.
    cdd = [{"kind": "ServiceAccount", "name": "compute-domain-daemon-service-account", "namespace": n} for n in nss]
    add("ClusterRole", "compute-domain-daemon-role", rules=[
        rule("resource.nvidia.com", "computedomains,computedomains/status", watch + ",update,patch"),
        rule("resource.nvidia.com", "computedomaincliques", watch + ",create,update,patch"),
        rule("", "pods", watch + ",patch")])
    for n in nss:
        add("ServiceAccount", "compute-domain-daemon-service-account", n, api_version="v1")
    add("ClusterRoleBinding", "compute-domain-daemon-role-binding", subjects=cdd,
        roleRef={"kind": "ClusterRole", "name": "compute-domain-daemon-role", "apiGroup": rbac})
    if sac.get("create"):
        account("controller", [
            rule("resource.nvidia.com", "computedomains", watch + ",update"),
            rule("resource.nvidia.com", "computedomains/status", "update"),
            rule("resource.k8s.io", "resourceclaimtemplates", watch + ",create,update,delete"),
            rule("coordination.k8s.io", "leases", "get,create,update"),
            rule("", "nodes", watch + ",update"), rule("", "pods", watch)],
            [rule("apps", "daemonsets", edit), rule("resource.nvidia.com", "computedomaincliques", watch + ",update")])
        mps = gpus and (v.get("featureGates") or {}).get("MPSSupport")
        account("kubeletplugin", [
            rule("resource.nvidia.com", "computedomains", watch), rule("resource.k8s.io", "resourceclaims", watch),
            rule("resource.k8s.io", "resourceslices", watch + ",create,update,delete"),
            rule("", "nodes", watch + ",update"), rule("", "pods", watch)],
            [rule("resource.nvidia.com", "computedomaincliques", "get")]
            + ([rule("apps", "deployments", edit)] if mps else []))
    objs = copy.deepcopy(objs)  # no object shares a part with the values, or another
    return sorted(objs, key=lambda o: _ORDER.index(o["kind"]) if o["kind"] in _ORDER else len(_ORDER))


def _s(x):
    """A value as "{{ x }}" prints it (Helm turns <no value> into "")."""
    return "" if x is None else str(x).lower() if isinstance(x, bool) else str(x)


def _env(pairs):
    """[(NAME, value or {fieldPath})] as a container's env."""
    return [{"name": n, "valueFrom": {"fieldRef": x}} if isinstance(x, dict) else {"name": n, "value": x}
            for n, x in pairs]


def _prune(spec):
    """Leave out what a with/if block would not print (securityContext is printed always)."""
    return {k: x for k, x in spec.items() if x not in (None, "", [], {}) or k == "securityContext"}


def _gates(v):
    g = v.get("featureGates") or {}
    return [("FEATURE_GATES", "".join("%s=%s," % (k, _s(g[k])) for k in sorted(g)))] if g else []


def _controller(v, name, ns, sa, image):
    """controller.yaml: the compute-domain container."""
    c = v["controller"]
    cd, m, le, pull = c["containers"]["computeDomain"], c["metrics"], c["leaderElection"], v.get("imagePullSecrets")
    env = _env(([("HTTP_ENDPOINT", _s(m.get("httpEndpoint"))), ("METRICS_PATH", _s(m.get("metricsPath"))),
                 ("PPROF_PATH", _s(m.get("profilePath")))] if m.get("enabled") else [])
               + [("LOG_VERBOSITY", _s(v.get("logVerbosity"))), ("LOG_VERBOSITY_CD_DAEMON", _s(v.get("logVerbosity"))),
                  ("POD_NAME", {"fieldPath": "metadata.name"}), ("NAMESPACE", {"fieldPath": "metadata.namespace"}),
                  ("IMAGE_NAME", image)]
               + ([("CD_DAEMON_IMAGE_PULL_SECRET_NAMES", ",".join(_s(s.get("name")) for s in pull))] if pull else [])
               + [("NVIDIA_VISIBLE_DEVICES", "void")] + _gates(v))
    env += list(cd.get("env") or []) + _env([
        ("LEADER_ELECTION_ENABLED", _s(le.get("enabled"))), ("LEADER_ELECTION_LEASE_LOCK_NAME", name + "-controller"),
        ("LEADER_ELECTION_LEASE_LOCK_NAMESPACE", ns), ("LEADER_ELECTION_LEASE_DURATION", _s(le.get("leaseDuration"))),
        ("LEADER_ELECTION_RENEW_DEADLINE", _s(le.get("renewDeadline"))),
        ("LEADER_ELECTION_RETRY_PERIOD", _s(le.get("retryPeriod")))])
    ctr = {"name": "compute-domain", "securityContext": cd.get("securityContext") or {}, "image": image,
           "imagePullPolicy": v["image"].get("pullPolicy"),
           "command": ["compute-domain-controller", "-v", "$(LOG_VERBOSITY)"], "resources": cd.get("resources") or {},
           "env": env}
    return {"replicas": c.get("replicas")}, {"serviceAccountName": sa + "-controller", "containers": [ctr]}, c


def _kubelet_plugin(v, name, ns, sa, image):
    """kubeletplugin.yaml: init-container, then compute-domains and gpus as enabled."""
    kp, root, alt = v["kubeletPlugin"], _s(v.get("nvidiaDriverRoot")), v.get("altProcDevices")
    reg, plugins = _s(kp["kubeletRegistrarDirectoryPath"]), _s(kp["kubeletPluginsDirectoryPath"])
    passthrough = bool((v.get("featureGates") or {}).get("PassthroughSupport"))
    dirs = [("KUBELET_REGISTRAR_DIRECTORY_PATH", reg), ("KUBELET_PLUGINS_DIRECTORY_PATH", plugins)]
    parent = dict({"name": "driver-root-parent", "mountPath": "/driver-root-parent"},
                  **({"readOnly": True} if root == "/" else {"mountPropagation": "HostToContainer"}))
    init = [{"name": "init-container", "image": image, "securityContext": {"privileged": True},
             "command": ["bash", "/usr/bin/kubelet-plugin-prestart.sh"], "volumeMounts": [parent],
             "env": _env([("NVIDIA_DRIVER_ROOT", root), ("NVIDIA_VISIBLE_DEVICES", "void")] + dirs)}]
    containers, m = [], kp["metrics"]
    for key, ctr_name, prog, endpoint, period in (
            ("computeDomains", "compute-domains", "compute-domain-kubelet-plugin", "computeDomainHttpEndpoint", 10),
            ("gpus", "gpus", "gpu-kubelet-plugin", "gpuHttpEndpoint", 30)):
        if not v["resources"][key].get("enabled"):
            continue
        c, gpu, cd_alt = kp["containers"][key], key == "gpus", alt and key != "gpus"
        port = c.get("healthcheckPort")
        env = [("HTTP_ENDPOINT", _s(m.get(endpoint))), ("METRICS_PATH", _s(m.get("metricsPath")))] if m.get(
            "enabled") else []
        env += [("LOG_VERBOSITY", _s(v.get("logVerbosity"))),
                ("MASK_NVIDIA_DRIVER_PARAMS", _s(v.get("maskNvidiaDriverParams"))), ("NVIDIA_DRIVER_ROOT", root),
                ("NVIDIA_VISIBLE_DEVICES", "void"), ("CDI_ROOT", "/var/run/cdi"), ("NVIDIA_MIG_CONFIG_DEVICES", "all")]
        env += [("ALT_PROC_DEVICES_PATH", "/alt-proc-devices")] if cd_alt else []
        env += [("NODE_NAME", {"fieldPath": "spec.nodeName"}), ("NAMESPACE", {"fieldPath": "metadata.namespace"})]
        env += [("SERVICE_ACCOUNT_NAME", {"fieldPath": "spec.serviceAccountName"}),
                ("IMAGE_NAME", image)] if gpu else []
        env += [("NVIDIA_CDI_HOOK_PATH", _s(v["nvidiaCDIHookPath"]))] if v.get("nvidiaCDIHookPath") else []
        env += _gates(v) + dirs + ([("HEALTHCHECK_PORT", _s(port))] if port else [])
        vm = [{"name": "plugins-registry", "mountPath": reg},
              {"name": "plugins", "mountPath": plugins, "mountPropagation": "Bidirectional"},
              {"name": "cdi", "mountPath": "/var/run/cdi"},
              dict({"name": "driver-root", "mountPath": "/driver-root"}, **({} if gpu else {"readOnly": True}),
                   mountPropagation="HostToContainer")]
        vm += [{"name": "alt-proc-devices", "mountPath": "/alt-proc-devices", "readOnly": True}] if cd_alt else []
        if passthrough and gpu:
            vm += [{"name": "host-root", "mountPath": "/host-root", "mountPropagation": "HostToContainer",
                    "readOnly": True}, {"name": "sysfs", "mountPath": "/sys/", "mountPropagation": "Bidirectional"},
                   {"name": "procfs", "mountPath": "/proc/", "mountPropagation": "Bidirectional"}]
        ctr = {"name": ctr_name, "image": image, "imagePullPolicy": v["image"].get("pullPolicy"),
               "command": ["bash", "-c"], "args": [_SCRIPT % prog], "resources": c.get("resources") or {},
               "env": _env(env) + list(c.get("env") or []), "volumeMounts": vm}
        if c.get("securityContext") or not gpu:  # gpus: an empty securityContext prints as null
            ctr["securityContext"] = c.get("securityContext") or {}
        if int(port or 0) > 0:
            probe = lambda fail, every: {"grpc": {"port": int(port), "service": "liveness"},
                                         "failureThreshold": fail, "periodSeconds": every, "timeoutSeconds": 10}
            ctr["startupProbe"], ctr["livenessProbe"] = probe(600, 1), probe(3, period)
        containers.append(ctr)
    host = lambda n, path, kind=None: {"name": n, "hostPath": dict({"path": path}, **({"type": kind} if kind else {}))}
    volumes = [host("plugins-registry", reg), host("plugins", plugins), host("cdi", "/var/run/cdi"),
               host("driver-root-parent", "/" if root == "/" else posixpath.dirname(
                   root[:-1] if root.endswith("/") else root) or ".", "DirectoryOrCreate"),
               host("driver-root", root, "DirectoryOrCreate")]
    volumes += [host("alt-proc-devices", _s(alt), "File")] if alt else []
    volumes += [host("host-root", "/", "Directory"), host("sysfs", "/sys/", "Directory"),
                host("procfs", "/proc/", "Directory")] if passthrough else []
    return ({"updateStrategy": kp.get("updateStrategy")}, {"serviceAccountName": sa + "-kubeletplugin",
            "initContainers": init, "containers": containers, "volumes": volumes}, kp)
