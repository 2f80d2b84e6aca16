"""The charts the simulated Helm knows how to render (SIMULATION: no Go
templates here; each chart's templates are written out in Python, after
the real chart's), and Helm's values coalescing.

A chart archive whose Chart.yaml names a chart not listed here installs
as a release without objects.
"""

import copy


def coalesce(defaults, user):
    """Helm's values merge (pkg/chartutil/coalesce.go): maps merge key by
    key, a user's null deletes the default, anything else replaces."""
    if not isinstance(defaults, dict) or not isinstance(user, dict):
        return copy.deepcopy(user)
    out = copy.deepcopy(defaults)
    for k, v in user.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = coalesce(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


class RenderError(Exception):
    """A chart's template failed (its `fail` or `required`), in helm's words."""


def values(defaults, chart_values, user_files):
    """The values a chart renders with: its values.yaml (DEFAULTS, written
    out in its module, then the archive's own), then each user file."""
    v = coalesce(defaults, chart_values or {})
    for u in user_files:
        v = coalesce(v, u or {})
    return v


def renderer(chart_name):
    from . import dra_driver_nvidia_gpu, nvidia_device_plugin
    return {"nvidia-device-plugin": nvidia_device_plugin,
            "dra-driver-nvidia-gpu": dra_driver_nvidia_gpu}.get(chart_name)
