#!/usr/bin/env python3
"""Fills a store made by `kforge store init` with a small search over levels 1, 2
and 3 whose figures are known by construction (t0950 checks scripts/results_md.py
against them). Per problem: baselines (ms) and the search's kernels (ms, status).

    levelstore.py STORE KBDIR   (KBDIR gets KernelBench-layout H100_Modal_*.json)

Level 2: 001 2.5x eager, 002 0.5x, 023 degenerate 10x, 005 incorrect only
(002 and 005 would be level-1 families: rowsoftmax by name, elementwise by number).
Level 3: 001 3x, 002 ill-conditioned 0.8x, 003 correct under collect-v1 but
incorrect under collect-v2 (the latest protocol decides: not correct).
Below eager, with the GPU's ceilings (3000 GB/s, 60 TFLOP/s): level1/019 has a 1.5 ms
floor that eager (1 ms) beats; level2/002 a 1 ms one (eager 100%, kernel 50%, profiled
compute-bound); level3/002 a 2 ms one (eager 100%, kernel 80%: both reached it).
Search sessions (schema v6): level 2, 60 s, 60 evaluations, whose 5 evaluations (made in
its window) have trials of 48 s: 60.0 per GPU-minute, 80.0% busy; level 3, 120 s, 30
evaluations, 4 evaluations with 30 s: 15.0, 25.0%; all levels: 180 s, 90, 78 s: 30.0,
43.3%. Level 1's evaluations (100 s of trials) lie outside every window; a compile-only
level-1 session of 30 s and 10 evaluations: 20.0 per minute, no busy figure."""
import hashlib
import json
import os
import sqlite3
import sys

GPU = "NVIDIA H100 80GB HBM3"
T0 = "2026-11-27T00:00:00Z"
RUN = "run_levels"
# level: (session start, end, wall s, evaluations, when its evaluations were made, trial ms each)
SESSIONS = {2: ("2026-11-27T01:00:00Z", "2026-11-27T01:01:00Z", 60.0, 60, "2026-11-27T01:00:30Z", 4800.0),
            3: ("2026-11-27T01:10:00Z", "2026-11-27T01:12:00Z", 120.0, 30, "2026-11-27T01:11:00Z", 3750.0)}
# id, kernelbench file, spec flags, {variant: ms}, KernelBench H100 eager ms,
# kernels [(round, status, ms, categories, protocol)]
PROBLEMS = [
    ("level1/001_Matmul", "1_Matmul.py", {}, {"eager": 2.0}, None,
     [(1, "correct", 1.0, ["memory"], "collect-v2")]),
    ("level1/019_ReLU", "19_ReLU.py", {"flops": 9e10}, {"eager": 1.0}, None,
     [(1, "correct", 2.0, ["memory"], "collect-v2")]),
    ("level2/001_Conv_ReLU", "1_Conv_ReLU.py", {},
     {"eager": 4.0, "eager_notf32": 8.0, "compile": 2.0}, 8.0,
     [(0, "correct", 3.2, [], "collect-v2"), (1, "correct", 1.6, ["memory"], "collect-v2")]),
    ("level2/002_Gemm_Softmax", "2_Gemm_Softmax.py", {"flops": 6e10, "min_bytes": 3e8}, {"eager": 1.0}, 1.0,
     [(1, "correct", 2.0, ["memory", "compute"], "collect-v2")]),
    ("level2/023_Conv_Mean", "23_Conv_Mean.py", {"degenerate": "constant: the mean of normalized values is 0"},
     {"eager": 5.0}, 5.0, [(1, "correct", 0.5, ["memory"], "collect-v2")]),
    ("level2/005_Fails", "5_Fails.py", {}, {"eager": 1.0}, 1.0,
     [(1, "incorrect", None, ["compute"], "collect-v2")]),
    ("level3/001_MLP", "1_MLP.py", {}, {"eager": 3.0}, 6.0,
     [(1, "correct", 1.0, ["parallelism"], "collect-v2")]),
    ("level3/002_Deep", "2_Deep.py", {"ill_conditioned": "fp32 rounding over 100 layers", "min_bytes": 6e9},
     {"eager": 2.0}, None, [(1, "correct", 2.5, ["parallelism"], "collect-v2")]),
    ("level3/003_Stale", "3_Stale.py", {}, {"eager": 1.0}, None,
     [(1, "correct", 0.1, ["control"], "collect-v1"), (1, "incorrect", None, ["control"], "collect-v2")]),
]


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def main():
    store, kbdir = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(store)
    db.execute("PRAGMA foreign_keys = ON")
    ins = lambda t, row: db.execute("INSERT INTO %s(%s) VALUES(%s)" % (  # noqa: E731
        t, ",".join(row), ",".join("?" * len(row))), list(row.values()))
    ins("gpus", {"name": GPU, "arch": "sm_90", "peak_bw_gbs": 3000.0, "peak_fp32_tflops": 60.0,
                 "first_seen": T0})
    ins("runs", {"id": RUN, "created_at": T0, "finished_at": T0, "status": "finished",
                 "strategy": "branch", "proposer": "builtin", "model": "builtin", "seed": 1,
                 "config": json.dumps({"rounds": 1, "k": 1, "m": 1, "protocol": "collect-v2"}),
                 "gpu_name": GPU, "kforge_version": "test"})
    kb = {}
    for pid, kbfile, flags, base, kbms, kernels in PROBLEMS:
        level, number = int(pid[5]), int(pid.split("/")[1][:3])
        flags = dict(flags)
        work = {k: flags.pop(k) for k in ("flops", "min_bytes") if k in flags}
        spec = dict({"id": pid, "level": level, "number": number, "family": "graph"}, **flags)
        ins("problems", {"id": pid, "level": level, "number": number, "name": pid.split("_", 1)[1],
                         "kernelbench_file": kbfile, "family": "graph" if level > 1 else
                         ("matmul" if number == 1 else "activation"),
                         "spec": json.dumps(spec), "spec_sha256": sha(json.dumps(spec)), **work})
        for v, ms in base.items():
            ins("baselines", {"problem_id": pid, "gpu_name": GPU, "variant": v, "mean_ms": ms,
                              "imported_at": T0})
        if kbms:
            kb.setdefault("level%d" % level, {})[kbfile] = {"mean": kbms, "hardware": GPU}
        for rnd in sorted({k[0] for k in kernels}):
            ins("rounds", {"run_id": RUN, "problem_id": pid, "round": rnd, "status": "done",
                           "started_at": T0})
        for i, (rnd, status, ms, cats, proto) in enumerate(kernels):
            # One kernel per (round, categories): 003_Stale's two evaluations are of one kernel.
            src = "// %s round %d %s\nextern \"C\" __global__ void k() {}\n" % (pid, rnd, ",".join(cats))
            h = sha(src)
            if not db.execute("SELECT 1 FROM kernels WHERE hash = ?", (h,)).fetchone():
                ins("kernels", {"hash": h, "source": src, "bytes": len(src), "created_at": T0})
            idea = None
            if cats and proto == "collect-v2":
                idea = "idea_%s_%d" % (pid.replace("/", "_"), i)
                ins("ideas", {"id": idea, "run_id": RUN, "problem_id": pid, "round": rnd,
                              "text": "an idea", "source": "builtin", "created_at": T0})
                for c in cats:
                    ins("idea_categories", {"idea_id": idea, "category": c, "method": "catalogue"})
            if proto == "collect-v2":
                ins("candidates", {"id": "cand_%s_%d" % (pid.replace("/", "_"), i), "run_id": RUN,
                                   "problem_id": pid, "round": rnd, "idea_id": idea,
                                   "impl_index": 0, "kernel_hash": h, "status": status,
                                   "created_at": T0})
            eid = sha("%s|%s|%s|%s" % (h, pid, GPU, proto))
            made = SESSIONS[level][4] if level in SESSIONS else T0
            ins("evals", {"id": eid, "kernel_hash": h, "problem_id": pid, "gpu_name": GPU,
                          "protocol": proto, "protocol_params": "{}", "status": status,
                          "time_mean_ms": ms, "n_trials": 100 if ms else 0, "created_at": made})
            # a check and a timed trial; level 1's 50 s each, outside every session
            tms = SESSIONS[level][5] if level in SESSIONS else 50000.0
            for kind in ("check", "time"):
                ins("eval_trials", {"eval_id": eid, "kind": kind, "idx": 0, "time_ms": tms})
            if pid == "level2/002_Gemm_Softmax":
                ins("profiles", {"eval_id": eid, "kernel_hash": h, "problem_id": pid, "gpu_name": GPU,
                                 "limiter": "compute", "launches": 1, "kernel_ms": ms, "cost_ms": 500.0,
                                 "tool": "test", "created_at": T0})
    for level, (t0, t1, wall, n, _, _) in SESSIONS.items():
        pids = [p[0] for p in PROBLEMS if p[0].startswith("level%d/" % level)]
        ins("search_sessions", {"id": "session_level%d" % level, "run_id": RUN, "gpu_name": GPU,
                                "started_at": t0, "ended_at": t1, "wall_s": wall, "status": "stopped",
                                "problems": json.dumps(pids), "levels": json.dumps([level]),
                                "evaluations": n, "candidates": n, "jobs": 1, "kforge_version": "test"})
    ins("search_sessions", {"id": "session_compile_only", "run_id": RUN, "gpu_name": None,
                            "started_at": "2026-11-27T02:00:00Z", "ended_at": "2026-11-27T02:00:30Z",
                            "wall_s": 30.0, "status": "finished", "problems": json.dumps(["level1/001_Matmul"]),
                            "levels": "[1]", "evaluations": 10, "candidates": 10, "jobs": 2,
                            "kforge_version": "test"})
    db.commit()
    os.makedirs(kbdir, exist_ok=True)
    with open(os.path.join(kbdir, "H100_Modal_baseline_time_torch.json"), "w") as f:
        json.dump(kb, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
