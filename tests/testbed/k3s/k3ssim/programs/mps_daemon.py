"""The MPS control daemon (k8s-device-plugin cmd/mps-control-daemon), the
chart's second DaemonSet: when the config shares GPUs by MPS it starts an
MPS daemon per resource ("Staring MPS daemon", the source's spelling) and
the plugin finds it healthy; otherwise it says so and idles. Its init
container (`mps-control-daemon mount-shm`) prepares /mps/shm and exits.
SIM_MPS_DAEMON_BROKEN=1: MPS cannot start (a GPU in exclusive-process mode,
no /dev/shm): "Failed to start MPS daemon: exit status 1", exit 1.
"""

from .. import config, logs
from . import device_plugin


def _line(ctx, sev, where, msg):
    ctx.log.write(logs.klog(sev, where, msg).rstrip("\n"))


def main(ctx):
    if "mount-shm" in ctx.argv[1:]:
        return 0
    if ctx.sleep(config.PLUGIN_DELAY):
        return 0
    if config.switch_on("SIM_MPS_DAEMON_BROKEN"):
        _line(ctx, "E", "main.go:214", "Failed to start MPS daemon: exit status 1")
        return 1
    try:
        kind, _, _ = device_plugin._sharing(device_plugin._load_config(ctx))
    except device_plugin.Fatal as e:
        _line(ctx, "E", "main.go:177", str(e))
        return 1
    if kind != "mps":
        _line(ctx, "I", "main.go:168", "Sharing strategy is not MPS; skipping MPS manager creation")
        _line(ctx, "I", "main.go:176", "No devices are configured for MPS sharing; Waiting indefinitely.")
        ctx.stop.wait()
        return 0
    uid = ctx.pod["metadata"]["uid"]
    _line(ctx, "I", "main.go:210", '"Staring MPS daemon" resource="nvidia.com/gpu"')
    ctx.kubelet.mps_serving.add(uid)
    ctx.kubelet.wake.set()
    try:
        ctx.stop.wait()
    finally:
        ctx.kubelet.mps_serving.discard(uid)
    return 0
