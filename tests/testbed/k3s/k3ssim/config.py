"""Paths, knobs and failure switches of the stand-in (docs/k3s-standin.md).

Paths are k3s's own (pkg/cli/cmds, pkg/daemons/config); each can be moved
for tests that run the stand-in outside a container. Knobs are read from
the environment once; a failure switch is read at every use, and a file of
its name under switches/ in the data dir wins over the environment, so a
test can flip it at run time (`docker exec C sh -c 'echo 1 >…/SIM_X'`).
"""

import os

DATA_DIR = os.environ.get("SIM_K3S_DATA_DIR", "/var/lib/rancher/k3s")
RUN_DIR = os.environ.get("SIM_K3S_RUN_DIR", "/run/k3s-sim")
KUBECONFIG = os.environ.get("SIM_K3S_KUBECONFIG", "/etc/rancher/k3s/k3s.yaml")
DEV_DIR = os.environ.get("SIM_DEV_DIR", "/dev")
KUBELET_DIR = os.environ.get("SIM_KUBELET_DIR", "/var/lib/kubelet")
CGROUP_DIR = os.environ.get("SIM_CGROUP_DIR", "/sys/fs/cgroup")
# The nested NVIDIA runtime's config, and where containerd reads CDI specs (the last: the plugin's).
NVIDIA_RUNTIME_CONFIG = os.environ.get("SIM_NVIDIA_RUNTIME_CONFIG", "/etc/nvidia-container-runtime/config.toml")
CDI_DIRS = os.environ.get("SIM_CDI_DIRS", "/etc/cdi:/var/run/cdi").split(":")
# SIMULATION: the simulated driver's inventory, which the hook writes in the gateway.
NVIDIA_SIM_INVENTORY = os.environ.get("NVIDIA_SIM_INVENTORY", "/etc/nvidia-sim/gpus")
MOUNTINFO = os.environ.get("SIM_MOUNTINFO", "/proc/self/mountinfo")
# The agent's node password (pkg/agent/config: /etc/rancher/node/password).
NODE_PASSWORD_FILE = os.environ.get("SIM_NODE_PASSWORD_FILE", "/etc/rancher/node/password")

SERVER_DIR = os.path.join(DATA_DIR, "server")
TLS_DIR = os.path.join(SERVER_DIR, "tls")
MANIFESTS_DIR = os.path.join(SERVER_DIR, "manifests")
STATIC_DIR = os.path.join(SERVER_DIR, "static")
DB_FILE = os.path.join(SERVER_DIR, "db", "state.json")
TOKEN_FILE = os.path.join(SERVER_DIR, "token")
AGENT_DIR = os.path.join(DATA_DIR, "agent")
IMAGES_DIR = os.path.join(AGENT_DIR, "images")
CONTAINERD_CONFIG = os.path.join(AGENT_DIR, "etc", "containerd", "config.toml")
SIM_DIR = os.path.join(DATA_DIR, "sim")
SWITCH_DIR = os.path.join(SIM_DIR, "switches")
POD_LOG_DIR = os.environ.get("SIM_POD_LOG_DIR", "/var/log/pods")
STAMPS = os.path.join(RUN_DIR, "stamps")

# k3s's default networks (--cluster-cidr, --service-cidr) and the API's
# Service address, the service range's first.
CLUSTER_CIDR = "10.42.0.0/16"
SERVICE_CIDR = "10.43.0.0/16"
KUBERNETES_SERVICE_IP = "10.43.0.1"

# The stand-in's release: what real k3s compiles in. tests/testbed/sim-image
# writes release.env next to the package from deploy/versions.env.
VERSION = "v1.35.0+k3s1"
HELM_JOB_IMAGE = "rancher/klipper-helm:v0.9.12-build20251215"
PAUSE_IMAGE = "rancher/mirrored-pause:3.6"


def _release():
    global VERSION, HELM_JOB_IMAGE, PAUSE_IMAGE
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "release.env")
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key == "SIM_VERSION":
                    VERSION = value
                elif key == "SIM_HELM_JOB_IMAGE":
                    HELM_JOB_IMAGE = value
                elif key == "SIM_PAUSE_IMAGE":
                    PAUSE_IMAGE = value
    except OSError:
        pass


_release()


def knob(name, default):
    """A timing knob: seconds, fractional (read once, at start)."""
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return float(default)


READY_DELAY = knob("SIM_K3S_READY_DELAY", 1)
RECONCILE_PERIOD = knob("SIM_K3S_RECONCILE_PERIOD", 0.25)
IDLE_AFTER = knob("SIM_K3S_IDLE_AFTER", 5)
IDLE_PERIOD = knob("SIM_K3S_IDLE_PERIOD", 1)
CRD_DELAY = knob("SIM_K3S_CRD_DELAY", 1)
HELM_DELAY = knob("SIM_HELM_DELAY", 1)
PLUGIN_DELAY = knob("SIM_PLUGIN_DELAY", 0.5)
PLUGIN_RETRY = knob("SIM_PLUGIN_RETRY", 2)
PLUGIN_REGISTER_GAP = knob("SIM_PLUGIN_REGISTER_GAP", 0)
POD_BACKOFF = knob("SIM_POD_BACKOFF", 1)
DEPLOY_PERIOD = knob("SIM_K3S_DEPLOY_PERIOD", 15)


def switch(name):
    """A failure switch's value ("" when off); the file wins."""
    try:
        with open(os.path.join(SWITCH_DIR, name), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return os.environ.get(name, "").strip()


def switch_on(name):
    return switch(name) == "1"
