#!/usr/bin/env python3
"""Fills an initialised kforge store (`kforge --db X store init`) with a
deterministic synthetic search: problems, baselines on two GPUs, one run,
rounds, LLM calls, ideas with categories, kernels, candidates with lineage,
compiles, evaluations with per-trial values, and verifications.

  dsfixture.py DB [--kernels N] [--problems P] [--time-trials T] [--seed S]

Same arguments, same rows. Used by the dataset tests and the pack benchmark."""
import argparse
import hashlib
import json
import random
import sqlite3

CATS = ["memory", "async", "precision", "compute", "parallelism", "control"]
FAMILIES = [("ReLU", "elementwise"), ("Softmax", "softmax"), ("Matmul", "matmul"),
            ("LayerNorm", "norm"), ("Sum_reduction", "reduce"), ("Conv2d", "conv")]
GPUS = ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]


def ts(i):
    # 2026-11-01T00:00:00Z plus i seconds, ISO-8601 UTC
    d, r = divmod(i, 86400)
    h, r = divmod(r, 3600)
    m, s = divmod(r, 60)
    return "2026-11-%02dT%02d:%02d:%02dZ" % (1 + d % 28, h, m, s)


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def kernel_source(pid, k, rnd):
    block = rnd.choice([128, 256, 512, 1024])
    unroll = rnd.choice([1, 2, 4, 8])
    return (
        "// %s variant %d\n"
        "extern \"C\" __global__ void k_%d(const float* __restrict__ x, float* __restrict__ y,\n"
        "                                  long long n)\n"
        "{\n"
        "    long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * %d;\n"
        "    #pragma unroll\n"
        "    for (int u = 0; u < %d; u++)\n"
        "        if (i + u < n) y[i + u] = fmaxf(x[i + u], 0.0f) * %d.0f / %d.0f;\n"
        "}\n\n"
        "/*@launch\n"
        "k_%d<<<ceil_div(batch_size * dim, %d * %d), %d>>>(x, y, batch_size * dim);\n"
        "@*/\n" % (pid, k, k, unroll, unroll, k % 7 + 1, k % 7 + 1, k, block, unroll, block))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--kernels", type=int, default=60)
    ap.add_argument("--problems", type=int, default=3)
    ap.add_argument("--time-trials", type=int, default=10)
    ap.add_argument("--check-trials", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    db = sqlite3.connect(a.db)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA foreign_keys=ON")
    x = db.execute
    t = 0
    for g, arch, bw in [(GPUS[0], "sm_90", 3350.0), (GPUS[1], "sm_90", 4800.0)]:
        x("INSERT INTO gpus VALUES(?,?,?,?,?,?,?,?,?,?)",
          (g, arch, 132, 80 * 2**30, 50 * 2**20, bw, 67.0, "580.65.06", "13.0", ts(0)))
    pids = []
    for p in range(a.problems):
        name, fam = FAMILIES[p % len(FAMILIES)]
        num = p + 1
        pid = "level1/%03d_%s" % (num, name)
        pids.append(pid)
        spec = {"id": pid, "level": 1, "number": num, "name": name, "family": fam,
                "sizes": {"batch_size": 4096, "dim": 16384 * (p + 1)}, "scalars": {},
                "inputs": [{"name": "x", "role": "input", "dtype": "float32",
                            "shape": ["batch_size", "dim"],
                            "dist": {"kind": "uniform", "low": 0.0, "high": 1.0}}],
                "outputs": [{"name": "y", "dtype": "float32", "shape": ["batch_size", "dim"]}],
                "tolerance": "fp32"}
        spec_s = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        torch = ("import torch\nclass Model(torch.nn.Module):\n"
                 "    def forward(self, x):\n        return torch.%s(x)\n" % name.lower())
        x("INSERT INTO problems VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
          (pid, 1, num, name, "%d_%s.py" % (num, name), fam, name.lower(), spec_s, sha(spec_s),
           torch, 4096.0 * 16384 * (p + 1), 8.0 * 4096 * 16384 * (p + 1)))
        for gi, g in enumerate(GPUS):
            for variant, f in [("eager", 1.0), ("compile", 0.8)]:
                m = (0.5 + p) * f * (1.0 - 0.2 * gi)
                x("INSERT INTO baselines VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (pid, g, variant, m, m * 0.01, m * 0.98, m * 1.05, m, 100, "H100" if gi == 0 else "H200",
                   "cuda:0", "tools/baselines.py", ts(1)))
    run = "run_0001"
    cfg = {"protocol": "collect-v1", "rounds": a.rounds, "k": 2, "strategy": "branch",
           "m": 2, "check_trials": a.check_trials, "time_trials": a.time_trials}
    x("INSERT INTO runs VALUES(?,?,?,?,?,?,?,?,?,?,?)",
      (run, ts(2), ts(10**6), "finished", "search", "openai", "test-model", a.seed,
       json.dumps(cfg, sort_keys=True), GPUS[0], "v0.1.0-test"))
    per_problem = max(1, a.kernels // a.problems)
    per_round = max(1, per_problem // a.rounds)
    k = 0
    trial_rows = []
    for pi, pid in enumerate(pids):
        prev_round_cands = []
        base = (0.5 + pi)
        for r in range(a.rounds):
            t += 1
            x("INSERT INTO rounds VALUES(?,?,?,?,?,?,?)", (run, pid, r, "done", ts(t), ts(t + 1), None))
            ideas_call = "call_%s_%d_ideas" % (pi, r)
            req = {"model": "test-model", "messages": [
                {"role": "system", "content": "You propose CUDA optimizations."},
                {"role": "user", "content": "Problem %s round %d: propose ideas." % (pid, r)}]}
            x("INSERT INTO llm_calls(id,run_id,problem_id,round,purpose,proposer,model,request,response,"
              "request_sha256,http_status,prompt_tokens,completion_tokens,latency_ms,created_at) "
              "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
              (ideas_call, run, pid, r, "ideas", "openai", "test-model", json.dumps(req),
               "1. tile\n2. vectorize", sha(json.dumps(req)), 200, 500, 80, 1234.5, ts(t)))
            this_round = []
            n_here = per_round if r < a.rounds - 1 else per_problem - per_round * (a.rounds - 1)
            ideas = []
            for ii in range(2):
                iid = "idea_%d_%d_%d" % (pi, r, ii)
                ideas.append(iid)
                x("INSERT INTO ideas VALUES(?,?,?,?,?,?,?,?,?,?)",
                  (iid, run, pid, r, "Idea %d of round %d: use %s" % (ii, r, CATS[(r + ii) % 6]),
                   "llm", None, "[]", ideas_call, ts(t)))
                x("INSERT INTO idea_categories VALUES(?,?,?)", (iid, CATS[(r + ii) % 6], "model"))
                if ii == 1:
                    x("INSERT INTO idea_categories VALUES(?,?,?)", (iid, CATS[(r + 3) % 6], "keyword"))
            impl_calls = {}
            for iid in ideas:
                cid = "call_%s_impl" % iid
                impl_calls[iid] = cid
                req = {"model": "test-model", "messages": [
                    {"role": "system", "content": "You write fast CUDA kernels in kforge's candidate format."},
                    {"role": "user", "content": "Implement %s for %s." % (iid, pid)}]}
                x("INSERT INTO llm_calls(id,run_id,problem_id,round,purpose,proposer,model,request,response,"
                  "request_sha256,http_status,prompt_tokens,completion_tokens,latency_ms,created_at) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (cid, run, pid, r, "implement", "openai", "test-model", json.dumps(req),
                   "```cuda\n...\n```", sha(json.dumps(req)), 200, 900, 700, 2345.5, ts(t)))
            for j in range(n_here):
                t += 1
                iid = ideas[j % 2]
                src = kernel_source(pid, k, rnd)
                h = sha(src)
                x("INSERT INTO kernels VALUES(?,?,?,?)", (h, src, len(src.encode()), ts(t)))
                parents = [prev_round_cands[j % len(prev_round_cands)]] if prev_round_cands else []
                cand = "kernel_r%d_%s_%d_%06d" % (r, iid, j // 2, k)
                st = "correct"
                roll = rnd.random()
                if roll < 0.1:
                    st = "compile_error"
                elif roll < 0.25:
                    st = "incorrect"
                x("INSERT INTO candidates VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (cand, run, pid, r, iid, j // 2, h, json.dumps(parents), None, None,
                   impl_calls[iid], st, None, ts(t)))
                this_round.append(cand)
                comp = sha(h + "|sm_90|-O3")
                x("INSERT INTO compiles VALUES(?,?,?,?,?,?,?,?,?,?)",
                  (comp, h, "sm_90", "-O3", "13.0", "ok" if st != "compile_error" else "compile_error",
                   None if st != "compile_error" else "error: expected ';'", "", 21.5, ts(t)))
                if st != "compile_error":
                    x("INSERT INTO compile_kernels VALUES(?,?,?,?,?,?,?,?)",
                      (comp, "k_%d" % k, 32 + k % 64, 0, 0, 0, 0, 0))
                eid = sha(h + "|" + pid + "|" + GPUS[0] + "|collect-v1")
                tm = base / (1.0 + rnd.random() * (1 + r)) if st == "correct" else None
                x("INSERT INTO evals VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (eid, h, pid, GPUS[0], "collect-v1", json.dumps({"atol": 1e-4, "rtol": 1e-4}),
                   st, None if st == "correct" else ("compile" if st == "compile_error" else "values"),
                   None, 1e-6 if st == "correct" else (None if st == "compile_error" else 0.5),
                   1e-6 if st == "correct" else None, 0 if st == "correct" else None,
                   tm, tm, tm and tm * 0.01, tm and tm * 0.98, tm and tm * 1.1, tm, tm,
                   a.time_trials if tm else None, json.dumps({"sm_clock_mhz": 1980}), ts(t)))
                if st != "compile_error":
                    for c in range(a.check_trials):
                        trial_rows.append((eid, "check", c, 1000 + c, None, None,
                                           1e-6 if st == "correct" else 0.5, 1e-6, 0 if st == "correct" else 7,
                                           1 if st == "correct" else 0))
                    if tm:
                        for c in range(a.time_trials):
                            v = tm * (1.0 + 0.001 * ((c * 37) % 11))
                            trial_rows.append((eid, "time", c, None, v, v * 0.97, None, None, None, None))
                if len(trial_rows) > 100000:
                    db.executemany("INSERT INTO eval_trials VALUES(?,?,?,?,?,?,?,?,?,?)", trial_rows)
                    trial_rows = []
                k += 1
            prev_round_cands = this_round
    db.executemany("INSERT INTO eval_trials VALUES(?,?,?,?,?,?,?,?,?,?)", trial_rows)
    # Verify the 3 fastest correct kernels per problem on both GPUs; the
    # third fails on the H200.
    for pid in pids:
        best = x("SELECT id, kernel_hash, time_mean_ms FROM evals WHERE problem_id=? AND status='correct' "
                 "ORDER BY time_mean_ms, id LIMIT 3", (pid,)).fetchall()
        for rank, (eid, h, tm) in enumerate(best):
            for gi, g in enumerate(GPUS):
                t += 1
                veid = sha(h + "|" + pid + "|" + g + "|verify-v1")
                ok = not (gi == 1 and rank == 2)
                vt = tm * (1.0 - 0.2 * gi)
                x("INSERT INTO evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,"
                  "failed_check,time_mean_ms,time_median_ms,n_trials,created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                  (veid, h, pid, g, "verify-v1", "{}", "correct" if ok else "incorrect",
                   None if ok else "repeat_agreement", vt, vt, 1000, ts(t)))
                x("INSERT INTO verifications VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  ("ver_%s" % veid[:16], veid, h, pid, g, "verify-v1", "verified" if ok else "failed",
                   None if ok else "repeat_agreement", "[]", None,
                   json.dumps({"driver": "580.65.06", "cuda": "13.0"}), "v0.1.0-test", ts(t)))
        if best:
            x("UPDATE rounds SET best_candidate=(SELECT id FROM candidates WHERE kernel_hash=? LIMIT 1) "
              "WHERE problem_id=? AND round=?", (best[0][1], pid, a.rounds - 1))
    # One malformed response per problem: a candidate without a kernel.
    for pi, pid in enumerate(pids):
        x("INSERT INTO candidates VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
          ("kernel_r0_bad_%d" % pi, run, pid, 0, None, 0, None, "[]", None, None, None,
           "format_error", "no ```cuda block", ts(t)))
    db.commit()
    db.close()


if __name__ == "__main__":
    main()
