"""NVIDIA's DRA driver's opaque device config, GpuConfig, as its kubelet
plugin reads it from a claim's allocation (kubernetes-sigs/dra-driver-nvidia-gpu
v0.4.1):

- Which configs (cmd/gpu-kubelet-plugin/device_state.go
  GetOpaqueDeviceConfigs and prepareDevices): those of
  status.allocation.devices.config whose opaque.driver is the driver's, the
  class's before the claim's, after a default one of each kind that names
  no request; a result takes the last of them that names its request
  exactly (a subrequest's "<request>/<sub>"), or that names none and is of
  its device's kind (GpuConfig a GPU's, MigDeviceConfig a MIG device's): one
  of another kind that names its request fails ("cannot apply GpuConfig to
  device … of type "mig"").
- Decoding (api/nvidia.com/resource/v1beta1 api.go, the strict decoder):
  apiVersion resource.nvidia.com/v1beta1 and a known kind, no unknown field:
  else "error decoding config parameters: …".
- GpuConfig (gpuconfig.go, sharing.go, validate.go): sharing {strategy
  TimeSlicing | MPS, timeSlicingConfig {interval Default | Short | Medium |
  Long}, mpsConfig {…}}; Normalize fills the interval Default (or an empty
  mpsConfig) when the strategy's feature gate is on; Validate refuses a
  strategy whose gate is off, an unknown strategy or interval, and the other
  strategy's config. The feature gates come as FEATURE_GATES
  ("Name=true,…", pkg/flags/featuregates.go), as the chart's featureGates
  value renders them.
- Time-slicing (sharing.go TimeSlicingManager, nvlib.go): for each whole GPU
  of the claim, `nvidia-smi -i UUID -c DEFAULT`, then `nvidia-smi
  compute-policy -i UUID --set-timeslice N`, Default 0 … Long 3; unprepare
  sets 0 again.
- MigDeviceConfig (sharing.go MigDeviceSharing, validate.go): sharing
  TimeSlicing or MPS, no timeSlicingConfig, the strategy's gate checked;
  time-slicing a MIG device then does nothing.
- MPS (sharing.go MpsConfig, validate.go): defaultActiveThreadPercentage
  an integer from 0 to 100; defaultPinnedDeviceMemoryLimit a quantity and
  defaultPerDevicePinnedMemoryLimit one per device (its UUID or its index
  among the claim's devices, UUIDs sorted), each turned into whole
  megabytes ("<N>M", N = bytes / 1024 / 1024, at least 1) for the devices
  (MpsPerDevicePinnedMemoryLimit.Normalize); the daemon itself:
  programs/dra_mps.py. SIMULATION: a limit set too low is named as
  written ("invalid limit: default value set too low: 1Ki"), where the
  real text prints Go's %v of the quantity's struct.
- A config that carries the other strategy's settings passes validation
  and fails where it is applied (GetTimeSlicingConfig, GetMpsConfig:
  "cannot use MpsConfig with the 'TimeSlicing' strategy"; other_config()).
SIMULATION: VfioDeviceConfig is not a known kind here (the stand-in
publishes no VFIO devices).
"""

import json
import re

API_VERSION = "resource.nvidia.com/v1beta1"
KINDS = {"gpu": "GpuConfig", "mig": "MigDeviceConfig"}   # a device's type: its config's kind
INTERVALS = {"Default": 0, "Short": 1, "Medium": 2, "Long": 3}
GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}
# Every gate the driver knows and its default (pkg/featuregates/featuregates.go
# at v0.4.1: the project's, component-base's AllAlpha and AllBeta, and
# logsapi's, ContextualLogging set on), as ToMap() gives them.
DEFAULT_GATES = {"AllAlpha": False, "AllBeta": False, "ComputeDomainCliques": True, "ContextualLogging": True,
                 "CrashOnNVLinkFabricErrors": True, "DeviceMetadata": False, "DynamicMIG": False,
                 "IMEXDaemonsWithDNSNames": True, "LoggingAlphaOptions": False, "LoggingBetaOptions": True,
                 "MPSSupport": False, "NVMLDeviceHealthCheck": False, "PassthroughSupport": False,
                 "TimeSlicingSettings": False}
MPS_FIELDS = {"defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit", "defaultPerDevicePinnedMemoryLimit"}
FIELDS = {"GpuConfig": {"": {"apiVersion", "kind", "sharing"},
                        "sharing": {"strategy", "timeSlicingConfig", "mpsConfig"},
                        "sharing.timeSlicingConfig": {"interval"}, "sharing.mpsConfig": MPS_FIELDS},
          "MigDeviceConfig": {"": {"apiVersion", "kind", "sharing"}, "sharing": {"strategy", "mpsConfig"},
                              "sharing.mpsConfig": MPS_FIELDS}}


class ConfigError(Exception):
    pass


# apimachinery resource.Quantity: a number, then a binary or decimal
# suffix or an exponent.
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")
_SUFFIXES = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60, "n": 1e-9,
             "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def quantity_bytes(text):
    """Quantity.Value() of TEXT (rounded up), or ConfigError as the
    decoder says it."""
    ok = isinstance(text, (str, int, float)) and not isinstance(text, bool)   # Quantity takes a JSON number too
    m = _QUANTITY.match(text if isinstance(text, str) else json.dumps(text)) if ok else None
    if not m:
        raise ConfigError("error decoding config parameters: quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    unit = m.group(2) or ""
    scale = 10 ** int(unit[1:]) if unit[:1] in "eE" and unit else _SUFFIXES.get(unit, 1)
    value = float(m.group(1)) * scale
    return int(value) + (1 if value > int(value) else 0)


def megabytes(text):
    """limit.Megabyte(): "<N>M" and whether N > 0."""
    n = quantity_bytes(text) // 1024 // 1024
    return "%dM" % n, n > 0


def pinned_limits(mps, uuids):
    """MpsPerDevicePinnedMemoryLimit.Normalize: {uuid: "<N>M"}, or ConfigError."""
    limits = {}
    if mps.get("defaultPinnedDeviceMemoryLimit") is not None and uuids:
        mb, ok = megabytes(mps["defaultPinnedDeviceMemoryLimit"])
        if not ok:
            raise ConfigError("invalid limit: default value set too low: %s" % mps["defaultPinnedDeviceMemoryLimit"])
        limits = {u: mb for u in uuids}
    for key, value in sorted((mps.get("defaultPerDevicePinnedMemoryLimit") or {}).items()):
        if key in uuids:
            uuid = key
        elif not re.match(r"^[+-]?[0-9]+$", key):
            raise ConfigError("invalid device: unable to parse key as an integer: %s" % key)
        elif 0 <= int(key) < len(uuids):
            uuid = uuids[int(key)]
        else:
            raise ConfigError("invalid device: invalid device index: %d" % int(key))
        mb, ok = megabytes(value)
        if not ok:
            raise ConfigError("invalid limit: value set too low: %s: %s" % (key, value))
        limits[uuid] = mb
    return limits


def feature_gates(text):
    """FEATURE_GATES ("A=true,B=false,") as {name: bool}."""
    gates = {}
    for part in (text or "").split(","):
        name, _, value = part.strip().partition("=")
        if name:
            gates[name] = value.strip().lower() == "true"
    return gates


def _unknown(fields, obj, path=""):
    """The first field the strict decoder does not know, as its path."""
    if not isinstance(obj, dict) or path not in fields:
        return None
    for k, v in obj.items():
        here = "%s.%s" % (path, k) if path else k
        if k not in fields[path]:
            return here
        found = _unknown(fields, v, here)
        if found:
            return found
    return None


def decode(params):
    """The parameters as a GpuConfig dict, or ConfigError."""
    if not isinstance(params, dict):
        raise ConfigError("error decoding config parameters: couldn't get version/kind; json parse error")
    if params.get("apiVersion") != API_VERSION or params.get("kind") not in FIELDS:
        raise ConfigError('error decoding config parameters: no kind "%s" is registered for version "%s" in scheme '
                          '"pkg/runtime/scheme.go:100"' % (params.get("kind"), params.get("apiVersion")))
    bad = _unknown(FIELDS[params["kind"]], params)
    if bad:
        raise ConfigError('error decoding config parameters: strict decoding error: unknown field "%s"' % bad)
    _mps_decode(params)
    return json.loads(json.dumps(params))


def configs_for(allocation, driver):
    """[(requests, config)] in precedence order, lowest first: the defaults,
    the class's, the claim's."""
    out = [([], {"apiVersion": API_VERSION, "kind": k}) for k in KINDS.values()]
    for source in ("FromClass", "FromClaim"):
        for c in (allocation or {}).get("devices", {}).get("config") or []:
            opaque = c.get("opaque") or {}
            if c.get("source") != source or opaque.get("driver") != driver:
                continue
            try:
                out.append((c.get("requests") or [], decode(opaque.get("parameters"))))
            except ConfigError as e:
                raise ConfigError("error getting opaque device configs: %s" % e)
    return out


def config_of(configs, request, device, dtype="gpu"):
    """The config a result of REQUEST for DEVICE of type DTYPE takes, or
    ConfigError when the one naming its request is of another kind."""
    for requests, cfg in reversed(configs):
        if requests and request not in requests:
            continue
        if cfg["kind"] == KINDS[dtype]:
            return cfg
        if requests:
            raise ConfigError('cannot apply %s to device "%s" of type "%s" (request: %s)'
                              % (cfg["kind"], device, dtype, request))
    raise ConfigError("no default config of kind %s" % KINDS[dtype])


def is_default(configs, cfg):
    """Is CFG one of the defaults (no config asked for)?"""
    return any(cfg is c for _, c in configs[:len(KINDS)])


def normalize_validate(cfg, gates):
    """Normalize() then Validate(): the sharing to apply, or ConfigError."""
    sharing = cfg.get("sharing")
    if sharing is None:
        return None
    strategy = sharing.get("strategy")
    if strategy not in GATES:
        raise ConfigError("error validating GPU config: unknown GPU sharing strategy: %s, supported GPU sharing "
                          "strategies: TimeSlicing, MPS" % strategy)
    if not gates.get(GATES[strategy]):
        raise ConfigError('error validating GPU config: "%s" is selected as the GPU sharing strategy, but the "%s" '
                          'feature gate is not enabled' % (strategy, GATES[strategy]))
    if strategy == "TimeSlicing" and cfg.get("kind") == "MigDeviceConfig":
        return None   # validated, but a MIG device is not time-sliced: nothing done (sharing.go)
    if strategy == "TimeSlicing":
        if sharing.get("timeSlicingConfig") is None:
            sharing["timeSlicingConfig"] = {}
        interval = sharing["timeSlicingConfig"].setdefault("interval", "Default")
        if interval not in INTERVALS:
            raise ConfigError("error validating GPU config: unknown time-slice interval: %s, supported time-slice "
                              "intervals: Default, Short, Medium, Long" % interval)
    else:
        if sharing.get("mpsConfig") is None:
            sharing["mpsConfig"] = {}
        _mps_validate(sharing["mpsConfig"])
    return sharing


def other_config(sharing):
    """GetTimeSlicingConfig's or GetMpsConfig's refusal of a validated
    sharing that carries the other strategy's config, as the apply step
    meets it (sharing.go), or None."""
    if sharing["strategy"] == "TimeSlicing" and sharing.get("mpsConfig") is not None:
        return "cannot use MpsConfig with the 'TimeSlicing' strategy"
    if sharing["strategy"] == "MPS" and sharing.get("timeSlicingConfig") is not None:
        return "cannot use TimeSlicingConfig with the 'MPS' strategy"
    return None


def _json_type(v):
    """A JSON value as encoding/json's UnmarshalTypeError names it."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number %s" % json.dumps(v)
    return {str: "string", list: "array", dict: "object"}.get(type(v), "value")


def _type_error(value, field, gotype):
    return ConfigError("error decoding config parameters: json: cannot unmarshal %s into Go struct field %s of type %s"
                       % (_json_type(value), field, gotype))


def _mps_decode(params):
    """The decoder's types: sharing and mpsConfig objects, an integer
    percentage, quantities, a map of them per device."""
    sharing = params.get("sharing")
    if sharing is not None and not isinstance(sharing, dict):
        raise _type_error(sharing, "%s.sharing" % params["kind"], "v1beta1.%sSharing"
                          % ("Gpu" if params["kind"] == "GpuConfig" else "MigDevice"))
    mps = (sharing or {}).get("mpsConfig")
    if mps is not None and not isinstance(mps, dict):
        raise _type_error(mps, "MpsConfig.sharing.mpsConfig", "v1beta1.MpsConfig")
    mps = mps or {}
    pct = mps.get("defaultActiveThreadPercentage")
    if pct is not None and (isinstance(pct, bool) or not isinstance(pct, int)):
        raise _type_error(pct, "MpsConfig.sharing.mpsConfig.defaultActiveThreadPercentage", "int")
    per = mps.get("defaultPerDevicePinnedMemoryLimit")
    if per is not None and not isinstance(per, dict):
        raise _type_error(per, "MpsConfig.sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit",
                          "v1beta1.MpsPerDevicePinnedMemoryLimit")
    for v in [mps.get("defaultPinnedDeviceMemoryLimit")] + list((per or {}).values()):
        if v is not None:
            quantity_bytes(v)


def _mps_validate(mps):
    """MpsConfig.Validate()."""
    pct = mps.get("defaultActiveThreadPercentage")
    if pct is not None and pct < 0:
        raise ConfigError("error validating GPU config: active thread percentage must not be negative")
    if pct is not None and pct > 100:
        raise ConfigError("error validating GPU config: active thread percentage must not be greater than 100")


def timeslice(sharing):
    """The --set-timeslice value of a validated TimeSlicing sharing."""
    return INTERVALS[sharing["timeSlicingConfig"]["interval"]]
