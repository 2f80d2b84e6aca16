"""The kubelet's DRA manager (pkg/kubelet/cm/dra/manager.go, plugin/
dra_plugin_manager.go, state/checkpoint.go), SIMULATION of its gRPC as
calls on the plugin objects that kubelet plugins register.

- Registration: a driver's kubelet plugin registers under the driver's
  name (the plugin watcher's socket in plugins_registry); the newest one
  serves. At the kubelet's start every ResourceSlice of its node is
  deleted (NewDRAPluginManager: no driver is usable until it registers
  again); when a driver's last plugin goes, its slices of the node are
  deleted defaultWipingDelay (30 s, the switch SIM_DRA_WIPE_DELAY) later
  unless a plugin registers before.
- PrepareResources, before a pod's sandbox: every claim of the pod is
  checked first, prepared or not ("better to fail even if the claim is
  already prepared"): made ("pod \"NS/NAME\": ResourceClaim not created
  yet"), reserving the pod ("pod %s (%s) is not allowed to use
  ResourceClaim %s (%s)"), allocated, each driver of its results
  registered ("DRA driver %s is not registered"); a claim of the same name
  and another UID still held is refused ("old ResourceClaim with same name
  %s and different UID %s still exists (previous pod force-deleted?!)").
  Then a claim prepared already only gains the pod; else the driver's
  NodePrepareResources, whose error reads "NodePrepareResources failed for
  ResourceClaim <name>: <err>".
- The checkpoint /var/lib/kubelet/dra_manager_state: {"Data": the JSON
  of {kind DRACheckpoint, apiVersion checkpoint.dra.kubelet.k8s.io/v1,
  Entries [{ClaimUID, ClaimName, Namespace, PodUIDs {uid: {}},
  DriverState {driver: {Devices [{PoolName, DeviceName, ShareID,
  RequestNames, CDIDeviceIDs}]}}}]}, "Checksum": its CRC-32 (IEEE)},
  written empty when there is none (GetOrCreate) and read back at a
  restart so that running pods keep their claims; a checksum that does not
  match stops the kubelet ("checkpoint is corrupted").
- GetResources (claiminfo.go cdiDevicesAsList): a container's CDI devices,
  those of the claims its resources.claims name: every device of the
  claim, or with a request named, the devices of that request and those
  that name none; a claim not prepared is "internal error: unable to get
  claim info for ResourceClaim <name>". The scheduler's special claim for
  a pod's extended resources (status.extendedResourceClaimStatus) is
  prepared with the pod's own, and each container gets the devices of the
  requests mapped to it.
- UnprepareResources, after a pod's containers stopped and before its
  terminal status is written (SyncTerminatingPod): the pod leaves each
  claim, and a claim no pod uses any more is unprepared by its drivers and
  dropped; a failure keeps the pod from its terminal status until a retry
  works. The reconcile pass does the same for pods no longer active.
"""

import json
import os
import threading
import time
import zlib

from .. import config, logs, status
from ..dra import PENDING, container_requests, extended_status, pod_claims

WIPING_DELAY = 30.0
KIND = "DRACheckpoint"
API_VERSION = "checkpoint.dra.kubelet.k8s.io/v1"


def wiping_delay():
    v = config.switch("SIM_DRA_WIPE_DELAY")
    try:
        return float(v) if v else WIPING_DELAY
    except ValueError:
        return WIPING_DELAY


class CheckpointError(Exception):
    pass


class DRAManager:
    def __init__(self, kubelet):
        self.k = kubelet
        self.lock = threading.RLock()
        self.path = os.path.join(config.KUBELET_DIR, "dra_manager_state")
        self.plugins = {}       # driver -> [plugin], newest last
        self.wipe_at = {}       # driver -> monotonic time its slices go
        self.claims = {}        # (namespace, name) -> ClaimInfoState
        self._get_or_create()

    # ---- the checkpoint -------------------------------------------------

    def _get_or_create(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            self._write_checkpoint()
            return
        except (OSError, ValueError) as e:
            raise CheckpointError("failed to get checkpoint: %s" % e)
        entries = parse_checkpoint(doc)
        self.claims = {(e["Namespace"], e["ClaimName"]): e for e in entries}

    def _write_checkpoint(self):
        data = json.dumps({"kind": KIND, "apiVersion": API_VERSION, "Entries": list(self.claims.values())},
                          separators=(",", ":"))
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"Data": data, "Checksum": zlib.crc32(data.encode())}, f)
        os.replace(tmp, self.path)

    # ---- the plugins' side ----------------------------------------------

    def register(self, driver, plugin):
        with self.lock:
            self.plugins.setdefault(driver, []).append(plugin)
            self.wipe_at.pop(driver, None)
        self.k.wake.set()

    def unregister(self, driver, plugin):
        with self.lock:
            left = [p for p in self.plugins.get(driver, []) if p is not plugin]
            self.plugins[driver] = left
            if not left:
                self.wipe_at[driver] = time.monotonic() + wiping_delay()
        self.k.wake.set()

    def _plugin(self, driver):
        with self.lock:
            got = self.plugins.get(driver) or []
            return got[-1] if got else None

    # ---- slices -----------------------------------------------------------

    def wipe(self, driver=None):
        """Delete the node's ResourceSlices (of DRIVER, or all)."""
        res = self.k.res("resource.k8s.io/v1", "ResourceSlice")
        try:
            slices, _ = self.k.api.list(res)
            for s in slices:
                spec = s.get("spec") or {}
                if spec.get("nodeName") == self.k.node and driver in (None, spec.get("driver")):
                    self.k.api.delete(res, None, s["metadata"]["name"])
        except status.ApiError as e:
            logs.warn("SIMULATION: kubelet: wiping ResourceSlices: %s" % e)

    def tick(self, live_pods):
        """The timed wipes that fell due, and the reconcile pass."""
        now = time.monotonic()
        with self.lock:
            due = [d for d, t in self.wipe_at.items() if t <= now and not self.plugins.get(d)]
            for d in due:
                del self.wipe_at[d]
        for d in due:
            self.wipe(d)
        for uid in {u for info in self.claims.values() for u in info["PodUIDs"]} - set(live_pods):
            self.unprepare_pod(uid)

    def next_deadline(self):
        with self.lock:
            return min(self.wipe_at.values()) if self.wipe_at else None

    # ---- the pods' side ---------------------------------------------------

    def _claims(self, pod):
        """[claim] of POD that it needs (its own, then the scheduler's
        special claim for its extended resources), or an error string."""
        md = pod["metadata"]
        res = self.k.res("resource.k8s.io/v1", "ResourceClaim")
        listed = {s.get("name") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
        out = []
        special = extended_claim(pod)
        for pod_name, name in pod_claims(pod) + ([(None, special)] if special else []):
            if name is None:
                if pod_name in listed:
                    continue            # the status says the claim is not needed
                return 'pod "%s/%s": ResourceClaim not created yet' % (md["namespace"], md["name"])
            c = self.k.api.find(res, md["namespace"], name)
            if c is None:
                return 'fetch ResourceClaim %s: resourceclaims.resource.k8s.io "%s" not found' % (name, name)
            out.append(c)
        return out

    def _check(self, pod, c):
        md, cmd = pod["metadata"], c["metadata"]
        st = c.get("status") or {}
        if not any(r.get("uid") == md["uid"] for r in st.get("reservedFor") or []):
            return "pod %s (%s) is not allowed to use ResourceClaim %s (%s)" % (
                md["name"], md["uid"], cmd["name"], cmd.get("uid", ""))
        if not st.get("allocation"):
            return "ResourceClaim %s: not allocated" % cmd["name"]
        for r in (st["allocation"].get("devices") or {}).get("results") or []:
            if self._plugin(r.get("driver")) is None:
                return "DRA driver %s is not registered" % r.get("driver")
        with self.lock:
            known = self.claims.get((cmd.get("namespace", ""), cmd["name"]))
        if known is not None and known["ClaimUID"] != cmd.get("uid"):
            return "old ResourceClaim with same name %s and different UID %s still exists " \
                   "(previous pod force-deleted?!)" % (cmd["name"], known["ClaimUID"])
        return None

    def prepare(self, pod):
        """PrepareResources for POD: None, the error, or PENDING while a
        plugin's call is still running (dra.PENDING)."""
        claims = self._claims(pod)
        if isinstance(claims, str):
            return claims
        for c in claims:
            err = self._check(pod, c)
            if err:
                return err
        for c in claims:
            err = self._prepare_claim(pod["metadata"]["uid"], c)
            if err:
                return err
        return None

    def _prepare_claim(self, pod_uid, c):
        cmd = c["metadata"]
        key = (cmd.get("namespace", ""), cmd["name"])
        with self.lock:
            known = self.claims.get(key)
            if known is not None:
                known["PodUIDs"][pod_uid] = {}
                self._write_checkpoint()
                return None
        results = (c["status"]["allocation"].get("devices") or {}).get("results") or []
        state = {}
        for d in dict.fromkeys(r.get("driver") for r in results):
            devices, err = self._plugin(d).prepare(c)
            if err is PENDING:
                return err
            if err:
                return "NodePrepareResources failed for ResourceClaim %s: %s" % (cmd["name"], err)
            state[d] = {"Devices": [{"PoolName": x["poolName"], "DeviceName": x["deviceName"], "ShareID": None,
                                     "RequestNames": x.get("requestNames"), "CDIDeviceIDs": x.get("cdiDeviceIDs")}
                                    for x in devices]}
        with self.lock:
            self.claims[key] = {"ClaimUID": cmd["uid"], "ClaimName": cmd["name"], "Namespace": key[0],
                                "PodUIDs": {pod_uid: {}}, "DriverState": state}
            self._write_checkpoint()
        return None

    def cdi_devices(self, pod, container):
        """GetResources: (the CDI device IDs of CONTAINER's claims, None)
        or (None, the error)."""
        names = dict(pod_claims(pod))
        ns = pod["metadata"]["namespace"]
        refs = [(names.get(ref.get("name")), ref.get("request"),
                 "internal error: unable to get claim info for ResourceClaim %s" % names.get(ref.get("name")))
                for ref in (container.get("resources") or {}).get("claims") or []]
        # The special claim's requests mapped to this container, for the
        # resources it asks for.
        ext = extended_status(pod)
        asked = {r for r, v in container_requests(container).items() if str(v) not in ("0", "")}
        refs += [(ext.get("resourceClaimName"), m.get("requestName"),
                  "unable to get claim info for claim %s in namespace %s" % (ext.get("resourceClaimName"), ns))
                 for m in ext.get("requestMappings") or []
                 if m.get("containerName") == container.get("name") and m.get("resourceName") in asked]
        out = []
        with self.lock:
            for claim, want, missing in refs:
                if claim is None:
                    continue
                info = self.claims.get((ns, claim))
                if info is None:
                    return None, missing
                for state in info["DriverState"].values():
                    for dev in state.get("Devices") or []:
                        if not want or not dev.get("RequestNames") or want in dev["RequestNames"]:
                            out += dev.get("CDIDeviceIDs") or []
        return list(dict.fromkeys(out)), None

    def unprepare_pod(self, uid):
        """UnprepareResources for the pod UID: True once every claim it held
        is released (a claim no pod holds unprepared by its drivers)."""
        done = True
        with self.lock:
            mine = [info for info in self.claims.values() if uid in info["PodUIDs"]]
        for info in mine:
            if len(info["PodUIDs"]) == 1 and not self._unprepare(info):
                done = False
                continue
            with self.lock:
                info["PodUIDs"].pop(uid, None)
                if not info["PodUIDs"]:
                    self.claims.pop((info["Namespace"], info["ClaimName"]), None)
        if mine:
            with self.lock:
                self._write_checkpoint()
        return done

    def _unprepare(self, info):
        for d in info["DriverState"]:
            plugin = self._plugin(d)
            if plugin is None:
                logs.warn("SIMULATION: kubelet: unprepare ResourceClaim %s: DRA driver %s is not registered"
                          % (info["ClaimName"], d))
                return False
            err = plugin.unprepare(info["Namespace"], info["ClaimName"], info["ClaimUID"])
            if err:
                logs.warn("SIMULATION: kubelet: NodeUnprepareResources failed for ResourceClaim %s: %s"
                          % (info["ClaimName"], err))
                return False
        return True


def mapped_resources(pod, container):
    """The resources of CONTAINER that the scheduler's special claim serves
    (the device manager leaves them alone: isDRAExtendedResource)."""
    ext = extended_status(pod)
    return {m.get("resourceName") for m in ext.get("requestMappings") or []
            if m.get("containerName") == container.get("name")}


def extended_claim(pod):
    """The name of the scheduler's special claim for POD's extended
    resources (status.extendedResourceClaimStatus), or None."""
    return extended_status(pod).get("resourceClaimName")


def parse_checkpoint(doc):
    """The entries of a checkpoint file's JSON, or CheckpointError."""
    try:
        data = doc["Data"]
        if zlib.crc32(data.encode()) != doc.get("Checksum"):
            raise CheckpointError("checkpoint is corrupted")
        entries = json.loads(data).get("Entries") or []
        for e in entries:
            e["PodUIDs"] = dict(e.get("PodUIDs") or {})
            e["DriverState"] = dict(e.get("DriverState") or {})
            missing = [k for k in ("ClaimUID", "ClaimName", "Namespace") if not isinstance(e.get(k), str)]
            if missing:
                raise KeyError(missing[0])
        return entries
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise CheckpointError("failed to get checkpoint: %s" % e)
