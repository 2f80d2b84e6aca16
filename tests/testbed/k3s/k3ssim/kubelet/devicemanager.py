"""The kubelet's device manager (pkg/kubelet/cm/devicemanager/manager.go).

- A device plugin registers a resource with its devices (Register,
  ListAndWatch); health changes come the same way.
- GetCapacity: capacity counts healthy and unhealthy devices, allocatable
  the healthy ones. A plugin whose endpoint stops (its container exited,
  its pod was deleted: markResourceUnhealthy) has every device unhealthy:
  capacity kept, allocatable 0, until endpointStopGracePeriod (5 minutes;
  the switch SIM_ENDPOINT_GRACE) passes; then the resource is removed and
  the node status setter writes it as 0.
- The checkpoint (/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint,
  checkpoint/checkpoint.go's Data, written by writeCheckpoint) keeps the
  healthy devices of each registered resource (RegisteredDevices) and the
  pods' allocations (PodDeviceEntries: PodUID, ContainerName, ResourceName,
  DeviceIDs by NUMA node, -1 for a device without topology, as the
  simulated GPUs are; AllocResp). SIMULATION: AllocResp is null (the real
  one is the plugin's protobuf answer, base64) and Checksum 0 (the real:
  checksum.New's hash of Data, which only the kubelet's own read checks).
  After a restart
  (readCheckpoint) each registered resource has empty device sets and a
  stopped endpoint, so it reads 0 until its plugin registers again.
- Allocate: first the entries of pods no longer live go
  (UpdateAllocatedDevices); a container's request gets healthy devices no live pod holds;
  the plugin's Allocate answer (its envs, mounts, CDI devices) goes to the
  container's runtime.
"""

import json
import os
import threading
import time

from .. import config

GRACE = 300.0
NO_TOPOLOGY = "-1"   # pod_devices.go's nodeWithoutTopology, as JSON writes an int64 key


def grace():
    v = config.switch("SIM_ENDPOINT_GRACE")
    try:
        return float(v) if v else GRACE
    except ValueError:
        return GRACE


class Endpoint:
    def __init__(self, resource, plugin):
        self.resource = resource
        self.plugin = plugin          # answers allocate(ids); None once stopped
        self.stopped_at = None


class DeviceManager:
    def __init__(self):
        self.lock = threading.RLock()
        self.path = os.path.join(config.KUBELET_DIR, "device-plugins", "kubelet_internal_checkpoint")
        self.healthy = {}             # resource -> set of ids
        self.unhealthy = {}
        self.endpoints = {}           # resource -> Endpoint
        self.allocated = {}           # (pod uid, container) -> {resource: [ids]}
        self.changed = threading.Event()
        self._read_checkpoint()

    def _read_checkpoint(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f).get("Data", {})
        except (OSError, ValueError):
            return
        for e in data.get("PodDeviceEntries") or []:
            ids = [d for per_numa in (e.get("DeviceIDs") or {}).values() for d in per_numa]
            self.allocated.setdefault((e["PodUID"], e["ContainerName"]), {})[e["ResourceName"]] = ids
        for resource in data.get("RegisteredDevices") or {}:
            self.healthy[resource] = set()
            self.unhealthy[resource] = set()
            ep = Endpoint(resource, None)
            ep.stopped_at = time.monotonic()
            self.endpoints[resource] = ep

    def _write_checkpoint(self):
        entries = [{"PodUID": uid, "ContainerName": c, "ResourceName": r,
                    "DeviceIDs": {NO_TOPOLOGY: ids}, "AllocResp": None}
                   for (uid, c), per in self.allocated.items() for r, ids in per.items()]
        registered = {r: sorted(self.healthy.get(r, set())) for r in self.endpoints}
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"Data": {"PodDeviceEntries": entries, "RegisteredDevices": registered}, "Checksum": 0}, f)
        os.replace(tmp, self.path)

    # ---- the plugins' side ------------------------------------------

    def register(self, resource, devices, plugin):
        """A plugin's Register and first ListAndWatch: ids -> healthy."""
        with self.lock:
            old = self.endpoints.get(resource)
            if old and old.plugin and old.plugin is not plugin:
                old.plugin = None
            self.endpoints[resource] = Endpoint(resource, plugin)
            self.healthy[resource] = {d for d, ok in devices.items() if ok}
            self.unhealthy[resource] = {d for d, ok in devices.items() if not ok}
            self._write_checkpoint()
        self.changed.set()

    def set_health(self, resource, device, healthy, plugin):
        with self.lock:
            ep = self.endpoints.get(resource)
            if not ep or ep.plugin is not plugin:
                return
            (self.healthy[resource].add if healthy else self.healthy[resource].discard)(device)
            (self.unhealthy[resource].discard if healthy else self.unhealthy[resource].add)(device)
            self._write_checkpoint()   # genericDeviceUpdateCallback writes it after each update
        self.changed.set()

    def plugin_stopped(self, plugin):
        """Every resource of PLUGIN: its endpoint stopped, devices unhealthy."""
        with self.lock:
            for ep in self.endpoints.values():
                if ep.plugin is plugin:
                    ep.plugin = None
                    ep.stopped_at = time.monotonic()
                    self.unhealthy[ep.resource] = self.healthy[ep.resource] | self.unhealthy[ep.resource]
                    self.healthy[ep.resource] = set()
        self.changed.set()

    # ---- the node's side ----------------------------------------------

    def capacity(self):
        """({resource: capacity}, {resource: allocatable}, [removed])."""
        cap, alloc, removed = {}, {}, []
        with self.lock:
            for r, ep in list(self.endpoints.items()):
                if ep.plugin is None and ep.stopped_at is not None and time.monotonic() - ep.stopped_at > grace():
                    del self.endpoints[r]
                    self.healthy.pop(r, None)
                    self.unhealthy.pop(r, None)
                    removed.append(r)
                    self._write_checkpoint()
                    continue
                cap[r] = len(self.healthy.get(r, ())) + len(self.unhealthy.get(r, ()))
                alloc[r] = len(self.healthy.get(r, ()))
        return cap, alloc, removed

    def next_grace_end(self):
        with self.lock:
            ends = [ep.stopped_at + grace() for ep in self.endpoints.values()
                    if ep.plugin is None and ep.stopped_at is not None]
        return min(ends) if ends else None

    def free(self, resource, live_pods):
        with self.lock:
            used = set()
            for (uid, _), per in self.allocated.items():
                if uid in live_pods:
                    used |= set(per.get(resource, []))
            return sorted(self.healthy.get(resource, set()) - used)

    def allocate(self, pod_uid, container, requests, live_pods):
        """Devices for one container: {resource: [ids]} and the plugins'
        answers; None when a request cannot be met."""
        with self.lock:
            # UpdateAllocatedDevices: the entries of pods no longer live go
            # now, at an allocation, not when the pods end.
            self.release(live_pods)
            have = self.allocated.get((pod_uid, container))
            if have is not None:
                return have, self._answers(have)
            got = {}
            for r, n in requests.items():
                if r not in self.endpoints:
                    continue
                free = self.free(r, live_pods)
                if len(free) < n:
                    return None, "Allocate failed due to requested number of devices unavailable for %s. " \
                                 "Requested: %d, Available: %d, which is unexpected" % (r, n, len(free))
                got[r] = free[:n]
            self.allocated[(pod_uid, container)] = got
            self._write_checkpoint()
            return got, self._answers(got)

    def _answers(self, got):
        out = []
        for r, ids in got.items():
            ep = self.endpoints.get(r)
            if ep and ep.plugin is not None:
                out.append(ep.plugin.allocate(r, ids))
        return out

    def release(self, live_pods):
        with self.lock:
            gone = [k for k in self.allocated if k[0] not in live_pods]
            for k in gone:
                del self.allocated[k]
            if gone:
                self._write_checkpoint()

    def resources(self):
        with self.lock:
            return set(self.endpoints)
