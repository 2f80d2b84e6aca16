"""The programs of the simulated images, which a container of that image
runs in place of its binary (SIMULATION: the images are names only).

Each is a function PROGRAM(ctx) -> exit code, run in its own thread; it
writes its log through ctx.log and returns when ctx.stop is set.
"""

import threading


class Context:
    """What a container's program has: its pod and container, the
    environment and argv the runtime gave it, the API (as its service
    account would reach it), the node's kubelet, and the stop signal."""

    def __init__(self, kubelet, pod, container, env, argv):
        self.kubelet = kubelet
        self.api = kubelet.api
        self.pod = pod
        self.container = container
        self.env = env
        self.argv = argv
        self.stop = threading.Event()
        self.log = None

    def sleep(self, seconds):
        """Wait, or stop early: True when the container is being stopped."""
        return self.stop.wait(seconds)


def lookup(image, argv):
    """The program for IMAGE running ARGV, or None (run ARGV as a process)."""
    from . import config_manager, device_plugin, dra_kubelet_plugin, helm_job, mps_daemon
    repo = image.split("@")[0].rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image.split("@")[0]
    name = (argv[0] if argv else "").rsplit("/", 1)[-1]
    if repo.endswith("rancher/klipper-helm"):
        return helm_job.main
    if repo.endswith("nvidia/k8s-device-plugin"):
        return {"nvidia-device-plugin": device_plugin.main, "config-manager": config_manager.main,
                "mps-control-daemon": mps_daemon.main}.get(name)
    if repo.endswith("dra-driver-nvidia/dra-driver-nvidia-gpu"):
        # The chart runs its plugins through bash: `bash -c SCRIPT` whose
        # last line starts the plugin, and `bash prestart.sh`.
        if name == "bash" and len(argv) > 2 and argv[1] == "-c":
            name = (argv[2].strip().splitlines() or [""])[-1].split(" ")[0]
        elif name == "bash" and len(argv) > 1:
            name = argv[1].rsplit("/", 1)[-1]
        return {"gpu-kubelet-plugin": dra_kubelet_plugin.main,
                "kubelet-plugin-prestart.sh": dra_kubelet_plugin.prestart}.get(name)
    return None
