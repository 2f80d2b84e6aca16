"""k3s's certificates, made with the openssl tool.

As k3s (pkg/daemons/control/deps/deps.go, genServerCerts, genClientCerts;
rancher/dynamiclistener for the serving certificate): two CAs in
server/tls (server-ca for what serves, client-ca for who calls), ECDSA
P-256 keys in "EC PRIVATE KEY" PEM, kept in the volume across restarts; the
admin's client certificate (CN system:admin, O system:masters) that
/etc/rancher/k3s/k3s.yaml carries; and the serving certificate of port
6443 (CN k3s, O k3s) whose SANs are kubernetes' service names, localhost,
127.0.0.1, ::1, 10.43.0.1, the node's name and address, and every
--tls-san, in string order. A changed SAN list gets a new serving
certificate, as dynamiclistener adds SANs to its own.
"""

import base64
import hashlib
import ipaddress
import os
import tempfile
import time

from . import config, procs

SERVICE_NAMES = ["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "kubernetes.default.svc.cluster.local", "localhost"]
SERVICE_IPS = ["127.0.0.1", "::1", "10.43.0.1"]


def _openssl(*args, stdin=None):
    return procs.check(["openssl"] + list(args), input=stdin)


def _key(path):
    if not os.path.exists(path):
        old = os.umask(0o077)
        try:
            _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path)
        finally:
            os.umask(old)


def _ca(name):
    crt = os.path.join(config.TLS_DIR, name + ".crt")
    key = os.path.join(config.TLS_DIR, name + ".key")
    _key(key)
    if not os.path.exists(crt):
        _openssl("req", "-x509", "-new", "-key", key, "-sha256", "-days", "3650",
                 "-subj", "/CN=k3s-%s@%d" % (name, int(time.time())),
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign",
                 "-out", crt)
    return crt, key


def _sign(ca, out_crt, key, subject, usage, sans=None):
    with tempfile.NamedTemporaryFile("w", suffix=".ext", delete=False) as ext:
        ext.write("basicConstraints=critical,CA:FALSE\n")
        ext.write("keyUsage=critical,digitalSignature,keyEncipherment\n")
        ext.write("extendedKeyUsage=%s\n" % usage)
        if sans:
            ext.write("subjectAltName=%s\n" % ",".join(sans))
        path = ext.name
    try:
        csr = _openssl("req", "-new", "-key", key, "-subj", subject)
        _openssl("x509", "-req", "-CA", ca[0], "-CAkey", ca[1], "-set_serial",
                 str(int.from_bytes(os.urandom(8), "big")), "-sha256", "-days", "365",
                 "-extfile", path, "-out", out_crt, stdin=csr)
    finally:
        os.unlink(path)


def san_entries(names):
    out = []
    for n in names:
        try:
            out.append("IP:" + str(ipaddress.ip_address(n)))
        except ValueError:
            out.append("DNS:" + n)
    return out


class PKI:
    def __init__(self, node_name, node_ip, tls_sans):
        os.makedirs(config.TLS_DIR, mode=0o700, exist_ok=True)
        self.server_ca = _ca("server-ca")
        self.client_ca = _ca("client-ca")
        self.admin = self._client("client-admin", "/O=system:masters/CN=system:admin")
        names = []
        for n in SERVICE_NAMES + SERVICE_IPS + [node_name, node_ip] + list(tls_sans):
            if n and n not in names:
                names.append(n)
        # dynamiclistener (factory/gen.go collectCNs) sorts them as strings.
        names.sort()
        self.sans = names
        self.serving = self._serving(names)

    def _client(self, name, subject):
        crt = os.path.join(config.TLS_DIR, name + ".crt")
        key = os.path.join(config.TLS_DIR, name + ".key")
        _key(key)
        if not os.path.exists(crt):
            _sign(self.client_ca, crt, key, subject, "clientAuth")
        return crt, key

    def _serving(self, names):
        d = os.path.join(config.TLS_DIR, "serving")
        os.makedirs(d, mode=0o700, exist_ok=True)
        crt, key, record = (os.path.join(d, f) for f in ("k3s.crt", "k3s.key", "sans"))
        _key(key)
        want = "\n".join(names) + "\n"
        try:
            with open(record, encoding="utf-8") as f:
                have = f.read()
        except OSError:
            have = None
        if have != want or not os.path.exists(crt):
            _sign(self.server_ca, crt, key, "/O=k3s/CN=k3s", "serverAuth", san_entries(names))
            with open(record, "w", encoding="utf-8") as f:
                f.write(want)
        return crt, key

    def kubelet_client(self, node):
        """A node's client certificate (CN system:node:NODE, O system:nodes),
        as the supervisor's /v1-k3s/client-kubelet.crt signs it."""
        return self._client("client-kubelet-" + node, "/O=system:nodes/CN=system:node:" + node)

    def apiserver_kubelet_client(self):
        """The API server's client certificate toward kubelets."""
        return self._client("client-kube-apiserver-kubelet", "/O=system:masters/CN=system:kube-apiserver")

    def kubelet_serving(self, node, ips):
        """An agent kubelet's serving certificate (CN NODE; SANs NODE,
        localhost, 127.0.0.1 and its addresses), as
        /v1-k3s/serving-kubelet.crt signs it with the server CA."""
        crt = os.path.join(config.TLS_DIR, "serving-kubelet-%s.crt" % node)
        key = os.path.join(config.TLS_DIR, "serving-kubelet-%s.key" % node)
        _key(key)
        names = [node, "localhost", "127.0.0.1"] + [i for i in ips if i]
        _sign(self.server_ca, crt, key, "/CN=" + node, "serverAuth", san_entries(names))
        return crt, key

    def ca_hash(self):
        """The sha256 of the server CA, the K10 prefix of a secure token."""
        with open(self.server_ca[0], "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode("ascii")
