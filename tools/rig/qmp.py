#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send one QMP command to a rig VM and print the reply as JSON.

usage: qmp.py VM|SOCKET COMMAND [KEY=VALUE ...]

VM is a rig VM id (socket $RIG_BUILD/out-VM/qmp.sock, RIG_BUILD defaults to
<repo>/build/rig) or a path to a QMP unix socket.  VALUE is parsed as JSON
when it can be (true, 3, {"a": 1}), else taken as a string.

Examples:
  qmp.py 0 query-status
  qmp.py 1 set_link name=nic0 up=false      # cut the link of VM 1's first NIC
  qmp.py 1 stop ; qmp.py 1 cont             # freeze / thaw a node
  qmp.py 1 quit                             # kill it

Exit status: 0 on a "return" reply, 1 on an "error" reply, 2 on usage or
connection errors.
"""

import json
import os
import socket
import sys


def sock_path(target):
    if "/" in target or target.endswith(".sock"):
        return target
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build = os.environ.get("RIG_BUILD", os.path.join(repo, "build", "rig"))
    return os.path.join(build, "out-" + target, "qmp.sock")


class QMP:
    def __init__(self, path, timeout=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.recv()  # greeting
        self.execute("qmp_capabilities")

    def recv(self):
        """Return the next message that is not an asynchronous event."""
        while True:
            while b"\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError("QMP socket closed")
                self.buf += data
            line, self.buf = self.buf.split(b"\n", 1)
            if not line.strip():
                continue
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def execute(self, cmd, args=None):
        req = {"execute": cmd}
        if args:
            req["arguments"] = args
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        try:
            return self.recv()
        except ConnectionError:
            if cmd == "quit":  # QEMU may close before it answers
                return {"return": {}}
            raise


def parse_value(v):
    try:
        return json.loads(v)
    except ValueError:
        return v


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    args = {}
    for kv in argv[3:]:
        if "=" not in kv:
            sys.stderr.write("qmp.py: argument %r is not KEY=VALUE\n" % kv)
            return 2
        k, v = kv.split("=", 1)
        args[k] = parse_value(v)
    # vm.sh makes qmp.sock a symlink when the real path would be too long.
    path = os.path.realpath(sock_path(argv[1]))
    try:
        reply = QMP(path).execute(argv[2], args)
    except (OSError, ConnectionError, ValueError) as e:
        sys.stderr.write("qmp.py: %s: %s\n" % (path, e))
        return 2
    print(json.dumps(reply))
    return 0 if "return" in reply else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
