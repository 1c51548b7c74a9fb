#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
THEORY OF OPERATION
Every attribute of every request of the hbmpool netlink family, taken from
the spec, is sent wrong: with the wrong type (a payload of another size, a
string without its NUL, a flag with a payload), out of its range (one below
the minimum, one above the maximum, a string one byte too long), and every
request gets an attribute its operation does not take and one the family
does not know; every required attribute is left out once; every
state-changing operation is sent by an unprivileged caller.  Each must be
refused with the documented errno and an extack that names the attribute
(its offset, or the missing attribute's type) or, for privilege, EPERM;
and the family's state must be what it was before.
TAP output; exit 0 pass, 1 fail, 4 skip.
"""
import errno
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nlraw  # noqa: E402

# What each operation needs; the spec has no "required" marker.
REQUIRED = {
    "node-get": ["id"], "node-new": ["id", "capacity", "distance"],
    "node-del": ["id"], "node-set": ["id"], "link-get": ["node-id"],
    "link-set": ["node-id", "admin-state"], "region-get": ["id"],
    "segment-new": ["size"],
}
# A valid request of each operation that takes attributes, for the node
# the test creates (TEST_NODE), so that one wrong attribute is the only fault.
TEST_NODE = 977
BASE = {
    "params-set": {"fetch-timeout-ms": 2000},
    "node-get": {"id": TEST_NODE},
    "node-new": {"id": TEST_NODE + 1, "capacity": 1 << 20, "distance": 20},
    "node-del": {"id": TEST_NODE + 2},
    "node-set": {"id": TEST_NODE, "distance": 40},
    "domain-set": {"name": ""},
    "link-get": {"node-id": TEST_NODE},
    "link-set": {"node-id": TEST_NODE, "admin-state": 1},
    "region-get": {"id": 0},
    "segment-new": {"size": 1 << 20},
}
INT_SIZE = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}

tap = nlraw.Tap()
result = tap.result



def pack_request(spec, op, values, extra=b"", skip=None):
    aset = spec.ops[op]["attribute-set"]
    parts = []
    for k, v in values.items():
        if k != skip:
            parts.append(spec.encode(aset, k, v))
    return b"".join(parts) + extra


def expect(g, op, attrs, want_errno, name, bad_off=None, miss=None):
    """The request is refused with want_errno and an extack naming the fault."""
    try:
        g.raw(op, attrs)
    except nlraw.NlError as e:
        why = f"errno {e.errno} ({e}), offs {e.offs}, miss {e.miss}"
        good = e.errno == want_errno
        if bad_off is not None:
            good = good and e.offs == bad_off
        if miss is not None:
            good = good and e.miss == miss
        if bad_off is None and miss is None:
            good = good and bool(e.msg)
        result(good, name, why)
        return
    result(False, name, "accepted")


def state(g):
    nodes = sorted((n["id"], n["distance"], n["name"], n["state"],
                    n["weight"], n["draining"]) for n in g.dump("node-get"))
    p = g.do("params-get")
    d = g.do("domain-get")
    return nodes, p["cache-budget-pages"], p["fetch-timeout-ms"], d["name"], d["self-id"]


def main():
    why = nlraw.skip_reason()
    if why:
        print(f"1..0 # SKIP {why}")
        return 4
    spec = nlraw.Spec()
    g = nlraw.Genl(spec=spec)
    g.do("node-new", id=TEST_NODE, capacity=1 << 20, distance=20)
    g.do("node-new", id=TEST_NODE + 2, capacity=1 << 20, distance=20)
    before = state(g)
    hdr = 16 + 4	# nlmsghdr + genlmsghdr: extack offsets count from the message
    try:
        for op, base in BASE.items():
            aset = spec.ops[op]["attribute-set"]
            request = spec.ops[op]["do"]["request"]["attributes"]
            for a in request:
                sa = spec.sets[aset][a]
                t, aid = sa["type"], sa["value"]
                vals = dict(base)
                vals.pop(a, None)
                good = pack_request(spec, op, vals)
                off = hdr + len(good)
                # wrong type
                if t in INT_SIZE:
                    bad = nlraw.attr(aid, b"\x01" * (INT_SIZE[t] + 1))
                    expect(g, op, good + bad, errno.EINVAL,
                           f"{op}.{a}: {INT_SIZE[t] + 1} bytes for a {t}: EINVAL at it", off)
                elif t == "string":
                    bad = nlraw.attr(aid, b"x")
                    expect(g, op, good + bad, errno.EINVAL,
                           f"{op}.{a}: a string without NUL: EINVAL at it", off)
                elif t == "flag":
                    bad = nlraw.attr(aid, b"\x01\x00\x00\x00")
                    expect(g, op, good + bad, errno.ERANGE,
                           f"{op}.{a}: a flag with a payload: ERANGE at it", off)
                elif t == "binary":
                    bad = nlraw.attr(aid, b"\x01" * 3)
                    expect(g, op, good + bad, errno.ERANGE,
                           f"{op}.{a}: 3 bytes of binary: ERANGE at it", off)
                # out of range
                checks = sa.get("checks", {})
                if t in INT_SIZE:
                    lo, hi = checks.get("min"), checks.get("max")
                    fmt = {"u8": "=B", "u16": "=H", "u32": "=I", "u64": "=Q"}[t]
                    if lo:
                        bad = nlraw.attr(aid, struct.pack(fmt, lo - 1))
                        expect(g, op, good + bad, errno.ERANGE,
                               f"{op}.{a}: {lo - 1}, below the minimum: ERANGE at it", off)
                    if hi is not None and hi < (1 << (8 * INT_SIZE[t])) - 1:
                        bad = nlraw.attr(aid, struct.pack(fmt, hi + 1))
                        expect(g, op, good + bad, errno.ERANGE,
                               f"{op}.{a}: {hi + 1}, above the maximum: ERANGE at it", off)
                if t == "string" and "max-len" in checks:
                    bad = nlraw.attr(aid, b"x" * (checks["max-len"] + 1) + b"\0")
                    expect(g, op, good + bad, errno.EINVAL,
                           f"{op}.{a}: one byte too long: EINVAL at it", off)
                if t == "binary" and "max-len" in checks:
                    bad = nlraw.attr(aid, b"\x01" * (checks["max-len"] + 1))
                    expect(g, op, good + bad, errno.ERANGE,
                           f"{op}.{a}: one byte too long: ERANGE at it", off)
            # missing
            for a in REQUIRED.get(op, []):
                expect(g, op, pack_request(spec, op, base, skip=a), errno.EINVAL,
                       f"{op}: without {a}: EINVAL naming it", miss=spec.aid(aset, a))
            # an attribute of the set the operation does not take, and an unknown one
            good = pack_request(spec, op, base)
            others = [x for x in spec.sets[aset].values()
                      if x["name"] not in request and x["type"] in INT_SIZE]
            if others:
                x = others[0]
                bad = nlraw.attr(x["value"], b"\0" * INT_SIZE[x["type"]])
                expect(g, op, good + bad, errno.EINVAL,
                       f"{op}: {x['name']}, not an attribute of the request: EINVAL at it",
                       hdr + len(good))
            top = max(x["value"] for x in spec.sets[aset].values())
            expect(g, op, good + nlraw.attr(top + 1, b"\0" * 4), errno.EINVAL,
                   f"{op}: unknown attribute {top + 1}: EINVAL", hdr + len(good))

        # unprivileged callers
        admin = [o["name"] for o in spec.y["operations"]["list"]
                 if "admin-perm" in o.get("flags", [])]
        for op in admin:
            r, w = os.pipe()
            pid = os.fork()
            if not pid:
                os.close(r)
                code = b"?"
                try:
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                    u = nlraw.Genl(spec=spec)
                    u.raw(op, pack_request(spec, op, BASE.get(op, {})))
                    code = b"accepted"
                except nlraw.NlError as e:
                    code = str(e.errno).encode()
                except Exception as e:  # noqa: BLE001 (reported to the parent)
                    code = repr(e).encode()
                os.write(w, code)
                os._exit(0)
            os.close(w)
            got = os.read(r, 256).decode()
            os.close(r)
            os.waitpid(pid, 0)
            result(got == str(errno.EPERM), f"{op}: an unprivileged caller gets EPERM", got)

        after = state(g)
        result(after == before, "nothing a refused request sent changed the state",
               f"{before} -> {after}")
    finally:
        for i in (TEST_NODE, TEST_NODE + 1, TEST_NODE + 2):
            try:
                g.do("node-del", id=i)
            except nlraw.NlError:
                pass
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
