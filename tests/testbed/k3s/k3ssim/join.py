"""How `k3s agent` joins its server: the token and the server's CA
(k3s pkg/clientaccess/token.go), then the node's configuration and
certificates (pkg/agent/config/config.go get). Each step raises JoinError
with the text of the real error chain, which the agent logs and retries.

- validate(): createProxyAndValidateToken (pkg/agent/run.go). /cacerts is
  fetched without verification, then again verified by that CA as Go's
  TLS client verifies a server: the certificate must name the URL's host
  (an IP among its IP SANs, a name among its DNS SANs), else "CA cert
  validation failed: Get "…/cacerts": tls: failed to verify certificate:
  x509: certificate is valid for …, not HOST" (crypto/x509
  HostnameError). Then a secure token's hash must be the CA's ("token CA
  hash does not match the Cluster CA certificate hash: W != G").
- configure(): /v1-k3s/config, the client and server CAs, the kubelet's
  serving and client certificates (node name, password and IPs in the
  k3s-Node-* headers), with basic auth node:<password>; an answer other
  than 200 is "URL: STATUS" as clientaccess.get says it, a 403 for a node
  certificate the node-password message.
Python's own errors become Go's texts for what a join meets: a refused or
unroutable connection, a timeout (SIMULATION: the mapping, not Go's code).
"""

import base64
import errno
import hashlib
import ipaddress
import json
import os
import socket
import ssl
import urllib.error
import urllib.request

from . import config

PASSWORD_REJECTED = ("Node password rejected, duplicate hostname or contents of '%s' may not match server "
                     "node-passwd entry, try enabling a unique node name with the --with-node-id flag")


class JoinError(Exception):
    pass


def dial_error(hostport, e):
    """Go's net.OpError text for a dial that failed as E did, or None."""
    if isinstance(e, OSError) and e.errno is not None:
        why = {errno.ECONNREFUSED: "connect: connection refused", errno.EHOSTUNREACH: "connect: no route to host",
               errno.ENETUNREACH: "connect: network is unreachable"}.get(e.errno)
        if why:
            return "dial tcp %s: %s" % (hostport, why)
    return None


def _neterr(url, e):
    """Go's url.Error text for a failed request."""
    hostport = url.split("/")[2]
    reason = getattr(e, "reason", e)
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return 'Get "%s": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' % url
    dial = dial_error(hostport, reason)
    if dial:
        return 'Get "%s": %s' % (url, dial)
    if isinstance(reason, socket.gaierror):
        return 'Get "%s": dial tcp: lookup %s: no such host' % (url, hostport.rsplit(":", 1)[0])
    return 'Get "%s": %s' % (url, reason)


def get(url, ctx, headers=None):
    """(status, reason, body) of a GET; raises JoinError for no answer."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return resp.status, resp.reason, resp.read().decode("ascii", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.reason, e.read().decode("ascii", "replace")
    except (OSError, ValueError) as e:
        raise JoinError(_neterr(url, e))


def _sans(cert):
    ips, names = [], []
    for kind, value in cert.get("subjectAltName", ()):
        if kind == "IP Address":
            ips.append(ipaddress.ip_address(value.strip()))
        elif kind == "DNS":
            names.append(value)
    return ips, names


def host_error(cert, host):
    """crypto/x509 HostnameError.Error(), or None when the certificate names HOST."""
    ips, names = _sans(cert)
    try:
        want = ipaddress.ip_address(host)
    except ValueError:
        want = None
    if want is not None:
        if want in ips:
            return None
        if not ips:
            return "x509: cannot validate certificate for %s because it doesn't contain any IP SANs" % host
        return "x509: certificate is valid for %s, not %s" % (", ".join(str(i) for i in ips), host)
    if any(n.lower() == host.lower() or (n.startswith("*.") and host.lower().split(".", 1)[-1] == n[2:].lower())
           for n in names):
        return None
    if not names:
        return "x509: certificate is not valid for any names, but wanted to match " + host
    return "x509: certificate is valid for %s, not %s" % (", ".join(names), host)


class TLSError(Exception):
    """Go's crypto/tls text for a server it does not trust."""


def tls_connect(host, port, ca_path, cert=None, key=None):
    """A TLS connection to HOST:PORT verified as Go's client verifies it:
    the chain by CA_PATH, then HOST among the certificate's SANs; CERT and
    KEY, the client's. Raises TLSError, or OSError for the dial."""
    ctx = ssl.create_default_context(cafile=ca_path)
    ctx.check_hostname = False      # checked below, with Go's rules and texts
    if cert:
        ctx.load_cert_chain(cert, key)
    raw = socket.create_connection((host, port), timeout=10)
    try:
        s = ctx.wrap_socket(raw, server_hostname=host)
    except ssl.SSLCertVerificationError:
        raw.close()
        raise TLSError("tls: failed to verify certificate: x509: certificate signed by unknown authority")
    except BaseException:
        raw.close()
        raise
    err = host_error(s.getpeercert(), host)
    if err:
        s.close()
        raise TLSError("tls: failed to verify certificate: " + err)
    return s


def _verified(ca_path, host, port, url):
    """Go's TLS verification of the server against CA_PATH: chain, then the host."""
    try:
        tls_connect(host, port, ca_path).close()
    except TLSError as e:
        raise JoinError('Get "%s": %s' % (url, e))
    except OSError as e:
        raise JoinError(_neterr(url, e))
    ctx = ssl.create_default_context(cafile=ca_path)
    ctx.check_hostname = False      # checked above, with Go's rules and texts
    return ctx


def validate(base, host, port, token, agent_dir):
    """ParseAndValidateToken: the server CA (written to AGENT_DIR), and an
    SSL context that trusts it. Raises JoinError."""
    want_hash = token[3:].partition("::")[0] if token.startswith("K10") and "::" in token else ""
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    url = base + "/cacerts"
    try:
        code, reason, ca = get(url, insecure)
    except JoinError as e:
        raise JoinError("failed to get CA certs: %s" % e)
    if code != 200:
        raise JoinError("failed to get CA certs: %s: %d %s" % (url, code, reason))
    ca_path = os.path.join(agent_dir, "server-ca.crt")
    write(ca_path, ca, 0o600)
    try:
        ctx = _verified(ca_path, host, port, url)
    except JoinError as e:
        raise JoinError("CA cert validation failed: %s" % e)
    got = hashlib.sha256(ca.encode()).hexdigest()
    if want_hash and got != want_hash:
        raise JoinError("token CA hash does not match the Cluster CA certificate hash: %s != %s" % (want_hash, got))
    return ca_path, ctx


def node_auth(token):
    """The supervisor's basic auth for a token: node:<the token's password>."""
    pw = token[3:].partition("::")[2].rsplit(":", 1)[-1] if token.startswith("K10") else token.rsplit(":", 1)[-1]
    return {"Authorization": "Basic " + base64.b64encode(("node:" + pw).encode()).decode()}


def configure(base, ctx, token, node, ips, password, agent_dir):
    """config.Get's requests: the paths of client-ca, the kubelet's serving
    and client certificates and keys, and the server's config ("control").
    Raises JoinError."""
    auth = node_auth(token)
    node_headers = dict(auth, **{"k3s-Node-Name": node, "k3s-Node-Password": password, "k3s-Node-IP": ips})

    def fetch(path, headers, wrap=None, forbidden=None):
        url = base + path
        code, reason, body = get(url, ctx, headers)
        if code == 403 and forbidden:
            err = forbidden
        elif code != 200:
            err = "%s: %d %s" % (url, code, reason)
        else:
            return body
        raise JoinError("%s: %s" % (wrap, err) if wrap else err)

    try:
        control = json.loads(fetch("/v1-k3s/config", auth))
    except JoinError as e:
        raise JoinError("failed to retrieve configuration from server: %s" % e)
    paths = {"client-ca": os.path.join(agent_dir, "client-ca.crt"), "control": control}
    write(paths["client-ca"], fetch("/v1-k3s/client-ca.crt", auth), 0o600)
    pw_file = config.NODE_PASSWORD_FILE
    for name in ("serving-kubelet", "client-kubelet"):
        crt, key = os.path.join(agent_dir, name + ".crt"), os.path.join(agent_dir, name + ".key")
        blocks = _split_pem(fetch("/v1-k3s/%s.crt" % name, node_headers, crt, PASSWORD_REJECTED % pw_file))
        write(crt, "".join(b for b in blocks if "PRIVATE KEY" not in b), 0o600)
        write(key, "".join(b for b in blocks if "PRIVATE KEY" in b), 0o600)
        paths[name] = (crt, key)
    return paths


def _split_pem(text):
    blocks, cur = [], []
    for line in text.splitlines(keepends=True):
        cur.append(line)
        if line.startswith("-----END "):
            blocks.append("".join(cur))
            cur = []
    return blocks


def write(path, text, mode):
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
