#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
THEORY OF OPERATION
A bounded fuzz loop against the hbmpool netlink family: random messages
(any command number, do or dump, random attributes of random types,
lengths and nesting) and valid requests of the spec mutated (bytes flipped,
attributes truncated or duplicated, lengths lied about), sent as root and as
an unprivileged user.  Every message must be answered (an error or a reply,
never a hang), the family must still answer correctly afterwards, and the
state it was left in must be consistent: a node dump agrees with the
domain's node count and with sysfs.  The kernel log is judged by the rig
(no splat; under check-debug also KASAN, lockdep and kmemleak).
Arguments: [ITERATIONS [SEED]] (default 4000, a seed from the clock,
printed so that a failure can be replayed).
TAP output; exit 0 pass, 1 fail, 4 skip.
"""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nlraw  # noqa: E402

tap = nlraw.Tap()
result = tap.result
FIRST_ID = 900		# nodes the fuzzer may create: ids >= FIRST_ID



def rand_attr(rnd, depth=0):
    t = rnd.randrange(0, 24)
    kind = rnd.randrange(6)
    if kind == 0:
        p = b""
    elif kind == 1:
        p = struct.pack("=I", rnd.choice([0, 1, 2, 3, 10, 11, 255, 256, 1023, 1024,
                                          FIRST_ID + rnd.randrange(100), 0xffffffff]))
    elif kind == 2:
        p = struct.pack("=Q", rnd.choice([0, 4096, 1 << 20, 64 << 30, (64 << 30) + 1,
                                          (1 << 64) - 1, rnd.getrandbits(64)]))
    elif kind == 3:
        p = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 40)))
    elif kind == 4:
        p = (''.join(rnd.choice("abcxyz\0") for _ in range(rnd.randrange(0, 40)))).encode()
    else:
        p = b"".join(rand_attr(rnd, depth + 1) for _ in range(rnd.randrange(0, 4))) \
            if depth < 3 else b""
    if kind == 5 and rnd.randrange(2):
        t |= nlraw.NLA_F_NESTED
    return nlraw.attr(t, p)


def valid_request(rnd, spec):
    """A plausible request of a random operation of the spec."""
    ops = [o for o in spec.ops.values() if "notify" not in o]
    op = rnd.choice(ops)
    aset = op["attribute-set"]
    attrs = b""
    for name in op.get("do", {}).get("request", {}).get("attributes", []):
        a = spec.sets[aset][name]
        if rnd.randrange(4) == 0:
            continue
        t = a["type"]
        c = a.get("checks", {})
        if t in ("u8", "u16", "u32", "u64"):
            lo, hi = c.get("min", 0), c.get("max", 2000)
            v = rnd.randint(lo, min(hi, lo + 2000))
            if name in ("id", "node-id", "self-id") and op["name"] != "domain-set":
                v = FIRST_ID + rnd.randrange(100)
            if name == "self-id":
                v = 0
            attrs += spec.encode(aset, name, v)
        elif t == "string":
            v = rnd.choice(["", "sim", "tcp", "x" * rnd.randrange(1, 40), "fz"])
            if name == "name" and aset == "domain":
                v = ""
            attrs += spec.encode(aset, name, v)
        elif t == "flag":
            attrs += spec.encode(aset, name, True)
        elif t == "binary":
            attrs += nlraw.attr(a["value"], bytes(rnd.choice([4, 16, rnd.randrange(0, 20)])))
    return op, attrs


def mutate(rnd, data):
    b = bytearray(data)
    for _ in range(rnd.randrange(1, 4)):
        m = rnd.randrange(4)
        if m == 0 and b:
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        elif m == 1 and b:
            del b[rnd.randrange(len(b)):]
        elif m == 2 and len(b) >= 4:
            i = rnd.randrange(0, len(b) - 1) & ~3
            struct.pack_into("=H", b, i, rnd.choice([0, 1, 3, 4, 0xffff, len(b) + 8]))
        else:
            b += b[:rnd.randrange(0, len(b) + 1)]
    return bytes(b)


def fuzz(g, rnd, iterations, label):
    spec = g.spec
    answered = 0
    for i in range(iterations):
        if rnd.randrange(2):
            cmd = rnd.randrange(0, 30)
            attrs = b"".join(rand_attr(rnd) for _ in range(rnd.randrange(0, 6)))
        else:
            op, attrs = valid_request(rnd, spec)
            cmd = op["value"]
            if rnd.randrange(3):
                attrs = mutate(rnd, attrs)
        flags = nlraw.NLM_F_REQUEST | nlraw.NLM_F_ACK
        if rnd.randrange(4) == 0:
            flags |= nlraw.NLM_F_DUMP
        hdr = struct.pack("=BBH", cmd, rnd.choice([0, 1, 2, 255]), rnd.choice([0, 0, 7]))
        g.send_raw(g.family_id, flags, hdr + attrs)
        try:
            g.sock.settimeout(10)
            g.recv()
            answered += 1
        except nlraw.NlError:
            answered += 1
        except socket.timeout:
            return answered, f"{label}: message {i} (cmd {cmd}) got no answer in 10 s"
        finally:
            g.sock.settimeout(None)
    return answered, None


def consistent(g):
    nodes = g.dump("node-get")
    d = g.do("domain-get")
    sysfs = sorted(int(x[4:]) for x in os.listdir("/sys/kernel/hbmpool/nodes"))
    return sorted(n["id"] for n in nodes) == sysfs and d["nr-nodes"] == len(nodes), \
        f"dump {[n['id'] for n in nodes]}, sysfs {sysfs}, nr-nodes {d['nr-nodes']}"


def main():
    why = nlraw.skip_reason()
    if why:
        print(f"1..0 # SKIP {why}")
        return 4
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(time.time())
    print(f"# seed {seed}, {iterations} messages as root and as nobody")
    rnd = random.Random(seed)
    g = nlraw.Genl()
    p0 = g.do("params-get")
    d0 = g.do("domain-get")
    try:
        n, err = fuzz(g, rnd, iterations, "root")
        result(err is None, f"root: {n} of {iterations} messages answered", err or "")
        r, w = os.pipe()
        pid = os.fork()
        if not pid:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            u = nlraw.Genl()
            n, err = fuzz(u, rnd, iterations // 4, "nobody")
            os.write(w, (err or f"ok {n}").encode())
            os._exit(0)
        os.close(w)
        got = os.read(r, 512).decode()
        os.close(r)
        os.waitpid(pid, 0)
        result(got.startswith("ok"), f"nobody: {iterations // 4} messages answered", got)
        p = g.do("params-get")
        result("cache-budget-pages" in p and "seq" in p, "the family still answers")
        good, why = consistent(g)
        result(good, "nodes, sysfs and the domain's count agree", why)
    finally:
        for node in g.dump("node-get"):
            if node["id"] != d0["self-id"] and node.get("transport") != "local":
                g.do("node-del", id=node["id"])
        d = g.do("domain-get")
        if d["self-id"] != d0["self-id"] or d["name"] != d0["name"]:
            g.do("domain-set", name=d0["name"], self_id=d0["self-id"])
        g.do("params-set", cache_budget_pages=p0["cache-budget-pages"],
             fetch_timeout_ms=p0["fetch-timeout-ms"])
        try:
            g.do("segment-del")		# one the fuzzer may have made
        except nlraw.NlError:
            pass
    d = g.do("domain-get")
    result(d["nr-nodes"] == 1 and d["self-id"] == d0["self-id"], "cleaned up: this node alone",
           f"{d}")
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
