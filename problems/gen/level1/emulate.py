#!/usr/bin/env python3
"""Runs every matmul/conv/pool reference.cu on the CPU at small sizes and
compares it with the C oracle (core/oracle_geom.c via build/tests/oracle_b_eval).

For each problem of gen.py's table a small variant is generated (same
geometry: kernel, stride, padding, dilation, output_padding, transposes and
masks; groups kept, with 2 input and 3 output channels per group; small batch,
channels and spatial sizes) with the same generator code as the committed
files. Its reference.cu is compiled as C++ (CUDA built-ins emulated, one
thread at a time over the launch grid; the threads of a block that
uses __syncthreads run concurrently and meet at a barrier) and run on random float32 inputs; the
oracle evaluates every output element from the same inputs.

    python3 problems/gen/level1/emulate.py --oracle build/tests/oracle_b_eval [--keep DIR] [NUM...]

Needs g++. Prints one line per mismatching problem; exit 1 on any."""
import argparse, importlib.util, os, random, re, shutil, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec_ = importlib.util.spec_from_file_location("gen", os.path.join(HERE, "gen_b.py"))
gen = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(gen)
gen.CONV_MIN_THREADS = 0     # several output channels per conv thread at these sizes too

SMALL = [5, 3, 4, 6, 2, 7]
# sizes over one tile of the tiled GEMM (gemm_tiled.py: 64 x 64 outputs, k by
# 16) on some products, so that several blocks and k stages and every tail run
OVER_TILE = {1: {"N": 70}, 3: {"batch_size": 2, "m": 70, "k": 37, "n": 67},
             14: {"N": 70}, 18: {"M": 70, "K": 37, "N": 67}}

def tiny_matmul(row):
    num, file, desc, ins, expr, attrs, out_shape = row
    names = dict(OVER_TILE.get(num, {}))
    if attrs.get("matvec"):
        names["K"] = 700     # longer than a block, so each thread sums a strided part
    def small(name):
        if name not in names:
            names[name] = SMALL[len(names) % len(SMALL)]
        return names[name]
    nins = []
    for t in ins:
        dims = [d if isinstance(d, int) else (d[0], small(d[0])) for d in t[1]]
        nins.append((t[0], dims) + tuple(t[2:]))
    return (num, file, desc, nins, expr, attrs, out_shape)

def tiny_pool(row):
    num, file, cls, op, xdims, ctor, g = row
    sp = [d * (k - 1) + 1 + 2 * s + 1 for k, s, d in zip(g["kernel"], g["stride"], g["dilation"])]
    nx = [(xdims[0][0], 2), (xdims[1][0], 3)] + [(n, v) for (n, _), v in zip(xdims[2:], sp)]
    return (num, file, cls, op, nx, ctor, g)

def tiny_conv(row):
    num, file, desc, cls, attr, xdims, sig, init, call, g, extra = row
    groups, ci = g["groups"], xdims[1][1]
    if groups == ci:                      # depthwise (86: then pointwise to 4)
        ci_t = g_t = 3
        co_t = 4 if num == 86 else 3
    elif groups > 1:
        ci_t, g_t, co_t = 2 * groups, groups, 3 * groups
    else:
        ci_t, g_t, co_t = 3, 1, 4
    transposed = "Transpose" in cls
    if transposed:
        sp = [3 for _ in g["kernel"]]
    else:
        sp = [d * (k - 1) + 1 + 2 * s + 1 for k, s, d in zip(g["kernel"], g["stride"], g["dilation"])]
    nx = [(xdims[0][0], 2), (xdims[1][0], ci_t)] + [(n, v) for (n, _), v in zip(xdims[2:], sp)]
    rep = {"in_channels": ci_t, "out_channels": co_t, "groups": g_t}
    ninit = [(e[0], rep.get(e[0], e[1])) + tuple(e[2:]) if len(e) == 2 else e for e in init]
    ng = dict(g, groups=g_t)
    nextra = {"out_channels": co_t} if "out_channels" in extra else {}
    if call and "out_channels=%d" % extra.get("out_channels", -1) in call:   # 50 spells them out
        call = call.replace("out_channels=%d" % extra["out_channels"], "out_channels=%d" % co_t)
        call = call.replace("in_channels=%d" % ci, "in_channels=%d" % ci_t)
    return (num, file, desc, cls, attr, nx, sig, ninit, call, ng, nextra)

PRELUDE = r'''
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <pthread.h>
#include <thread>
struct kf_dim3 { unsigned x, y, z; };
static kf_dim3 blockIdx, blockDim;
static thread_local kf_dim3 threadIdx;
static pthread_barrier_t kf_barrier;
#define __global__
#define __restrict__
#define __shared__ static
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline void __syncthreads() { pthread_barrier_wait(&kf_barrier); }
using std::min; using std::max;
template <class T> static std::vector<T> kf_load(const char *dir, const char *name, size_t n)
{
    std::vector<float> f(n); std::vector<T> out(n);
    char path[4096]; std::snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *fp = std::fopen(path, "rb");
    if (!fp || std::fread(f.data(), 4, n, fp) != n) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(1); }
    std::fclose(fp);
    for (size_t i = 0; i < n; i++) out[i] = (T)f[i];
    return out;
}
static void kf_save(const char *path, const std::vector<float> &v)
{
    FILE *fp = std::fopen(path, "wb");
    if (!fp || std::fwrite(v.data(), 4, v.size(), fp) != v.size()) { std::fprintf(stderr, "cannot write %s\n", path); std::exit(1); }
    std::fclose(fp);
}
'''

def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip()); cur = ""; continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out

def emit_problem(tag, spec, cu):
    sizes = dict(spec["sizes"])
    env = dict(sizes, ceil_div=lambda a, b: -(-a // b), min=min, max=max, dim3=lambda x, y=1, z=1: (x, y, z))
    numel = {t["name"]: gen.prod(gen.resolve(t["shape"], sizes)) for t in spec["inputs"] + spec["outputs"]}
    body, launch = cu.split("/*@launch", 1)
    launch = launch.split("@*/", 1)[0]
    src = body.replace('extern "C" ', "")
    defs = re.findall(r"^#define (\w+)", src, re.M)
    out = ["namespace %s {" % tag, src, "static void run(const char *indir, const char *outfile)", "{"]
    for t in spec["inputs"]:
        out.append('    std::vector<float> %s = kf_load<float>(indir, "%s", %d);' % (t["name"], t["name"], numel[t["name"]]))
    for t in spec["outputs"]:
        out.append("    std::vector<float> %s(%d, NAN);" % (t["name"], numel[t["name"]]))
    sync = "__syncthreads" in src
    for st in [re.sub(r"//.*", "", x).strip() for x in launch.split(";")]:
        if not st:
            continue
        m = re.match(r"scratch\s+(?:zeroed\s+)?([a-z ]+?)\s+(\w+)\s*\[(.*)\]$", st)
        if m:
            out.append("    std::vector<%s> %s(%d, (%s)NAN);" % (m.group(1), m.group(2), eval(m.group(3), {}, env), m.group(1)))
            continue
        m = re.match(r"(\w+)<<<(.*?)>>>\((.*)\)$", st, re.S)
        grid, block = [eval(e, {}, env) for e in split_args(m.group(2))[:2]]
        gx, gy, gz = grid if isinstance(grid, tuple) else (grid, 1, 1)
        args = []
        for a in split_args(m.group(3)):
            if a in numel or re.fullmatch(r"[A-Za-z_]\w*", a) and a not in sizes:
                args.append("%s.data()" % a)
            else:
                args.append("(long long)%dLL" % eval(a, {}, env))
        out.append("    blockDim.x = %d;" % block)
        out.append("    for (unsigned bz = 0; bz < %du; bz++) for (unsigned by = 0; by < %du; by++)" % (gz, gy))
        out.append("    for (unsigned bx = 0; bx < %du; bx++) { blockIdx = {bx, by, bz};" % gx)
        if sync:   # a block's threads run concurrently and meet at __syncthreads
            out.append("        pthread_barrier_init(&kf_barrier, NULL, %du);" % block)
            out.append("        std::vector<std::thread> th;")
            out.append("        for (unsigned tx = 0; tx < %du; tx++) th.emplace_back([&, tx] { threadIdx.x = tx; %s(%s); });" % (
                block, m.group(1), ", ".join(args)))
            out.append("        for (auto &t : th) t.join();")
            out.append("        pthread_barrier_destroy(&kf_barrier); }")
        else:
            out.append("        for (unsigned tx = 0; tx < %du; tx++) { threadIdx.x = tx; %s(%s); } }" % (
                block, m.group(1), ", ".join(args)))
    out.append("    kf_save(outfile, %s);" % spec["outputs"][0]["name"])
    out += ["}", "}"] + ["#undef %s" % d for d in defs]
    return "\n".join(out) + "\n"

def write_inputs(spec, d, rng):
    os.makedirs(d, exist_ok=True)
    for t in spec["inputs"]:
        n = gen.prod(gen.resolve(t["shape"], spec["sizes"]))
        lo, hi = t["dist"]["low"], t["dist"]["high"]
        vals = [rng.uniform(lo, hi) for _ in range(n)]
        with open(os.path.join(d, t["name"] + ".bin"), "wb") as f:
            f.write(struct.pack("<%df" % n, *vals))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--keep", default=None)
    ap.add_argument("nums", nargs="*", type=int)
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="kf-emulate-")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(1234)
    built = []
    for fam, rows, tiny, build in (("matmul", gen.MATMUL, tiny_matmul, gen.build_matmul),
                                   ("pool", gen.POOL, tiny_pool, gen.build_pool),
                                   ("conv", gen.CONV, tiny_conv, gen.build_conv)):
        for row in rows:
            if a.nums and row[0] not in a.nums:
                continue
            spec, py, cu = build(tiny(row))
            d = os.path.join(work, spec["id"].split("/")[1])  # the loader checks the name
            os.makedirs(d, exist_ok=True)
            for name, text in (("spec.json", gen.json.dumps(spec, indent=2)), ("reference.py", py), ("reference.cu", cu)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            write_inputs(spec, os.path.join(d, "in"), rng)
            built.append((spec, cu, d))
    src = [PRELUDE]
    for spec, cu, d in built:
        src.append(emit_problem("p%03d" % spec["number"], spec, cu))
    src.append("int main(int argc, char **argv)\n{\n    if (argc != 4) return 2;\n    int n = std::atoi(argv[1]);")
    for spec, cu, d in built:
        src.append("    if (n == %d) { p%03d::run(argv[2], argv[3]); return 0; }" % (spec["number"], spec["number"]))
    src.append("    return 2;\n}\n")
    cpp = os.path.join(work, "emulate.cpp")
    with open(cpp, "w") as f:
        f.write("\n".join(src))
    exe = os.path.join(work, "emulate")
    r = subprocess.run(["g++", "-O1", "-w", "-pthread", "-o", exe, cpp], capture_output=True, text=True)
    if r.returncode:
        print(r.stderr[-4000:])
        return 1
    bad = 0
    for spec, cu, d in built:
        n = spec["number"]
        r1 = subprocess.run([exe, str(n), os.path.join(d, "in"), os.path.join(d, "ref.bin")], capture_output=True, text=True)
        r2 = subprocess.run([a.oracle, d, os.path.join(d, "in"), os.path.join(d, "oracle.bin")], capture_output=True, text=True)
        if r1.returncode or r2.returncode:
            print("%d: run failed: %s%s" % (n, r1.stderr, r2.stderr))
            bad += 1
            continue
        ref = open(os.path.join(d, "ref.bin"), "rb").read()
        ora = open(os.path.join(d, "oracle.bin"), "rb").read()
        ref = struct.unpack("<%df" % (len(ref) // 4), ref)
        ora = struct.unpack("<%dd" % (len(ora) // 8), ora)
        if len(ref) != len(ora):
            print("%d: %d reference outputs, %d oracle outputs" % (n, len(ref), len(ora)))
            bad += 1
            continue
        worst, wi = 0.0, -1
        for i, (x, y) in enumerate(zip(ref, ora)):
            e = abs(x - y) / (1e-6 + abs(y)) if x == x else float("inf")
            if e > worst:
                worst, wi = e, i
        status = "ok" if worst <= 1e-5 else "MISMATCH"
        if worst > 1e-5:
            bad += 1
            print("%d: %s at %d: reference %r, oracle %r (%d outputs)" % (n, status, wi, ref[wi], ora[wi], len(ref)))
    print("emulated %d problems, %d mismatching" % (len(built), bad))
    if not a.keep:
        shutil.rmtree(work)
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
