"""The node's image store, offline as a host without network.

- Import (k3s pkg/agent/containerd/watcher.go; the extensions of
  rancher/wharfie pkg/tarfile/tarfile.go): every file of agent/images/
  ending in .tar, .tar.zst/.tzst, .tar.gz/.tgz, .tar.bz2/.tbz or .tar.lz4
  is imported at start and again when its size or time changes; the names
  are the docker-archive's manifest.json RepoTags, normalised as containerd
  does (busybox -> docker.io/library/busybox:latest). "Imported images
  from FILE in Nms" is logged; an archive that cannot be read is a failed
  import.
- Pulls (kubelet pkg/kubelet/images/image_manager.go; containerd
  internal/cri/server/images/image_pull.go): an image in the store runs
  unless its policy is Always; otherwise it is pulled, which offline fails
  with containerd's resolve error (ErrImagePull, then ImagePullBackOff
  while the image back-off lasts, and ErrImagePull again at each pull
  after it);
  Never fails with ErrImageNeverPull. SIM_NETWORK=online lets pulls
  succeed.
"""

import fcntl
import io
import json
import os
import tarfile
import threading
import time

from .. import clock, config, logs, procs

BACKOFF_CAP = 30.0   # the image back-off's most (SIMULATION; the kubelet's: 5 minutes)
EXTENSIONS = (".tar", ".tar.lz4", ".tar.bz2", ".tbz", ".tar.gz", ".tgz", ".tar.zst", ".tzst")


def normalize(ref):
    """docker.io/library/x:latest from x, as containerd's reference.ParseDockerRef."""
    first = ref.split("/", 1)[0]
    if "/" in ref:
        if not ("." in first or ":" in first or first == "localhost"):
            ref = "docker.io/" + ref
    else:
        ref = "docker.io/library/" + ref
    last = ref.rsplit("/", 1)[1]
    if ":" not in last and "@" not in last:
        ref += ":latest"
    return ref


def _manifest(path):
    """The RepoTags of a docker-archive, plain or compressed."""
    if path.endswith((".tar.zst", ".tzst")):
        code, out, _ = procs.run(["zstd", "-dcq", path], timeout=120)
        if code != 0:
            raise OSError("zstd failed")
        tf = tarfile.open(fileobj=io.BytesIO(out), mode="r:")
    elif path.endswith(".tar.lz4"):
        raise OSError("lz4 archives cannot be read (SIMULATION)")
    else:
        tf = tarfile.open(path, mode="r:*")
    with tf:
        m = tf.extractfile("manifest.json")
        if m is None:
            raise OSError("no manifest.json")
        data = json.load(m)
    return [t for entry in data for t in entry.get("RepoTags") or []]


class ImageStore:
    """containerd's image store of the node, kept on disk (sim/images.json)
    as containerd's is, so that `crictl` (another process) sees and
    changes the same store; every change holds its lock file."""

    def __init__(self):
        self.path = os.path.join(config.SIM_DIR, "images.json")
        self.lock = threading.Lock()
        self.imported = {}
        self.images = set()
        self._stamp = None
        self._load()

    def _load(self):
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp == self._stamp:
                return
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return
        self._stamp = stamp
        self.images = set(data.get("images", []))
        self.imported = data.get("imported", {})

    def _change(self, fn):
        """Apply FN to the images and imports, under the file's lock."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with self.lock, open(self.path + ".lock", "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            self._stamp = None
            self._load()
            fn()
            tmp = self.path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"images": sorted(self.images), "imported": self.imported}, f)
            os.replace(tmp, self.path)

    def import_dir(self):
        try:
            names = sorted(os.listdir(config.IMAGES_DIR))
        except OSError:
            return
        with self.lock:
            self._load()
        for name in names:
            path = os.path.join(config.IMAGES_DIR, name)
            if not name.endswith(EXTENSIONS) or not os.path.isfile(path):
                continue
            st = os.stat(path)
            key = "%d %d" % (st.st_size, int(st.st_mtime))
            if self.imported.get(name) == key:
                continue
            t0 = time.monotonic()
            try:
                tags = _manifest(path)
                if not tags:
                    raise OSError("no RepoTags")
            except (OSError, tarfile.TarError, ValueError, KeyError) as e:
                logs.error("Failed to import %s: SIMULATION: not a docker-archive the stand-in can read (%s)"
                           % (path, e))
                tags = []
            else:
                logs.info("Imported images from %s in %dms" % (path, (time.monotonic() - t0) * 1000))

            def record(name=name, key=key, tags=tags):
                self.images |= {normalize(t) for t in tags}
                self.imported[name] = key
            self._change(record)

    def present(self, ref):
        with self.lock:
            self._load()
            return normalize(ref) in self.images

    def add(self, ref):
        self._change(lambda: self.images.add(normalize(ref)))

    def remove(self, ref):
        """True when REF was there (crictl rmi)."""
        found = []

        def drop():
            if normalize(ref) in self.images:
                self.images.discard(normalize(ref))
                found.append(ref)
        self._change(drop)
        return bool(found)

    def list(self):
        with self.lock:
            self._load()
            return sorted(self.images)


def pull_error(ref):
    """What containerd says when the registry cannot be reached."""
    full = normalize(ref)
    host, _, path = full.partition("/")
    if host == "docker.io":
        host = "registry-1.docker.io"
    repo, _, tag = path.rpartition(":")
    if "@" in path:
        repo, _, tag = path.partition("@")
    return ('rpc error: code = Unknown desc = failed to pull and unpack image "%s": failed to resolve reference '
            '"%s": failed to do request: Head "https://%s/v2/%s/manifests/%s": dial tcp: lookup %s: no such host'
            % (full, full, host, repo, tag, host))


def ensure(k, pod, cs):
    """Is CS's image there to run? As the kubelet's EnsureImageExists: the
    store, the pull policy, the image back-off; the container's waiting
    reason and its next sync are set when it is not."""
    image = cs.spec.get("image", "")
    policy = cs.spec.get("imagePullPolicy") or "IfNotPresent"
    if policy != "Always" and k.images.present(image):
        if cs.pull_failed or cs.run is None:
            k.event(pod, "Normal", "Pulled", 'Container image "%s" already present on machine' % image)
        cs.pull_failed = 0
        cs.pull_backoff = 0.0
        return True
    if policy == "Never":
        cs.waiting = ("ErrImageNeverPull", 'Container image "%s" is not present with pull policy of Never' % image)
        k.event(pod, "Warning", "ErrImageNeverPull", cs.waiting[1])
        cs.next_start = clock.now() + config.POD_BACKOFF
        return False
    if config.switch("SIM_NETWORK") == "online":
        k.images.add(image)
        cs.pull_failed = 0
        cs.pull_backoff = 0.0
        return True
    # The kubelet's image back-off (pkg/kubelet/images/image_manager.go,
    # EnsureImageExists): within it a sync says ImagePullBackOff; once it
    # is over the pull is tried again, and fails with ErrImagePull anew.
    err = pull_error(image)
    now = clock.now()
    if cs.pull_failed and now < cs.pull_retry_at:
        cs.waiting = ("ImagePullBackOff", 'Back-off pulling image "%s": ErrImagePull: %s' % (image, err))
        cs.next_start = cs.pull_retry_at
        return False
    cs.waiting = ("ErrImagePull", err)
    k.event(pod, "Warning", "Failed", 'Failed to pull image "%s": %s' % (image, err))
    cs.pull_failed += 1
    cs.pull_backoff = min(max(cs.pull_backoff * 2, config.POD_BACKOFF), BACKOFF_CAP)
    cs.pull_retry_at = now + cs.pull_backoff
    cs.next_start = now + cs.pull_backoff / 2   # a sync within the back-off
    return False
