#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Attack an hbmpool home node over its wire protocol (hbmwire.py).

usage:
  wirefuzz.py [-t SECS] [-v] stranger IP PORT [--domain D] [--id N] [--home H]
      Strangers who never get in: garbage bytes, a silent connection, a
      request or an AUTH before HELLO, HELLOs with a wrong domain, a wrong
      home id, a client id outside the epoch, invalid HELLOs, a truncated
      HELLO.  Each must end with the home closing the connection, never a
      CHALLENGE or WELCOME.  --domain/--id/--home make the wrong HELLOs
      differ from a good one in a single field (default: made-up values).
  wirefuzz.py [-t SECS] [-v] wrongkey IP PORT --domain D --id N --home H --key-file F
      A full handshake with a key the home does not hold: the home must
      send its CHALLENGE, then close after AUTH, never send WELCOME.
  wirefuzz.py [-t SECS] [-v] goodkey IP PORT --domain D --id N --home H --key-file F
      The handshake succeeds; ALLOC 1 MiB, WRITE a pattern, READ it back,
      64 READs and 128 PINGs pipelined, FREE; a READ or FREE of what was
      freed is refused; a replayed AUTH and a WELCOME-labelled AUTH are
      refused on new connections.
  wirefuzz.py [-t SECS] [-v] fuzz IP PORT --domain D --id N --home H --key-file F
              [--seed S] [--rounds R] [--cases C,C,...] [--strict]
      After a good handshake, one bad thing per round (reconnecting when
      the home closed); every case once per len(cases) rounds, in an order
      shuffled by --seed (--cases limits them; fuzz -h lists them).  After
      each one the home must answer with a non-zero status or close the
      connection: never a success, never silence past --timeout.  Requests
      the home understands must get their status: RANGE outside the
      segment, NOTYOURS for chunks not this client's, DIGEST (or a close)
      for a WRITE with a wrong data digest, any refusal for a FREE of what
      it does not hold or an ALLOC bigger than the segment.  1000 PINGs
      sent without reading must all be answered (or the connection closed).  Every 10 rounds and at the
      end a fresh connection checks that the home still serves (ALLOC,
      WRITE, READ back exactly, FREE).  --strict: header-level refusals
      must close the connection, as the rst says, not just fail with a
      status.

Options: --timeout/-t SECS (default 15): how long to wait for an answer or
for the home to close; --incarnation N (the HELLO's client incarnation,
default 1); -v prints every round.

Output: "# ..." lines, then one summary line "ok - ..." or "not ok - ...".
Exit status: 0 if every expectation was met, 1 if not, 2 on a usage error.
"""

import argparse
import collections
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hbmwire as W  # noqa: E402

MiB = 1 << 20
SCRATCH_LEN = 16 * W.PAGE       # the fuzzer's own chunk
HEALTH_LEN = 256 * 1024         # what a health check writes and reads back


class Run:
    """Counts checks and failures, prints TAP-ish comments."""

    def __init__(self, args):
        self.args = args
        self.checks = 0
        self.failures = 0

    def note(self, msg):
        for line in str(msg).splitlines() or [""]:
            print("# " + line, flush=True)

    def vnote(self, msg):
        if self.args.verbose:
            self.note(msg)

    def check(self, cond, msg):
        self.checks += 1
        if cond:
            self.vnote("ok: " + msg)
        else:
            self.failures += 1
            self.note("FAIL: " + msg)
        return cond

    def fail(self, msg):
        return self.check(False, msg)

    def finish(self, what):
        a = self.args
        print("%s - wirefuzz %s %s:%s: %s, %d failure%s"
              % ("not ok" if self.failures else "ok", a.cmd, a.ip, a.port,
                 what, self.failures, "" if self.failures == 1 else "s"),
              flush=True)
        return 1 if self.failures else 0


def read_key(path, strict):
    with open(path, "rb") as f:
        key = f.read()
    if not W.KEY_MIN <= len(key) <= W.KEY_MAX:
        msg = "%s: key of %d bytes, a domain key has %d..%d" % (
            path, len(key), W.KEY_MIN, W.KEY_MAX)
        if strict:
            raise ValueError(msg)
        print("# note: " + msg)
    return key


def connect(args):
    c = W.Client()
    c.connect(args.ip, args.port, args.timeout)
    return c


def login(args, key):
    """A client after a good handshake."""
    c = connect(args)
    c.handshake(args.domain, args.id, args.home, key, args.incarnation)
    return c


def observe(c, timeout):
    """Read until the home closes or @timeout passes: (frames, end) with end
    "closed", "timeout" or "garbage: ..." (a frame a client refuses; then
    whether it closed is still waited for)."""
    deadline = time.monotonic() + timeout
    frames = []
    while True:
        left = max(0.0, deadline - time.monotonic())
        try:
            frames.append(c.recv_frame(left))
        except W.Closed:
            return frames, "closed"
        except W.Timeout:
            return frames, "timeout"
        except W.ProtocolError as e:
            return frames, "garbage (%s), then %s" % (
                e, "closed" if c.closed(left) else "still open")


def pattern(seed, n):
    return random.Random(seed).randbytes(n)


def not_magic(rng, n):
    data = bytearray(rng.randbytes(n))
    if struct.unpack("<I", data[:4])[0] == W.MAGIC:
        data[0] ^= 0xff
    return bytes(data)


# -- stranger ----------------------------------------------------------------

def stranger_cases(args):
    rng = random.Random()
    domain = args.domain or "hbmfuzz-stranger"
    cid = args.id if args.id is not None else 0x5eed
    home = args.home if args.home is not None else 0x7ead
    other_domain = (domain + "x")[:31]
    if other_domain == domain:
        other_domain = domain[:30] + ("y" if domain[30] != "y" else "z")
    other_home = (home + 1000) & 0xffffffff
    if other_home == cid:
        other_home = (other_home + 1) & 0xffffffff
    nonce = os.urandom

    def hello(d=domain, c=cid, h=home):
        return W.build_hdr(W.OP_HELLO, 0, 0, 0, 0, 0) + \
            W.pack_hello(d, c, h, args.incarnation, nonce(32))

    return [
        ("garbage", "random bytes", lambda: not_magic(rng, rng.randrange(32, 257))),
        ("silent", "nothing at all", lambda: b""),
        ("request-first", "a PING before HELLO",
         lambda: W.build_hdr(W.OP_PING, 0, 0, 0, 0, 0)),
        ("auth-first", "an AUTH before HELLO",
         lambda: W.build_hdr(W.OP_AUTH, 0, 0, 0, 0, 0) + nonce(32)),
        ("wrong-domain", "HELLO for domain %r" % other_domain,
         lambda: hello(d=other_domain)),
        ("wrong-home", "HELLO for home id %d" % other_home,
         lambda: hello(h=other_home)),
        ("not-member", "HELLO from client id 0x7ffffff0 (not in the epoch)",
         lambda: hello(c=0x7ffffff0)),
        ("same-ids", "HELLO with client id == home id", lambda: hello(c=home)),
        ("empty-domain", "HELLO with an empty domain", lambda: hello(d=b"")),
        ("unterminated-domain", "HELLO with 32 domain bytes and no NUL",
         lambda: hello(d=(domain.encode() * 32)[:32])),
        ("truncated-hello", "half a HELLO, then EOF",
         lambda: hello()[:W.HDR_SIZE + 40]),
    ]


def cmd_stranger(args, run):
    for name, what, make in stranger_cases(args):
        try:
            c = connect(args)
        except OSError as e:
            run.fail("%s: cannot connect: %s" % (name, e))
            continue
        t0 = time.monotonic()
        try:
            data = make()
            if data:
                c.send_raw(data)
            if name == "truncated-hello":
                c.shutdown_write()
            frames, end = observe(c, args.timeout)
            if any(f.hdr.opcode == W.OP_CHALLENGE for f in frames):
                # Play on with a MAC of no key: still no WELCOME allowed.
                try:
                    c.send_raw(W.build_hdr(W.OP_AUTH, 0, 0, 0, 0, 0) + os.urandom(32))
                    more, end = observe(c, args.timeout)
                    frames += more
                except W.Closed:
                    end = "closed"
        except W.WireError as e:
            frames, end = [], "closed" if isinstance(e, W.Closed) else str(e)
        dt = time.monotonic() - t0
        got = ", ".join(W.hdr_name(f.hdr) for f in frames) or "nothing"
        run.note("%s: sent %s; got %s; %s after %.2fs" % (name, what, got, end, dt))
        run.check(end == "closed", "%s: the home closed the connection" % name)
        run.check(not any(f.hdr.opcode == W.OP_WELCOME for f in frames),
                  "%s: no WELCOME" % name)
        run.check(not any(f.hdr.opcode == W.OP_CHALLENGE for f in frames),
                  "%s: no CHALLENGE (the rst closes before it)" % name)
        c.close()
    return run.finish("%d stranger cases" % len(stranger_cases(args)))


# -- wrongkey ------------------------------------------------------------------

def cmd_wrongkey(args, run):
    key = read_key(args.key_file, False)
    try:
        c = connect(args)
    except OSError as e:
        run.fail("cannot connect: %s" % e)
        return run.finish("wrong key")
    try:
        ch = c.handshake(args.domain, args.id, args.home, key, args.incarnation)
        run.fail("the home accepted a wrong key (WELCOME proves it; incarnation %d)"
                 % ch.incarnation)
    except W.HandshakeRefused as e:
        run.note("refused: %s" % e)
        run.check(e.stage == "auth", "the home sent CHALLENGE and closed after AUTH "
                  "(a refusal at HELLO means domain or ids were wrong, not the key)")
    except W.HandshakeError as e:
        run.fail("no clean refusal: %s" % e)
    except W.Timeout:
        run.fail("the home neither answered nor closed within %gs" % args.timeout)
    c.close()
    return run.finish("wrong key")


# -- goodkey -------------------------------------------------------------------

def replay_checks(args, run, key):
    """A recorded AUTH on a new connection, and a MAC with the home's label
    as AUTH: both refused."""
    try:
        c1 = connect(args)
        c1.handshake(args.domain, args.id, args.home, key, args.incarnation)
        hello1, chal1 = c1.hello, c1.challenge
        old_auth = W.handshake_mac(key, False, hello1, chal1)
        c1.bye()
        c = connect(args)
        c.send_raw(W.build_hdr(W.OP_HELLO, 0, 0, 0, 0, 0) + hello1)
        f = c.recv_frame()
        run.check(f.hdr.opcode == W.OP_CHALLENGE, "a replayed HELLO gets a CHALLENGE")
        run.check(W.unpack_challenge(f.payload).nonce != W.unpack_challenge(chal1).nonce,
                  "the home's nonce is fresh on every connection")
        c.send_raw(W.build_hdr(W.OP_AUTH, 0, 0, 0, 0, 0) + old_auth)
        frames, end = observe(c, args.timeout)
        run.check(end == "closed" and not frames,
                  "a replayed AUTH is refused (%s, %d frames)" % (end, len(frames)))
        c.close()
        c = connect(args)
        hello = W.pack_hello(args.domain, args.id, args.home, args.incarnation,
                             os.urandom(32))
        c.send_raw(W.build_hdr(W.OP_HELLO, 0, 0, 0, 0, 0) + hello)
        f = c.recv_frame()
        mac = W.handshake_mac(key, True, hello, f.payload)
        c.send_raw(W.build_hdr(W.OP_AUTH, 0, 0, 0, 0, 0) + mac)
        frames, end = observe(c, args.timeout)
        run.check(end == "closed" and not frames,
                  "an AUTH with the home's label is refused (%s, %d frames)"
                  % (end, len(frames)))
        c.close()
    except (W.WireError, OSError) as e:
        run.fail("replay checks: %s: %s" % (type(e).__name__, e))


def cmd_goodkey(args, run):
    key = read_key(args.key_file, True)
    length = MiB
    try:
        c = connect(args)
        ch = c.handshake(args.domain, args.id, args.home, key, args.incarnation)
    except (W.WireError, OSError) as e:
        run.fail("handshake: %s: %s" % (type(e).__name__, e))
        return run.finish("good key")
    run.check(True, "handshake")
    run.note("home incarnation %d, segment %d bytes" % (ch.incarnation, ch.segment_size))
    try:
        st, free0 = c.ping()
        run.check(st == W.S_OK, "PING: %s, %d bytes free" % (W.status_name(st), free0))
        st, off = c.alloc(length)
        if not run.check(st == W.S_OK, "ALLOC %d: %s at %#x" % (length, W.status_name(st), off)):
            return run.finish("good key")
        run.check(off % W.PAGE == 0 and off + length <= ch.segment_size,
                  "the chunk [%#x, +%d) is page aligned, inside the segment" % (off, length))
        st, free1 = c.ping()
        run.note("free bytes: %d before ALLOC, %d after" % (free0, free1))
        run.check(st == W.S_OK and free1 <= free0 - length,
                  "the home's free bytes went down by at least the chunk")
        data = pattern(off ^ ch.incarnation, length)
        half = length // 2
        st, _ = c.write(off, data[:half])
        run.check(st == W.S_OK, "WRITE %d bytes: %s" % (half, W.status_name(st)))
        st, _ = c.write(off + half, data[half:])
        run.check(st == W.S_OK, "WRITE %d bytes: %s" % (half, W.status_name(st)))
        st, back = c.read(off, length)
        run.check(st == W.S_OK and back == data,
                  "READ %d bytes back: %s, %s" % (length, W.status_name(st),
                                                  "same" if back == data else "DIFFERENT"))
        n, each = 64, length // 64
        t0 = time.monotonic()
        frames = c.pipeline(n, W.OP_READ, off, each)
        dt = time.monotonic() - t0
        bad = [i for i, f in enumerate(frames)
               if f.hdr.status or f.payload != data[i * each:(i + 1) * each]]
        run.check(not bad, "%d pipelined READs of %d bytes, every tag once, in %.3fs: "
                  "%d wrong" % (n, each, dt, len(bad)))
        frames = c.pipeline(128, W.OP_PING)
        run.check(all(f.hdr.status == W.S_OK for f in frames),
                  "128 pipelined PINGs, every tag once")
        st, _ = c.free(off, length)
        run.check(st == W.S_OK, "FREE: %s" % W.status_name(st))
        st, _ = c.read(off, W.PAGE)
        run.check(st == W.S_NOTYOURS, "READ of the freed chunk: %s (want NOTYOURS)"
                  % W.status_name(st))
        st, _ = c.free(off, length)
        run.check(st != W.S_OK, "FREE of it again: %s (want a refusal)" % W.status_name(st))
        st, free2 = c.ping()
        run.note("free bytes after FREE: %d" % free2)
        run.check(st == W.S_OK, "the connection serves after the refusals")
        c.bye()
    except (W.WireError, OSError) as e:
        run.fail("%s: %s" % (type(e).__name__, e))
        return run.finish("good key")
    replay_checks(args, run, key)
    return run.finish("good key")


# -- fuzz ----------------------------------------------------------------------

Expect = collections.namedtuple("Expect", "kind tag want close_ok what")
# kind "hdr": a frame the header checks refuse (close; or, unless --strict, a
#     non-zero status); "req": a request the home understands and refuses
#     with a status in want (None: any non-zero); "close": the home must
#     close; "flood": handled by its case.


def hdr(what, tag=None):
    return Expect("hdr", tag, None, True, what)


def req(what, tag, want, close_ok=False):
    return Expect("req", tag, want, close_ok, what)


class Fuzz:
    def __init__(self, args, run, key):
        self.args, self.run, self.key = args, run, key
        self.rng = random.Random(args.seed)
        self.c = None
        self.seg = None
        self.scratch = None
        self.dropped_chunks = False
        self.health_checks = 0
        self.logins = 0

    # -- connections --
    def conn(self):
        if self.c is None:
            c = login(self.args, self.key)
            self.logins += 1
            self.seg = c.segment_size
            self.c = c
            self.ensure_scratch()
        return self.c

    def drop(self):
        if self.c is not None:
            self.c.close()
        self.c = None

    def ensure_scratch(self):
        c = self.c
        if self.scratch is not None:
            st, _ = c.read(self.scratch, W.PAGE)
            if st == W.S_OK:
                return
            if not self.dropped_chunks:
                self.run.note("the scratch chunk is gone after a reconnect (%s): "
                              "this home frees a client's chunks with its "
                              "connection" % W.status_name(st))
            self.dropped_chunks = True
        st, off = c.alloc(SCRATCH_LEN)
        if st != W.S_OK:
            raise W.WireError("ALLOC of the scratch chunk: %s" % W.status_name(st))
        self.scratch = off

    # -- helpers for cases --
    def hdr_bytes(self, op=None, flags=0, tag=None, status=0, offset=None, length=None):
        """A valid request header (random PING, READ or ALLOC unless @op)."""
        rng = self.rng
        op = op or rng.choice([W.OP_PING, W.OP_READ, W.OP_ALLOC])
        if tag is None:
            tag = self.c.take_tag()
        if op == W.OP_READ:
            offset = self.scratch if offset is None else offset
            length = W.PAGE if length is None else length
        elif op in (W.OP_ALLOC,):
            offset, length = 0 if offset is None else offset, \
                W.PAGE if length is None else length
        else:
            offset = 0 if offset is None else offset
            length = 0 if length is None else length
        return bytearray(W.build_hdr(op, flags, tag, status, offset, length))

    def reseal(self, raw):
        return W.seal(bytes(raw[:28]))

    def foreign_range(self, pages):
        """[offset, +pages) inside the segment, not in the scratch chunk."""
        rng, seg = self.rng, self.seg
        total = seg // W.PAGE
        for _ in range(100):
            p = rng.randrange(0, max(1, total - pages + 1))
            off = p * W.PAGE
            end = off + pages * W.PAGE
            if end <= seg and (end <= self.scratch or off >= self.scratch + SCRATCH_LEN):
                return off
        raise W.WireError("no room outside the scratch chunk")

    def outside_range(self):
        rng, seg = self.rng, self.seg
        return rng.choice([
            (seg, W.PAGE),                                     # just past the end
            (seg + W.PAGE * rng.randrange(1, 1 << 20), W.PAGE),
            (seg - W.PAGE, 2 * W.PAGE),                        # straddles the end
            ((1 << 64) - W.PAGE, 2 * W.PAGE),                  # wraps around
            (self.scratch + rng.randrange(1, W.PAGE), W.PAGE),  # not page aligned
        ])

    def write_frame(self, offset, data, tag=None, bad_digest=False):
        tag = self.c.take_tag() if tag is None else tag
        dd = W.crc32c(data)
        if bad_digest:
            dd ^= 1 << self.rng.randrange(32)
        return tag, W.build_hdr(W.OP_WRITE, W.F_DDGST, tag, 0, offset, len(data)) + \
            data + struct.pack("<I", dd)

    # -- the cases: each sends one bad thing and says what should follow --
    def case_random_bytes(self):
        n = self.rng.randrange(32, 513)
        self.c.send_raw(not_magic(self.rng, n))
        return hdr("%d random bytes" % n)

    def case_bitflip(self):
        raw = self.hdr_bytes()
        i, mask = self.rng.randrange(32), self.rng.randrange(1, 256)
        raw[i] ^= mask
        self.c.send_raw(bytes(raw))
        return hdr("header byte %d ^= %#04x (not resealed)" % (i, mask))

    def case_bad_magic(self):
        raw = self.hdr_bytes()
        m = self.rng.randrange(1 << 32)
        if m == W.MAGIC:
            m ^= 1
        raw[0:4] = struct.pack("<I", m)
        self.c.send_raw(self.reseal(raw))
        return hdr("magic %#010x" % m)

    def case_bad_version(self):
        raw = self.hdr_bytes()
        v = self.rng.choice([0] + list(range(2, 256)))
        raw[4] = v
        self.c.send_raw(self.reseal(raw))
        return hdr("version %d" % v)

    def case_bad_hcrc(self):
        raw = self.hdr_bytes()
        x = self.rng.randrange(1, 1 << 32)
        raw[28:32] = struct.pack("<I", struct.unpack("<I", raw[28:32])[0] ^ x)
        self.c.send_raw(bytes(raw))
        return hdr("hcrc ^= %#x" % x)

    def case_bad_opcode(self):
        raw = self.hdr_bytes()
        op = self.rng.choice([0] + list(range(W.OP_MAX + 1, 256)))
        raw[5] = op
        self.c.send_raw(self.reseal(raw))
        return hdr("opcode %d" % op)

    def case_bad_flags(self):
        bit = 1 << self.rng.randrange(2, 16)
        self.c.send_raw(bytes(self.hdr_bytes(flags=bit)))
        return hdr("flags %#x" % bit)

    def case_resp_set(self):
        raw = self.hdr_bytes(flags=W.F_RESP)
        self.c.send_raw(bytes(raw))
        return hdr("a request marked RESP (%s)" % W.hdr_name(W.parse_hdr(raw)))

    def case_handshake_dir(self):
        op, n = self.rng.choice([(W.OP_CHALLENGE, W.CHALLENGE_SIZE),
                                 (W.OP_WELCOME, W.AUTH_SIZE),
                                 (W.OP_AUTH, W.AUTH_SIZE)])
        flags = W.F_RESP if op == W.OP_AUTH else 0
        self.c.send_raw(W.build_hdr(op, flags, 0, 0, 0, 0) + os.urandom(n))
        return hdr("%s%s to the home" % (W.OP_NAMES[op], " marked RESP" if flags else ""))

    def case_bad_tag(self):
        tag = self.rng.choice([W.MAX_TAGS, self.rng.randrange(W.MAX_TAGS, 1 << 32)])
        self.c.send_raw(bytes(self.hdr_bytes(tag=tag)))
        return hdr("tag %d" % tag)

    def case_request_status(self):
        st = self.rng.choice([self.rng.randrange(1, W.S_MAX + 1),
                              self.rng.randrange(W.S_MAX + 1, 1 << 32)])
        self.c.send_raw(bytes(self.hdr_bytes(status=st)))
        return hdr("status %d in a request" % st)

    def _bad_len(self, op, length):
        raw = self.hdr_bytes(op=op, offset=self.scratch if op != W.OP_ALLOC else 0,
                             length=length)
        self.c.send_raw(bytes(raw))
        return hdr("%s length %d" % (W.OP_NAMES[op], length))

    def case_len_zero(self):
        return self._bad_len(self.rng.choice([W.OP_READ, W.OP_WRITE, W.OP_ALLOC,
                                              W.OP_FREE]), 0)

    def case_len_unaligned(self):
        op = self.rng.choice([W.OP_READ, W.OP_WRITE, W.OP_ALLOC, W.OP_FREE])
        length = self.rng.randrange(0, 16) * W.PAGE + self.rng.randrange(1, W.PAGE)
        return self._bad_len(op, length)

    def case_len_too_big(self):
        op = self.rng.choice([W.OP_READ, W.OP_WRITE])
        length = self.rng.choice([W.MAX_DATA + W.PAGE, 0xfffff000,
                                  self.rng.randrange(513, 1 << 20) * W.PAGE & 0xfffff000])
        return self._bad_len(op, length or W.MAX_DATA + W.PAGE)

    def case_len_on_ping(self):
        length = self.rng.choice([W.PAGE, self.rng.randrange(1, 1 << 32)])
        self.c.send_raw(bytes(self.hdr_bytes(op=W.OP_PING, length=length)))
        return hdr("PING length %d" % length)

    def case_ddgst_no_payload(self):
        op = self.rng.choice([W.OP_PING, W.OP_READ, W.OP_ALLOC, W.OP_FREE])
        raw = self.hdr_bytes(op=op, flags=W.F_DDGST,
                             offset=self.scratch if op != W.OP_PING else 0,
                             length=0 if op == W.OP_PING else W.PAGE)
        self.c.send_raw(bytes(raw) + os.urandom(4))
        return hdr("DDGST on a %s request" % W.OP_NAMES[op])

    def case_read_outside(self):
        off, length = self.outside_range()
        tag = self.c.send(W.OP_READ, off, length)
        return req("READ [%#x, +%d) outside the segment" % (off, length), tag, {W.S_RANGE})

    def case_write_outside(self):
        off, length = self.outside_range()
        tag, frame = self.write_frame(off, self.rng.randbytes(length))
        self.c.send_raw(frame)
        return req("WRITE [%#x, +%d) outside the segment" % (off, length), tag, {W.S_RANGE})

    def _notyours(self):
        pages = self.rng.randrange(1, 9)
        end = self.scratch + SCRATCH_LEN
        if self.rng.random() < 0.3 and end + W.PAGE <= self.seg:
            return end - W.PAGE, 2 * W.PAGE, "past the end of its chunk"
        return self.foreign_range(pages), pages * W.PAGE, "not its chunk"

    def case_read_notyours(self):
        off, length, why = self._notyours()
        tag = self.c.send(W.OP_READ, off, length)
        return req("READ [%#x, +%d), %s" % (off, length, why), tag, {W.S_NOTYOURS})

    def case_write_notyours(self):
        off, length, why = self._notyours()
        tag, frame = self.write_frame(off, self.rng.randbytes(length))
        self.c.send_raw(frame)
        return req("WRITE [%#x, +%d), %s" % (off, length, why), tag, {W.S_NOTYOURS})

    def case_write_baddigest(self):
        pages = self.rng.randrange(1, SCRATCH_LEN // W.PAGE + 1)
        tag, frame = self.write_frame(self.scratch, self.rng.randbytes(pages * W.PAGE),
                                      bad_digest=True)
        self.c.send_raw(frame)
        return req("WRITE of %d pages with a wrong data digest" % pages, tag,
                   {W.S_DIGEST}, close_ok=True)

    def case_free_notheld(self):
        if self.rng.random() < 0.5:
            off, length = self.scratch, SCRATCH_LEN - W.PAGE
            why = "its chunk with the wrong length"
        else:
            off, length = self.foreign_range(1), W.PAGE
            why = "a page it does not hold"
        tag = self.c.send(W.OP_FREE, off, length)
        return req("FREE [%#x, +%d), %s" % (off, length, why), tag, None)

    def case_alloc_huge(self):
        length = (self.seg + W.PAGE) & 0xfffff000
        if self.seg + W.PAGE > 0xfffff000:
            length = 0xfffff000
            if length <= self.seg:
                return self.case_read_outside()     # no ALLOC can be too big
        tag = self.c.send(W.OP_ALLOC, 0, length)
        return req("ALLOC %d bytes, more than the segment" % length, tag, None)

    def case_truncated(self):
        rng = self.rng
        if rng.random() < 0.5:
            _, frame = self.write_frame(self.scratch, rng.randbytes(W.PAGE * rng.randrange(1, 5)))
        else:
            frame = bytes(self.hdr_bytes())
        cut = rng.randrange(1, len(frame))
        self.c.send_raw(frame[:cut])
        self.c.shutdown_write()
        return Expect("close", None, None, True,
                      "%d of %d bytes of a frame, then EOF" % (cut, len(frame)))

    def case_flood(self):
        n = 1000
        self.c.send_raw(b"".join(W.build_hdr(W.OP_PING, 0, i % W.MAX_TAGS, 0, 0, 0)
                                 for i in range(n)))
        return Expect("flood", n, None, True, "%d PINGs without reading" % n)

    CASES = ["random-bytes", "bitflip", "bad-magic", "bad-version", "bad-hcrc",
             "bad-opcode", "bad-flags", "resp-set", "handshake-dir", "bad-tag",
             "request-status", "len-zero", "len-unaligned", "len-too-big",
             "len-on-ping", "ddgst-no-payload", "read-outside", "write-outside",
             "read-notyours", "write-notyours", "write-baddigest", "free-notheld",
             "alloc-huge", "truncated", "flood"]

    # -- judging what came back --
    def judge_flood(self, exp):
        c, got, statuses = self.c, 0, collections.Counter()
        while got < exp.tag:
            try:
                f = c.recv_frame()
            except W.Closed:
                return "closed after %d answers" % got, True
            except W.Timeout:
                return "hang after %d answers" % got, False
            except W.ProtocolError as e:
                return "garbage after %d answers: %s" % (got, e), False
            if f.hdr.opcode != W.OP_PING or not f.hdr.flags & W.F_RESP:
                return "not a PING response: %s" % W.hdr_name(f.hdr), False
            got += 1
            statuses[W.status_name(f.hdr.status)] += 1
        return "all %d answered (%s)" % (got, ", ".join(
            "%s %d" % kv for kv in sorted(statuses.items()))), True

    def judge(self, exp):
        """(outcome label, as expected?, keep the connection?)"""
        c = self.c
        if exp.kind == "flood":
            label, good = self.judge_flood(exp)
            return label, good, label.startswith("all")
        try:
            f = c.recv_frame()
        except W.Closed:
            return "closed", exp.kind != "req" or exp.close_ok, False
        except W.Timeout:
            return "hang", False, False
        except W.ProtocolError as e:
            return "garbage: %s" % e, False, False
        h = f.hdr
        if h.status == W.S_OK:
            return "SUCCESS (%s)" % W.hdr_name(h), False, False
        label = "status %s" % W.status_name(h.status)
        if exp.kind == "hdr":
            return label, not self.args.strict, False
        if exp.kind == "close":
            return label, False, False
        if h.tag != exp.tag:
            return "%s for tag %d, sent %d" % (label, h.tag, exp.tag), False, False
        return label, exp.want is None or h.status in exp.want, True

    def still_alive(self):
        try:
            st, _ = self.c.ping()
            if st == W.S_OK:
                return True
            self.run.fail("PING after a refused request: %s" % W.status_name(st))
        except W.Closed:
            self.run.vnote("the home closed the connection after answering")
        except W.WireError as e:
            self.run.fail("PING after a refused request: %s" % e)
        self.drop()
        return False

    def health(self, why):
        """A fresh connection: ALLOC, WRITE a pattern, READ it back, FREE."""
        self.health_checks += 1
        seed = self.rng.randrange(1 << 32)
        try:
            c = login(self.args, self.key)
            st, off = c.alloc(HEALTH_LEN)
            if not self.run.check(st == W.S_OK, "health %s: ALLOC: %s" % (why, W.status_name(st))):
                c.close()
                return
            data = pattern(seed, HEALTH_LEN)
            st, _ = c.write(off, data)
            self.run.check(st == W.S_OK, "health %s: WRITE: %s" % (why, W.status_name(st)))
            st, back = c.read(off, HEALTH_LEN)
            self.run.check(st == W.S_OK and back == data, "health %s: READ back %s, %s" % (
                why, W.status_name(st), "exact" if back == data else "DIFFERENT"))
            st, _ = c.free(off, HEALTH_LEN)
            self.run.check(st == W.S_OK, "health %s: FREE: %s" % (why, W.status_name(st)))
            c.bye()
        except (W.WireError, OSError) as e:
            self.run.fail("health %s: the home no longer serves: %s: %s"
                          % (why, type(e).__name__, e))

    def round(self, i, name, stats):
        try:
            self.conn()
        except (W.WireError, OSError) as e:
            self.run.fail("round %d: reconnect with a good key: %s: %s"
                          % (i, type(e).__name__, e))
            return
        try:
            exp = getattr(self, "case_" + name.replace("-", "_"))()
        except W.Closed:
            # The home closed before all was sent: it refused early.
            stats[name]["closed while sending"] += 1
            self.run.vnote("round %d %s: closed while sending" % (i, name))
            self.drop()
            return
        except (W.WireError, OSError) as e:
            self.run.fail("round %d %s: %s: %s" % (i, name, type(e).__name__, e))
            self.drop()
            return
        label, good, keep = self.judge(exp)
        stats[name][label.split(" (")[0].split(":")[0]] += 1
        msg = "round %d %s: %s -> %s" % (i, name, exp.what, label)
        if good:
            self.run.checks += 1
            self.run.vnote(msg)
        else:
            self.run.fail(msg)
        if keep and exp.kind == "req":
            keep = self.still_alive()
        if not keep:
            self.drop()

    def finish(self):
        """Give back the scratch chunk."""
        if self.scratch is None:
            return
        # The home may have ended the last round's session after it was
        # judged alive (it may close a session at any time): then log in
        # again, once, as any client would.
        for attempt in (1, 2):
            try:
                self.conn()
                st, _ = self.c.free(self.scratch, SCRATCH_LEN)
                self.run.check(st == W.S_OK,
                               "FREE of the scratch chunk: %s" % W.status_name(st))
                self.c.bye()
                break
            except (W.WireError, OSError) as e:
                self.drop()
                if attempt == 2:
                    self.run.fail("FREE of the scratch chunk: %s" % e)
        self.c = None


def cmd_fuzz(args, run):
    key = read_key(args.key_file, True)
    cases = Fuzz.CASES
    if args.cases:
        cases = [x for x in args.cases.split(",") if x]
        unknown = [x for x in cases if x not in Fuzz.CASES]
        if unknown:
            print("wirefuzz: unknown cases %s; known: %s"
                  % (",".join(unknown), ",".join(Fuzz.CASES)), file=sys.stderr)
            return 2
    run.note("seed %d, %d rounds, cases %s" % (args.seed, args.rounds, ",".join(cases)))
    fz = Fuzz(args, run, key)
    try:
        fz.conn()
    except (W.WireError, OSError) as e:
        run.fail("handshake with the good key: %s: %s" % (type(e).__name__, e))
        return run.finish("fuzz, no handshake")
    run.note("segment %d bytes, scratch chunk at %#x" % (fz.seg, fz.scratch))
    stats = collections.defaultdict(collections.Counter)
    t0 = time.monotonic()
    order = []
    for i in range(1, args.rounds + 1):
        if not order:   # every case once per len(cases) rounds, shuffled
            order = list(cases)
            fz.rng.shuffle(order)
        fz.round(i, order.pop(), stats)
        if i % 10 == 0:
            fz.health("after round %d" % i)
    if args.rounds % 10 or not args.rounds:
        fz.health("at the end")
    fz.finish()
    for name in cases:
        if stats[name]:
            run.note("case %s: %d (%s)" % (name, sum(stats[name].values()), ", ".join(
                "%s %d" % kv for kv in sorted(stats[name].items()))))
    run.note("%d rounds in %.1fs, %d logins, %d health checks"
             % (args.rounds, time.monotonic() - t0, fz.logins, fz.health_checks))
    return run.finish("%d rounds, seed %d, %d health checks"
                      % (args.rounds, args.seed, fz.health_checks))


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="wirefuzz.py", description="Attack an hbmpool home over its wire protocol.",
        epilog="Exit status: 0 every expectation met, 1 not, 2 usage.")
    p.add_argument("-t", "--timeout", type=float, default=15.0,
                   help="seconds to wait for an answer or a close (default 15)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every check")
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, need_key):
        sp.add_argument("ip")
        sp.add_argument("port", type=int)
        sp.add_argument("--domain", required=need_key, help="the domain's name")
        sp.add_argument("--id", type=int, required=need_key, help="this client's node id")
        sp.add_argument("--home", type=int, required=need_key, help="the home's node id")
        if need_key:
            sp.add_argument("--key-file", required=True,
                            help="the domain key: the file's bytes exactly")
        sp.add_argument("--incarnation", type=int, default=1,
                        help="the HELLO's client incarnation (default 1)")
        # accept the global options after the subcommand too
        sp.add_argument("-t", "--timeout", type=float, default=argparse.SUPPRESS)
        sp.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)

    common(sub.add_parser("stranger", help="strangers must be shut out"), False)
    common(sub.add_parser("wrongkey", help="a wrong key must be refused"), True)
    common(sub.add_parser("goodkey", help="the right key must be served"), True)
    sp = sub.add_parser("fuzz", help="bad frames after a good handshake")
    common(sp, True)
    sp.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock)")
    sp.add_argument("--rounds", type=int, default=100, help="bad frames to send (default 100)")
    sp.add_argument("--cases", default="",
                    help="comma-separated subset of: " + ",".join(Fuzz.CASES))
    sp.add_argument("--strict", action="store_true",
                    help="header-level refusals must close the connection")
    args = p.parse_args(argv)
    if args.cmd == "fuzz" and args.seed is None:
        args.seed = int(time.time() * 1000) % 1000000007
    if args.domain is not None and not 0 < len(args.domain.encode()) <= 31:
        p.error("--domain: 1 to 31 bytes (the HELLO's 32 hold a NUL)")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    run = Run(args)
    try:
        return {"stranger": cmd_stranger, "wrongkey": cmd_wrongkey,
                "goodkey": cmd_goodkey, "fuzz": cmd_fuzz}[args.cmd](args, run)
    except BrokenPipeError:     # stdout went away (| head)
        return 1
    except (OSError, ValueError) as e:
        run.fail("%s: %s" % (type(e).__name__, e))
        return run.finish("aborted")
    except KeyboardInterrupt:
        run.fail("interrupted")
        return run.finish("interrupted")


if __name__ == "__main__":
    sys.exit(main())
