"""WebSockets (RFC 6455) as Go's gorilla/websocket speaks them, which both
the k3s agent's tunnel (rancher/remotedialer) and kubectl's exec
(client-go transport/websocket) dial with.

- The handshake: the server answers 101 with Upgrade: websocket,
  Connection: Upgrade and Sec-WebSocket-Accept, the base64 SHA-1 of the
  client's key and the RFC's GUID, and the subprotocol it chose of those
  offered; the client refuses anything else ("websocket: bad handshake").
- Frames: the server's unmasked, the client's masked; pings answered.
"""

import base64
import hashlib
import struct
import threading

from . import status

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"   # RFC 6455 section 1.3


def accept_key(key):
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def upgrade(req, protocols=None, refusal="websocket: the client is not using the websocket protocol"):
    """Answer REQ's upgrade with 101; the subprotocol chosen (the first
    offered that PROTOCOLS has), or None. Raises a 400 saying REFUSAL when
    REQ is no websocket upgrade, or offers none of PROTOCOLS."""
    key = req.headers.get("Sec-WebSocket-Key") or ""
    if (req.headers.get("Upgrade") or "").lower() != "websocket" or not key:
        raise status.bad_request(refusal)
    chosen = None
    if protocols:
        offered = [p.strip() for p in (req.headers.get("Sec-WebSocket-Protocol") or "").split(",")]
        chosen = next((p for p in offered if p in protocols), None)
        if chosen is None:
            raise status.bad_request(refusal)
    h = req.h
    h.send_response(101)
    h.send_header("Upgrade", "websocket")
    h.send_header("Connection", "Upgrade")
    h.send_header("Sec-WebSocket-Accept", accept_key(key))
    if chosen:
        h.send_header("Sec-WebSocket-Protocol", chosen)
    h.end_headers()
    h.wfile.flush()
    req.sent = True
    h.close_connection = True
    return chosen


def handshake_ok(head, key):
    """Does a server's answer HEAD (bytes, to the blank line) complete the
    handshake of KEY, as gorilla checks it?"""
    lines = head.decode("latin-1").split("\r\n")
    if not lines or not lines[0].startswith("HTTP/1.1 101"):
        return False
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())

    def has(name, token):
        return any(token in [t.strip().lower() for t in v.split(",")] for v in fields.get(name, []))
    return (has("upgrade", "websocket") and has("connection", "upgrade")
            and fields.get("sec-websocket-accept", [""])[0] == accept_key(key))


class Socket:
    """Frames on an upgraded server connection."""

    def __init__(self, req):
        self.r = req.h.rfile
        self.w = req.h.wfile
        self.lock = threading.Lock()
        self.closed = False

    def send(self, opcode, payload):
        n = len(payload)
        head = bytes([0x80 | opcode])
        head += bytes([n]) if n < 126 else (bytes([126]) + struct.pack(">H", n) if n < 65536
                                           else bytes([127]) + struct.pack(">Q", n))
        with self.lock:
            if self.closed:
                return
            self.closed = opcode == 8
            try:
                self.w.write(head + payload)
                self.w.flush()
            except (OSError, ValueError):
                pass

    def close(self, code=1000):
        """The close frame; nothing is sent after it."""
        self.send(8, struct.pack(">H", code))

    def recv(self):
        """One whole message, (opcode, payload): a fragmented one's frames
        joined (a client sends a message above its write buffer so);
        control frames between them are answered (ping) or returned
        (close). None at the end."""
        first, parts = None, []
        while True:
            frame = self._frame()
            if frame is None:
                return None
            fin, op, data = frame
            if op == 9:
                self.send(10, data)
                continue
            if op == 8 or op == 10:
                if op == 8:
                    return op, data
                continue
            if first is None:
                first = op
            parts.append(data)
            if fin:
                return first, b"".join(parts)

    def _frame(self):
        """(fin, opcode, payload) of one frame, or None at the end."""
        try:
            b = self.r.read(2)
            if len(b) < 2:
                return None
            fin, opcode, n = bool(b[0] & 0x80), b[0] & 0x0F, b[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.r.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.r.read(8))[0]
            mask = self.r.read(4) if b[1] & 0x80 else None
            payload = self.r.read(n)
        except (OSError, ValueError, struct.error):
            return None
        if mask:
            payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        return fin, opcode, payload
