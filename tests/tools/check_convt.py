#!/usr/bin/env python3
"""check_templates.py for convolution problems: renders every applicable idea
and runs the launch check and NVRTC compile through check_templates.py
(--no-emulate), then emulates each rendered kernel with emulate_convt.py
(small spatial extents; the stock emulator keeps conv extents at full size).

usage: check_convt.py BUILD ROOT WORK [--impls M] [--seed S] [--every K] [--no-nvrtc] NUMBER...
Prints one line per kernel and "N kernels, N failed"; exit 1 if any failed."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = sys.argv[1:]
    opts = {"--impls": "2", "--seed": "1", "--every": "1"}
    nvrtc, rest, i = True, [], 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i] == "--no-nvrtc":
            nvrtc = False
            i += 1
        else:
            rest.append(args[i])
            i += 1
    build, root, work = rest[:3]
    nums = [int(x) for x in rest[3:]]
    cmd = [sys.executable, os.path.join(HERE, "check_templates.py"), build, root, work,
           "--impls", opts["--impls"], "--seed", opts["--seed"], "--no-emulate"]
    if not nvrtc:
        cmd.append("--no-nvrtc")
    total = failed = 0
    for num in nums:
        r = subprocess.run(cmd + [str(num)], capture_output=True, text=True)
        lines = [l for l in r.stdout.split("\n") if l.startswith(("ok ", "not ok ", "# "))]
        k = 0
        for line in lines:
            if line.startswith("# "):
                print(line)
                continue
            total += 1
            name = line.split()[2] if line.startswith("not ok") else line.split()[1]
            if line.startswith("not ok"):
                failed += 1
                print(line)
                continue
            k += 1
            if (k - 1) % int(opts["--every"]):
                print(line)
                continue
            f = os.path.join(work, "%03d" % num, name)
            e = subprocess.run([sys.executable, os.path.join(HERE, "emulate_convt.py"),
                                os.path.join(build, "kforge"), root, os.path.join(work, "emu"),
                                f, str(num)], capture_output=True, text=True)
            out = (e.stdout.strip().split("\n") or [""])[-1]
            if e.returncode or not out.startswith("ok"):
                failed += 1
                print("not ok %s emulate: %s" % (name, out or e.stderr.strip()[-300:]))
            else:
                print("ok %s" % name)
        sys.stdout.flush()
    print("%d kernels, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
