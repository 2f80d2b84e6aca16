"""The kubelet's pod worker: one pod bound to this node, from admission to
its end (pkg/kubelet/kubelet.go SyncPod, kuberuntime_manager.go,
status/status_manager.go, kubelet_pods.go).

- Admission: the device manager allocates the containers' extended
  resources, but those the scheduler's special DRA claim serves
  (isDRAExtendedResource); failure ends the pod Failed,
  UnexpectedAdmissionError.
- DRA (pkg/kubelet/cm/dra/manager.go PrepareResources, before the
  sandbox): the DRA manager (dramanager.py) prepares the pod's claims; its
  error, wrapped "prepare dynamic resources: …", is a
  FailedPrepareDynamicResources event (kuberuntime_manager.go), no sandbox,
  and a retry after the back-off. Each container gets the CDI devices of
  the claims it names (GetResources), which containerd resolves.
- The sandbox: the RuntimeClass's handler must be one containerd has
  (FailedCreatePodSandBox "no runtime for \"nvidia\" is configured"
  otherwise, retried every back-off), and the pause image present.
- Init containers one at a time to completion, then the containers, each
  started and ready once its startup probe passes (prober.py); a
  container's image as images.py says; its exit restarts it as the
  restartPolicy says, after a back-off (SIM_POD_BACKOFF doubling, at
  most 30 s; the real kubelet's is 10 s to 5 min) while it waits
  CrashLoopBackOff.
- The status: phase (getPhase), conditions, containerStatuses sorted by
  name; lastState holds the previous run.
- A pod being deleted: its containers are stopped within its grace
  period, then the kubelet deletes it for good (grace 0).
- After a restart of k3s the containers that ran are gone: each is
  terminated with exit code 255 and runs again if its policy says so,
  init containers first, as after a reboot.
"""

import hashlib
import os

from .. import clock, config, programs, status
from . import dramanager, images, mounts, nvidia_runtime, prober, runtime

BACKOFF_CAP = 30.0


def _image_id(image):
    return "%s@sha256:%s" % (images.normalize(image).rsplit(":", 1)[0], hashlib.sha256(image.encode()).hexdigest())


class ContainerState:
    def __init__(self, spec, init):
        self.spec = spec
        self.init = init
        self.run = None          # the current run
        self.last = None         # the previous run (terminated), for lastState
        self.restarts = 0
        self.backoff = 0.0
        self.next_start = 0.0
        self.waiting = None      # (reason, message) while not running
        self.pull_failed = 0     # consecutive failed pulls
        self.pull_backoff = 0.0  # the image back-off's current period
        self.pull_retry_at = 0.0  # when it ends and the next pull is tried
        self.done = False        # an init container that completed
        self.cid_log = {}        # containerID -> log path
        self.startup = None      # the current run's startup probe (prober.Startup)

    def record(self, run):
        self.cid_log[run.cid] = run.log.path


class PodWorker:
    def __init__(self, kubelet, pod):
        self.k = kubelet
        self.uid = pod["metadata"]["uid"]
        self.pod = pod
        spec = pod.get("spec", {})
        self.init = [ContainerState(c, True) for c in spec.get("initContainers") or []]
        self.main = [ContainerState(c, False) for c in spec.get("containers") or []]
        self.sandbox = False
        self.sandbox_retry = 0.0
        self.netns = False        # a network namespace of its own (podnet)
        self.admitted = None      # None: not yet; True; or the failure message
        self.devices = {}         # container name -> the device plugins' allocate answers
        self.failed_init = False
        self.deleting = False
        self.stopped = False
        self._adopt(pod)

    # ---- after a restart: what ran before ------------------------------

    def _adopt(self, pod):
        st = pod.get("status", {})
        prev = {cs["name"]: cs for cs in (st.get("containerStatuses") or []) + (st.get("initContainerStatuses") or [])}
        for cs in self.init + self.main:
            old = prev.get(cs.spec["name"])
            if not old:
                continue
            cs.restarts = old.get("restartCount", 0)
            state = old.get("state") or {}
            if state.get("running"):
                # Its process died with the last k3s: as containerd reports it.
                cs.last = _Dead(old.get("containerID"), state["running"].get("startedAt"), 255, "Unknown")
                if not cs.init:
                    cs.restarts += 1
            elif state.get("terminated"):
                t = state["terminated"]
                cs.last = _Dead(t.get("containerID"), t.get("startedAt"), t.get("exitCode", 0), t.get("reason"),
                                t.get("message"), t.get("finishedAt"))
                if not cs.init and _restarts(pod, t.get("exitCode", 0)):
                    cs.restarts += 1
            elif (old.get("lastState") or {}).get("terminated"):
                t = old["lastState"]["terminated"]
                cs.last = _Dead(t.get("containerID"), t.get("startedAt"), t.get("exitCode", 0), t.get("reason"),
                                t.get("message"), t.get("finishedAt"))
            if cs.last and cs.last.cid:
                path = self.k.log_dir(pod, cs.spec["name"])
                cs.cid_log.update(_read_index(path))

    # ---- the worker's step -------------------------------------------

    def sync(self, pod):
        self.pod = pod
        md = pod["metadata"]
        if md.get("deletionTimestamp") and not self.deleting:
            self.deleting = True
            grace = md.get("deletionGracePeriodSeconds") or 0
            for cs in self.init + self.main:
                if cs.run and cs.run.running:
                    self.k.event(pod, "Normal", "Killing", "Stopping container %s" % cs.spec["name"])
                    cs.run.kill(grace)
        if self.deleting:
            # Its claims are released once its containers stopped, before
            # the pod goes (SyncTerminatingPod); a failure is tried again.
            if all(not (cs.run and cs.run.running) for cs in self.init + self.main) and \
                    self.k.dra.unprepare_pod(self.uid):
                self.stopped = True
                self.k.finish_delete(pod)
            return
        if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            # Its containers are done: the kubelet stops the sandbox, and
            # containerd's StopPodSandbox calls the CNI's DEL.
            self._release_network()
            return
        if self.admitted is None:
            self.admitted = self._admit()
        if self.admitted is not True:
            self._write_status(failed=("UnexpectedAdmissionError", self.admitted))
            return
        if not self.sandbox and not (self._prepare_claims() and self._make_sandbox()):
            self._write_status()
            return
        self._run_containers()
        self._write_status()

    def _admit(self):
        live = self.k.live_pod_uids()
        for cs in self.init + self.main:
            limits = (cs.spec.get("resources") or {}).get("limits") or {}
            served = dramanager.mapped_resources(self.pod, cs.spec)
            want = {r: int(v) for r, v in limits.items()
                    if r in self.k.devices.resources() and r not in served and int(v) > 0}
            if not want:
                continue
            got, answers = self.k.devices.allocate(self.uid, cs.spec["name"], want, live)
            if got is None:
                return answers
            self.devices[cs.spec["name"]] = answers
        return True

    def _prepare_claims(self):
        if not ((self.pod.get("spec") or {}).get("resourceClaims") or dramanager.extended_claim(self.pod)):
            return True
        if clock.now() < self.sandbox_retry:
            return False
        err = self.k.dra.prepare(self.pod)
        if err is None:
            return True
        if err is dramanager.PENDING:
            return False   # the plugin's call goes on: asked again on the next pass
        self.k.event(self.pod, "Warning", "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: prepare dynamic resources: " + err)
        self.sandbox_retry = clock.now() + config.POD_BACKOFF
        for cs in self.init + self.main:
            cs.waiting = ("ContainerCreating", None) if not cs.init else ("PodInitializing", None)
        return False

    def _make_sandbox(self):
        if clock.now() < self.sandbox_retry:
            return False
        handler = self.k.default_handler
        rcn = self.pod["spec"].get("runtimeClassName")
        if rcn:
            rc = self.k.api.find(self.k.res("node.k8s.io/v1", "RuntimeClass"), None, rcn)
            handler = (rc or {}).get("handler", rcn)
        msg = None
        if handler not in self.k.handlers:
            msg = ('Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for '
                   'sandbox "%s": no runtime for "%s" is configured' % (os.urandom(32).hex(), handler))
        elif handler.startswith("nvidia") and config.switch_on("SIM_NVIDIA_RUNTIME_BROKEN"):
            msg = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd "
                   "task: failed to create shim task: OCI runtime create failed: %s did not terminate "
                   "successfully: exit status 1: failed to create the automatic CDI modifier: failed to "
                   "construct CDI library for mode \"jit-cdi\": failed to initialize NVML: "
                   "ERROR_LIBRARY_NOT_FOUND: unknown" % self.k.handlers[handler])
        elif not self.k.images.present(config.PAUSE_IMAGE) and not config.switch("SIM_NETWORK") == "online":
            msg = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image '
                   '"%s": failed to pull image "%s": %s' % (config.PAUSE_IMAGE, config.PAUSE_IMAGE,
                                                            images.pull_error(config.PAUSE_IMAGE)))
        if msg:
            self.k.event(self.pod, "Warning", "FailedCreatePodSandBox", msg)
            self.sandbox_retry = clock.now() + config.POD_BACKOFF
            for cs in self.init + self.main:
                cs.waiting = ("ContainerCreating", None) if not cs.init else ("PodInitializing", None)
            return False
        if self.k.net and not self.pod["spec"].get("hostNetwork"):
            try:
                self.k.net.add(self.pod, self.k.pod_ip(self.pod))
            except RuntimeError as e:
                # containerd calls the CNI's DEL after a failed ADD.
                self.k.net.remove(self.pod)
                self.k.event(self.pod, "Warning", "FailedCreatePodSandBox",
                             'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network '
                             'for sandbox "%s": plugin type="flannel" failed (add): %s' % (os.urandom(32).hex(), e))
                self.sandbox_retry = clock.now() + config.POD_BACKOFF
                return False
            self.netns = True
        self.handler = handler
        self.sandbox = True
        return True

    def _run_containers(self):
        # Init containers in order, each to completion.
        for cs in self.init:
            if cs.done:
                continue
            if cs.run is None or not cs.run.running:
                if cs.run is not None:
                    if cs.run.exit_code == 0:
                        cs.done = True
                        continue
                    if self.pod["spec"].get("restartPolicy") == "Never":
                        self.failed_init = True
                        return
                self._start_when_due(cs)
            for other in self.main:
                if other.run is None:
                    other.waiting = ("PodInitializing", None)
            return
        for cs in self.main:
            if cs.run is not None and cs.run.running:
                prober.step(self, cs)
                continue
            if cs.run is not None and not _restarts(self.pod, cs.run.exit_code):
                continue
            if cs.run is None and cs.last is not None and not _restarts(self.pod, cs.last.exit_code):
                continue
            self._start_when_due(cs)

    def _start_when_due(self, cs):
        if cs.run is not None and not cs.run.running:
            # It exited: back off before the next run.
            cs.last = cs.run
            cs.run = None
            cs.restarts += 1
            cs.backoff = min(max(cs.backoff * 2, config.POD_BACKOFF), BACKOFF_CAP)
            cs.next_start = clock.now() + cs.backoff
            cs.waiting = ("CrashLoopBackOff", "back-off %s restarting failed container=%s pod=%s_%s(%s)"
                          % (clock.human_duration(cs.backoff), cs.spec["name"], self.pod["metadata"]["name"],
                             self.pod["metadata"]["namespace"], self.uid))
            self.k.event(self.pod, "Warning", "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)"
                         % (cs.spec["name"], self.pod["metadata"]["name"], self.pod["metadata"]["namespace"],
                            self.uid))
            return
        if clock.now() < cs.next_start:
            return
        if not images.ensure(self.k, self.pod, cs):
            return
        self._start(cs)

    def _env(self, cs):
        env = {"PATH": os.environ.get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
               "HOSTNAME": self.pod["metadata"]["name"], "KUBERNETES_SERVICE_HOST": "10.43.0.1",
               "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_PORT": "tcp://10.43.0.1:443", "HOME": "/root"}
        for e in cs.spec.get("env") or []:
            name = e.get("name", "")
            if "value" in e:
                env[name] = str(e.get("value") if e.get("value") is not None else "")
            elif (e.get("valueFrom") or {}).get("fieldRef"):
                path = e["valueFrom"]["fieldRef"].get("fieldPath", "")
                env[name] = {"metadata.name": self.pod["metadata"]["name"],
                             "metadata.namespace": self.pod["metadata"]["namespace"],
                             "spec.nodeName": self.k.node, "status.hostIP": self.k.ip,
                             "status.podIP": self.k.pod_ip(self.pod)}.get(path, "")
        answers = self._answers(cs)
        for answer in answers:
            env.update(answer.get("envs", {}))
        cdi = nvidia_runtime.CdiEdits(answers)
        env.update(cdi.env)
        # The GPUs containerd's CDI and the runtime give the container.
        env["SIM_RUNTIME_DEVICES"] = nvidia_runtime.devices(self.handler, cs.spec, env, answers,
                                                            self.k.runtime_options.get(self.handler),
                                                            self.k.base_hooks(self.handler), cdi)
        return env, cdi

    def _answers(self, cs):
        """What the device plugins' Allocate and the DRA manager's
        GetResources give the container (envs, mounts, CDI devices), or
        Unresolvable with GetResources' error."""
        answers = self.devices.get(cs.spec["name"], [])
        claimed, err = self.k.dra.cdi_devices(self.pod, cs.spec)
        if err:
            raise nvidia_runtime.Unresolvable(err)
        return answers + [{"cdi_devices": claimed}] if claimed else answers

    def _create_error(self, cs, why):
        """containerd cannot make the container's spec: CreateContainerError,
        tried again after a back-off."""
        msg = 'failed to generate container "%s" spec: %s' % (os.urandom(32).hex(), why)
        cs.waiting = ("CreateContainerError", msg)
        cs.backoff = min(max(cs.backoff * 2, config.POD_BACKOFF), BACKOFF_CAP)
        cs.next_start = clock.now() + cs.backoff
        self.k.event(self.pod, "Warning", "Failed", "Error: " + msg)

    def _start(self, cs):
        argv = list(cs.spec.get("command") or []) + list(cs.spec.get("args") or [])
        try:
            env, cdi = self._env(cs)
        except nvidia_runtime.Unresolvable as e:
            return self._create_error(cs, "CDI device injection failed: %s" % e)
        why = mounts.propagation_error(self.pod, cs.spec)
        if why:
            return self._create_error(cs, "failed to generate spec: " + why)
        name = cs.spec["name"]
        path = os.path.join(self.k.log_dir(self.pod, name), "%d.log" % cs.restarts)
        if os.path.exists(path):
            os.unlink(path)
        program = programs.lookup(cs.spec.get("image", ""), argv or [cs.spec.get("image", "")])
        hooks = self.k.base_hooks(self.handler)
        hook_error = runtime.hook_missing(hooks)
        if program is None and not argv:
            # SIMULATION: the image's entrypoint is unknown: an idle container.
            argv = ["sh", "-c", "while :; do sleep 3600; done"]
        if program is not None:
            ctx = programs.Context(self.k, self.pod, cs.spec, env, argv)
            ctx.handler = self.handler
            run = runtime.ProgramRun(name, path, self.k.container_exited, program, ctx)
        elif runtime.command_missing(argv[0], env) or (
                os.path.basename(argv[0]) == "nvidia-smi" and not self.handler.startswith("nvidia")
                and "/usr/bin/nvidia-smi" not in cdi.mounts):
            run = runtime.FailedStart(name, path, self.k.container_exited, argv[0])
        elif hook_error:
            run = runtime.FailedStart(name, path, self.k.container_exited, argv[0], hook_error)
        else:
            where = os.path.join(config.KUBELET_DIR, "pods", self.uid, "containers", name, os.urandom(4).hex())
            ns = runtime.MountNamespace(start_error=where + ".start-error")
            nvidia_runtime.pod_procfs(self.handler, hooks, ns)
            why = mounts.bind(self.pod, cs.spec, cdi.binds, ns)
            if why:
                return self._create_error(cs, why)
            term = runtime.Termination(
                where,
                cs.spec.get("terminationMessagePath") or "/dev/termination-log",
                cs.spec.get("terminationMessagePolicy") or "File")
            if self.netns:
                argv = self.k.net.wrap(self.pod, argv)
            run = runtime.ProcessRun(name, path, self.k.container_exited, argv, env, cs.spec.get("workingDir") or "/",
                                     term, ns, (self.uid, self.pod.get("status", {}).get("qosClass")))
        cs.run = run
        cs.startup = None if cs.init else prober.Startup(cs.spec, clock.now())
        cs.waiting = None
        cs.record(run)
        _write_index(self.k.log_dir(self.pod, name), cs.cid_log)
        self.k.event(self.pod, "Normal", "Created", "Created container: %s" % name)
        self.k.event(self.pod, "Normal", "Started", "Started container %s" % name)

    # ---- the status ---------------------------------------------------

    def _cstatus(self, cs):
        spec = cs.spec
        out = {"name": spec["name"], "image": spec.get("image", ""), "imageID": "", "restartCount": cs.restarts,
               "started": False, "ready": False, "lastState": {}}
        last = cs.last
        if last is not None and (cs.run is not None or cs.waiting is not None):
            out["lastState"] = {"terminated": _terminated(last)}
        if cs.run is not None:
            out["imageID"] = _image_id(spec.get("image", ""))
            out["containerID"] = cs.run.cid
            if cs.run.running:
                out["state"] = {"running": {"startedAt": cs.run.started_at}}
                out["started"] = prober.started(cs)
                out["ready"] = out["started"] and not cs.init
            else:
                out["state"] = {"terminated": _terminated(cs.run)}
                if cs.init and cs.run.exit_code == 0:
                    out["ready"] = True
        elif cs.waiting is not None:
            w = {"reason": cs.waiting[0]}
            if cs.waiting[1]:
                w["message"] = cs.waiting[1]
            out["state"] = {"waiting": w}
            if last is not None:
                out["imageID"] = _image_id(spec.get("image", ""))
                out["containerID"] = last.cid
        elif last is not None:
            out["imageID"] = _image_id(spec.get("image", ""))
            out["containerID"] = last.cid
            out["state"] = {"terminated": _terminated(last)}
            out["lastState"] = {}
        else:
            out["state"] = {"waiting": {"reason": "ContainerCreating" if not cs.init else "PodInitializing"}}
        return out

    def _phase(self, statuses):
        policy = self.pod["spec"].get("restartPolicy", "Always")
        if self.failed_init:
            return "Failed"
        if any(not cs.done for cs in self.init):
            return "Pending"
        waiting = running = stopped = succeeded = 0
        for s in statuses:
            st = s.get("state", {})
            if "running" in st:
                running += 1
            elif "terminated" in st:
                stopped += 1
                if st["terminated"].get("exitCode") == 0:
                    succeeded += 1
            elif "waiting" in st:
                if s.get("lastState", {}).get("terminated"):
                    stopped += 1
                else:
                    waiting += 1
        if waiting:
            return "Pending"
        if running:
            return "Running"
        if stopped:
            if policy == "Always":
                return "Running"
            if stopped == succeeded:
                return "Succeeded"
            if policy == "Never":
                return "Failed"
            return "Running"
        return "Pending"

    def _write_status(self, failed=None):
        pod = self.pod
        old = pod.get("status", {})
        now = clock.rfc3339()
        st = {"qosClass": old.get("qosClass", "BestEffort")}
        # The claim controller's, which the kubelet's status keeps
        # (kubelet_pods.go generateAPIPodStatus copies them over).
        for key in ("resourceClaimStatuses", "extendedResourceClaimStatus"):
            if old.get(key):
                st[key] = old[key]
        if failed:
            st.update(phase="Failed", reason=failed[0], message=failed[1], startTime=old.get("startTime", now))
            st["conditions"] = old.get("conditions", [])
            return self._put(pod, st)
        cstat = sorted((self._cstatus(cs) for cs in self.main), key=lambda s: s["name"])
        istat = [self._cstatus(cs) for cs in self.init]
        phase = self._phase(cstat)
        if phase in ("Succeeded", "Failed") and not self.k.dra.unprepare_pod(self.uid):
            # SyncTerminatingPod: the claims are released before the
            # terminal status is written; until then the pod runs.
            phase = "Running"
        names_unready = [s["name"] for s in cstat if not s["ready"]]
        init_pending = [cs.spec["name"] for cs in self.init if not cs.done]
        done = phase in ("Succeeded", "Failed")
        reason = "PodCompleted" if done else "ContainersNotReady"

        def cond(t, ok, r=None, m=None):
            c = {"type": t, "status": "True" if ok else "False", "lastProbeTime": None}
            prev = next((x for x in old.get("conditions") or [] if x.get("type") == t), None)
            c["lastTransitionTime"] = prev["lastTransitionTime"] if prev and prev.get("status") == c["status"] \
                and prev.get("lastTransitionTime") else now
            if not ok and r:
                c["reason"] = r
                if m:
                    c["message"] = m
            return c
        sched = next((x for x in old.get("conditions") or [] if x.get("type") == "PodScheduled"),
                     {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now})
        ready = not names_unready and not done and not init_pending
        conds = [cond("PodReadyToStartContainers", self.sandbox and not done),
                 cond("Initialized", not init_pending, "ContainersNotInitialized",
                      "containers with incomplete status: [%s]" % " ".join(init_pending)),
                 cond("Ready", ready, reason, None if done else
                      "containers with unready status: [%s]" % " ".join(names_unready)),
                 cond("ContainersReady", ready, reason, None if done else
                      "containers with unready status: [%s]" % " ".join(names_unready)),
                 sched]
        st.update(phase=phase, conditions=conds, hostIP=self.k.ip, hostIPs=[{"ip": self.k.ip}],
                  startTime=old.get("startTime", now), containerStatuses=cstat)
        if self.sandbox:
            st["podIP"] = self.k.pod_ip(pod)
            st["podIPs"] = [{"ip": st["podIP"]}]
        if istat:
            st["initContainerStatuses"] = istat
        if pod.get("metadata", {}).get("generation"):
            st["observedGeneration"] = pod["metadata"]["generation"]
        return self._put(pod, st)

    def _put(self, pod, st):
        if _comparable(pod.get("status", {})) == _comparable(st):
            return
        was = pod.get("status", {}).get("phase")
        try:
            self.pod = self.k.api.update_status(self.k.res("v1", "Pod"), dict(pod, status=st))
        except status.ApiError:
            return
        if st.get("phase") in ("Succeeded", "Failed") and was != st["phase"]:
            clock.stamp("pod-terminated %s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def exec_argv(self, cs, argv):
        """ARGV as an exec into container CS runs it: runc exec joins the
        container's namespaces, its mount namespace (its procfs, its
        termination-message file, its mounts) where it has one of its own,
        and its pod's network namespace."""
        pid = getattr(getattr(cs.run, "proc", None), "pid", None)
        if pid and os.path.exists("/proc/%d/ns/mnt" % pid):
            argv = ["nsenter", "--mount=/proc/%d/ns/mnt" % pid, "--"] + list(argv)
        if self.netns:
            argv = self.k.net.wrap(self.pod, argv)
        return list(argv)

    def exec_env(self, cs):
        """The environment an exec into container CS gets: the container's."""
        try:
            return self._env(cs)[0]
        except nvidia_runtime.Unresolvable:
            return dict(os.environ)

    def kill_all(self):
        for cs in self.init + self.main:
            if cs.run and cs.run.running:
                cs.run.kill(0)

    def teardown(self):
        """The pod is gone from the API: its processes, then its sandbox."""
        self.kill_all()
        self._release_network()

    def _release_network(self):
        if self.netns:
            self.k.net.remove(self.pod)
            self.netns = False

    def log_path(self, container, cid):
        for cs in self.init + self.main:
            if cs.spec["name"] == container:
                return cs.cid_log.get(cid)
        return None


def _comparable(st):
    """A status less its timestamps of the moment, to tell a real change."""
    out = dict(st)
    out["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in st.get("conditions") or []]
    return out


def _restarts(pod, code):
    policy = pod.get("spec", {}).get("restartPolicy", "Always")
    return policy == "Always" or (policy == "OnFailure" and code != 0)


class _Dead:
    """A container run of before a restart, known only by its status."""

    def __init__(self, cid, started, code, reason, message=None, finished=None):
        self.cid = cid
        self.started_at = started
        self.finished_at = finished or clock.rfc3339()
        self.exit_code = code
        self.reason = reason
        self.message = message
        self.running = False


def _terminated(run):
    t = {"exitCode": run.exit_code, "reason": run.reason or "Error", "startedAt": run.started_at,
         "finishedAt": run.finished_at, "containerID": run.cid}
    if run.message:
        t["message"] = run.message
    return t


def _write_index(d, cid_log):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cids"), "w", encoding="utf-8") as f:
        for cid, path in cid_log.items():
            f.write("%s %s\n" % (cid, os.path.basename(path)))


def _read_index(d):
    out = {}
    try:
        with open(os.path.join(d, "cids"), encoding="utf-8") as f:
            for line in f:
                cid, _, name = line.strip().partition(" ")
                if cid:
                    out[cid] = os.path.join(d, name)
    except OSError:
        pass
    return out
