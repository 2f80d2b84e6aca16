"""NVIDIA/k8s-device-plugin's Helm chart (deployments/helm/nvidia-device-plugin,
0.17 to 0.20), written out: its values.yaml defaults and the objects its
templates render.

- templates/validation.yml: installing into "default" fails unless
  allowDefaultNamespace;
- _helpers.tpl: fullname (the release name when it holds the chart's),
  the labels (helm.sh/chart, app.kubernetes.io/name, instance, version,
  managed-by) and selector labels (name, instance); hasConfigMap when
  config.map has entries or config.name names a ConfigMap;
- configmap.yml: <fullname>-configs with config.map's entries;
- role.yml, role-binding.yml, service-account.yml: the pods' account;
- podAnnotations: checksum/config, the rendered ConfigMap's hash, so that a
  changed config rolls the pods;
- daemonset-device-plugin.yml: the plugin's DaemonSet (the config manager
  as init container nvidia-device-plugin-init and sidecar
  nvidia-device-plugin-sidecar before nvidia-device-plugin-ctr, with
  shareProcessNamespace, when hasConfigMap);
- daemonset-mps-control-daemon.yml: <fullname>-mps-control-daemon, on
  nodes labelled nvidia.com/mps.capable=true, whose mount init container
  asks for Bidirectional propagation of /mps.
"""

import hashlib
import json

from . import RenderError

CHART = "nvidia-device-plugin"

DEFAULTS = {
    "config": {"map": {}, "default": "", "fallbackStrategies": ["named", "single"], "name": ""},
    "compatWithCPUManager": None, "migStrategy": None, "failOnInitError": None, "deviceListStrategy": None,
    "deviceIDStrategy": None, "nvidiaDriverRoot": None, "gdsEnabled": None, "mofedEnabled": None,
    "deviceDiscoveryStrategy": None, "nameOverride": "", "fullnameOverride": "", "namespaceOverride": "",
    "selectorLabelsOverride": {}, "allowDefaultNamespace": False, "imagePullSecrets": [],
    "image": {"repository": "nvcr.io/nvidia/k8s-device-plugin", "pullPolicy": "IfNotPresent", "tag": ""},
    "updateStrategy": {"type": "RollingUpdate"}, "podAnnotations": {}, "podSecurityContext": {},
    "securityContext": {}, "resources": {}, "nodeSelector": {},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In",
                               "values": ["true"]}]},
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In",
                               "values": ["NVIDIA"]}]},
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]}}},
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "priorityClassName": "system-node-critical", "runtimeClassName": None,
    "devicePlugin": {"enabled": True}, "gfd": {"enabled": False}, "nfd": {"enabled": False},
    "mps": {"root": "/run/nvidia/mps"},
}

VALIDATION_ERROR = ("execution error at (nvidia-device-plugin/templates/validation.yml:22:4): \n"
                    "Running in the 'default' namespace is not recommended.\n"
                    "Set 'allowDefaultNamespace=true' to bypass this error.\n"
                    "Otherwise, use --namespace (with --create-namespace as necessary) to run in a specific "
                    "namespace.\nSee: https://helm.sh/docs/helm/helm_install/#options")


def has_config_map(v):
    c = v.get("config") or {}
    return bool(c.get("map")) or bool(c.get("name"))


def config_map_name(v, fullname):
    return (v.get("config") or {}).get("name") or fullname + "-configs"


def render(release, namespace, v, meta):
    if namespace == "default" and not v.get("allowDefaultNamespace"):
        raise RenderError(VALIDATION_ERROR)
    fullname = v.get("fullnameOverride") or (release if CHART in release else "%s-%s" % (release, CHART))
    ns = v.get("namespaceOverride") or namespace
    version = meta.get("version", "")
    app = meta.get("appVersion") or version
    select = v.get("selectorLabelsOverride") or {"app.kubernetes.io/name": v.get("nameOverride") or CHART,
                                                  "app.kubernetes.io/instance": release}
    labels = dict({"helm.sh/chart": "%s-%s" % (CHART, version)}, **select)
    labels.update({"app.kubernetes.io/version": app, "app.kubernetes.io/managed-by": "Helm"})
    image = "%s:%s" % (v["image"]["repository"], v["image"].get("tag") or "v" + app)
    cm = has_config_map(v)
    objs = []
    meta_of = lambda name, namespaced=True: dict({"name": name, "labels": dict(labels),
                                                  "annotations": {"meta.helm.sh/release-name": release,
                                                                  "meta.helm.sh/release-namespace": namespace}},
                                                 **({"namespace": ns} if namespaced else {}))
    sa = fullname + "-service-account"
    objs.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta_of(sa)})
    objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": meta_of(fullname + "-role", False),
                 "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]})
    objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": meta_of(fullname + "-role-binding", False),
                 "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
                 "roleRef": {"kind": "ClusterRole", "name": fullname + "-role", "apiGroup": "rbac.authorization.k8s.io"}})
    annotations = dict(v.get("podAnnotations") or {})
    if v["config"].get("map"):
        configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta_of(fullname + "-configs"),
                     "data": {k: str(x) for k, x in v["config"]["map"].items()}}
        objs.append(configmap)
        # podAnnotations: a changed config rolls the pods (checksum/config).
        annotations.setdefault("checksum/config", hashlib.sha256(
            json.dumps(configmap, sort_keys=True).encode()).hexdigest())
    if (v.get("devicePlugin") or {}).get("enabled", True):
        objs.append(_daemonset(fullname, ns, meta_of(fullname), select, v, image, cm, annotations, plugin=True))
        objs.append(_daemonset(fullname + "-mps-control-daemon", ns, meta_of(fullname + "-mps-control-daemon"),
                               select, v, image, cm, annotations, plugin=False))
    return objs


def _mig_none(v):
    """allPossibleMigStrategiesAreNone (_helpers.tpl)."""
    if v.get("migStrategy"):
        return v["migStrategy"] == "none"
    return not has_config_map(v)


def _security_context(v):
    """nvidia-device-plugin.securityContext: the value, privileged for the
    CPU manager, SYS_ADMIN for MIG or volume-mounts (or any config map),
    else no privilege at all."""
    if v.get("securityContext"):
        return v["securityContext"]
    if v.get("compatWithCPUManager"):
        return {"privileged": True}
    if not _mig_none(v) or "volume-mounts" in str(v.get("deviceListStrategy") or "") or has_config_map(v):
        return {"capabilities": {"add": ["SYS_ADMIN"]}}
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def _config_manager(name, image, v, process, oneshot):
    env = [{"name": "ONESHOT", "value": "true" if oneshot else "false"}, {"name": "KUBECONFIG", "value": ""},
           {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
           {"name": "NODE_LABEL", "value": "nvidia.com/device-plugin.config"},
           {"name": "CONFIG_FILE_SRCDIR", "value": "/available-configs"},
           {"name": "CONFIG_FILE_DST", "value": "/config/config.yaml"},
           {"name": "DEFAULT_CONFIG", "value": v["config"].get("default") or ""},
           {"name": "FALLBACK_STRATEGIES", "value": ",".join(v["config"].get("fallbackStrategies") or [])},
           {"name": "SEND_SIGNAL", "value": "false" if oneshot else "true"},
           {"name": "SIGNAL", "value": "" if oneshot else "1"},
           {"name": "PROCESS_TO_SIGNAL", "value": "" if oneshot else process}]
    return {"image": image, "name": name, "command": ["config-manager"], "env": env,
            "volumeMounts": [{"name": "available-configs", "mountPath": "/available-configs"},
                             {"name": "config", "mountPath": "/config"}]}


def _env_flags(v):
    env = []
    for key, var in (("migStrategy", "MIG_STRATEGY"), ("failOnInitError", "FAIL_ON_INIT_ERROR"),
                     ("compatWithCPUManager", "PASS_DEVICE_SPECS"), ("deviceListStrategy", "DEVICE_LIST_STRATEGY"),
                     ("deviceIDStrategy", "DEVICE_ID_STRATEGY"), ("deviceDiscoveryStrategy", "DEVICE_DISCOVERY_STRATEGY"),
                     ("gdsEnabled", "GDS_ENABLED"), ("mofedEnabled", "MOFED_ENABLED")):
        val = v.get(key)
        if val is not None:
            env.append({"name": var, "value": str(val).lower() if isinstance(val, bool) else str(val)})
    if v.get("nvidiaDriverRoot"):
        env.append({"name": "NVIDIA_DRIVER_ROOT", "value": str(v["nvidiaDriverRoot"])})
        env.append({"name": "CONTAINER_DRIVER_ROOT", "value": "/driver-root"})
    return env


def _daemonset(name, ns, metadata, select, v, image, cm, annotations, plugin):
    mps_root = (v.get("mps") or {}).get("root", "/run/nvidia/mps")
    gpu_env = ([{"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"}] if not _mig_none(v) else []) + [
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}, {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}]
    cfg_env = [{"name": "CONFIG_FILE", "value": "/config/config.yaml"}] if cm else []
    cfg_mounts = [{"name": "available-configs", "mountPath": "/available-configs"},
                  {"name": "config", "mountPath": "/config"}] if cm else []
    prefix = "nvidia-device-plugin" if plugin else "mps-control-daemon"
    init, containers = [], []
    if cm:
        for oneshot in (True, False):
            c = _config_manager(prefix + ("-init" if oneshot else "-sidecar"), image, v, prefix, oneshot)
            (init if oneshot else containers).append(c)
    if plugin:
        ctr = {"image": image, "imagePullPolicy": v["image"].get("pullPolicy", "IfNotPresent"),
               "name": "nvidia-device-plugin-ctr", "command": ["nvidia-device-plugin"],
               "env": [{"name": "MPS_ROOT", "value": mps_root}] + _env_flags(v) + cfg_env + gpu_env,
               "securityContext": _security_context(v),
               "volumeMounts": [{"name": "kubelet-device-plugins-dir", "mountPath": "/var/lib/kubelet/device-plugins"},
                                {"name": "mps-shm", "mountPath": "/dev/shm"}, {"name": "mps-root", "mountPath": "/mps"},
                                {"name": "cdi-root", "mountPath": "/var/run/cdi"}] + cfg_mounts}
        if v.get("nvidiaDriverRoot"):
            ctr["volumeMounts"].append({"name": "driver-root", "mountPath": "/driver-root", "readOnly": True})
        volumes = [{"name": "kubelet-device-plugins-dir",
                    "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"}},
                   {"name": "mps-root", "hostPath": {"path": mps_root, "type": "DirectoryOrCreate"}},
                   {"name": "mps-shm", "hostPath": {"path": mps_root + "/shm"}},
                   {"name": "cdi-root", "hostPath": {"path": "/var/run/cdi", "type": "DirectoryOrCreate"}}]
        if v.get("nvidiaDriverRoot"):
            volumes.append({"name": "driver-root", "hostPath": {"path": str(v["nvidiaDriverRoot"])}})
    else:
        init.append({"image": image, "name": "mps-control-daemon-mounts", "command": ["mps-control-daemon", "mount-shm"],
                     "securityContext": {"privileged": True},
                     "volumeMounts": [{"name": "mps-root", "mountPath": "/mps", "mountPropagation": "Bidirectional"}]})
        ctr = {"image": image, "imagePullPolicy": v["image"].get("pullPolicy", "IfNotPresent"),
               "name": "mps-control-daemon-ctr", "command": ["mps-control-daemon"],
               "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
               + _env_flags(v) + cfg_env + gpu_env,
               "securityContext": {"privileged": True},
               "volumeMounts": [{"name": "mps-shm", "mountPath": "/dev/shm"},
                                {"name": "mps-root", "mountPath": "/mps"}] + cfg_mounts}
        volumes = [{"name": "mps-root", "hostPath": {"path": mps_root, "type": "DirectoryOrCreate"}},
                   {"name": "mps-shm", "hostPath": {"path": mps_root + "/shm"}}]
    containers.append(ctr)
    if cm:
        volumes += [{"name": "available-configs", "configMap": {"name": config_map_name(v, metadata["name"].replace(
            "-mps-control-daemon", ""))}}, {"name": "config", "emptyDir": {}}]
    spec = {"priorityClassName": v.get("priorityClassName") or None, "securityContext": v.get("podSecurityContext") or {},
            "containers": containers, "volumes": volumes}
    if v.get("runtimeClassName"):
        spec["runtimeClassName"] = v["runtimeClassName"]
    spec["serviceAccountName"] = metadata["name"].replace("-mps-control-daemon", "") + "-service-account"
    if cm:
        spec["shareProcessNamespace"] = True
    if init:
        spec["initContainers"] = init
    node_selector = dict(v.get("nodeSelector") or {})
    if not plugin:
        node_selector["nvidia.com/mps.capable"] = "true"
    if node_selector:
        spec["nodeSelector"] = node_selector
    if v.get("affinity"):
        spec["affinity"] = v["affinity"]
    if v.get("tolerations"):
        spec["tolerations"] = v["tolerations"]
    spec = {k: x for k, x in spec.items() if x is not None}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata,
            "spec": {"selector": {"matchLabels": dict(select)}, "updateStrategy": v.get("updateStrategy"),
                     "template": {"metadata": {"labels": dict(select), "annotations": annotations},
                                  "spec": spec}}}
