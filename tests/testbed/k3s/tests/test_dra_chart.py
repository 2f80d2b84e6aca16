"""Unit tests of the simulated Helm's rendering of NVIDIA's DRA driver chart
(k3ssim/charts/dra_driver_nvidia_gpu.py), each case a rule of the chart's
templates at v0.4.1 (templates/validation.yaml, deviceclass-*.yaml,
kubeletplugin.yaml, controller.yaml, rbac-*.yaml)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from k3ssim import charts  # noqa: E402
from k3ssim.charts import dra_driver_nvidia_gpu as dra  # noqa: E402

META = {"name": "dra-driver-nvidia-gpu", "version": "0.4.1", "appVersion": "0.4.1"}
IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"


def render(*user, release="nvidia-dra-driver-gpu", namespace="nvidia-dra-driver-gpu"):
    return dra.render(release, namespace, charts.values(dra.DEFAULTS, {}, list(user)), META)


def by_kind(objs, kind):
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


class Validation(unittest.TestCase):
    """templates/validation.yaml: the first failing check, as Helm prints fail's text."""

    def test_gpus_enabled_needs_the_override(self):
        with self.assertRaises(dra.RenderError) as e:
            render()
        text = str(e.exception)
        self.assertTrue(text.startswith(
            "execution error at (dra-driver-nvidia-gpu/templates/validation.yaml:42:4): \n\n"
            "The default value of 'resources.gpus.enabled == true'. However, when 'resources.gpus.enabled=true' "
            "this DRA driver cannot be deployed alongside the standard GPU device plugin on the same node."), text)
        self.assertIn("you must also:\n\n    --set 'gpuResourcesEnabledOverride=true'\n\nOnce KEP 5004", text)
        self.assertTrue(text.endswith("'kube-scheduler', 'kube-controller-manager', and 'kubelet'."))
        render({"gpuResourcesEnabledOverride": True})
        render({"resources": {"gpus": {"enabled": False}}})

    def test_default_namespace_checked_first(self):
        with self.assertRaises(dra.RenderError) as e:
            render(namespace="default")
        self.assertTrue(str(e.exception).startswith(
            "execution error at (dra-driver-nvidia-gpu/templates/validation.yaml:30:4): \n"
            "Running in the 'default' namespace is not recommended.\n"))
        render({"allowDefaultNamespace": True, "gpuResourcesEnabledOverride": True}, namespace="default")
        render({"namespaceOverride": "default", "gpuResourcesEnabledOverride": True}, namespace="default")

    def test_namespace_value_and_ctk_path_refused(self):
        with self.assertRaises(dra.RenderError) as e:
            render({"namespace": "x"})
        self.assertIn("validation.yaml:21:4): \nValue 'namespace' set to x\n", str(e.exception))
        with self.assertRaises(dra.RenderError) as e:
            render({"gpuResourcesEnabledOverride": True, "nvidiaCtkPath": "/usr/bin/nvidia-ctk"})
        self.assertIn("validation.yaml:52:4): \nSetting a user-defined nvidiaCtkPath", str(e.exception))


class DefaultRender(unittest.TestCase):
    def setUp(self):
        self.objs = render({"gpuResourcesEnabledOverride": True})

    def test_kinds_and_names_in_install_order(self):
        sa = "nvidia-dra-driver-gpu-dra-driver-nvidia-gpu-service-account"
        got = [(o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")) for o in self.objs]
        ns = "nvidia-dra-driver-gpu"
        self.assertEqual(got, [
            ("ServiceAccount", "compute-domain-daemon-service-account", ns),
            ("ServiceAccount", sa + "-controller", ns), ("ServiceAccount", sa + "-kubeletplugin", ns),
            ("ClusterRole", "compute-domain-daemon-role", None),
            ("ClusterRole", "dra-driver-nvidia-gpu-clusterrole-controller", None),
            ("ClusterRole", "dra-driver-nvidia-gpu-clusterrole-kubeletplugin", None),
            ("ClusterRoleBinding", "compute-domain-daemon-role-binding", None),
            ("ClusterRoleBinding", "dra-driver-nvidia-gpu-clusterrole-binding-controller-" + ns, None),
            ("ClusterRoleBinding", "dra-driver-nvidia-gpu-clusterrole-binding-kubeletplugin", None),
            ("Role", "dra-driver-nvidia-gpu-role-controller", ns),
            ("Role", "dra-driver-nvidia-gpu-role-kubeletplugin", ns),
            ("RoleBinding", "dra-driver-nvidia-gpu-role-binding-controller", ns),
            ("RoleBinding", "dra-driver-nvidia-gpu-role-binding-kubeletplugin", ns),
            ("DaemonSet", "dra-driver-nvidia-gpu-kubelet-plugin", ns),
            ("Deployment", "dra-driver-nvidia-gpu-controller", ns),
            ("DeviceClass", "compute-domain-daemon.nvidia.com", None),
            ("DeviceClass", "compute-domain-default-channel.nvidia.com", None),
            ("DeviceClass", "gpu.nvidia.com", None), ("DeviceClass", "mig.nvidia.com", None),
            ("DeviceClass", "vfio.gpu.nvidia.com", None)])
        for o in self.objs:
            self.assertEqual(o["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm")
            self.assertEqual(o["metadata"]["annotations"]["meta.helm.sh/release-name"], "nvidia-dra-driver-gpu")
        crb = by_kind(self.objs, "ClusterRoleBinding")["dra-driver-nvidia-gpu-clusterrole-binding-kubeletplugin"]
        self.assertEqual(crb["subjects"], [{"kind": "ServiceAccount", "name": sa + "-kubeletplugin", "namespace": ns}])

    def test_device_classes(self):
        classes = by_kind(self.objs, "DeviceClass")
        for dc in classes.values():
            self.assertEqual(dc["apiVersion"], "resource.k8s.io/v1")
        gpu = classes["gpu.nvidia.com"]["spec"]
        self.assertEqual(gpu["selectors"], [{"cel": {"expression":
                         "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}])
        self.assertEqual(gpu["extendedResourceName"], "nvidia.com/gpu")
        mig = classes["mig.nvidia.com"]["spec"]
        self.assertEqual(mig["selectors"][0]["cel"]["expression"],
                         "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'")
        self.assertNotIn("extendedResourceName", mig)
        self.assertNotIn("extendedResourceName", classes["vfio.gpu.nvidia.com"]["spec"])
        beta = by_kind(render({"gpuResourcesEnabledOverride": True,
                               "resourceApiVersion": "resource.k8s.io/v1beta1"}), "DeviceClass")["gpu.nvidia.com"]
        self.assertEqual(beta["apiVersion"], "resource.k8s.io/v1beta1")
        self.assertNotIn("extendedResourceName", beta["spec"])

    def test_kubelet_plugin_daemonset(self):
        ds = by_kind(self.objs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]
        self.assertEqual(ds["spec"]["selector"], {"matchLabels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}})
        pod = ds["spec"]["template"]["spec"]
        self.assertEqual(pod["priorityClassName"], "system-node-critical")
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        self.assertIn({"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]},
                      terms)
        self.assertEqual(pod["tolerations"], [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        self.assertEqual([c["name"] for c in pod["initContainers"]], ["init-container"])
        self.assertEqual(pod["initContainers"][0]["command"], ["bash", "/usr/bin/kubelet-plugin-prestart.sh"])
        self.assertEqual([c["name"] for c in pod["containers"]], ["compute-domains", "gpus"])
        gpus = pod["containers"][1]
        self.assertEqual((gpus["image"], gpus["command"]), (IMAGE, ["bash", "-c"]))
        self.assertTrue(gpus["args"][0].endswith("\nfi\ngpu-kubelet-plugin -v $(LOG_VERBOSITY)"))
        self.assertEqual(gpus["securityContext"], {"privileged": True})
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in gpus["env"]}
        self.assertEqual((env["LOG_VERBOSITY"], env["NVIDIA_DRIVER_ROOT"], env["IMAGE_NAME"], env["HEALTHCHECK_PORT"]),
                         ("4", "/", IMAGE, "51516"))
        self.assertEqual(env["NODE_NAME"], {"fieldRef": {"fieldPath": "spec.nodeName"}})
        paths = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
        self.assertEqual(paths, {"plugins-registry": "/var/lib/kubelet/plugins_registry",
                                 "plugins": "/var/lib/kubelet/plugins", "cdi": "/var/run/cdi",
                                 "driver-root-parent": "/", "driver-root": "/"})
        self.assertEqual(pod["serviceAccountName"],
                         "nvidia-dra-driver-gpu-dra-driver-nvidia-gpu-service-account-kubeletplugin")

    def test_driver_root_under_the_operator(self):
        ds = by_kind(render({"gpuResourcesEnabledOverride": True, "nvidiaDriverRoot": "/run/nvidia/driver"}),
                     "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]
        pod = ds["spec"]["template"]["spec"]
        self.assertEqual({v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}["driver-root-parent"], "/run/nvidia")
        self.assertEqual(pod["initContainers"][0]["volumeMounts"][0],
                         {"name": "driver-root-parent", "mountPath": "/driver-root-parent",
                          "mountPropagation": "HostToContainer"})


class ComputeDomains(unittest.TestCase):
    def test_toggles_the_controller_and_its_container(self):
        on = render({"gpuResourcesEnabledOverride": True})
        dep = by_kind(on, "Deployment")["dra-driver-nvidia-gpu-controller"]
        ctr = dep["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual((ctr["name"], ctr["command"]), ("compute-domain",
                                                         ["compute-domain-controller", "-v", "$(LOG_VERBOSITY)"]))
        off = render({"gpuResourcesEnabledOverride": True, "resources": {"computeDomains": {"enabled": False}}})
        self.assertEqual(by_kind(off, "Deployment"), {})
        self.assertNotIn("compute-domain-daemon.nvidia.com", by_kind(off, "DeviceClass"))
        pod = by_kind(off, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]["spec"]["template"]["spec"]
        self.assertEqual([c["name"] for c in pod["containers"]], ["gpus"])

    def test_compute_domains_alone(self):
        objs = render({"resources": {"gpus": {"enabled": False}}})
        self.assertEqual(sorted(by_kind(objs, "DeviceClass")),
                         ["compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"])
        pod = by_kind(objs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]["spec"]["template"]["spec"]
        self.assertEqual([c["name"] for c in pod["containers"]], ["compute-domains"])
        none = render({"resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": False}}})
        self.assertEqual(by_kind(none, "DaemonSet"), {})

    def test_registered_by_chart_name(self):
        self.assertIs(charts.renderer("dra-driver-nvidia-gpu"), dra)


if __name__ == "__main__":
    unittest.main()
