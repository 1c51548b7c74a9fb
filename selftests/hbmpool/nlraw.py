# SPDX-License-Identifier: GPL-2.0
"""
A raw generic netlink client for the hbmpool tests: it sends any bytes the
tests build (malformed ones included), and reads back replies, dumps, acks
with their extack (message, offset of the bad attribute, missing attribute)
and multicast events.  The spec (Documentation/netlink/specs/hbmpool.yaml)
gives attribute and command numbers, so tests name things as the spec does.
"""
import os
import socket
import struct

import yaml

NETLINK_GENERIC = 16
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_DUMP = 1, 2, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_DUMP_INTR = 0x10
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_MCAST_GROUPS = 1, 2, 7
CTRL_ATTR_MCAST_GRP_NAME, CTRL_ATTR_MCAST_GRP_ID = 1, 2
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS, NLMSGERR_ATTR_MISS_TYPE = 1, 2, 5
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP, NETLINK_EXT_ACK, NETLINK_CAP_ACK = 1, 11, 10
NLA_F_NESTED = 0x8000

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "Documentation", "netlink", "specs", "hbmpool.yaml")


def attr(atype, payload):
    """One attribute: header, payload, padding to 4 bytes."""
    n = 4 + len(payload)
    return struct.pack("=HH", n, atype) + payload + b"\0" * ((4 - n % 4) % 4)


def parse_attrs(data):
    """[(type, payload)] of a packed attribute stream (nested flag cleared)."""
    out, off = [], 0
    while off + 4 <= len(data):
        n, t = struct.unpack_from("=HH", data, off)
        if n < 4:
            break
        out.append((t & ~NLA_F_NESTED & 0x7fff, data[off + 4:off + n]))
        off += (n + 3) & ~3
    return out


class NlError(Exception):
    def __init__(self, errno_, msg, offs, miss):
        super().__init__(f"{os.strerror(errno_)}: {msg}")
        self.errno, self.msg, self.offs, self.miss = errno_, msg, offs, miss


class Spec:
    """Numbers and types from the YAML spec."""

    def __init__(self, path=SPEC):
        # libyaml's parser where there is one: ten times the pure-Python
        # one's speed, which a TCG guest feels on every Genl()
        with open(path, encoding="utf-8") as f:
            self.y = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        self.sets = {s["name"]: {a["name"]: a for a in s["attributes"]}
                     for s in self.y["attribute-sets"]}
        self.ops = {o["name"]: o for o in self.y["operations"]["list"]}
        self.cmd_names = {o["value"]: o["name"] for o in self.y["operations"]["list"]}
        self.enums = {d["name"]: d["entries"] for d in self.y["definitions"]}

    def aid(self, aset, name):
        return self.sets[aset][name]["value"]

    def encode(self, aset, name, value):
        a = self.sets[aset][name]
        t = a["type"]
        if "enum" in a and isinstance(value, str):
            value = self.enums[a["enum"]].index(value)
        if t == "u8":
            p = struct.pack("=B", value)
        elif t == "u16":
            p = struct.pack("=H", value)
        elif t == "u32":
            p = struct.pack("=I", value)
        elif t == "u64":
            p = struct.pack("=Q", value)
        elif t == "string":
            p = value.encode() + b"\0"
        elif t == "flag":
            p = b""
        else:
            p = bytes(value)
        return attr(a["value"], p)

    def decode(self, aset, data):
        """A dict of a message's attributes; multi-attrs as lists."""
        out = {}
        by_id = {a["value"]: a for a in self.sets[aset].values()}
        for t, p in parse_attrs(data):
            a = by_id.get(t)
            if a is None:
                out.setdefault("unknown", []).append(t)
                continue
            typ = a["type"]
            if typ in ("u8", "u16", "u32", "u64"):
                v = int.from_bytes(p, "little")
            elif typ == "string":
                v = p.split(b"\0", 1)[0].decode()
            elif typ == "flag":
                v = True
            elif typ == "nest":
                v = self.decode(a["nested-attributes"], p)
            elif typ == "pad":
                continue
            else:
                v = p
            if a.get("multi-attr"):
                out.setdefault(a["name"], []).append(v)
            else:
                out[a["name"]] = v
        return out


class Genl:
    """A socket of the hbmpool family."""

    def __init__(self, family="hbmpool", spec=None):
        self.spec = spec or Spec()
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((0, 0))
        self.seq = 1
        self.family_id, self.groups = self._resolve(family)

    def close(self):
        self.sock.close()

    def _resolve(self, family):
        msgs = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                            attr(CTRL_ATTR_FAMILY_NAME, family.encode() + b"\0"), version=1)
        fid, groups = None, {}
        for _, _, payload in msgs:
            for t, p in parse_attrs(payload):
                if t == CTRL_ATTR_FAMILY_ID:
                    fid = struct.unpack("=H", p)[0]
                elif t == CTRL_ATTR_MCAST_GROUPS:
                    for _, g in parse_attrs(p):
                        d = dict(parse_attrs(g))
                        groups[d[CTRL_ATTR_MCAST_GRP_NAME].split(b"\0")[0].decode()] = \
                            struct.unpack("=I", d[CTRL_ATTR_MCAST_GRP_ID])[0]
        return fid, groups

    def subscribe(self, group="monitor"):
        # room for bursts of events (root may exceed rmem_max)
        SO_RCVBUFFORCE = 33
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        except PermissionError:
            pass
        self.sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, self.groups[group])

    def send_raw(self, nlmsg_type, flags, body):
        self.seq += 1
        msg = struct.pack("=IHHII", 16 + len(body), nlmsg_type, flags, self.seq, 0) + body
        self.sock.send(msg)
        return self.seq

    def recv(self):
        """[(nlmsg_flags, cmd, payload)] up to the ack or DONE; raises NlError."""
        out = []
        while True:
            data = self.sock.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                n, typ, flags, seq, _ = struct.unpack_from("=IHHII", data, off)
                body = data[off + 16:off + n]
                off += (n + 3) & ~3
                if seq != self.seq:
                    continue	# an event or a stale reply
                if typ == NLMSG_ERROR:
                    err = -struct.unpack_from("=i", body)[0]
                    if not err:
                        return out
                    msg, offs, miss = "", None, None
                    # CAP_ACK: error, then the request's header; then TLVs
                    for t, p in parse_attrs(body[4 + 16:]):
                        if t == NLMSGERR_ATTR_MSG:
                            msg = p.split(b"\0", 1)[0].decode()
                        elif t == NLMSGERR_ATTR_OFFS:
                            offs = struct.unpack("=I", p)[0]
                        elif t == NLMSGERR_ATTR_MISS_TYPE:
                            miss = struct.unpack("=I", p)[0]
                    raise NlError(err, msg, offs, miss)
                if typ == NLMSG_DONE:
                    out.append((flags, None, b""))
                    return out
                out.append((flags, body[0], body[4:]))

    def request(self, family, cmd, attrs=b"", dump=False, version=1):
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
        self.send_raw(family, flags, struct.pack("=BBH", cmd, version, 0) + attrs)
        return self.recv()

    def raw(self, cmd, attrs=b"", dump=False):
        """A request of the family with attributes already packed."""
        return self.request(self.family_id, self.spec.ops[cmd]["value"], attrs, dump)

    def do(self, cmd, **kw):
        """A do with attributes by spec name (underscores for dashes)."""
        op = self.spec.ops[cmd]
        aset = op["attribute-set"]
        a = b"".join(self.spec.encode(aset, k.replace("_", "-"), v) for k, v in kw.items())
        msgs = self.raw(cmd, a)
        return self.spec.decode(aset, msgs[0][2]) if msgs else None

    def dump(self, cmd, intr=None, **kw):
        """Every message of a dump, decoded; intr (a list) gets DUMP_INTR flags."""
        op = self.spec.ops[cmd]
        aset = op["attribute-set"]
        a = b"".join(self.spec.encode(aset, k.replace("_", "-"), v) for k, v in kw.items())
        out = []
        for flags, c, payload in self.raw(cmd, a, dump=True):
            if intr is not None and flags & NLM_F_DUMP_INTR:
                intr.append(True)
            if c is not None:
                out.append(self.spec.decode(aset, payload))
        return out

    def events(self, timeout=0.0):
        """Events waiting on a subscribed socket: [(cmd name, attrs)]."""
        out = []
        self.sock.settimeout(timeout)
        try:
            while True:
                data = self.sock.recv(1 << 20)
                off = 0
                while off + 16 <= len(data):
                    n, typ, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                    body = data[off + 16:off + n]
                    off += (n + 3) & ~3
                    if typ != self.family_id or seq:
                        continue
                    name = self.spec.cmd_names[body[0]]
                    aset = self.spec.ops[self.spec.ops[name]["notify"]]["attribute-set"]
                    out.append((name, self.spec.decode(aset, body[4:])))
        except (socket.timeout, BlockingIOError):
            pass
        finally:
            self.sock.settimeout(None)
        return out


class Tap:
    """TAP output of a test program: numbered results, a plan and totals."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, good, name, why=""):
        self.n += 1
        if not good:
            self.failed += 1
        print(f"{'ok' if good else 'not ok'} {self.n} {name}{'' if good else ' # ' + why}",
              flush=True)

    def finish(self):
        """Prints the plan and the totals; the exit status."""
        print(f"1..{self.n}")
        print(f"# Totals: pass:{self.n - self.failed} fail:{self.failed} "
              "xfail:0 xpass:0 skip:0 error:0")
        return 1 if self.failed else 0


def skip_reason():
    """Why a test of the family cannot run here, or None."""
    if os.geteuid():
        return "needs root"
    if not os.path.isdir("/sys/kernel/hbmpool"):
        return "hbmpool.ko is not loaded"
    return None
