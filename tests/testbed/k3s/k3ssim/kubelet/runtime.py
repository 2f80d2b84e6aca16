"""The container runtime: one run of one container.

SIMULATION: there is no containerd here and no isolation. A container of a
simulated image (programs/: the Helm job, the device plugin, its config
manager, the MPS daemon) runs its program in a thread; any other runs its
command and args as a process group inside the gateway container, so the
hook-injected nvidia-smi answers. Each run has a containerd-style ID and a
log in the CRI format the kubelet writes (`TIME STREAM F TEXT`, one line
each, /var/log/pods/NS_NAME_UID/CONTAINER/N.log).

A command that is not found fails the start as runc does: StartError,
exit code 128, containerd's "exec: \"X\": executable file not found in
$PATH" message; so does a createContainer hook that fails.

The termination message, as the kubelet makes it
(pkg/kubelet/kuberuntime/kuberuntime_container.go): a file of the pod's
own (/var/lib/kubelet/pods/UID/containers/NAME/ID) is bind-mounted at the
container's terminationMessagePath (default /dev/termination-log), in the
mount namespace of its own the process runs in (MountNamespace), the one
piece of isolation here. Once the container has ended, its first 4096 bytes
(MaxContainerTerminationMessageLength) are the message; with
terminationMessagePolicy FallbackToLogsOnError, an empty file and a
non-zero exit, the log's last 80 lines, at most 2048 bytes
(MaxContainerTerminationMessageLogLines/-Length), are.
"""

import os
import shlex
import shutil
import signal
import subprocess
import threading
import time

from .. import clock, procs
from . import cgroups

START_ERROR = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc '
               'create failed: unable to start container process: exec: "%s": executable file not found in $PATH: '
               'unknown')


def new_id():
    return "containerd://" + os.urandom(32).hex()


class Log:
    """A container's log file, line by line in the CRI format."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "a").close()

    def write(self, text, stream="stdout"):
        with self.lock, open(self.path, "a", encoding="utf-8") as f:
            for line in text.splitlines():
                f.write("%s %s F %s\n" % (clock.rfc3339_nano(), stream, line))

    def tail_text(self, lines, limit):
        """The last LINES lines of what the container printed, at most LIMIT
        bytes (kuberuntime's readLastStringFromContainerLogs)."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                rows = f.read().splitlines()
        except OSError:
            return ""
        text, cur = [], ""
        for row in rows:
            parts = row.split(" ", 3)
            if len(parts) < 4:
                continue
            cur += parts[3]
            if parts[2] == "F":
                text.append(cur)
                cur = ""
        if cur:
            text.append(cur)
        out = "".join(t + "\n" for t in text[-lines:])
        return out.encode()[-limit:].decode("utf-8", "replace")

    def pipe(self, fileobj, stream):
        """Copy a pipe into the log until EOF (its own thread)."""
        def copy():
            with fileobj:
                for raw in iter(fileobj.readline, b""):
                    text = raw.decode("utf-8", "replace")
                    with self.lock, open(self.path, "a", encoding="utf-8") as f:
                        tag = "F" if text.endswith("\n") else "P"
                        f.write("%s %s %s %s\n" % (clock.rfc3339_nano(), stream, tag, text.rstrip("\n")))
        t = threading.Thread(target=copy, daemon=True)
        t.start()
        return t


class Run:
    """What the kubelet sees of a container run."""

    def __init__(self, name, log_path, on_exit):
        self.name = name
        self.cid = new_id()
        self.log = Log(log_path)
        self.on_exit = on_exit
        self.started_at = clock.rfc3339()
        self.finished_at = None
        self.exit_code = None
        self.reason = None
        self.message = None
        self.killed = False

    @property
    def running(self):
        return self.exit_code is None

    def _finish(self, code, reason=None, message=None):
        self.finished_at = clock.rfc3339()
        self.reason = reason or ("Completed" if code == 0 else "Error")
        self.message = message
        self.exit_code = code
        self.on_exit(self)


HOOK_FAILED = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc '
               'create failed: unable to start container process: error during container init: error running '
               'createContainer hook #%d: exit status %%s, stdout: %%s, stderr: %%s: unknown')
# A bind runc cannot make (libcontainer/rootfs_linux.go mountToRootfs; the
# kernel's words as mount(8) says them, SIMULATION of the syscall's).
MOUNT_FAILED = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc '
                'create failed: unable to start container process: error during container init: error mounting '
                '"%s" to rootfs at "%s": %%s: unknown')
HOOK_ERROR = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc '
              'create failed: unable to start container process: error during container init: error running '
              'createContainer hook #%d: fork/exec %s: no such file or directory: unknown')


class FailedStart(Run):
    """A start that runc refused (the command is not there, or a hook's
    program): StartError, exit code 128."""

    def __init__(self, name, log_path, on_exit, command, message=None):
        super().__init__(name, log_path, on_exit)
        self._finish(128, "StartError", message or START_ERROR % command)


def hook_missing(hooks):
    """runc's error for the first hook whose program is not there, or None."""
    for i, h in enumerate(hooks):
        if not os.access(h["path"], os.X_OK):
            return HOOK_ERROR % (i, h["path"])
    return None


MESSAGE_MAX = 4096          # kubecontainer.MaxContainerTerminationMessageLength
MESSAGE_LOG_LINES = 80      # MaxContainerTerminationMessageLogLines
MESSAGE_LOG_MAX = 2048      # MaxContainerTerminationMessageLogLength

class MountNamespace:
    """What runc makes of the container's own mount namespace before its
    command runs, the one piece of isolation here: a fresh procfs (the
    kernel's /proc/driver/nvidia/params bound over the gateway's masked
    one), the base spec's createContainer hooks, run in that namespace
    (runtime-spec config.md: "MUST be called ... in the container
    namespace"), and the termination-message file. Each a line of the sh
    that then execs the command."""

    def __init__(self, start_error=None):
        self.lines = []
        # A file of the kubelet's where a hook that fails leaves runc's
        # error, so that the run ends as a failed start, not as the
        # container's own exit.
        self.start_error = start_error

    def bind(self, src, dst, create=False, directory=False, recursive=False):
        """SRC bound at DST; CREATE: DST made as runc makes a mount point
        (a directory, with DIRECTORY, else an empty file in its made
        directory). With a start-error file, a failure is runc's before the
        command runs (MOUNT_FAILED, the run's StartError)."""
        q = shlex.quote
        step = "mount %s %s %s" % ("--rbind" if recursive else "--bind", q(src), q(dst))
        if create and directory:
            step = "mkdir -p %s && %s" % (q(dst), step)
        elif create:
            parent = os.path.dirname(dst.rstrip("/")) or "/"
            step = "{ [ -e %s ] || { mkdir -p %s && : >%s; }; } && %s" % (q(dst), q(parent), q(dst), step)
        if not self.start_error:
            self.lines.append("{ %s; } || exit 126" % step)
            return
        f, err = q(self.start_error), q(self.start_error + ".err")
        self.lines.append('{ %s; } 2>%s || { printf %s "$(cat %s)" >%s; exit 128; }'
                          % (step, err, q(MOUNT_FAILED % (src, dst)), err, f))

    def hook(self, index, hook):
        """runc runs PATH with ARGS (args[0] its name), its stdout and
        stderr kept; a failure ends the create (libcontainer/configs
        Hook.Run: "error running createContainer hook #N: exit status S,
        stdout: …, stderr: …"), which containerd reports as the start's
        failure."""
        q = shlex.quote
        argv = " ".join(q(a) for a in [hook["path"]] + list(hook.get("args") or [])[1:])
        if not self.start_error:
            self.lines.append("%s </dev/null || exit 128" % argv)
            return
        f, err = q(self.start_error), q(self.start_error + ".err")
        self.lines.append('o=$(%s </dev/null 2>%s) || { s=$?; printf %s "$s" "$o" "$(cat %s)" >%s; exit 128; }'
                          % (argv, err, q(HOOK_FAILED % index), err, f))

    def start_failure(self):
        """runc's error, when a hook failed the start; else None."""
        if not self.start_error:
            return None
        try:
            with open(self.start_error, encoding="utf-8", errors="replace") as f:
                return f.read() or None
        except OSError:
            return None

    def wrap(self, argv, first=""):
        """ARGV run after the lines; FIRST (the cgroup's join) before them,
        without a mount namespace of its own when there are none."""
        lines = ([first] if first else []) + self.lines
        if not lines:
            return list(argv)
        sh = ["sh", "-c", "; ".join(lines) + '; exec "$@"', "sh"] + list(argv)
        return ["unshare", "-m", "--propagation", "private"] + sh if self.lines else sh


class Termination:
    """Where a container's termination message comes from (spec fields
    terminationMessagePath and terminationMessagePolicy)."""

    def __init__(self, host_file, path, policy):
        self.host_file = host_file
        self.path = path
        self.fallback = policy == "FallbackToLogsOnError"
        os.makedirs(os.path.dirname(host_file), exist_ok=True)
        open(host_file, "w").close()

    def bind_into(self, ns):
        """Bound over the path the container writes (made in the gateway's
        own tree first when it has none)."""
        ns.bind(self.host_file, self.path, create=True)

    def message(self, code, log):
        try:
            with open(self.host_file, "rb") as f:
                text = f.read(MESSAGE_MAX).decode("utf-8", "replace")
        except OSError:
            text = ""
        if not text and self.fallback and code != 0:
            text = log.tail_text(MESSAGE_LOG_LINES, MESSAGE_LOG_MAX)
        return text or None


class ProcessRun(Run):
    """A command as a process group; with POD_CGROUP ((uid, qosClass)) in
    the cgroups the kubelet and runc make (cgroups.py)."""

    def __init__(self, name, log_path, on_exit, argv, env, cwd, termination=None, ns=None, pod_cgroup=None):
        super().__init__(name, log_path, on_exit)
        self._readers = []
        self._spawned = threading.Event()
        self.termination = termination
        ns = ns or MountNamespace()
        self.ns = ns
        if termination is not None:
            termination.bind_into(ns)
        self.cgroup = cgroups.Cgroup(pod_cgroup[0], pod_cgroup[1], self.cid) if pod_cgroup else None
        argv = ns.wrap(argv, self.cgroup.join_line() if self.cgroup else "")
        self.proc = procs.spawn(argv, self._exited, env=env, cwd=cwd if os.path.isdir(cwd) else "/",
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        self._readers = [self.log.pipe(self.proc.stdout, "stdout"), self.log.pipe(self.proc.stderr, "stderr")]
        self._spawned.set()

    def _exited(self, code):
        # The container ends with its main process: the rest of its
        # process group goes too, and the log is whole before the status
        # (containerd's CRI plugin, handleContainerExit, updates the
        # status only after the task's delete has drained the IO). The
        # readers end at the pipes' EOF, which the kill brings; on a
        # loaded host that may take a while, so the wait is long, and
        # bounded only for a process that left the group.
        def finish():
            # A process that ended at once may be told of before spawn()
            # has returned (procs: reaped before it was registered, then
            # called back at once): its handle and readers first.
            self._spawned.wait()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            for r in self._readers:
                r.join(30)
            if self.cgroup:
                self.cgroup.remove()
            code_ = 128 - code if code < 0 else code
            failed = self.ns.start_failure()
            if failed:   # runc's create failed: the command never ran
                self._finish(128, "StartError", failed)
                return
            msg = self.termination.message(code_, self.log) if self.termination else None
            self._finish(code_, message=msg)
        threading.Thread(target=finish, daemon=True).start()

    def kill(self, grace):
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except OSError:
            return
        def escalate():
            deadline = time.monotonic() + max(grace, 0)
            while self.running and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.running:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        threading.Thread(target=escalate, daemon=True).start()


class ProgramRun(Run):
    """A simulated image's program: PROGRAM(ctx) -> exit code, in a thread;
    ctx.stop is set when the container is killed."""

    def __init__(self, name, log_path, on_exit, program, ctx):
        super().__init__(name, log_path, on_exit)
        ctx.log = self.log
        self.ctx = ctx
        self.thread = threading.Thread(target=self._main, args=(program,), name="ctr-" + name, daemon=True)
        self.thread.start()

    def _main(self, program):
        try:
            code = program(self.ctx)
        except Exception as e:   # the stand-in's bug, shown as the container's crash
            self.log.write("SIMULATION: program failed: %s: %s" % (type(e).__name__, e), "stderr")
            code = 2
        if self.killed and code is None:
            code = 0
        self._finish(int(code or 0))

    def kill(self, grace):
        self.killed = True
        self.ctx.stop.set()


def command_missing(argv0, env):
    if "/" in argv0:
        return not (os.path.isfile(argv0) and os.access(argv0, os.X_OK))
    return shutil.which(argv0, path=env.get("PATH", os.environ.get("PATH", ""))) is None
