#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The client side of the hbmpool wire protocol, in pure Python (stdlib only).

Documentation/wire-protocol.rst, kmod/wire.h and kmod/wire.c define the
protocol; this module mirrors them for the tests that attack a home node
from user space (wirefuzz.py) and for a fake home (hbmwire_selftest.py):

  crc32c(data)                   CRC32C, seed ~0, final inversion
  build_hdr(op, flags, tag, status, offset, length)   32 bytes, hcrc set
  parse_hdr(raw)                 -> Hdr namedtuple
  check_hdr(raw, role)           the receiver's checks of wire.c, in order:
                                 ERR_OK or the ERR_* reason
  payload_len(hdr)               bytes of payload after a header (no digest)
  pack_hello / unpack_hello / pack_challenge / unpack_challenge
  hello_valid(hello)             wire.c's hbmw_hello_valid()
  transcript(from_home, hello, challenge)   label(16) || HELLO || CHALLENGE
  handshake_mac(key, from_home, hello, challenge)   HMAC-SHA256 of it
  load_key(path)                 the domain key: the file's bytes, 16..64

  Client                         connect, handshake, requests (one at a
                                 time or pipelined), raw frames, and the
                                 observation of how the home reacts

Run it directly for a quick self-check of the pure parts:
  hbmwire.py                     prints "ok" or raises
"""

import collections
import errno
import hashlib
import hmac
import os
import select
import socket
import struct
import time

MAGIC = 0x574d4248          # "HBMW"
VERSION = 1
HDR_SIZE = 32
PAGE = 4096
MAX_DATA = 512 * PAGE       # one READ or WRITE
MAX_TAGS = 256              # requests in flight per connection
NAME_LEN = 32
NONCE_LEN = 32
MAC_LEN = 32
HELLO_SIZE = 80
CHALLENGE_SIZE = 48
AUTH_SIZE = 32
KEY_MIN, KEY_MAX = 16, 64

OP_HELLO, OP_CHALLENGE, OP_AUTH, OP_WELCOME, OP_READ, OP_WRITE, \
    OP_ALLOC, OP_FREE, OP_PING, OP_BYE = range(1, 11)
OP_MAX = OP_BYE
OP_NAMES = {OP_HELLO: "HELLO", OP_CHALLENGE: "CHALLENGE", OP_AUTH: "AUTH",
            OP_WELCOME: "WELCOME", OP_READ: "READ", OP_WRITE: "WRITE",
            OP_ALLOC: "ALLOC", OP_FREE: "FREE", OP_PING: "PING", OP_BYE: "BYE"}

F_RESP = 0x1
F_DDGST = 0x2
F_ALL = F_RESP | F_DDGST

S_OK, S_INVAL, S_RANGE, S_NOTYOURS, S_DIGEST, S_NOSPC, S_NOAUTH, \
    S_FENCED, S_IO = range(9)
S_MAX = S_IO
STATUS_NAMES = {S_OK: "OK", S_INVAL: "INVAL", S_RANGE: "RANGE",
                S_NOTYOURS: "NOTYOURS", S_DIGEST: "DIGEST", S_NOSPC: "NOSPC",
                S_NOAUTH: "NOAUTH", S_FENCED: "FENCED", S_IO: "IO"}
STATUS_ERRNO = {S_OK: 0, S_INVAL: errno.EINVAL, S_RANGE: errno.ERANGE,
                S_NOTYOURS: errno.EACCES, S_DIGEST: errno.EBADMSG,
                S_NOSPC: errno.ENOSPC, S_NOAUTH: errno.EPERM,
                S_FENCED: errno.ENODEV, S_IO: errno.EIO}

# enum hbmw_err, and hbmw_err_name()
ERR_OK, ERR_MAGIC, ERR_VERSION, ERR_HCRC, ERR_OPCODE, ERR_FLAGS, \
    ERR_DIRECTION, ERR_TAG, ERR_STATUS, ERR_LENGTH, ERR_RANGE, \
    ERR_DIGEST = range(12)
ERR_NAMES = ["ok", "bad magic", "unknown version", "bad header digest",
             "unknown opcode", "bad flags", "wrong direction", "bad tag",
             "bad status", "bad length", "out of range", "bad data digest"]

ROLE_HOME, ROLE_CLIENT = 0, 1

CLIENT_LABEL = b"hbmw-v1-client".ljust(16, b"\0")
HOME_LABEL = b"hbmw-v1-home".ljust(16, b"\0")

_HDR = struct.Struct("<IBBHIIQII")      # magic .. length, hcrc
_HELLO = struct.Struct("<32sIIQ32s")
_CHALLENGE = struct.Struct("<QQ32s")
assert _HDR.size == HDR_SIZE and _HELLO.size == HELLO_SIZE
assert _CHALLENGE.size == CHALLENGE_SIZE

Hdr = collections.namedtuple(
    "Hdr", "magic version opcode flags tag status offset length hcrc")
Hello = collections.namedtuple(
    "Hello", "domain client_id home_id client_incarnation nonce")
Challenge = collections.namedtuple("Challenge", "incarnation segment_size nonce")
Frame = collections.namedtuple("Frame", "hdr payload")


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def _crc32c_table(data, crc=0):
    t = _CRC_TABLE
    crc ^= 0xffffffff
    for b in data:
        crc = t[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc ^ 0xffffffff


def _crc32c_kernel_socket():
    """A socket bound to the kernel's "crc32c" hash (AF_ALG), or None.

    Its key is the CRC register's starting value (~0 by default) and its
    digest the inverted register, little endian: the protocol's CRC32C.
    The table loop costs about a second per MiB in a TCG guest; the kernel
    does it at memory speed.  Checked against the table before it is used.
    """
    try:
        alg = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)
        alg.bind(("hash", "crc32c"))
    except (AttributeError, OSError):
        return None
    try:
        for data, crc in ((b"123456789", 0), (bytes(range(256)) * 9, 0x12345678)):
            if _crc32c_alg(alg, data, crc) != _crc32c_table(data, crc):
                alg.close()
                return None
    except OSError:
        alg.close()
        return None
    return alg


def _crc32c_alg(alg, data, crc):
    alg.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY,
                   struct.pack("<I", crc ^ 0xffffffff))
    op, _ = alg.accept()
    with op:
        op.sendall(data)
        return struct.unpack("<I", op.recv(4))[0]


_CRC_ALG = None
_CRC_ALG_TRIED = False
_CRC_ALG_MIN = 256      # below this, a socket round trip costs more


def crc32c(data, crc=0):
    """CRC32C (Castagnoli) as the protocol uses it: seed ~0, final inversion.

    @crc continues a previous result (crc32c(a + b) == crc32c(b, crc32c(a))).
    Long data goes to the kernel's crc32c where it can (AF_ALG), the rest
    through a table.
    """
    global _CRC_ALG, _CRC_ALG_TRIED
    if len(data) >= _CRC_ALG_MIN:
        if not _CRC_ALG_TRIED:
            _CRC_ALG_TRIED = True
            _CRC_ALG = _crc32c_kernel_socket()
        if _CRC_ALG is not None:
            try:
                return _crc32c_alg(_CRC_ALG, data, crc)
            except OSError:
                _CRC_ALG = None
    return _crc32c_table(data, crc)


def seal(raw28):
    """The 32-byte header whose first 28 bytes are @raw28, hcrc appended."""
    return bytes(raw28[:28]) + struct.pack("<I", crc32c(raw28[:28]))


def build_hdr(op, flags, tag, status, offset, length):
    """A header as hbmw_hdr_build() makes it; fields are masked to their width
    so that the fuzzer can put any value in."""
    raw = _HDR.pack(MAGIC, VERSION, op & 0xff, flags & 0xffff,
                    tag & 0xffffffff, status & 0xffffffff,
                    offset & 0xffffffffffffffff, length & 0xffffffff, 0)
    return seal(raw)


def parse_hdr(raw):
    if len(raw) < HDR_SIZE:
        raise ValueError("header: %d bytes, want %d" % (len(raw), HDR_SIZE))
    return Hdr(*_HDR.unpack(bytes(raw[:HDR_SIZE])))


def hdr_name(h):
    """A header in words, for messages."""
    return "%s%s tag %d status %s offset %#x length %d" % (
        OP_NAMES.get(h.opcode, "op%d" % h.opcode),
        " resp" if h.flags & F_RESP else "", h.tag,
        STATUS_NAMES.get(h.status, str(h.status)), h.offset, h.length)


def _control_len(op):
    return {OP_HELLO: HELLO_SIZE, OP_CHALLENGE: CHALLENGE_SIZE,
            OP_AUTH: AUTH_SIZE, OP_WELCOME: AUTH_SIZE}.get(op, -1)


def payload_len(h):
    """hbmw_payload_len(): payload bytes after @h, the digest not counted;
    -1 for an unknown opcode."""
    resp = bool(h.flags & F_RESP)
    if _control_len(h.opcode) >= 0:
        return _control_len(h.opcode)
    if h.opcode == OP_READ:
        return h.length if resp and not h.status else 0
    if h.opcode == OP_WRITE:
        return 0 if resp else h.length
    if h.opcode in (OP_ALLOC, OP_FREE, OP_PING, OP_BYE):
        return 0
    return -1


def _length_check(h):
    if h.opcode in (OP_READ, OP_WRITE):
        if not h.length or h.length > MAX_DATA or h.length % PAGE:
            return ERR_LENGTH
    elif h.opcode in (OP_ALLOC, OP_FREE):
        if not h.length or h.length % PAGE:
            return ERR_LENGTH
    elif h.length:
        return ERR_LENGTH
    return ERR_OK


def check_hdr(raw, role):
    """hbmw_hdr_check(): ERR_OK if @raw (32 bytes) is a header @role may
    receive, else the first reason it is refused, in the rst's order."""
    h = parse_hdr(raw)
    resp = bool(h.flags & F_RESP)
    to_client = role == ROLE_CLIENT
    if h.magic != MAGIC:
        return ERR_MAGIC
    if h.version != VERSION:
        return ERR_VERSION
    if h.hcrc != crc32c(bytes(raw[:28])):
        return ERR_HCRC
    if not h.opcode or h.opcode > OP_MAX:
        return ERR_OPCODE
    if h.flags & ~F_ALL:
        return ERR_FLAGS
    if _control_len(h.opcode) >= 0:
        if resp or (h.opcode in (OP_CHALLENGE, OP_WELCOME)) != to_client:
            return ERR_DIRECTION
    elif resp != to_client:
        return ERR_DIRECTION
    if h.tag >= MAX_TAGS:
        return ERR_TAG
    if h.status > S_MAX or (h.status and not resp):
        return ERR_STATUS
    if not (resp and h.status):
        err = _length_check(h)
        if err:
            return err
    if h.flags & F_DDGST and payload_len(h) <= 0:
        return ERR_FLAGS
    return ERR_OK


def range_check(offset, length, segment_size):
    """hbmw_range_check()."""
    if offset % PAGE or length % PAGE or not length or \
            offset >= segment_size or length > segment_size - offset:
        return ERR_RANGE
    return ERR_OK


def _name_bytes(domain):
    if isinstance(domain, str):
        domain = domain.encode()
    if len(domain) > NAME_LEN:
        raise ValueError("domain name longer than %d bytes" % NAME_LEN)
    return domain


def pack_hello(domain, client_id, home_id, client_incarnation, nonce):
    """struct hbmw_hello; @domain may be 32 bytes with no NUL (an invalid
    HELLO, for the fuzzer)."""
    return _HELLO.pack(_name_bytes(domain).ljust(NAME_LEN, b"\0"),
                       client_id & 0xffffffff, home_id & 0xffffffff,
                       client_incarnation & 0xffffffffffffffff, nonce)


def unpack_hello(raw):
    return Hello(*_HELLO.unpack(bytes(raw)))


def hello_valid(raw):
    """hbmw_hello_valid(): a domain (NUL-terminated, not empty), two distinct
    nodes."""
    h = unpack_hello(raw)
    return bool(h.domain[0]) and 0 in h.domain and h.client_id != h.home_id


def hello_domain(raw):
    return unpack_hello(raw).domain.split(b"\0", 1)[0]


def pack_challenge(incarnation, segment_size, nonce):
    return _CHALLENGE.pack(incarnation, segment_size, nonce)


def unpack_challenge(raw):
    return Challenge(*_CHALLENGE.unpack(bytes(raw)))


def transcript(from_home, hello, challenge):
    """hbmw_transcript(): label (16, NUL-padded) || HELLO || CHALLENGE, as
    sent (payload bytes)."""
    if len(hello) != HELLO_SIZE or len(challenge) != CHALLENGE_SIZE:
        raise ValueError("transcript: HELLO %d, CHALLENGE %d bytes"
                         % (len(hello), len(challenge)))
    return (HOME_LABEL if from_home else CLIENT_LABEL) + bytes(hello) + \
        bytes(challenge)


def handshake_mac(key, from_home, hello, challenge):
    """AUTH's (from_home False) or WELCOME's MAC."""
    return hmac.new(key, transcript(from_home, hello, challenge),
                    hashlib.sha256).digest()


def load_key(path):
    """The domain key: the file's bytes exactly (a trailing newline is part
    of the key), 16..64 of them."""
    with open(path, "rb") as f:
        key = f.read()
    if not KEY_MIN <= len(key) <= KEY_MAX:
        raise ValueError("%s: key of %d bytes, want %d..%d"
                         % (path, len(key), KEY_MIN, KEY_MAX))
    return key


def status_name(status):
    return STATUS_NAMES.get(status, "status%d" % status)


class WireError(Exception):
    pass


class Closed(WireError):
    """The peer closed (FIN) or reset the connection."""


class Timeout(WireError):
    """Nothing (or not enough) arrived in time."""


class ProtocolError(WireError):
    """The home sent something a client must refuse."""


class HandshakeRefused(WireError):
    """The home closed the connection during the handshake; .stage is
    "hello" (before its CHALLENGE) or "auth" (after it)."""

    def __init__(self, msg, stage):
        WireError.__init__(self, msg)
        self.stage = stage


class HandshakeError(WireError):
    """The handshake went wrong in another way: a wrong frame, or a WELCOME
    whose MAC does not prove the key."""


class Client:
    """One connection to a home, as a client.

    Requests get tags 0..255 in turn; responses that arrive for another tag
    than the one waited for are kept (self.stash) until asked for, so
    requests can be pipelined: send() them, then wait() or collect().
    """

    def __init__(self):
        self.sock = None
        self.buf = bytearray()
        self.timeout = 15.0
        self.next_tag = 0
        self.stash = {}
        self.hello = self.challenge = None
        self.incarnation = self.segment_size = None
        self.peer = None
        self.ignored = collections.Counter()    # frames skipped by wait()

    # -- the connection ------------------------------------------------
    def connect(self, ip, port, timeout=15.0):
        self.close()
        self.timeout = timeout
        self.sock = socket.create_connection((ip, int(port)), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.peer = (ip, int(port))
        self.buf = bytearray()
        self.stash = {}
        self.next_tag = 0
        return self

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None

    def shutdown_write(self):
        """Half-close: the home reads EOF after what was sent."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def send_raw(self, data):
        if self.sock is None:
            raise Closed("not connected")
        try:
            self.sock.settimeout(self.timeout)
            self.sock.sendall(data)
        except socket.timeout:
            raise Timeout("send blocked for %.1fs" % self.timeout)
        except (BrokenPipeError, ConnectionResetError,
                ConnectionAbortedError) as e:
            raise Closed("send: %s" % e.strerror)

    def _fill(self, deadline):
        """Read what is there (at least one byte) into self.buf."""
        if self.sock is None:
            raise Closed("not connected")
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout("timeout")
        try:
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                raise Timeout("timeout")
            data = self.sock.recv(1 << 20)
        except (ConnectionResetError, ConnectionAbortedError):
            raise Closed("reset")
        if not data:
            raise Closed("closed")
        self.buf += data

    def _recv_exact(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def _deadline(self, timeout):
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def recv_frame(self, timeout=None):
        """The next frame, checked as a client must (wire.c, ROLE_CLIENT;
        the data digest of a READ response).  Raises Timeout, Closed, or
        ProtocolError (bytes of a refused frame stay unread)."""
        deadline = self._deadline(timeout)
        while len(self.buf) < HDR_SIZE:
            self._fill(deadline)
        raw = bytes(self.buf[:HDR_SIZE])
        err = check_hdr(raw, ROLE_CLIENT)
        h = parse_hdr(raw)
        if err:
            raise ProtocolError("refused header (%s): %s"
                                % (ERR_NAMES[err], hdr_name(h)))
        n = payload_len(h)
        total = HDR_SIZE + n + (4 if h.flags & F_DDGST else 0)
        frame = self._recv_exact(total, deadline)
        payload = frame[HDR_SIZE:HDR_SIZE + n]
        if h.flags & F_DDGST:
            (dd,) = struct.unpack("<I", frame[HDR_SIZE + n:])
            if dd != crc32c(payload):
                raise ProtocolError("bad data digest: %s" % hdr_name(h))
        return Frame(h, payload)

    def closed(self, timeout=None):
        """True if the peer closes or resets the connection within @timeout
        (whatever it sends before is read and dropped), False if not."""
        deadline = self._deadline(timeout)
        try:
            while True:
                self._fill(deadline)
                self.buf.clear()
        except Closed:
            return True
        except Timeout:
            return False

    # -- the handshake -------------------------------------------------
    def _hs_recv(self, op, stage):
        try:
            f = self.recv_frame()
        except Closed as e:
            raise HandshakeRefused("closed by the home after %s (%s)"
                                   % (stage.upper(), e), stage)
        except ProtocolError as e:
            raise HandshakeError(str(e))
        if f.hdr.opcode != op:
            raise HandshakeError("%s instead of %s" % (hdr_name(f.hdr),
                                                       OP_NAMES[op]))
        return f

    def handshake(self, domain, client_id, home_id, key, client_incarnation=1,
                  nonce=None):
        """HELLO, CHALLENGE, AUTH, WELCOME.  Returns the Challenge
        (incarnation, segment_size, nonce).  Raises HandshakeRefused if the
        home closes, HandshakeError if it sends the wrong thing or a WELCOME
        that does not prove @key, Timeout if it says nothing."""
        hello = pack_hello(domain, client_id, home_id, client_incarnation,
                           nonce if nonce is not None else os.urandom(NONCE_LEN))
        self.hello = hello
        try:
            self.send_raw(build_hdr(OP_HELLO, 0, 0, 0, 0, 0) + hello)
        except Closed as e:
            raise HandshakeRefused("closed before HELLO (%s)" % e, "hello")
        chal = self._hs_recv(OP_CHALLENGE, "hello").payload
        self.challenge = chal
        mac = handshake_mac(key, False, hello, chal)
        try:
            self.send_raw(build_hdr(OP_AUTH, 0, 0, 0, 0, 0) + mac)
        except Closed as e:
            raise HandshakeRefused("closed at AUTH (%s)" % e, "auth")
        welcome = self._hs_recv(OP_WELCOME, "auth").payload
        if not hmac.compare_digest(welcome,
                                   handshake_mac(key, True, hello, chal)):
            raise HandshakeError("WELCOME's MAC does not match: the home "
                                 "does not hold this key")
        c = unpack_challenge(chal)
        self.incarnation, self.segment_size = c.incarnation, c.segment_size
        return c

    # -- requests ------------------------------------------------------
    def take_tag(self):
        tag = self.next_tag
        self.next_tag = (self.next_tag + 1) % MAX_TAGS
        return tag

    def send(self, op, offset=0, length=0, payload=None, tag=None, flags=0,
             digest=True):
        """Send a request; returns its tag.  A payload gets DDGST and its
        CRC32C unless @digest is False."""
        if tag is None:
            tag = self.take_tag()
        data = b""
        if payload is not None:
            data = bytes(payload)
            if digest:
                flags |= F_DDGST
                data += struct.pack("<I", crc32c(data))
        self.send_raw(build_hdr(op, flags, tag, 0, offset, length) + data)
        return tag

    def wait(self, tag, timeout=None, op=None):
        """The response with @tag (and @op if given).  Other responses are
        stashed; a BYE from the home counts as its closing; a request from
        the home (which wire.c's direction check refuses) is a
        ProtocolError."""
        deadline = self._deadline(timeout)
        while True:
            q = self.stash.get(tag)
            if q:
                f = q.pop(0)
                if not q:
                    del self.stash[tag]
                if op is not None and f.hdr.opcode != op:
                    raise ProtocolError("response to tag %d is %s, want %s"
                                        % (tag, hdr_name(f.hdr), OP_NAMES[op]))
                return f
            f = self.recv_frame(max(0.0, deadline - time.monotonic()))
            if not f.hdr.flags & F_RESP:
                if f.hdr.opcode == OP_BYE:
                    self.close()
                    raise Closed("BYE from the home")
                raise ProtocolError("unexpected %s" % hdr_name(f.hdr))
            self.stash.setdefault(f.hdr.tag, []).append(f)

    def request(self, op, offset=0, length=0, payload=None, timeout=None):
        tag = self.send(op, offset, length, payload)
        return self.wait(tag, timeout, op)

    def alloc(self, length):
        """(status, offset) of an ALLOC of @length bytes."""
        f = self.request(OP_ALLOC, 0, length)
        return f.hdr.status, f.hdr.offset

    def free(self, offset, length):
        f = self.request(OP_FREE, offset, length)
        return f.hdr.status, f.hdr.offset

    def read(self, offset, length):
        """(status, data); data is b"" when the status is not OK."""
        f = self.request(OP_READ, offset, length)
        if not f.hdr.status and len(f.payload) != length:
            raise ProtocolError("READ of %d bytes answered %d"
                                % (length, len(f.payload)))
        return f.hdr.status, f.payload

    def write(self, offset, data):
        f = self.request(OP_WRITE, offset, len(data), data)
        return f.hdr.status, f.hdr.offset

    def ping(self):
        """(status, the home's free segment bytes)."""
        f = self.request(OP_PING)
        return f.hdr.status, f.hdr.offset

    def bye(self):
        try:
            self.send_raw(build_hdr(OP_BYE, 0, self.take_tag(), 0, 0, 0))
        except WireError:
            pass
        self.close()

    def collect(self, tags, timeout=None):
        """The responses to @tags (each once), as {tag: Frame}; a tag that
        comes back twice is a ProtocolError."""
        deadline = self._deadline(timeout)
        want = set(tags)
        got = {}
        while want:
            f = self.recv_frame(max(0.0, deadline - time.monotonic()))
            t = f.hdr.tag
            if not f.hdr.flags & F_RESP:
                raise ProtocolError("unexpected %s" % hdr_name(f.hdr))
            if t in got:
                raise ProtocolError("tag %d answered twice" % t)
            if t not in want:
                raise ProtocolError("response to tag %d, not in flight" % t)
            want.discard(t)
            got[t] = f
        return got

    def pipeline(self, n, op=OP_PING, offset=0, length=PAGE, timeout=None):
        """Send @n requests (PINGs, or READs of @length bytes each from
        @offset on, one after the other) with distinct tags before reading
        any response, then collect the @n responses: every tag must come
        back once, with the request's opcode (and, for READ, its offset).
        Returns [Frame] in request order."""
        if not 0 < n <= MAX_TAGS:
            raise ValueError("pipeline: %d requests, window %d" % (n, MAX_TAGS))
        if self.stash:
            raise ValueError("pipeline: responses still stashed")
        tags, offs = [], {}
        reqs = bytearray()
        for i in range(n):
            tag = self.take_tag()
            if op == OP_READ:
                off = offset + i * length
                reqs += build_hdr(OP_READ, 0, tag, 0, off, length)
                offs[tag] = off
            else:
                reqs += build_hdr(op, 0, tag, 0, 0, 0)
            tags.append(tag)
        if len(set(tags)) != n:
            raise ValueError("pipeline: tags wrap")
        self.send_raw(bytes(reqs))
        got = self.collect(tags, timeout)
        for t, f in got.items():
            if f.hdr.opcode != op:
                raise ProtocolError("tag %d: %s, want %s"
                                    % (t, hdr_name(f.hdr), OP_NAMES[op]))
            if op == OP_READ and f.hdr.offset != offs[t]:
                raise ProtocolError("tag %d: READ at %#x answered for %#x"
                                    % (t, offs[t], f.hdr.offset))
        return [got[t] for t in tags]


def _selfcheck():
    assert crc32c(b"123456789") == 0xe3069283
    assert crc32c(b"56789", crc32c(b"1234")) == 0xe3069283
    raw = build_hdr(OP_READ, 0, 7, 0, 8192, 4096)
    assert len(raw) == HDR_SIZE and check_hdr(raw, ROLE_HOME) == ERR_OK
    assert check_hdr(raw, ROLE_CLIENT) == ERR_DIRECTION
    h = parse_hdr(raw)
    assert (h.magic, h.opcode, h.tag, h.offset, h.length) == \
        (MAGIC, OP_READ, 7, 8192, 4096)
    hello = pack_hello("d", 1, 2, 3, bytes(32))
    chal = pack_challenge(4, 5, bytes(32))
    assert len(transcript(False, hello, chal)) == 16 + 80 + 48
    print("ok")


if __name__ == "__main__":
    _selfcheck()
