#!/usr/bin/env python3
"""Checks the placeholders of kernels/cuda/*.cuh against the C calls that fill
them (tests/t0924): each bt_cuh_fill(s, NAME_cuh, "section", "KEY", value, ...,
NULL) in kernels/ gives exactly the section's @KEY@ placeholders, and each
bt_cuh_section call names a section without any. Prints one line per
mismatch; exits 1 if there is one.  usage: cuh_keys.py ROOT"""
import glob
import re
import sys

LIT = r'"(?:[^"\\]|\\.)*"'


def args_of(s, i):
    """The top-level arguments of the call whose '(' is at s[i - 1]."""
    out, cur, depth = [], "", 1
    while True:
        m = re.match(LIT, s[i:])
        if m:
            cur += m.group(0)
            i += len(m.group(0))
            continue
        c = s[i]
        i += 1
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                out.append(cur.strip())
                return out
        if c == "," and depth == 1:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c


def main(root):
    sections = {}
    for f in glob.glob(root + "/kernels/cuda/*.cuh"):
        name = f.rsplit("/", 1)[1][:-4]
        parts = re.split(r"^//@ (\S+)\n", open(f).read(), flags=re.M)
        for i in range(1, len(parts), 2):
            sections[(name, parts[i])] = set(re.findall(r"@([A-Z][A-Z0-9_]*)@", parts[i + 1]))
    bad = 0
    for f in sorted(glob.glob(root + "/kernels/**/*.c", recursive=True)):
        s = open(f).read()
        for m in re.finditer(r"\bbt_cuh_(section|fill)\(", s):
            a = args_of(s, m.end())
            if len(a) < 3 or not re.fullmatch(r"\w+_cuh", a[1]):
                continue  # the definitions in kernels/builtin_util.c
            key = (a[1][:-4], a[2].strip('"'))
            where = "%s:%d" % (f[len(root) + 1:], s.count("\n", 0, m.start()) + 1)
            if key not in sections:
                print("%s: no section %s in kernels/cuda/%s.cuh" % (where, key[1], key[0]))
                bad = 1
                continue
            given = set()
            if m.group(1) == "fill":
                if a[-1] != "NULL" or len(a) % 2:
                    print("%s: the values are not KEY, value pairs ending in NULL" % where)
                    bad = 1
                    continue
                given = {k.strip('"') for k in a[3:-1:2]}
            if given != sections[key]:
                print("%s: %s gives %s, the section has %s" % (where, key[1], sorted(given),
                                                              sorted(sections[key])))
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
