#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Self-test of hbmwire.py and wirefuzz.py, without a kernel.

  hbmwire_selftest.py [-v]

The pure parts (CRC32C, headers and their checks, the handshake transcript)
against known values, then a fake home on 127.0.0.1 (a thread per
connection over a bytearray, checking frames in the order of
Documentation/wire-protocol.rst and refusing by resetting the connection)
against which the Client and every wirefuzz.py subcommand run, and broken
fake homes that wirefuzz.py must catch.  TAP on stdout; exit 1 if anything
failed.
"""

import collections
import hmac
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hbmwire as W  # noqa: E402
import wirefuzz as wirefuzz_mod  # noqa: E402

VERBOSE = "-v" in sys.argv[1:]
MiB = 1 << 20


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, detail=None):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, what), flush=True)
        if detail and (not cond or VERBOSE):
            for line in detail.rstrip("\n").splitlines():
                print("#   " + line)
        return cond

    def done(self):
        print("1..%d" % self.n)
        print("# %d passed, %d failed" % (self.n - self.failed, self.failed))
        return 1 if self.failed else 0


T = Tap()


# -- the fake home ------------------------------------------------------------

class Refuse(Exception):
    """Count the reason and reset the connection."""


class FakeHome:
    """A minimal home.  @bugs makes it wrong on purpose: "any_key" (AUTH not
    checked), "no_hcrc" (header digest not checked), "no_owner" (chunks not
    checked), "no_digest" (WRITE's data digest not checked), "hang" (a
    refused frame is neither answered nor closed), "no_hs_timeout" (a
    silent stranger is kept forever)."""

    def __init__(self, domain, home_id, key, members, seg_size=8 * MiB,
                 hs_timeout=1.0, bugs=()):
        self.domain = domain.encode()
        self.home_id = home_id
        self.key = key
        self.members = set(members)
        self.seg = bytearray(seg_size)
        self.size = seg_size
        self.hs_timeout = None if "no_hs_timeout" in bugs else hs_timeout
        self.bugs = set(bugs)
        self.incarnation = int.from_bytes(os.urandom(8), "little")
        self.chunks = {}                        # offset -> (length, owner)
        self.lock = threading.Lock()
        self.refused = collections.Counter()
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(64)
        self.lsock.settimeout(0.2)
        self.port = self.lsock.getsockname()[1]
        self.stopped = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def stop(self):
        self.stopped = True

    def accept_loop(self):
        while not self.stopped:
            try:
                s, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self.serve, args=(s,), daemon=True).start()
        self.lsock.close()

    # -- the segment (segment.c's rules) --
    def free_bytes(self):
        return self.size - sum(n for n, _ in self.chunks.values())

    def alloc(self, length, owner):
        if not length or length % W.PAGE or length > self.size:
            return W.S_INVAL, 0
        at = 0
        for off in sorted(self.chunks):
            if off - at >= length:
                break
            at = off + self.chunks[off][0]
        if at + length > self.size:
            return W.S_NOSPC, 0
        self.chunks[at] = (length, owner)
        return W.S_OK, at

    def free(self, offset, length, owner):
        if self.chunks.get(offset) != (length, owner):
            return W.S_INVAL
        del self.chunks[offset]
        self.seg[offset:offset + length] = bytes(length)
        return W.S_OK

    def seg_check(self, offset, length, owner):
        if W.range_check(offset, length, self.size):
            self.refused[W.ERR_NAMES[W.ERR_RANGE]] += 1
            return W.S_RANGE
        if "no_owner" in self.bugs:
            return W.S_OK
        for off, (n, who) in self.chunks.items():
            if off <= offset < off + n:
                if who == owner and offset + length <= off + n:
                    return W.S_OK
                break
        return W.S_NOTYOURS

    # -- the connection --
    def recv_exact(self, s, n):
        buf = bytearray()
        while len(buf) < n:
            data = s.recv(n - len(buf))
            if not data:
                raise EOFError
            buf += data
        return bytes(buf)

    def recv_frame(self, s):
        """Header checked (rst order), then payload and data digest:
        (hdr, payload, digest_ok)."""
        raw = self.recv_exact(s, W.HDR_SIZE)
        err = W.check_hdr(W.seal(raw[:28]) if "no_hcrc" in self.bugs else raw,
                          W.ROLE_HOME)
        if err:
            raise Refuse(W.ERR_NAMES[err])
        h = W.parse_hdr(raw)
        payload = self.recv_exact(s, W.payload_len(h))
        ok = True
        if h.flags & W.F_DDGST:
            (dd,) = struct.unpack("<I", self.recv_exact(s, 4))
            ok = dd == W.crc32c(payload)
        return h, payload, ok

    def serve(self, s):
        try:
            s.settimeout(self.hs_timeout)
            client = self.handshake(s)
            s.settimeout(60)
            self.session(s, client)
            s.close()
        except Refuse as e:
            self.refused[str(e)] += 1
            if "hang" in self.bugs:
                try:
                    while s.recv(65536):
                        pass
                except OSError:
                    pass
            else:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             struct.pack("ii", 1, 0))
            s.close()
        except (OSError, EOFError):
            s.close()

    def handshake(self, s):
        try:
            h, hello, ok = self.recv_frame(s)
        except socket.timeout:
            raise Refuse("handshake timeout")
        if h.opcode != W.OP_HELLO or not ok:
            raise Refuse("not a HELLO")
        he = W.unpack_hello(hello)
        if not W.hello_valid(hello) or W.hello_domain(hello) != self.domain or \
                he.home_id != self.home_id or he.client_id not in self.members:
            raise Refuse("HELLO refused")
        chal = W.pack_challenge(self.incarnation, self.size, os.urandom(32))
        s.sendall(W.build_hdr(W.OP_CHALLENGE, 0, 0, 0, 0, 0) + chal)
        h, auth, ok = self.recv_frame(s)
        if h.opcode != W.OP_AUTH or not ok:
            raise Refuse("not an AUTH")
        if "any_key" not in self.bugs and not hmac.compare_digest(
                auth, W.handshake_mac(self.key, False, hello, chal)):
            raise Refuse("bad MAC")
        s.sendall(W.build_hdr(W.OP_WELCOME, 0, 0, 0, 0, 0) +
                  W.handshake_mac(self.key, True, hello, chal))
        return he.client_id

    def session(self, s, client):
        pending = []        # answered in batches, newest first: out of order
        try:
            while True:
                h, payload, ok = self.recv_frame(s)
                if h.opcode in (W.OP_HELLO, W.OP_AUTH):
                    raise Refuse("handshake after WELCOME")
                if h.opcode == W.OP_BYE:
                    return
                with self.lock:
                    pending.append(self.execute(client, h, payload, ok))
                if len(pending) >= 8 or not select.select([s], [], [], 0)[0]:
                    s.sendall(b"".join(reversed(pending)))
                    pending = []
        finally:
            if pending:
                try:
                    s.sendall(b"".join(reversed(pending)))
                except OSError:
                    pass

    def execute(self, client, h, payload, digest_ok):
        def answer(status, offset=h.offset, length=h.length, data=None):
            if status or data is None:
                return W.build_hdr(h.opcode, W.F_RESP, h.tag, status, offset, length)
            return W.build_hdr(h.opcode, W.F_RESP | W.F_DDGST, h.tag, 0, offset,
                               length) + data + struct.pack("<I", W.crc32c(data))

        if h.opcode == W.OP_PING:
            return answer(0, self.free_bytes(), 0)
        if h.opcode == W.OP_ALLOC:
            st, off = self.alloc(h.length, client)
            return answer(st, off)
        if h.opcode == W.OP_FREE:
            return answer(self.free(h.offset, h.length, client))
        st = self.seg_check(h.offset, h.length, client)
        if h.opcode == W.OP_READ:
            if st:
                return answer(st)
            return answer(0, data=bytes(self.seg[h.offset:h.offset + h.length]))
        if not st and not digest_ok and "no_digest" not in self.bugs:
            self.refused[W.ERR_NAMES[W.ERR_DIGEST]] += 1
            st = W.S_DIGEST
        if not st:
            self.seg[h.offset:h.offset + h.length] = payload
        return answer(st)


# -- the tests ------------------------------------------------------------------

def test_pure():
    T.ok(W.crc32c(b"123456789") == 0xe3069283, 'crc32c("123456789") == 0xe3069283')
    T.ok(W.crc32c(b"") == 0 and W.crc32c(b"56789", W.crc32c(b"1234")) == 0xe3069283,
         "crc32c of nothing is 0; it continues over pieces")
    raw = W.build_hdr(W.OP_WRITE, W.F_DDGST, 201, 0, 0x123456789000, 8192)
    h = W.parse_hdr(raw)
    T.ok(len(raw) == 32 and raw[:4] == b"HBMW" and
         (h.magic, h.version, h.opcode, h.flags, h.tag, h.status, h.offset, h.length) ==
         (W.MAGIC, 1, W.OP_WRITE, W.F_DDGST, 201, 0, 0x123456789000, 8192) and
         h.hcrc == W.crc32c(raw[:28]) and raw[28:] == struct.pack("<I", h.hcrc),
         "header build/parse roundtrip; hcrc is CRC32C of the first 28 bytes")
    T.ok(raw[4:8] == bytes([1, W.OP_WRITE, 2, 0]) and raw[8:12] == struct.pack("<I", 201)
         and raw[16:24] == struct.pack("<Q", 0x123456789000),
         "header fields sit at wire.h's offsets, little endian")
    home, client = W.ROLE_HOME, W.ROLE_CLIENT

    def chk(op, flags=0, tag=0, status=0, offset=0, length=0, role=home):
        return W.check_hdr(W.build_hdr(op, flags, tag, status, offset, length), role)

    bad = bytearray(W.build_hdr(W.OP_PING, 0, 0, 0, 0, 0))
    bad[9] ^= 4
    cases = [
        (chk(W.OP_READ, 0, 7, 0, 8192, 4096), W.ERR_OK, "a READ request passes at a home"),
        (chk(W.OP_READ, 0, 7, 0, 8192, 4096, role=client), W.ERR_DIRECTION,
         "...a client refuses it"),
        (chk(W.OP_READ, W.F_RESP | W.F_DDGST, 7, 0, 8192, 4096, role=client), W.ERR_OK,
         "a READ response with a digest passes at a client"),
        (chk(W.OP_READ, W.F_RESP, 7, W.S_RANGE, 8192, 5, role=client), W.ERR_OK,
         "a failed response is exempt from the length rules"),
        (W.check_hdr(bytes(bad), home), W.ERR_HCRC, "a flipped bit: bad header digest"),
        (chk(0), W.ERR_OPCODE, "opcode 0"), (chk(11), W.ERR_OPCODE, "opcode 11"),
        (chk(W.OP_PING, 0x8), W.ERR_FLAGS, "an unknown flag"),
        (chk(W.OP_PING, W.F_RESP), W.ERR_DIRECTION, "a response sent to a home"),
        (chk(W.OP_WELCOME, 0), W.ERR_DIRECTION, "WELCOME sent to a home"),
        (chk(W.OP_HELLO, W.F_RESP), W.ERR_DIRECTION, "a handshake frame marked RESP"),
        (chk(W.OP_PING, 0, 256), W.ERR_TAG, "tag 256"),
        (chk(W.OP_PING, 0, 0, 1), W.ERR_STATUS, "a status in a request"),
        (chk(W.OP_READ, 0, 0, 0, 0, 0), W.ERR_LENGTH, "READ of 0 bytes"),
        (chk(W.OP_WRITE, 0, 0, 0, 0, W.MAX_DATA + W.PAGE), W.ERR_LENGTH,
         "WRITE over 2 MiB"),
        (chk(W.OP_ALLOC, 0, 0, 0, 0, 4 * MiB), W.ERR_OK, "ALLOC over 2 MiB is fine"),
        (chk(W.OP_FREE, 0, 0, 0, 0, 100), W.ERR_LENGTH, "FREE not in pages"),
        (chk(W.OP_PING, 0, 0, 0, 0, 4096), W.ERR_LENGTH, "a length on a PING"),
        (chk(W.OP_PING, W.F_DDGST), W.ERR_FLAGS, "DDGST on a PING"),
        (chk(W.OP_READ, W.F_DDGST, 0, 0, 0, 4096), W.ERR_FLAGS, "DDGST on a READ request"),
    ]
    wrong = ["%s: got %s, want %s" % (what, W.ERR_NAMES[got], W.ERR_NAMES[want])
             for got, want, what in cases if got != want]
    T.ok(not wrong, "check_hdr() refuses for wire.c's reasons (%d cases)" % len(cases),
         "\n".join(wrong))
    T.ok(W.range_check(0, 4096, 8192) == W.ERR_OK and
         W.range_check(4096, 8192, 8192) == W.ERR_RANGE and
         W.range_check((1 << 64) - 4096, 8192, 8192) == W.ERR_RANGE and
         W.range_check(100, 4096, 8192) == W.ERR_RANGE,
         "range_check: edges, overflow, alignment")
    hello = W.pack_hello("dom", 1, 2, 3, b"\x11" * 32)
    chal = W.pack_challenge(4, 5, b"\x22" * 32)
    tc, th = W.transcript(False, hello, chal), W.transcript(True, hello, chal)
    T.ok(len(hello) == 80 and len(chal) == 48 and len(tc) == 16 + 80 + 48 == len(th),
         "HELLO 80, CHALLENGE 48, transcript 16 + 80 + 48 = 144 bytes")
    T.ok(tc[:16] == b"hbmw-v1-client\0\0" and th[:16] == b"hbmw-v1-home\0\0\0\0" and
         tc[16:96] == hello and tc[96:] == chal and
         hello[:4] == b"dom\0" and hello[32:48] == struct.pack("<IIQ", 1, 2, 3),
         "transcript: NUL-padded label || HELLO || CHALLENGE")
    T.ok(W.handshake_mac(b"k" * 32, False, hello, chal) !=
         W.handshake_mac(b"k" * 32, True, hello, chal),
         "the AUTH and WELCOME MACs differ")
    T.ok(W.hello_valid(hello) and not W.hello_valid(W.pack_hello("", 1, 2, 3, bytes(32)))
         and not W.hello_valid(W.pack_hello("d", 2, 2, 3, bytes(32)))
         and not W.hello_valid(W.pack_hello(b"x" * 32, 1, 2, 3, bytes(32))),
         "hello_valid: empty domain, equal ids, no NUL refused")


DOMAIN, HOME_ID, CLIENT_ID = "selftest", 1, 2


def test_client(home, key):
    c = W.Client().connect("127.0.0.1", home.port, 5)
    ch = c.handshake(DOMAIN, CLIENT_ID, HOME_ID, key)
    T.ok(ch.incarnation == home.incarnation and ch.segment_size == home.size,
         "handshake: the CHALLENGE's incarnation and segment size")
    st, free0 = c.ping()
    st2, off = c.alloc(MiB)
    st3, free1 = c.ping()
    T.ok(st == st2 == st3 == 0 and free0 - free1 == MiB,
         "PING's offset is the free bytes; ALLOC takes them")
    data = os.urandom(MiB)
    st, _ = c.write(off, data)
    st2, back = c.read(off, MiB)
    T.ok(st == st2 == 0 and back == data, "WRITE 1 MiB, READ it back")
    frames = c.pipeline(64, W.OP_READ, off, 4 * W.PAGE)
    T.ok(all(f.payload == data[i * 16384:(i + 1) * 16384] for i, f in enumerate(frames)),
         "64 pipelined READs, answered out of order, matched by tag")
    frames = c.pipeline(256, W.OP_PING)
    T.ok(len(frames) == 256 and sorted(f.hdr.tag for f in frames) == list(range(256)),
         "256 pipelined PINGs: the whole tag window, each tag once")
    st, _ = c.read(off + MiB, W.PAGE)
    st2, _ = c.read(home.size, W.PAGE)
    T.ok(st == W.S_NOTYOURS and st2 == W.S_RANGE, "READ past the chunk: NOTYOURS; "
         "past the segment: RANGE")
    st, _ = c.free(off, MiB)
    T.ok(st == 0 and c.ping()[1] == free0, "FREE gives the bytes back")
    c.send_raw(W.build_hdr(W.OP_PING, 0, 300, 0, 0, 0))
    T.ok(c.closed(2), "a refused frame: the home resets the connection")
    c.close()
    for what, kw, stage in [("a wrong key", {"key": os.urandom(32)}, "auth"),
                            ("a wrong domain", {"domain": "other"}, "hello"),
                            ("a client outside the epoch", {"client_id": 9}, "hello")]:
        args = dict(domain=DOMAIN, client_id=CLIENT_ID, home_id=HOME_ID, key=key)
        args.update(kw)
        c = W.Client().connect("127.0.0.1", home.port, 5)
        try:
            c.handshake(**args)
            got = "welcome"
        except W.HandshakeRefused as e:
            got = e.stage
        T.ok(got == stage, "handshake with %s: HandshakeRefused at %s" % (what, stage),
             "got %s" % got)
        c.close()


def wirefuzz(home, keyfile, cmd, *extra, timeout=5):
    argv = [sys.executable, os.path.join(HERE, "wirefuzz.py"), "-t", str(timeout), cmd,
            "127.0.0.1", str(home.port)]
    if cmd != "stranger" or "--domain" in extra:
        argv += ["--domain", DOMAIN, "--id", str(CLIENT_ID), "--home", str(HOME_ID)]
    if cmd != "stranger":
        argv += ["--key-file", keyfile]
    p = subprocess.run(argv + list(extra), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    return p.returncode, p.stdout


def test_cli(home, key, keyfile, badkeyfile):
    rc, out = wirefuzz(home, keyfile, "goodkey")
    T.ok(rc == 0, "wirefuzz goodkey: exit 0", out)
    rc, out = wirefuzz(home, badkeyfile, "wrongkey")
    T.ok(rc == 0 and "closed" in out, "wirefuzz wrongkey: exit 0", out)
    t0 = time.monotonic()
    rc, out = wirefuzz(home, keyfile, "stranger", "--domain", DOMAIN)
    T.ok(rc == 0 and out.count("FAIL") == 0, "wirefuzz stranger (%.1fs): exit 0"
         % (time.monotonic() - t0), out)
    rc, out = wirefuzz(home, keyfile, "stranger")
    T.ok(rc == 0, "wirefuzz stranger with made-up ids: exit 0", out)
    before = sum(home.refused.values())
    n = len(wirefuzz_mod.Fuzz.CASES)
    t0 = time.monotonic()
    rc, out = wirefuzz(home, keyfile, "fuzz", "--seed", "7", "--rounds", str(2 * n))
    cases = [line.split()[2] for line in out.splitlines() if line.startswith("# case ")]
    T.ok(rc == 0, "wirefuzz fuzz, %d rounds (%.1fs): exit 0"
         % (2 * n, time.monotonic() - t0), out)
    T.ok(len(cases) >= n, "...every case ran (%d)" % len(cases), out)
    reasons = set(home.refused)
    want = {"bad magic", "unknown version", "bad header digest", "unknown opcode",
            "bad flags", "wrong direction", "bad tag", "bad status", "bad length",
            "out of range", "bad data digest"}
    T.ok(want <= reasons and sum(home.refused.values()) > before,
         "...the fake home refused for every reason of enum hbmw_err",
         "missing: %s" % ", ".join(sorted(want - reasons)))
    rc, out = wirefuzz(home, keyfile, "fuzz", "--seed", "8", "--rounds", "30", "--strict")
    T.ok(rc == 0, "wirefuzz fuzz --strict: exit 0", out)
    rc, out = wirefuzz(home, keyfile, "fuzz", "--cases", "nonsense")
    T.ok(rc == 2, "wirefuzz fuzz --cases nonsense: usage error", out)
    with home.lock:
        left = [(hex(o), n, w) for o, (n, w) in home.chunks.items()]
    T.ok(not left, "the fuzzer left no chunk allocated", repr(left))


def test_broken(key, keyfile, badkeyfile):
    """Broken homes: wirefuzz must exit 1."""
    runs = [
        ("any_key", ("wrongkey",), "a home that takes any key"),
        ("no_hcrc", ("fuzz", "--cases", "bad-hcrc,bitflip", "--rounds", "4"),
         "a home that ignores the header digest"),
        ("no_owner", ("fuzz", "--cases", "read-notyours", "--rounds", "2"),
         "a home that serves chunks of others"),
        ("no_digest", ("fuzz", "--cases", "write-baddigest", "--rounds", "2"),
         "a home that ignores WRITE's data digest"),
        ("hang", ("fuzz", "--cases", "bad-magic", "--rounds", "1"),
         "a home that neither answers nor closes"),
        ("no_hs_timeout", ("stranger", "--domain", DOMAIN),
         "a home that keeps a silent stranger"),
    ]
    for bug, args, what in runs:
        home = FakeHome(DOMAIN, HOME_ID, key, [CLIENT_ID], bugs=[bug])
        kf = badkeyfile if args[0] == "wrongkey" else keyfile
        rc, out = wirefuzz(home, kf, *args, timeout=1)
        T.ok(rc == 1 and "not ok" in out.splitlines()[-1],
             "wirefuzz %s catches %s: exit 1" % (args[0], what), out)
        home.stop()


def main():
    test_pure()
    key = os.urandom(32)
    with tempfile.TemporaryDirectory() as tmp:
        keyfile, badkeyfile = os.path.join(tmp, "key"), os.path.join(tmp, "badkey")
        with open(keyfile, "wb") as f:
            f.write(key)
        with open(badkeyfile, "wb") as f:
            f.write(key[:-1] + bytes([key[-1] ^ 1]))
        home = FakeHome(DOMAIN, HOME_ID, key, [CLIENT_ID])
        for test in (lambda: test_client(home, key),
                     lambda: test_cli(home, key, keyfile, badkeyfile)):
            try:
                test()
            except Exception as e:  # a bug here must fail the run, not stop it
                T.ok(False, "unexpected %s: %s" % (type(e).__name__, e),
                     traceback.format_exc())
        home.stop()
        test_broken(key, keyfile, badkeyfile)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
