"""Time as the API writes it, and the stand-in's measuring tape.

The API's timestamps are RFC 3339 in UTC with whole seconds (metav1.Time);
MicroTime fields carry microseconds. `stamp` is no part of k3s: it records
(in /proc/uptime seconds, the host's clock too) the moment a readiness
change became visible in the API, for scripts/bench.
"""

import datetime
import os
import threading
import time

from . import config

_stamp_lock = threading.Lock()


def now():
    """Monotonic seconds, for delays and back-offs."""
    return time.monotonic()


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def rfc3339(t=None):
    return (t or utcnow()).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(t=None):
    return (t or utcnow()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339_nano(t=None):
    """The kubelet's log timestamps (time.RFC3339Nano, nanoseconds)."""
    t = t or utcnow()
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%06d000Z" % t.microsecond


def parse(ts):
    """An RFC 3339 timestamp of the API, or None."""
    if not ts:
        return None
    try:
        return datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(ts, t=None):
    """A duration as kubectl prints AGE (apimachinery duration.HumanDuration)."""
    start = parse(ts)
    if start is None:
        return "<unknown>"
    return human_duration(((t or utcnow()) - start).total_seconds())


def human_duration(seconds):
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60 * 2:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 60 * 3:
        return "%dm" % m
    h = s // 3600
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 24 * 8:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    if h < 24 * 365 * 2:
        return "%dd" % (h // 24)
    if h < 24 * 365 * 8:
        return "%dy%dd" % (h // 24 // 365, h // 24 % 365)
    return "%dy" % (h // 24 // 365)


def uptime():
    with open("/proc/uptime", encoding="ascii") as f:
        return f.read().split()[0]


def stamp(event):
    with _stamp_lock:
        os.makedirs(config.RUN_DIR, exist_ok=True)
        with open(config.STAMPS, "a", encoding="utf-8") as f:
            f.write("%s %s\n" % (uptime(), event))


class Pace:
    """A reconcile loop's wait on WAKE (set when the store changes).

    SIMULATION: k3s's controllers wait on their informers' events; the
    stand-in's loop also polls (switch files, delays, pods' processes):
    every RECONCILE_PERIOD while the cluster changes, and every IDLE_PERIOD
    once it has not for IDLE_AFTER seconds, so that a quiet gateway costs
    the test machine little CPU. A change makes it quick again at once.
    """

    def __init__(self, wake):
        self.wake = wake
        self.changed = now()

    def period(self):
        if now() - self.changed < config.IDLE_AFTER:
            return config.RECONCILE_PERIOD
        return max(config.IDLE_PERIOD, config.RECONCILE_PERIOD)

    def wait(self):
        if self.wake.wait(self.period()):
            self.changed = now()
        self.wake.clear()
