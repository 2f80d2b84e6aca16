"""The log lines the simulated processes print, in their real formats.

k3s logs through logrus (`time="2006-01-02T15:04:05Z" level=info msg="…"`)
on stderr, which is the container's log; the NVIDIA programs log through
klog (`I0102 15:04:05.000000       1 file.go:123] msg`).
"""

import re
import sys
import threading

from . import clock

_lock = threading.Lock()


def _quote(msg):
    # logrus's text formatter quotes a message that needs it, as strconv.Quote does.
    return '"' + msg.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _value(v):
    # logrus quotes a field's value unless it is all [a-zA-Z0-9-._/@^+].
    v = str(v)
    return v if v and re.fullmatch(r"[-a-zA-Z0-9._/@^+]+", v) else _quote(v)


def server(level, msg, **fields):
    """One logrus line; FIELDS as logrus.WithField adds them, sorted."""
    extra = "".join(" %s=%s" % (k, _value(v)) for k, v in sorted(fields.items()))
    line = 'time="%s" level=%s msg=%s%s\n' % (clock.rfc3339(), level, _quote(msg), extra)
    with _lock:
        sys.stderr.write(line)
        sys.stderr.flush()


def info(msg, **fields):
    server("info", msg, **fields)


def warn(msg):
    server("warning", msg)


def error(msg):
    server("error", msg)


def klog(severity, where, msg):
    """One klog line: severity I/W/E/F, where = "file.go:123"."""
    t = clock.utcnow()
    return "%s%s %s.%06d       1 %s] %s\n" % (
        severity, t.strftime("%m%d"), t.strftime("%H:%M:%S"), t.microsecond, where, msg)
