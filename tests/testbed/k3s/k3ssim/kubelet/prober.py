"""The kubelet's startup probes (pkg/kubelet/prober: worker.go, prober.go;
kuberuntime_manager.go computePodActions).

- A container with a startupProbe is not started (its status' started is
  false), so not ready, until the probe succeeds once. The first probe
  runs initialDelaySeconds (0) after the container started, then one every
  periodSeconds (10), each limited to timeoutSeconds (1).
- An exec probe runs its command in the container (its mount and network
  namespaces and environment: the pod worker's exec_argv and exec_env), as
  `kubectl exec` would: exit 0 passes; any other is
  a failure, its output the Warning event Unhealthy "Startup probe failed:
  …"; one past its timeout fails as "command \"…\" timed out".
- failureThreshold (3) failures in a row: the container is killed (Normal
  Killing "Container C failed startup probe, will be restarted") and
  restarts as the pod's restartPolicy says.
- Once started, the probe runs no more.
SIMULATION: httpGet, tcpSocket and grpc probes pass at once, and so does
an exec probe of a program container (programs/: a thread, no process to
enter); readiness and liveness probes are not run (a started container is
ready).
"""

from .. import clock, procs


class Startup:
    """One run's startup probe state."""

    def __init__(self, spec, started_at):
        self.probe = spec.get("startupProbe")
        self.ok = not (self.probe and (self.probe.get("exec") or {}).get("command"))
        self.failures = 0
        self.next_at = started_at + float((self.probe or {}).get("initialDelaySeconds", 0))


def started(cs):
    """Has CS's current run passed its startup probe (or has none)?"""
    probe = getattr(cs, "startup", None)
    return probe is None or probe.ok


def step(worker, cs):
    """Probe CS's running container when due (worker: its PodWorker)."""
    p = getattr(cs, "startup", None)
    pid = getattr(getattr(cs.run, "proc", None), "pid", None)
    if p is None or p.ok or clock.now() < p.next_at:
        return
    if pid is None:
        p.ok = True
        return
    p.next_at = clock.now() + float(p.probe.get("periodSeconds", 10))
    timeout = float(p.probe.get("timeoutSeconds", 1))
    code, out, err = procs.run(worker.exec_argv(cs, p.probe["exec"]["command"]), timeout=timeout,
                               env=worker.exec_env(cs))
    if code == 0:
        p.ok = True
        worker.k.wake.set()
        return
    p.failures += 1
    said = ('command "%s" timed out' % " ".join(p.probe["exec"]["command"]) if code < 0
            else (out + err).decode("utf-8", "replace").rstrip("\n"))
    worker.k.event(worker.pod, "Warning", "Unhealthy", "Startup probe failed: %s" % said)
    if p.failures >= int(p.probe.get("failureThreshold", 3)):
        worker.k.event(worker.pod, "Normal", "Killing", "Container %s failed startup probe, will be restarted"
                       % cs.spec["name"])
        cs.run.kill(float(worker.pod["spec"].get("terminationGracePeriodSeconds", 30)))
