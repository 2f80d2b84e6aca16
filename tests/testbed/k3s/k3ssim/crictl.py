"""`crictl` of the stand-in (k3s's multi-call crictl talks to containerd's
CRI): `crictl images` and `crictl rmi REF...` on the node's image store.
SIMULATION: only these two; the store is kubelet/images.py's.
"""

import hashlib
import sys

from .kubelet import images


def main(argv):
    store = images.ImageStore()
    if argv[:1] == ["images"]:
        rows = [("IMAGE", "TAG", "IMAGE ID", "SIZE")]
        for ref in store.list():
            repo, _, tag = ref.rpartition(":")
            rows.append((repo, tag, hashlib.sha256(ref.encode()).hexdigest()[:13], "0B"))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for r in rows:
            print("%s   %s   %s   %s" % (r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].ljust(widths[2]), r[3]))
        return 0
    if argv[:1] == ["rmi"] and len(argv) > 1:
        code = 0
        for ref in argv[1:]:
            if store.remove(ref):
                print("Deleted: %s" % images.normalize(ref))
            else:
                print('E0000 00:00:00.000000       1 remote_image.go:270] "RemoveImage from image service failed" '
                      'err="rpc error: code = NotFound desc = image \\"%s\\": not found"' % ref, file=sys.stderr)
                print("ERRO[0000] no such image %s" % ref, file=sys.stderr)
                code = 1
        return code
    print("SIMULATION: the stand-in's crictl knows only: images, rmi REF...", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
