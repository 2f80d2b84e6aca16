"""Every child process of the stand-in, and PID 1's duty to reap.

`k3s server` is the container's PID 1 (the entrypoint execs it), so the
orphans of pod processes end up as its children. One reaper thread waits
for any child (waitpid(-1)) and hands each status to whoever spawned that
pid; an orphan's status is dropped. Nothing else may wait for a child
(subprocess's own wait would race the reaper), so tools run through run()
and containers through spawn().
"""

import os
import subprocess
import threading
import time

_lock = threading.Condition()
_waiting = {}        # pid -> callback(status)
_early = {}          # pid -> (status, when): exited before it was registered
_started = False


def _reaper():
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            with _lock:
                _lock.wait(1.0)
            continue
        except InterruptedError:
            continue
        code = os.waitstatus_to_exitcode(st)
        with _lock:
            cb = _waiting.pop(pid, None)
            if cb is None:
                _early[pid] = (code, time.monotonic())
                for p, (_, t) in list(_early.items()):
                    if time.monotonic() - t > 120:
                        del _early[p]
        if cb is not None:
            cb(code)


def _ensure():
    global _started
    with _lock:
        if not _started:
            threading.Thread(target=_reaper, name="reaper", daemon=True).start()
            _started = True


def _register(popen, callback):
    """Call back with the exit code (negative: the signal) of POPEN."""
    def done(code):
        popen.returncode = code
        callback(code)
    with _lock:
        if popen.pid in _early:
            code, _ = _early.pop(popen.pid)
        else:
            _waiting[popen.pid] = done
            _lock.notify_all()
            return
    done(code)


def spawn(argv, on_exit, **kw):
    """Start ARGV (subprocess.Popen keywords); ON_EXIT(code) when it ends."""
    _ensure()
    p = subprocess.Popen(argv, **kw)
    _register(p, on_exit)
    return p


def run(argv, input=None, timeout=30, env=None):
    """Run a tool to its end: (exit code, stdout bytes, stderr bytes)."""
    _ensure()
    done = threading.Event()
    result = {}

    def on_exit(code):
        result["code"] = code
        done.set()
    p = spawn(argv, on_exit, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = [], []
    readers = [threading.Thread(target=lambda f=f, b=b: b.append(f.read()), daemon=True)
               for f, b in ((p.stdout, out), (p.stderr, err))]
    for r in readers:
        r.start()
    try:
        if input:
            p.stdin.write(input)
        p.stdin.close()
    except OSError:
        pass
    if not done.wait(timeout):
        try:
            p.kill()
        except OSError:
            pass
        done.wait(5)
    for r in readers:
        r.join(5)
    return result.get("code", -9), b"".join(out), b"".join(err)


def check(argv, input=None, timeout=30):
    """run(), raising with the tool's stderr when it fails."""
    code, out, err = run(argv, input, timeout)
    if code != 0:
        raise RuntimeError("%s exited %s: %s" % (argv[0], code, err.decode("utf-8", "replace").strip()))
    return out
