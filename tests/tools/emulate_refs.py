#!/usr/bin/env python3
"""Runs problems' reference.cu on the host at small sizes and compares every
output element with kforge's CPU oracle. CUDA is emulated: a block's threads
are fibers run round-robin (ucontext), __syncthreads a barrier over them,
warp shuffles go through shared memory. It checks the references' indexing and launch blocks without a GPU.

usage: emulate_refs.py KFORGE ROOT WORKDIR [--cand FILE NUMBER | NUMBER...]
       emulate_refs.py --jobs LIST [-j N] KFORGE
  --cand FILE: emulate that candidate file (same format) instead of reference.cu
  --jobs LIST: LIST holds NUL-separated records DIR ROOT NUMBER FILE, each
    run as "KFORGE ROOT DIR --cand FILE NUMBER" would, N at a time in this
    one Python (tests/lib.sh emulate_jobs), its last line written to DIR.res
Exit 0 when every emulated problem matches at the spec's tolerance."""
import hashlib
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runcache  # noqa: E402

# Small sizes that keep each problem's structure (groups divide channels,
# rows longer than a 256-thread block, several blocks...).
SMALL = {"batch_size": 3, "dim": 300, "features": 4, "num_groups": 2, "dim1": 5, "dim2": 7,
         "length": 40, "num_classes": 20, "M": 5, "N": 7, "num_heads": 2,
         "sequence_length": 9, "embedding_dimension": 40}

HERE = os.path.dirname(os.path.abspath(__file__))


def shim():
    """emulate_shim.h, then every emulate_shim_*.h (extensions per family)."""
    parts = [open(os.path.join(HERE, "emulate_shim.h")).read()]
    for f in sorted(os.listdir(HERE)):
        if f.startswith("emulate_shim_") and f.endswith(".h"):
            parts.append(open(os.path.join(HERE, f)).read())
    return "\n".join(parts)

CXX = ["c++", "-std=c++17", "-O1", "-w"]


def shim_header(work):
    """The shim as a header with its precompiled form beside it (pass it to
    -include), built once: in KF_EMU_CACHE (tests/lib.sh: one per build
    tree) when set, else in WORK. Named after a hash of the shim and CXX, so
    an edited shim gets a fresh one; c++ ignores a .gch of another compiler
    and reads the header. Written under temporary names and renamed, so
    parallel jobs never see a partial file."""
    text = shim()
    key = hashlib.sha256(("\0".join(CXX) + "\0" + text).encode()).hexdigest()[:16]
    d = os.environ.get("KF_EMU_CACHE") or work
    os.makedirs(d, exist_ok=True)
    h = os.path.join(d, "kfshim-%s.h" % key)
    if os.path.exists(h + ".gch"):
        return h
    tmp = "%s.%d.tmp" % (h, os.getpid())
    if not os.path.exists(h):
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, h)
    subprocess.run(CXX + ["-x", "c++-header", h, "-o", tmp], check=True)
    os.replace(tmp, h + ".gch")
    return h


def host_smem(src):
    """src with each kernel's dynamic shared memory (extern __shared__ T
    name[]) the shim's per-block buffer."""
    return re.sub(r"extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];", r"\1 *\2 = (\1 *)kf_dyn_smem;", src)


def cxx_id():
    """The compiler behind CXX: its file, size and time (part of a kept
    program's key)."""
    import shutil
    p = os.path.realpath(shutil.which(CXX[0]) or CXX[0])
    try:
        st = os.stat(p)
        return "%s %d %d" % (p, st.st_size, int(st.st_mtime))
    except OSError:
        return p


def exe_cache_dir():
    """KF_EMU_EXE_CACHE (tests/lib.sh: a persistent folder outside the
    clone), or None: every program compiled."""
    d = os.environ.get("KF_EMU_EXE_CACHE")
    if not d:
        return None
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d


def compile_exe(work, tag, text):
    """WORK/TAG.cpp (text with the shim) as a program: (path, argv after it,
    None) or (None, None, the compiler's error). The file paths in main()'s
    string literals become its arguments, so a program of the same text
    elsewhere is the same program: with KF_EMU_EXE_CACHE it is kept there,
    named after a hash of the text, the shim, CXX and the compiler, and
    reused (c++ is most of an emulation's time). A program calling the fp64
    tensor-core helpers gets emulate_dmma.h at its head (in its text, so
    the shim and every other program's key stay as they were)."""
    paths = []
    at = text.rfind("int main() {")
    if at >= 0:
        def arg(m):
            paths.append(m.group(1))
            return "kf_argv[%d]" % (len(paths) - 1)
        body = re.sub(r'"([^"\n]*\.(?:npy|bin))"', arg, text[at:])
        body = body.replace("int main() {", "int main(int kf_argc, char **kf_args) {\n  kf_argv = kf_args + 1;", 1)
        text = text[:at] + "static char **kf_argv;\n" + body
    if "gf64_dmma" in text:
        with open(os.path.join(HERE, "emulate_dmma.h")) as f:
            text = f.read() + text
    cpp, exe = os.path.join(work, tag + ".cpp"), os.path.join(work, tag + ".exe")
    with open(cpp, "w") as f:
        f.write(text)
    shim_h = shim_header(work)
    cache = exe_cache_dir()
    kept = None
    if cache:
        key = hashlib.sha256(("\0".join(CXX + [cxx_id(), os.path.basename(shim_h), text])).encode()).hexdigest()
        kept = os.path.join(cache, key[:40] + ".exe")
        if os.path.exists(kept):
            try:
                os.utime(kept)  # recently used: kept by the pruning
            except OSError:
                pass
            return kept, paths, None
    c = subprocess.run(CXX + ["-include", shim_h, "-o", exe, cpp], capture_output=True, text=True)
    if c.returncode:
        return None, None, c.stderr
    if kept:
        tmp = "%s.%d.tmp" % (kept, os.getpid())
        try:
            import shutil
            shutil.copyfile(exe, tmp)
            os.chmod(tmp, 0o755)
            os.replace(tmp, kept)
        except OSError:
            pass
    return exe, paths, None


def build_run(work, tag, text):
    """Compiles WORK/TAG.cpp (text, with the shim) and runs it: None, or
    what failed ("c++: ..." or "emulated run failed: ...")."""
    exe, args, err = compile_exe(work, tag, text)
    if err is not None:
        return "c++: " + err[-600:]
    x = subprocess.run([exe] + args, capture_output=True, text=True)
    if x.returncode:
        return "emulated run failed: %s" % x.stderr[-300:]
    return None


def problem_bases(root, level, only):
    """The problem directories' names of ROOT/problems/levelN, those numbered
    in only (all when empty)."""
    return [b for b in sorted(os.listdir(os.path.join(root, "problems", "level%d" % level)))
            if not only or int(b.split("_")[0]) in only]


DSZ = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "bool": 1}
CTYPES = {"float": 4, "double": 8, "int": 4, "unsigned": 4, "long long": 8,
          "unsigned long long": 8, "half": 2, "char": 1, "unsigned char": 1}


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def ev(expr, sizes):
    env = dict(sizes)
    env.update(ceil_div=lambda a, b: -(-a // b), min=min, max=max, dim3=lambda *a: tuple(a))
    return eval(re.sub(r"(?<![/])/(?![/])", "//", expr), {"__builtins__": {}}, env)


def dim(v):
    v = v if isinstance(v, tuple) else (v,)
    v = tuple(v) + (1,) * (3 - len(v))
    return "kf_dim3{%du, %du, %du}" % v


def block_statements(block):
    """The launch block (comments removed) as ("stmt", text), ("for", var, init, cmp,
    bound, step) and ("end",) items, in order (docs/formats.md, loops)."""
    out, i, n = [], 0, len(block)
    while True:
        while i < n and block[i].isspace():
            i += 1
        if i >= n:
            return out
        if block[i] == "}":
            out.append(("end",))
            i += 1
            continue
        m = re.match(r"for\s*\(", block[i:])
        if m:
            j, depth = i + m.end(), 1
            while depth:
                depth += {"(": 1, ")": -1}.get(block[j], 0)
                j += 1
            head = split_top(block[i + m.end():j - 1].replace(";", ","))
            mi = re.fullmatch(r"int\s+(\w+)\s*=\s*(.+)", head[0], re.S)
            mc = re.fullmatch(r"(\w+)\s*(<=|>=|<|>)\s*(.+)", head[1], re.S)
            v = mi.group(1)
            inc = head[2].replace(" ", "")
            if inc in ("++" + v, v + "++"):
                step = "1"
            elif inc in ("--" + v, v + "--"):
                step = "-1"
            else:
                ms = re.fullmatch(re.escape(v) + r"([+-])=(.+)", inc, re.S)
                step = ("-(%s)" if ms.group(1) == "-" else "(%s)") % ms.group(2)
            k = block.index("{", j)
            out.append(("for", v, mi.group(2), mc.group(2), mc.group(3), step))
            i = k + 1
            continue
        j, depth = i, 0
        while j < n and (block[j] != ";" or depth):
            depth += {"(": 1, ")": -1}.get(block[j], 0)
            j += 1
        out.append(("stmt", block[i:j].strip()))
        i = j + 1


def cexpr(expr, sizes, loop_vars):
    """An integer expression as C++ (sizes as constants, loop variables as they are)."""
    def name(m):
        w = m.group(0)
        if w in loop_vars:
            return w
        if w in ("ceil_div", "min", "max"):
            return "kf_e_" + w
        if w in sizes:
            return "(%dLL)" % sizes[w]
        raise ValueError("unknown name %r in %r" % (w, expr))
    return "(" + re.sub(r"\b[A-Za-z_]\w*\b", name, expr) + ")"


def uses(expr, loop_vars):
    return any(re.search(r"\b%s\b" % re.escape(v), expr) for v in loop_vars)


def launch_cpp(block, spec, sizes, names, esize, float_args=True):
    """C++ lines of main() that run a launch block on the emulator: scratch
    buffers allocated (names and esize get them), launches in order, loops as C++
    loops. names: tensor -> C variable; esize: name -> element bytes."""
    lines, loops = [], []
    for item in block_statements(block):
        ind = "  " * (len(loops) + 1)
        if item[0] == "for":
            _, v, init, cmp, bound, step = item
            lines.append("%sfor (long long %s = %s; %s %s %s; %s += %s) {" % (
                ind, v, cexpr(init, sizes, loops), v, cmp, cexpr(bound, sizes, loops + [v]),
                v, cexpr(step, sizes, loops + [v])))
            loops.append(v)
            continue
        if item[0] == "end":
            loops.pop()
            lines.append("  " * (len(loops) + 1) + "}")
            continue
        stmt = item[1]
        m = re.fullmatch(r"scratch\s+(zeroed\s+)?(.+?)\s+(\w+)\s*\[(.+)\]", stmt, re.S)
        if m:
            nb = ev(m.group(4), sizes) * CTYPES[m.group(2).strip()]
            lines.append("%svoid *s_%s = malloc(%d); memset(s_%s, %s, %d);" %
                         (ind, m.group(3), nb, m.group(3), "0" if m.group(1) else "0xFF", nb))
            names[m.group(3)] = "s_" + m.group(3)
            esize[m.group(3)] = CTYPES[m.group(2).strip()]
            continue
        m = re.fullmatch(r"(\w+)\s*<<<(.+?)>>>\s*\((.*)\)", stmt, re.S)
        if not m:
            raise ValueError("cannot read launch statement %r" % stmt)
        cfg = split_top(m.group(2))
        if len(cfg) > 2 and not uses(cfg[2], loops):
            assert ev(cfg[2], sizes) <= 1 << 20
        args = []
        for a in split_top(m.group(3)):
            mo = re.fullmatch(r"(\w+)\s*\+\s*(.+)", a, re.S)
            if a in names:
                args.append("AnyPtr{%s}" % names[a])
            elif mo and mo.group(1) in names:
                args.append("AnyPtr{(char *)%s + %s * %d}" % (names[mo.group(1)],
                            cexpr(mo.group(2), sizes, loops), esize[mo.group(1)]))
            elif a in spec.get("scalars", {}):
                args.append(repr(float(spec["scalars"][a])))
            elif float_args and re.fullmatch(r"[0-9.]+([eE][-+]?[0-9]+)?f?", a) and re.search(r"[.eE]", a):
                args.append(a.rstrip("f"))
            elif uses(a, loops):
                args.append("(long long)%s" % cexpr(a, sizes, loops))
            else:
                args.append("(long long)%dLL" % ev(a, sizes))
        cfgs = []
        for c in cfg[:2]:
            if not uses(c, loops):
                cfgs.append(dim(ev(c, sizes)))
                continue
            md = re.fullmatch(r"dim3\s*\((.*)\)", c.strip(), re.S)
            parts = [cexpr(x, sizes, loops) for x in (split_top(md.group(1)) if md else [c])]
            parts += ["1"] * (3 - len(parts))
            cfgs.append("kf_dim3{(unsigned)%s, (unsigned)%s, (unsigned)%s}" % tuple(parts))
        lines.append("%skf_launch(%s, %s, [&] { %s(%s); });" % (ind, cfgs[0], cfgs[1], m.group(1),
                                                              ", ".join(args)))
    if loops:
        raise ValueError("unterminated loop over %s" % loops[-1])
    return lines


def emu_sizes(spec):
    """The sizes a problem of SPEC (its spec.json, loaded) is emulated at."""
    # KF_EMU_SIZES='{"N": 130}': sizes in place of SMALL's (whole tiles and edges)
    small = dict(SMALL, **json.loads(os.environ.get("KF_EMU_SIZES", "{}")))
    sizes = {k: small.get(k, v) for k, v in spec["sizes"].items()}
    # KF_EMU_CAP=N: every other size capped at N too (for families whose sizes are
    # independent: matmul, elementwise, reductions).
    cap = int(os.environ.get("KF_EMU_CAP", "0"))
    if cap > 0:
        sizes = {k: (v if k in small else min(v, cap)) for k, v in sizes.items()}
    if spec["number"] == 100:  # targets (batch_size,) broadcast along dim: keep them equal
        sizes["batch_size"] = sizes["dim"] = 40
    return sizes


def emulate(kforge, root, work, d, cand=None):
    spec = json.load(open(os.path.join(d, "spec.json")))
    base = os.path.basename(d)
    sizes = emu_sizes(spec)
    spec["sizes"] = sizes
    for t in spec["inputs"]:  # class indices stay below the smaller class count
        if t["dist"]["kind"] == "randint" and "num_classes" in sizes:
            t["dist"]["high"] = min(t["dist"]["high"], sizes["num_classes"])
    pdir = os.path.join(work, "root", "problems", "level1", base)
    os.makedirs(pdir, exist_ok=True)
    os.makedirs(os.path.join(work, "root", "templates"), exist_ok=True)
    json.dump(spec, open(os.path.join(pdir, "spec.json"), "w"))
    open(os.path.join(pdir, "reference.py"), "w").write("class Model: pass\n")
    src = open(os.path.join(d, "reference.cu")).read()
    open(os.path.join(pdir, "reference.cu"), "w").write(src)
    if cand:  # a candidate file in place of the reference
        src = open(cand).read()
    out = os.path.join(work, base)
    env = dict(os.environ, KFORGE_ROOT=os.path.join(work, "root"))
    # the draw and the oracle's sample: once a run for this problem folder
    # (tests/tools/runcache.py), however many candidates are emulated on it
    runcache.problem_inputs([kforge, "problems", "inputs", base, "--out", out, "--seed", "5",
                             "--samples", "100000"], pdir, env=env, check=True, capture_output=True)

    def numel(t):
        n = 1
        for x in t["shape"]:
            n *= sizes[x] if isinstance(x, str) else x
        return n

    code = host_smem(src)
    block = src[src.index("/*@launch") + len("/*@launch"):src.index("@*/")]
    block = "\n".join(l.split("//")[0] for l in block.splitlines())
    main = ["int main() {"]
    names = {}
    for t in spec["inputs"]:
        main.append('  void *%s = kf_load("%s/inputs/%s.npy", %d);' %
                    ("b_" + t["name"], out, t["name"], numel(t) * DSZ[t["dtype"]]))
        names[t["name"]] = "b_" + t["name"]
    for t in spec["outputs"]:
        nb = numel(t) * DSZ[t["dtype"]]
        main.append("  void *b_%s = malloc(%d); memset(b_%s, 0xEE, %d);" % (t["name"], nb, t["name"], nb))
        names[t["name"]] = "b_" + t["name"]
    esize = {t["name"]: DSZ[t["dtype"]] for t in spec["inputs"] + spec["outputs"]}
    main += launch_cpp(block, spec, sizes, names, esize)
    for t in spec["outputs"]:
        main.append('  { FILE *f = fopen("%s/%s.bin", "wb"); fwrite(b_%s, 1, %d, f); fclose(f); }' %
                    (out, t["name"], t["name"], numel(t) * DSZ[t["dtype"]]))
    main.append("  return 0;\n}")
    exe, args, err = compile_exe(work, base, code + "\n" + "\n".join(main) + "\n")
    if err is not None:
        raise RuntimeError("c++: " + err[-600:])
    subprocess.run([exe] + args, check=True)
    tol = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2, "exact": 0.0}[spec["tolerance"]]
    import struct
    report = []
    ok = True
    for t in spec["outputs"]:
        raw = open(os.path.join(out, t["name"] + ".bin"), "rb").read()
        fmt = {"float32": "f", "int64": "q", "int32": "i"}[t["dtype"]]
        got = struct.unpack("<%d%s" % (numel(t), fmt), raw)
        orc = json.load(open(os.path.join(out, "oracle", t["name"] + ".json")))
        bad, max_rel, max_abs = 0, 0.0, 0.0
        for i, want in zip(orc["index"], orc["value"]):
            dd = abs(got[i] - want)
            max_abs = max(max_abs, dd)
            if want:
                max_rel = max(max_rel, dd / abs(want))
            if not dd <= tol + tol * abs(want):
                bad += 1
        ok = ok and bad == 0 and len(orc["index"]) == numel(t)
        report.append("%s: %d elements, %d bad, max abs err %.2g, max rel err %.2g" %
                      (t["name"], numel(t), bad, max_abs, max_rel))
    return ok, "; ".join(report)


def cand_line(kforge, root, work, cand, num):
    """The line `emulate_refs.py KFORGE ROOT WORK --cand CAND NUM` prints:
    "ok BASE ...", "not ok BASE ..." or "" (no problem NUM in ROOT)."""
    line = ""
    for base in sorted(os.listdir(os.path.join(root, "problems", "level1"))):
        if int(base.split("_")[0]) != int(num):
            continue
        try:
            ok, rep = emulate(kforge, root, work, os.path.join(root, "problems", "level1", base),
                              os.path.abspath(cand))
        except Exception as e:  # noqa
            ok, rep = False, "%s: %s" % (type(e).__name__, e)
        line = "%s %s %s" % ("ok" if ok else "not ok", base, rep)
    return line


def _quiet():
    """A pool worker's output (the emulated programs'): none."""
    n = os.open(os.devnull, os.O_WRONLY)
    os.dup2(n, 1)
    os.dup2(n, 2)


def _res_job(fn, rec):
    os.makedirs(rec[0], exist_ok=True)
    try:
        line = fn(*rec)
    except Exception as e:  # noqa
        line = "not ok %s: %s" % (type(e).__name__, e)
    with open(rec[0] + ".res", "w") as f:
        f.write(line + "\n")


def run_jobs(path, n, fn):
    """For each record DIR A B C (NUL-separated) of PATH, fn(DIR, A, B, C)'s
    line in DIR.res; N processes at a time (forked: one Python start for all,
    not one a job)."""
    import concurrent.futures
    with open(path, "rb") as f:
        fields = f.read().split(b"\0")
    recs = [[x.decode() for x in fields[i:i + 4]] for i in range(0, len(fields) - 3, 4)]
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, n), initializer=_quiet) as ex:
        for fut in [ex.submit(_res_job, fn, r) for r in recs]:
            fut.result()


def pool(n):
    """N worker processes whose own output goes nowhere, for cand_line jobs."""
    import concurrent.futures
    return concurrent.futures.ProcessPoolExecutor(max_workers=max(1, n), initializer=_quiet)


def _line_job(line_fn, kforge, work, root, num, cand):
    return line_fn(kforge, root, work, cand, num)


def jobs_main(args, line_fn):
    """ARGS "--jobs LIST [-j N] KFORGE": line_fn(KFORGE, ROOT, DIR, FILE,
    NUMBER)'s line in DIR.res for each record DIR ROOT NUMBER FILE of LIST
    (run_jobs)."""
    import functools
    n = 1
    if args[2:3] == ["-j"]:
        n = int(args[3])
        del args[2:4]
    run_jobs(args[1], n, functools.partial(_line_job, line_fn, args[2]))
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["--jobs"]:
        return jobs_main(args, cand_line)
    cand = None
    if "--cand" in args:
        i = args.index("--cand")
        cand = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    kforge, root, work = args[:3]
    only = set(int(x) for x in args[3:])
    if cand and len(only) != 1:
        sys.exit("--cand needs exactly one problem number")
    failed = 0
    for base in sorted(os.listdir(os.path.join(root, "problems", "level1"))):
        num = int(base.split("_")[0])
        if only and num not in only:
            continue
        d = os.path.join(root, "problems", "level1", base)
        try:
            ok, rep = emulate(kforge, root, work, d, cand)
        except Exception as e:  # noqa
            ok, rep = False, "%s: %s" % (type(e).__name__, e)
        failed += not ok
        print("%s %s %s" % ("ok" if ok else "not ok", base, rep), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
