#!/usr/bin/env python3
"""Writes a synthetic but schema-valid kforge store with realistic shapes:
searches over rounds (ideas -> implementations -> compiles -> evaluations),
status mixes like a real search, speedups that improve by round, baselines
and verifications on two GPUs, LLM calls for the LLM run.

    synthstore.py --kernels N --problems P --seed S --out FILE [--hostile]
                  [--trials] [--schema store/store_schema.c]
    synthstore.py --add-profiles FILE [--seed S]

--add-profiles adds a hardware-counter profile (tables profiles and
profile_kernels, schema v5) to every correct evaluation of FILE, a store
that kforge has migrated (`kforge store migrate --db FILE`): the store
this tool writes is schema v1. Limiters and figures come from the seed.

The same arguments give the same store, byte for byte in content (times
are derived from the seed, not the clock). --hostile puts strings that
must come out inert in a web page (</script>, <img onerror=...>, {{,
control characters) into model-written fields. --trials adds per-trial
rows (slower, bigger). The schema is read from store/store_schema.c, so
the store always matches the C code.
Fast on purpose: 100,000 kernels in well under 30 s (one transaction,
executemany, no journal)."""
import argparse
import hashlib
import json
import math
import os
import random
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "..", "store", "store_schema.c")

PROBLEMS = [
    ("Square_matrix_multiplication_", "matmul", "square matmul C=A@B", 1.37e11, 2.01e8),
    ("Standard_matrix_multiplication_", "matmul", "matmul (M,K)@(K,N)", 1.37e11, 1.34e8),
    ("Batched_matrix_multiplication", "matmul", "batched matmul", 2.75e11, 1.07e9),
    ("Matrix_vector_multiplication_", "matvec", "matrix-vector product", 4.29e9, 8.6e9),
    ("Matrix_scalar_multiplication", "elementwise", "A * s", 1.07e9, 8.6e9),
    ("ReLU", "activation", "relu", 4.0e8, 3.2e9),
    ("LeakyReLU", "activation", "leaky relu", 8.0e8, 3.2e9),
    ("Sigmoid", "activation", "sigmoid", 1.6e9, 3.2e9),
    ("Tanh", "activation", "tanh", 1.6e9, 3.2e9),
    ("Softmax", "softmax", "softmax over dim 1", 8.05e9, 1.29e10),
    ("LogSoftmax", "softmax", "log-softmax over dim 1", 8.05e9, 1.29e10),
    ("GELU_", "activation", "gelu", 3.2e9, 3.2e9),
    ("RMSNorm_", "norm", "rms norm", 2.4e9, 1.6e9),
    ("LayerNorm", "norm", "layer norm", 3.2e9, 1.6e9),
    ("Sum_reduction_over_a_dimension", "reduction", "sum over dim 1", 4.0e8, 1.6e9),
    ("Max_reduction_over_a_dimension", "reduction", "max over dim 1", 4.0e8, 1.6e9),
    ("Argmax_over_a_dimension", "reduction", "argmax over dim 1", 4.0e8, 1.6e9),
    ("cumsum", "scan", "cumulative sum", 4.0e8, 3.2e9),
    ("Max_Pooling_2D", "pool", "max pool 2d", 1.2e9, 2.4e9),
    ("conv_standard_2D__square_input__square_kernel", "conv", "conv2d", 5.5e11, 4.2e8),
]

GPUS = [
    # name, arch, sms, mem, l2, bw, fp32
    ("NVIDIA H100 80GB HBM3", "sm_90", 132, 85520809984, 52428800, 3000.0, 51.2),
    ("NVIDIA H200", "sm_90", 132, 150754820096, 62914560, 4200.0, 51.2),
]

# --wide: four GPUs and KernelBench's long level-2 names (the leaderboard's
# widest case).
WIDE_GPUS = [
    ("NVIDIA A100-SXM4-80GB", "sm_80", 108, 85899345920, 41943040, 2039.0, 19.5),
    ("NVIDIA L40S", "sm_89", 142, 48305799168, 100663296, 864.0, 91.6),
]
WIDE_NAMES = [
    "ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide",
    "Gemm_BatchNorm_Scaling_Softmax_GELU_Divide_Sum_ResidualAdd_Mean",
    "ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU_HardSwish_Clamp",
    "Matmul_Dropout_Mean_Softmax_Subtract_GlobalAvgPool_LogSumExp",
]

CATEGORIES = ["memory", "async", "precision", "compute", "parallelism", "control"]

IDEAS = [
    ("Vectorize global loads with float4 so each thread moves 16 bytes", ["memory"]),
    ("Use a grid-stride loop and size the grid to the number of SMs", ["parallelism", "control"]),
    ("Tile into shared memory with 32x32 blocks and pad to avoid bank conflicts", ["memory"]),
    ("Warp-level reduction with __shfl_down_sync instead of shared memory", ["compute", "parallelism"]),
    ("Double-buffer tiles with cp.async to overlap loads and math", ["async", "memory"]),
    ("Compute in half precision with float accumulation", ["precision"]),
    ("Use tensor cores through wmma fragments", ["compute", "precision"]),
    ("Unroll the inner loop by 4 and hoist bounds checks", ["control", "compute"]),
    ("Fuse the two passes into one with an online algorithm", ["memory", "compute"]),
    ("Raise occupancy: 256 threads, fewer registers via __launch_bounds__", ["parallelism"]),
    ("Use fast intrinsics (__expf, __fdividef) in the epilogue", ["compute"]),
    ("Process several rows per block to amortize the launch", ["parallelism", "control"]),
]

STATUS_MIX = [  # eval status, weight
    ("format_error", 3), ("compile_error", 14), ("launch_error", 2), ("runtime_error", 3),
    ("timeout", 1), ("incorrect", 19), ("correct", 58),
]

HOSTILE = [
    "</script><script>alert('x')</script>",
    "<img src=x onerror=alert(1)>",
    "{{#evil}}{{{raw}}}{{/evil}} {{> partial}}",
    "ctl\x01\x07\x1b[31m\x7f end",
    "\"quotes' & <b>bold</b>",
]


def load_schema(path):
    """The SQL of schema_v1 from store/store_schema.c: every C string literal
    between 'schema_v1[] =' and the closing ';'."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"schema_v1\[\]\s*=(.*?);\s*\n\s*\n", text, re.S)
    if not m:
        m = re.search(r"schema_v1\[\]\s*=(.*?)\";\s*\n", text, re.S)
    body = m.group(1)
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
    sql = "".join(parts)
    return sql.encode("utf-8").decode("unicode_escape")


def sha(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


class Clock:
    """Deterministic, increasing ISO times."""
    def __init__(self, start=1795300000):
        self.t = start

    def tick(self, sec=1):
        self.t += sec
        return self.iso()

    def iso(self):
        import time
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.t))


def kernel_source(rng, pname, idea_text, r, i, hostile):
    block = rng.choice([128, 256, 512])
    unroll = rng.choice([1, 2, 4, 8])
    vec = rng.choice(["float", "float2", "float4"])
    note = idea_text.replace("*/", "* /")
    if hostile and rng.random() < 0.3:
        note += " " + rng.choice(HOSTILE).replace("*/", "* /")
    body = [
        "// %s: round %d, implementation %d" % (pname, r, i),
        "/* idea: %s */" % note,
        "#include <cuda_fp16.h>",
        "#define BLOCK %d" % block,
        "",
        'extern "C" __global__ void k_%s_%d_%d(const float* __restrict__ x, float* __restrict__ y,'
        % (re.sub(r"\W", "_", pname.lower())[:20], r, i),
        "                                     long long n)",
        "{",
        "    __shared__ float tile[BLOCK];",
        "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;",
        "    const %s* xv = reinterpret_cast<const %s*>(x);" % (vec, vec),
        "    float acc = 0.0f;",
        "    #pragma unroll %d" % unroll,
        "    for (long long j = i; j < n; j += (long long)gridDim.x * blockDim.x) {",
        "        float v = x[j];",
        "        acc += v > 0.0f ? v : 0.01f * v;  // leaky",
        "        y[j] = acc * %.4ff;" % rng.uniform(0.5, 2.0),
        "    }",
        "    tile[threadIdx.x] = acc;",
        "    __syncthreads();",
        "    if (threadIdx.x == 0 && (void*)xv != nullptr) y[0] += tile[0] * 0.0f;",
        "}",
        "",
        "/*@launch",
        "k_%s_%d_%d<<<ceil_div(n, %d), %d>>>(x, y, n);"
        % (re.sub(r"\W", "_", pname.lower())[:20], r, i, block, block),
        "@*/",
        "",
    ]
    return "\n".join(body)


LIMITERS = ["memory", "compute", "latency", "launch"]


def add_profiles(path, seed):
    """A profile for each correct evaluation of a migrated (v5) store."""
    rng = random.Random(seed * 7919 + 5)
    db = sqlite3.connect(path, isolation_level=None)
    if db.execute("PRAGMA user_version").fetchone()[0] < 5:
        sys.exit("%s: schema v5 needed (kforge store migrate --db %s)" % (path, path))
    evs = db.execute("SELECT id, kernel_hash, problem_id, gpu_name, time_mean_ms, created_at"
                     " FROM evals WHERE status = 'correct' ORDER BY id").fetchall()
    db.execute("BEGIN")
    for eid, h, pid, gpu, tm, created in evs:
        lim = rng.choice(LIMITERS)
        nk = rng.choice([1, 1, 2])
        ms = (tm or 1.0) * 0.9
        kerns = []
        for k in range(nk):
            kerns.append((eid, k, "k_%s_%d" % (h[:6], k), ms / nk,
                          rng.randint(1 << 20, 1 << 28), rng.randint(1 << 20, 1 << 28),
                          rng.uniform(5, 95), rng.uniform(10, 99), rng.uniform(5, 95),
                          rng.choice([0.0, rng.uniform(0, 80)]), rng.uniform(10, 100),
                          rng.choice([24, 32, 64, 128]), rng.choice([0, 4096, 49152]),
                          rng.choice([128, 256, 512]), rng.randint(64, 65536),
                          lim if k == 0 else rng.choice(LIMITERS)))
        db.execute("INSERT OR REPLACE INTO profiles VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (eid, h, pid, gpu, lim, nk, ms, sum(k[4] for k in kerns),
                    sum(k[5] for k in kerns), kerns[0][6], kerns[0][7], kerns[0][8], kerns[0][9],
                    kerns[0][10], ms * 40, "synthstore", created))
        db.executemany("INSERT OR REPLACE INTO profile_kernels VALUES"
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kerns)
    db.execute("COMMIT")
    db.close()
    print("%s: %d profiles" % (path, len(evs)), file=sys.stderr)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--add-profiles":
        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
        add_profiles(sys.argv[2], seed)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=int, default=1000)
    ap.add_argument("--problems", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hostile", action="store_true")
    ap.add_argument("--trials", action="store_true")
    ap.add_argument("--wide", action="store_true",
                    help="four GPUs and long problem names")
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    a = ap.parse_args()
    if a.kernels < 1 or a.problems < 1:
        ap.error("--kernels and --problems must be positive")
    if a.wide:
        GPUS.extend(WIDE_GPUS)
    rng = random.Random(a.seed)
    clock = Clock()
    if os.path.exists(a.out):
        os.unlink(a.out)
    db = sqlite3.connect(a.out, isolation_level=None)
    db.executescript(load_schema(a.schema))
    db.execute("PRAGMA user_version = 1")
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    ins = {}

    def add(table, row):
        ins.setdefault(table, []).append(row)

    add("meta", ("synthetic", json.dumps({"seed": a.seed, "kernels": a.kernels,
                                          "problems": a.problems})))
    add("meta", ("store_id", sha("store%d" % a.seed)[:32]))
    for g in GPUS:
        add("gpus", (g[0], g[1], g[2], g[3], g[4], g[5], g[6], "580.65.06", "13.0", clock.tick()))

    problems = []
    for p in range(a.problems):
        base = PROBLEMS[p % len(PROBLEMS)]
        num = p + 1
        name = base[0] if p < len(PROBLEMS) else "%s_v%d" % (base[0], p // len(PROBLEMS))
        if a.wide:
            name = WIDE_NAMES[p % len(WIDE_NAMES)] + ("" if p < len(WIDE_NAMES) else "_%d" % p)
        pid = "level1/%03d_%s" % (num, name)
        spec = {"id": pid, "level": 1, "number": num, "name": name, "family": base[1],
                "operation": base[2], "sizes": {"n": 1 << 24}, "tolerance": "fp32",
                "flops": base[3], "min_bytes": base[4]}
        spec_text = json.dumps(spec, sort_keys=True)
        torch = ("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return torch.%s(x)  # %s\n" % (base[1], base[2]))
        add("problems", (pid, 1, num, name, "%d_%s.py" % (num, name), base[1], base[2],
                         spec_text, sha(spec_text), torch, base[3], base[4]))
        # Eager time from the roofline floor times a realistic inefficiency.
        floor_ms = max(base[4] / (GPUS[0][5] * 1e9), base[3] / (GPUS[0][6] * 1e12)) * 1e3
        eager = floor_ms * rng.uniform(1.2, 4.0)
        problems.append((pid, name, eager, floor_ms))
        for gi, g in enumerate(GPUS):
            scale = 1.0 if gi == 0 else rng.uniform(0.7, 0.9)
            e = eager * scale
            c = e * rng.uniform(0.55, 1.1)
            for variant, ms in (("eager", e), ("compile", c)):
                add("baselines", (pid, g[0], variant, ms, ms * 0.02, ms * 0.97, ms * 1.1, ms,
                                  100, g[0], "cuda:0", "synthstore", clock.tick()))

    models = [("builtin", None), ("openai", "qwen3-coder-480b")]
    runs = []
    for ri, (prop, model) in enumerate(models):
        rid = "run-%d-%s" % (a.seed, prop)
        if a.hostile and prop == "openai":
            model = "qwen<script>alert(1)</script>"
        cfg = {"rounds": 0, "k": 4, "m": 2, "strategy": "branch",
               "protocol": {"name": "collect-v1", "check_trials": 5, "warmup": 3,
                            "timed_trials": 100, "atol": 1e-4, "rtol": 1e-4}}
        runs.append((rid, prop, model, cfg))

    statuses = [s for s, w in STATUS_MIX for _ in range(w)]
    per_problem = [a.kernels // a.problems + (1 if i < a.kernels % a.problems else 0)
                   for i in range(a.problems)]
    seen_kernels = {}
    n_llm = 0
    for pi, (pid, pname, eager, floor_ms) in enumerate(problems):
        budget = per_problem[pi]
        if budget == 0:
            continue
        run_id, prop, model, cfg = runs[pi % len(runs)]
        ideas_per_round, impls = 4, 2
        r = 0
        made = 0
        prob_kernels = []
        best_prev = []  # candidate ids of last round's best
        best_prev_ideas = []
        quality = rng.uniform(0.6, 1.2)  # speedup multiplier in round 1
        while made < budget:
            r += 1
            started = clock.tick(5)
            call_id = None
            if prop == "openai":
                n_llm += 1
                call_id = "call-%d-%d" % (a.seed, n_llm)
                req = json.dumps({"model": model, "messages": [
                    {"role": "user", "content": "Propose ideas for %s round %d" % (pid, r)}]})
                resp = json.dumps({"choices": [{"message": {"content": "ideas..."}}]})
                add("llm_calls", (call_id, run_id, pid, r, "ideas", prop, model, req, resp,
                                  sha(req), 200, None, rng.randint(800, 4000),
                                  rng.randint(200, 1500), rng.randint(0, 3000),
                                  rng.uniform(800, 9000), rng.choice([0, 0, 0, 1]), 0,
                                  clock.tick()))
            round_cands = []
            for ii in range(ideas_per_round):
                if made >= budget:
                    break
                text, cats = IDEAS[rng.randrange(len(IDEAS))]
                if a.hostile and rng.random() < 0.25:
                    text = text + " " + rng.choice(HOSTILE)
                idea_id = "idea_r%d_%s" % (r, sha("%d|%s|%d|%d" % (a.seed, pid, r, ii))[:8])
                add("ideas", (idea_id, run_id, pid, r, text,
                              "llm" if prop == "openai" else "builtin",
                              None if prop == "openai" else "cat-%d" % IDEAS.index(
                                  next(x for x in IDEAS if text.startswith(x[0]))),
                              json.dumps(best_prev_ideas[:1]), call_id, clock.tick()))
                for c in cats:
                    add("idea_categories", (idea_id, c,
                                            "model" if prop == "openai" else "catalogue"))
                for k in range(impls):
                    if made >= budget:
                        break
                    status = rng.choice(statuses)
                    created = clock.tick()
                    if prob_kernels and rng.random() < 0.02:
                        # duplicates happen: content addressing evaluates them once
                        h = rng.choice(prob_kernels)
                        status = seen_kernels[h]
                    else:
                        src = kernel_source(rng, pname, text, r, k + ii * impls, a.hostile)
                        h = sha(src)
                        if status == "format_error" and rng.random() < 0.5:
                            h = None  # a malformed response: no kernel at all
                    if h is not None and h not in seen_kernels:
                        made += 1
                    cid = "kernel_r%d_%s_%d_%s" % (r, idea_id, k, (h or sha(created + idea_id))[:6])
                    detail = None
                    if status == "format_error":
                        detail = "launch block: line 2:5: expected '<<<'"
                    add("candidates", (cid, run_id, pid, r, idea_id, k, h, json.dumps(best_prev[:2]),
                                       "tmpl-%d" % rng.randint(1, 9), json.dumps({"block": 256}),
                                       call_id, status, detail, created))
                    if h is None:
                        continue
                    if h in seen_kernels:
                        continue
                    seen_kernels[h] = status
                    prob_kernels.append(h)
                    add("kernels", (h, src, len(src.encode("utf-8")), created))
                    comp_status = ("format_error" if status == "format_error" else
                                   "compile_error" if status == "compile_error" else "ok")
                    comp_id = sha("%s|sm_90|-O3" % h)
                    log = ""
                    if comp_status == "compile_error":
                        log = ("kernel.cu(12): error: identifier \"tile_sz\" is undefined\n"
                               "1 error detected in the compilation of \"kernel.cu\".\n")
                        if a.hostile:
                            log += rng.choice(HOSTILE) + "\n"
                    elif comp_status == "ok":
                        log = "ptxas info: Used %d registers\n" % rng.randint(16, 128)
                    add("compiles", (comp_id, h, "sm_90", "-O3 --std=c++17", "13.0", comp_status,
                                     detail if comp_status == "format_error" else None, log,
                                     rng.uniform(8, 60), created))
                    if comp_status == "ok":
                        regs = rng.choice([24, 32, 40, 48, 64, 96, 128, 168, 255])
                        spill = 0 if regs < 200 else rng.choice([0, 16, 64])
                        add("compile_kernels", (comp_id, "k_%d" % made, regs,
                                                rng.choice([0, 1024, 4096, 16384, 49152]),
                                                spill, spill, 0, 0))
                    gpu = GPUS[0][0]
                    eid = sha("%s|%s|%s|collect-v1" % (h, pid, gpu))
                    tm = None
                    if status == "correct":
                        # better with rounds, heavy-ish tail
                        sp = quality * (1.0 + 0.4 * math.log(r)) * math.exp(rng.gauss(0, 0.35))
                        tm = eager / sp
                    err = (rng.uniform(1e-7, 5e-5) if status == "correct" else
                           rng.uniform(1e-2, 10) if status == "incorrect" else None)
                    fc = {"incorrect": "output_mismatch", "runtime_error": "illegal_address",
                          "timeout": "watchdog", "launch_error": "launch_config"}.get(status)
                    add("evals", (eid, h, pid, gpu, "collect-v1",
                                  json.dumps(cfg["protocol"], sort_keys=True), status, fc,
                                  detail, err, err * 3 if err else None,
                                  (0 if status == "correct" else rng.randint(1, 100000))
                                  if err is not None else None,
                                  tm, tm * 0.995 if tm else None, tm * 0.02 if tm else None,
                                  tm * 0.97 if tm else None, tm * 1.08 if tm else None,
                                  tm * 0.96 if tm else None, tm * 0.955 if tm else None,
                                  100 if tm else None,
                                  json.dumps({"sm_clock_mhz": 1980, "temp_c": rng.randint(40, 70)}),
                                  created))
                    if a.trials and tm:
                        for t in range(5):
                            add("eval_trials", (eid, "check", t, 1000 + t, None, None, err, err,
                                                0, 1))
                        for t in range(20):
                            x = tm * math.exp(rng.gauss(0, 0.02))
                            add("eval_trials", (eid, "time", t, None, x, x * 0.96, None, None,
                                                None, None))
                    round_cands.append((cid, h, tm, idea_id))
            correct = [c for c in round_cands if c[2]]
            correct.sort(key=lambda c: c[2])
            best = correct[0][0] if correct else None
            if correct:
                best_prev = [c[0] for c in correct[:2]]
                best_prev_ideas = [c[3] for c in correct[:1]]
            add("rounds", (run_id, pid, r, "done", started, clock.tick(), best))
    rows_by = ins

    # Top kernels per problem for verification, from the collected evals.
    by_problem = {}
    for e in rows_by.get("evals", []):
        if e[6] == "correct":
            by_problem.setdefault(e[2], []).append(e)
    for pid, evs in by_problem.items():
        evs.sort(key=lambda e: e[12])
        eager = next(p[2] for p in problems if p[0] == pid)
        for e in evs[:3]:
            h = e[1]
            for gi, g in enumerate(GPUS):
                scale = 1.0 if gi == 0 else rng.uniform(0.7, 0.95)
                tm = e[12] * scale * rng.uniform(0.98, 1.04)
                ok = rng.random() < 0.85
                st = "correct" if ok else "incorrect"
                veid = sha("%s|%s|%s|verify-v1" % (h, pid, g[0]))
                add("evals", (veid, h, pid, g[0], "verify-v1",
                              json.dumps({"name": "verify-v1", "seeds": 20}), st,
                              None if ok else "repeat_mismatch", None, 1e-6, 3e-6, 0 if ok else 17,
                              tm, tm, tm * 0.01, tm * 0.98, tm * 1.05, tm * 0.97, tm * 0.97, 1000,
                              json.dumps({"sm_clock_mhz": 1980}), clock.tick()))
                flags = []
                if eager / tm > 10:
                    flags.append("speedup_over_10x")
                add("verifications", (sha("v|" + veid), veid, h, pid, g[0], "verify-v1",
                                      "verified" if ok else "failed",
                                      None if ok else "repeat_mismatch", json.dumps(flags),
                                      json.dumps({"memcheck": {"status": "clean"}}),
                                      json.dumps({"driver": "580.65.06", "cuda": "13.0",
                                                  "gpu": g[0]}),
                                      "0.1.0-synth", clock.tick()))

    for ri, (rid, prop, model, cfg) in enumerate(runs):
        cfg["rounds"] = max((r[2] for r in rows_by.get("rounds", []) if r[0] == rid), default=0)
        add("runs", (rid, clock.iso(), clock.tick(600), "finished", "rounds", prop, model, a.seed,
                     json.dumps(cfg, sort_keys=True), GPUS[0][0], "0.1.0-synth"))

    order = ["meta", "gpus", "problems", "runs", "baselines", "llm_calls", "ideas",
             "idea_categories", "kernels", "candidates", "compiles", "compile_kernels", "evals",
             "eval_trials", "rounds", "verifications"]
    for t in order:
        rows = rows_by.get(t)
        if not rows:
            continue
        q = "INSERT INTO %s VALUES(%s)" % (t, ",".join("?" * len(rows[0])))
        db.executemany(q, rows)
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    print("%s: %d kernels, %d candidates, %d problems" % (
        a.out, len(rows_by.get("kernels", [])), len(rows_by.get("candidates", [])),
        len(problems)), file=sys.stderr)


if __name__ == "__main__":
    main()
