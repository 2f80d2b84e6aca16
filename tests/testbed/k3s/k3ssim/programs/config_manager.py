"""The device plugin's config manager (k8s-device-plugin cmd/config-manager),
the init container and sidecar the chart adds when it has a config map:
it picks the config the node's nvidia.com/device-plugin.config label
names, else the default, copies it for the plugin and (as a sidecar)
signals the plugin to reload.
"""

from .. import logs


def _line(ctx, where, msg):
    ctx.log.write(logs.klog("I", where, msg).rstrip("\n"))


def main(ctx):
    env = ctx.env
    label = env.get("NODE_LABEL", "nvidia.com/device-plugin.config")
    node = ctx.api.find(ctx.api.registry.by_kind("v1", "Node"), None, ctx.kubelet.node) or {"metadata": {}}
    value = (node["metadata"].get("labels") or {}).get(label, "")
    name = value or env.get("DEFAULT_CONFIG") or "default"
    _line(ctx, "main.go:247", "Waiting for change to '%s' label" % label)
    _line(ctx, "main.go:249", "Label change detected: %s=%s" % (label, value))
    if not value:
        _line(ctx, "main.go:361", "No value set. Selecting default name: %s" % name)
    _line(ctx, "main.go:305", "Updating to config: %s" % name)
    _line(ctx, "main.go:320", "Successfully updated to config: %s" % name)
    if env.get("ONESHOT") == "true":
        return 0
    if env.get("SEND_SIGNAL") == "true":
        _line(ctx, "main.go:324", "Sending signal 'hangup' to '%s'" % env.get("PROCESS_TO_SIGNAL", ""))
        _line(ctx, "main.go:329", "Successfully sent signal")
    _line(ctx, "main.go:247", "Waiting for change to '%s' label" % label)
    ctx.stop.wait()
    return 0
