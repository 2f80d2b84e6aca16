"""HTTPS on port 6443: TLS with client certificates, HTTP/1.1 keep-alive,
JSON and text bodies, and chunked streams for watches and followed logs.

The real listener (k3s's supervisor, rancher/dynamiclistener in front of
kube-apiserver) negotiates HTTP/2 where the client offers it; kubectl
falls back to HTTP/1.1 when ALPN offers no h2, as here. A request without
a client certificate that the client CA signed is answered 401, as
kube-apiserver with anonymous auth off (k3s's default) answers it.
"""

import json
import select
import socket
import socketserver
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from . import status


class Request:
    """One parsed request, and the ways to answer it."""

    def __init__(self, handler, method):
        self.h = handler
        self.method = method
        url = urlsplit(handler.path)
        self.path = url.path
        self.query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.headers = handler.headers
        self.user = handler.user
        self.sent = False
        self._body = None

    def param(self, name, default=None):
        return self.query.get(name, default)

    def flag(self, name):
        return self.query.get(name, "").lower() in ("1", "true")

    def body(self):
        if self._body is None:
            n = int(self.headers.get("Content-Length") or 0)
            self._body = self.h.rfile.read(n) if n > 0 else b""
        return self._body

    def json_body(self):
        raw = self.body()
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except (ValueError, UnicodeDecodeError) as e:
            raise status.bad_request("couldn't get version/kind; json parse error: %s" % e)

    def accepts(self, fragment):
        return fragment in (self.headers.get("Accept") or "")

    # ---- answers -----------------------------------------------------

    def _head(self, code, ctype, length=None, extra=None):
        self.h.send_response(code)
        self.h.send_header("Content-Type", ctype)
        self.h.send_header("Cache-Control", "no-cache, private")
        for k, v in (extra or {}).items():
            self.h.send_header(k, v)
        if length is not None:
            self.h.send_header("Content-Length", str(length))
        else:
            self.h.send_header("Transfer-Encoding", "chunked")
        self.h.end_headers()
        self.sent = True

    def send_json(self, code, obj, ctype="application/json", extra=None):
        data = (json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8")
        self._head(code, ctype, len(data), extra)
        self.h.wfile.write(data)

    def send_text(self, code, text, ctype="text/plain; charset=utf-8"):
        data = text.encode("utf-8")
        self._head(code, ctype, len(data))
        self.h.wfile.write(data)

    def send_error(self, err):
        extra = dict(err.headers)
        if err.code == 503:
            extra["Connection"] = "close"
            self.h.close_connection = True
        self.send_json(err.code, err.body(), extra=extra)

    def start_stream(self, code=200, ctype="application/json"):
        self._head(code, ctype)

    def write_chunk(self, data):
        """False once the client has gone."""
        if not data:
            return True
        try:
            self.h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.h.wfile.flush()
            return True
        except (OSError, ssl.SSLError):
            self.h.close_connection = True
            return False

    def end_stream(self):
        try:
            self.h.wfile.write(b"0\r\n\r\n")
            self.h.wfile.flush()
        except (OSError, ssl.SSLError):
            self.h.close_connection = True

    def client_gone(self):
        """Has the client closed its end (a watch it stopped)?"""
        sock = self.h.connection
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            if not readable:
                return False
            sock.setblocking(False)
            try:
                return sock.recv(1) == b""
            finally:
                sock.setblocking(True)
        except (ssl.SSLWantReadError, BlockingIOError):
            return False
        except (OSError, ssl.SSLError, ValueError):
            return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "k3s-sim"
    sys_version = ""

    def setup(self):
        # The handshake in this request's thread, not in the accept loop.
        self.request.settimeout(30)
        self.request.do_handshake()
        self.request.settimeout(None)
        super().setup()
        self.user = None
        try:
            cert = self.connection.getpeercert()
        except (ValueError, ssl.SSLError):
            cert = None
        if cert:
            self.user = _subject(cert)

    def _dispatch(self, method):
        req = Request(self, method)
        try:
            self.server.app(req)
        except status.ApiError as e:
            if not req.sent:
                req.send_error(e)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:   # the stand-in's own bug: answer as a 500
            if not req.sent:
                req.send_error(status.internal("SIMULATION: %s: %s" % (type(e).__name__, e)))
            raise

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def log_message(self, fmt, *args):
        pass


def _subject(cert):
    """(common name, [organizations]) of a peer certificate."""
    cn, orgs = None, []
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                cn = v
            elif k == "organizationName":
                orgs.append(v)
    return (cn, orgs) if cn else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr, app, context):
        self.app = app
        self.context = context
        family = socket.AF_INET6 if ":" in addr[0] else socket.AF_INET
        self.address_family = family
        super().__init__(addr, _Handler)

    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        # TCPServer's bind alone: HTTPServer's would look the address up in
        # DNS (socket.getfqdn), seconds on a host whose resolver is away.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        sock, addr = self.socket.accept()
        # Headers and body leave at once: no Nagle wait on the client's delayed ACK.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request, client_address):
        pass


def serve(host, port, app, cert, key, client_ca):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(client_ca)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    srv = _Server((host, port), app, ctx)
    t = threading.Thread(target=srv.serve_forever, name="https", daemon=True)
    t.start()
    return srv
