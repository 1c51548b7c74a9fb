#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Checks that the hbmpool netlink spec (the source of truth), the uapi header
and, with --kernel, the running kernel agree.

  check-spec.py --spec SPEC --header HDR
      every command, attribute and enum of the spec is in the header with
      the same value, and the header has nothing the spec lacks;
  check-spec.py ... --kernel --ynl DIR
      also asks the kernel (through the ynl library of DIR, the kernel's own
      tools/net/ynl, and its nlctrl spec) for the family's operations
      (CTRL_CMD_GETFAMILY) and policies (CTRL_CMD_GETPOLICY), and compares
      them with the spec: the same operations with the same admin-perm
      flag, do/dump support, and for every request attribute its type and
      range.

Prints what differs; exits 1 if anything does, 0 otherwise.
"""
import argparse
import os
import re
import sys

import yaml

errors = []


def err(msg):
    errors.append(msg)
    print(f"check-spec: {msg}")


def cname(*parts):
    return "_".join(p.upper().replace("-", "_") for p in parts)


def spec_constants(spec):
    """The uapi constants the spec defines: name -> value."""
    prefix = cname(spec["name"])
    out = {}
    for d in spec.get("definitions", []):
        if d["type"] != "enum":
            continue
        start = d.get("value-start", 0)
        for i, e in enumerate(d["entries"]):
            name = e if isinstance(e, str) else e["name"]
            out[cname(prefix, d["name"], name)] = start + i
    for aset in spec["attribute-sets"]:
        for a in aset["attributes"]:
            out[cname(prefix, "a", aset["name"], a["name"])] = a["value"]
    for op in spec["operations"]["list"]:
        out[cname(prefix, "cmd", op["name"])] = op["value"]
    return out


def header_constants(path):
    """NAME = value constants of the header, without the __MAX/_MAX helpers."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for m in re.finditer(r"\b(HBMPOOL_[A-Z0-9_]+)\s*=\s*(\d+)\s*,", f.read()):
            if not m.group(1).endswith("_MAX"):
                out[m.group(1)] = int(m.group(2))
    return out


def check_header(spec, header):
    want = spec_constants(spec)
    have = header_constants(header)
    for name, value in sorted(want.items()):
        if name not in have:
            err(f"{header}: {name} (= {value} in the spec) is missing")
        elif have[name] != value:
            err(f"{header}: {name} is {have[name]}, the spec says {value}")
    for name in sorted(set(have) - set(want)):
        err(f"{header}: {name} is not in the spec")


# spec attribute type -> the kernel policy's type as nlctrl reports it
POLICY_TYPE = {
    "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64",
    "s8": "s8", "s16": "s16", "s32": "s32", "s64": "s64",
    "string": "nul-string", "binary": "binary", "flag": "flag",
    "nest": "nested",
}


def check_kernel(spec, ynl_dir):
    sys.path.insert(0, os.path.join(ynl_dir, "tools", "net", "ynl"))
    from lib import YnlFamily, NlError  # noqa: E402 (the kernel's ynl)

    nlctrl = YnlFamily(os.path.join(ynl_dir, "Documentation/netlink/specs/nlctrl.yaml"),
                       os.path.join(ynl_dir, "Documentation/netlink/genetlink-legacy.yaml"))
    try:
        fam = nlctrl.do("getfamily", {"family-name": spec["name"]})
        pol = nlctrl.dump("getpolicy", {"family-name": spec["name"]})
    except NlError as e:
        err(f"the kernel has no family {spec['name']}: {e}")
        return

    kops = {}
    for entry in fam.get("ops", []):
        for op in entry.values():
            kops[op["id"]] = op.get("flags", set())
    op_policy = {}
    policies = {}
    for p in pol:
        if "op-policy" in p:
            op_policy[p["op-policy"]["op-id"]] = p["op-policy"]
        if "policy" in p:
            policies.setdefault(p["policy"]["policy-id"], {})[p["policy"]["attr-id"]] = p["policy"]

    sets = {s["name"]: {a["name"]: a for a in s["attributes"]} for s in spec["attribute-sets"]}
    # notifications are messages the kernel sends, not operations it has
    sops = {op["value"]: op for op in spec["operations"]["list"]
            if "notify" not in op and "event" not in op}
    kgroups = set()
    for entry in fam.get("mcast-groups", []):
        for g in entry.values():
            kgroups.add(g["name"])
    sgroups = {g["name"] for g in spec.get("mcast-groups", {}).get("list", [])}
    if kgroups != sgroups:
        err(f"multicast groups: {sorted(sgroups)} in the spec, {sorted(kgroups)} in the kernel")
    for oid in sorted(set(kops) - set(sops)):
        err(f"kernel op {oid} is not in the spec")
    for oid, op in sorted(sops.items()):
        name = op["name"]
        if oid not in kops:
            err(f"{name} ({oid}): not in the kernel")
            continue
        flags = kops[oid]
        admin = "admin-perm" in op.get("flags", [])
        if admin != ("admin-perm" in flags):
            err(f"{name}: admin-perm is {admin} in the spec, {not admin} in the kernel")
        for mode in ("do", "dump"):
            if (mode in op) != (f"cmd-cap-{mode}" in flags):
                err(f"{name}: {mode} is {'in' if mode in op else 'not in'} the spec"
                    f" but {'not ' if mode in op else ''}in the kernel")
        request = op.get("do", {}).get("request", {}).get("attributes", [])
        pidx = op_policy.get(oid, {}).get("do")
        kattrs = policies.get(pidx, {}) if pidx is not None else {}
        aset = sets[op["attribute-set"]]
        want_ids = {aset[a]["value"]: a for a in request}
        for aid in sorted(set(kattrs) - set(want_ids)):
            err(f"{name}: the kernel accepts attribute {aid}, the spec does not")
        for aid, aname in sorted(want_ids.items()):
            if aid not in kattrs:
                err(f"{name}: the kernel has no policy for {aname} ({aid})")
                continue
            k = kattrs[aid]
            a = aset[aname]
            if POLICY_TYPE.get(a["type"]) != k.get("type"):
                err(f"{name}.{aname}: type {a['type']} in the spec, {k.get('type')} in the kernel")
            checks = a.get("checks", {})
            if "max" in checks or "min" in checks:
                lo, hi = checks.get("min", 0), checks.get("max")
                if k.get("min-value-u", k.get("min-value-s")) != lo:
                    err(f"{name}.{aname}: min {lo} in the spec, {k.get('min-value-u')} in the kernel")
                if hi is not None and k.get("max-value-u", k.get("max-value-s")) != hi:
                    err(f"{name}.{aname}: max {hi} in the spec, {k.get('max-value-u')} in the kernel")


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--kernel", action="store_true")
    ap.add_argument("--ynl", help="directory with tools/net/ynl and Documentation/netlink")
    args = ap.parse_args()
    with open(args.spec, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    check_header(spec, args.header)
    if args.kernel:
        if not args.ynl:
            ap.error("--kernel needs --ynl")
        check_kernel(spec, args.ynl)
    if errors:
        print(f"check-spec: {len(errors)} difference(s)")
        return 1
    print("check-spec: spec, header" + (" and kernel" if args.kernel else "") + " agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
