#!/usr/bin/env python3
"""Times PyTorch eager and torch.compile (inductor, default mode) on each
problem with kforge's protocol: the module of reference.py in training mode
(KernelBench's: BatchNorm on batch statistics, dropout drawn as PyTorch
draws it), inputs from its get_inputs() on the GPU, 3 warm-ups, 100 timed
trials, the L2 flushed before each trial (writing a buffer well over the L2
size), CUDA events around the call.

Variants: eager (PyTorch's defaults: cuDNN may use TF32), eager_notf32
(TF32 off for matmuls and cuDNN while it is timed, restored after), compile.
Writes KernelBench's baseline layout, merged into what is there:
  problems/baselines/<gpu>/baseline_time_torch.json                   eager
  problems/baselines/<gpu>/baseline_time_torch_notf32.json            eager_notf32
  problems/baselines/<gpu>/baseline_time_torch_compile_inductor_default.json  compile
  {"level1": {"<file>.py": {"mean", "std", "min", "max", "median",
                            "num_trials", "hardware", "device"}}}   (milliseconds)
Load them with `kforge baselines import FILE --gpu NAME --variant V`.

  tools/torch_baseline.py [--level 1|2|3] [--problems 19,23,40-45]
                          [--variant eager|eager_notf32|compile|both|all|LIST]
                          [--gpu NAME] [--trials 100] [--warmup 3] [--flush-mb 256]
                          [--time-budget SEC] [--record FILE] [--dry-run]
                          [--warm-jobs N [--warm-timeout SEC]]

--time-budget stops cleanly: no measurement starts past the budget, nor one
whose variant already took longer than what is left; --record FILE says what
was done, what failed and what was not run, rewritten after each measurement.

--warm-jobs N (compile only): before timing, N processes compile a share of
the problems each and run them once, untimed, filling inductor's on-disk caches
(FX graph, AOTAutograd, Triton); the timed pass, alone on the GPU, then finds
its graphs compiled. Same kernels, less wall time: cold, torch.compile takes
1-80 s a problem (level 3's RNNs the longest). The warm pass counts against
--time-budget; --warm-timeout (default: half the budget, else none) kills it."""
import argparse
import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfproblems  # noqa: E402

FILES = {"eager": "baseline_time_torch.json",
         "eager_notf32": "baseline_time_torch_notf32.json",
         "compile": "baseline_time_torch_compile_inductor_default.json"}


def time_fn(fn, args, trials, warmup, flush):
    import torch
    cuda = flush.is_cuda
    for _ in range(warmup):
        fn(*args)
    if cuda:
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(trials):
        flush.zero_()  # evicts the L2
        if cuda:
            start.record()
            fn(*args)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        else:  # --device cpu: a smoke test of this script, not a baseline
            t0 = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - t0) * 1e3)
    n = len(times)
    mean = sum(times) / n
    std = math.sqrt(sum((t - mean) ** 2 for t in times) / (n - 1)) if n > 1 else 0.0
    s = sorted(times)
    median = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    return {"mean": round(mean, 6), "std": round(std, 6), "min": round(s[0], 6),
            "max": round(s[-1], 6), "median": round(median, 6), "num_trials": n}


def merge_write(path, level, key, entry):
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data.setdefault("level%d" % level, {})[key] = entry
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


def parse_variants(text):
    """'eager,compile' / 'both' (eager, compile) / 'all' -> the list, in FILES order."""
    want = set()
    for v in text.split(","):
        v = v.strip()
        if v == "both":
            want.update(("eager", "compile"))
        elif v == "all":
            want.update(FILES)
        elif v in FILES:
            want.add(v)
        else:
            raise ValueError("unknown variant '%s' (eager, eager_notf32, compile, both, all)" % v)
    return [v for v in FILES if v in want]


def warm_shares(nums, jobs):
    """Problem numbers dealt round-robin into at most `jobs` comma lists."""
    return [",".join(str(n) for n in nums[i::jobs]) for i in range(min(jobs, len(nums)))]


def warm_commands(args, nums):
    """One child command line per share: compile, one untimed run, results
    thrown away; each child's --record says what it did."""
    out = os.path.join(tempfile.gettempdir(), "kf-warm-%d" % os.getpid())
    return [[sys.executable, os.path.abspath(__file__), "--root", args.root, "--level", str(args.level),
             "--problems", share, "--variant", "compile", "--trials", "1", "--warmup", "1",
             "--flush-mb", "1", "--device", args.device, "--gpu", "warm", "--out", out,
             "--record", os.path.join(out, "rec%d.json" % i)]
            for i, share in enumerate(warm_shares(nums, args.warm_jobs))], out


def warm(args, nums, timeout):
    """Runs the warm pass; {"jobs", "seconds", "compiled", "failed", "killed",
    "crashed"} from the children's records (crashed: ended with no record, or
    with an error the record does not show; its last output line kept)."""
    cmds, out = warm_commands(args, nums)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(max(1, (os.cpu_count() or 1) // len(cmds))))
    t0, procs = time.time(), []
    for i, c in enumerate(cmds):
        with open(os.path.join(out, "log%d.txt" % i), "w") as log:
            procs.append(subprocess.Popen(c, stdout=log, stderr=subprocess.STDOUT, env=env))
    res = {"jobs": len(cmds), "seconds": 0.0, "compiled": 0, "failed": 0, "killed": 0, "crashed": []}
    for i, p in enumerate(procs):
        try:
            p.wait(timeout=max(1.0, timeout - (time.time() - t0)) if timeout else None)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            res["killed"] += 1
        try:
            with open(os.path.join(out, "rec%d.json" % i)) as f:
                rec = json.load(f)
            res["compiled"] += len(rec["done"])
            res["failed"] += len(rec["failed"])
            ok = p.returncode in (0, -9) or rec["failed"]  # killed, or its errors recorded
        except (OSError, ValueError, KeyError):
            ok = p.returncode == -9
        if not ok:
            with open(os.path.join(out, "log%d.txt" % i)) as f:
                last = ([l.strip() for l in f if l.strip()] or ["no output"])[-1]
            res["crashed"].append("job %d exit %d: %s" % (i, p.returncode, last[:200]))
    shutil.rmtree(out, ignore_errors=True)
    res["seconds"] = round(time.time() - t0, 1)
    return res


class Record:
    """What a run did, rewritten after every measurement (--record): a time
    limit that kills the process still leaves what was done."""

    def __init__(self, path, args, variants, todo):
        self.path = path
        self.doc = {"level": args.level, "variants": variants, "time_budget_s": args.time_budget,
                    "problems": len(todo), "done": [], "failed": [], "not_run": [],
                    "stopped": "running", "seconds": 0.0}
        self.t0 = time.time()
        self.write()

    def add(self, key, item):
        self.doc[key].append(item)
        self.write()

    def finish(self, why):
        self.doc["stopped"] = why
        self.write()

    def write(self):
        self.doc["seconds"] = round(time.time() - self.t0, 1)
        if not self.path:
            return
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        with open(self.path + ".tmp", "w") as f:
            json.dump(self.doc, f, indent=2)
            f.write("\n")
        os.replace(self.path + ".tmp", self.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--problems", default="")
    ap.add_argument("--level", type=int, default=1, help="1, 2 or 3")
    ap.add_argument("--variant", default="eager",
                    help="eager, eager_notf32, compile, a comma list, both (eager,compile) or all")
    ap.add_argument("--gpu", help="directory name under problems/baselines (default: the device name)")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--flush-mb", type=int, default=256)
    ap.add_argument("--out", help="baselines directory (default ROOT/problems/baselines)")
    ap.add_argument("--device", default="cuda:0", help="cuda:N, or cpu for a smoke test")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="seconds: start no measurement past them, nor one likely to overrun them (0: none)")
    ap.add_argument("--record", help="write what the run did (done, failed, not run, why it stopped) here")
    ap.add_argument("--warm-jobs", type=int, default=0,
                    help="compile in N processes first, untimed, to fill inductor's caches (compile only)")
    ap.add_argument("--warm-timeout", type=float, default=None,
                    help="seconds before the warm pass is killed (default: half of --time-budget, else none)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the problems and the files they go to; no torch needed (needs --gpu)")
    args = ap.parse_args()
    kfproblems.check_level(ap, args.level)
    if args.level == 3 and not args.dry_run:
        kfproblems.ensure_einops()
    try:
        variants = parse_variants(args.variant)
    except ValueError as e:
        ap.error(str(e))
    if args.time_budget < 0 or args.trials < 1 or args.warmup < 0 or args.flush_mb < 1:
        ap.error("--time-budget >= 0, --trials >= 1, --warmup >= 0 and --flush-mb >= 1")
    if not 0 <= args.warm_jobs <= 64 or (args.warm_timeout is not None and args.warm_timeout <= 0):
        ap.error("--warm-jobs from 0 to 64 and --warm-timeout > 0")
    todo = kfproblems.problem_dirs(args.root, args.level, args.problems)
    if not todo:
        ap.error("no level-%d problem matches '%s' under %s" % (args.level, args.problems, args.root))
    base = args.out or os.path.join(args.root, "problems", "baselines")
    if args.dry_run:
        if not args.gpu:
            ap.error("--dry-run needs --gpu")
        for num, d in todo:
            spec = kfproblems.load_spec(d)
            for v in variants:
                print("%s %s level%d/%s" % (spec["id"], os.path.join(base, args.gpu, FILES[v]), args.level,
                                            spec["kernelbench_file"]))
        if args.warm_jobs and "compile" in variants:
            for c in warm_commands(args, [n for n, _ in todo])[0]:
                print("warm: " + " ".join(c[2:]))
        return 0
    # The warm pass and this process share inductor's caches on disk.
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")
    t_start = time.time()
    warmed = None
    if args.warm_jobs and "compile" in variants:
        limit = args.warm_timeout or (args.time_budget / 2 if args.time_budget else None)
        warmed = warm(args, [n for n, _ in todo], limit)
        print("warm: %d jobs, %.0f s, %d compiled, %d failed, %d killed at the time limit, %d crashed" %
              (warmed["jobs"], warmed["seconds"], warmed["compiled"], warmed["failed"], warmed["killed"],
               len(warmed["crashed"])), flush=True)
        for c in warmed["crashed"]:
            print("warm: " + c, flush=True)
    import torch
    dev = torch.device(args.device)
    hw = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    gpu = args.gpu or re.sub(r"[^A-Za-z0-9._-]+", "_", hw).strip("_")
    outdir = os.path.join(base, gpu)
    flush = torch.empty(args.flush_mb << 18, dtype=torch.float32, device=dev)
    rec = Record(args.record, args, variants, todo)
    rec.t0 = t_start  # the budget counts the warm pass
    if warmed:
        rec.doc["warm"] = warmed
    failed, longest, stop = 0, {}, None
    for num, d in todo:
        spec = kfproblems.load_spec(d)
        if stop:
            rec.add("not_run", {"id": spec["id"], "variants": variants})
            continue
        try:
            ns = kfproblems.load_reference(d)
            torch.manual_seed(num)
            model = kfproblems.build_model(ns, dev)
            model.train()  # KernelBench's mode (BatchNorm on batch statistics, dropout drawn)
            # Draw on the device: CPU draws of multi-GB inputs take minutes.
            if hasattr(dev, "__enter__"):  # torch >= 2.0
                with dev:
                    raw = ns["get_inputs"]()
            else:
                raw = ns["get_inputs"]()
            inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in raw]
        except Exception as e:  # report, go on with the next problem
            failed += 1
            rec.add("failed", {"id": spec["id"], "variant": "setup", "error": "%s: %s" % (type(e).__name__, e)})
            print("%-52s error   %s: %s" % (spec["id"], type(e).__name__, e), flush=True)
            continue
        for v in variants:
            left = args.time_budget - (time.time() - rec.t0)
            if args.time_budget and (left <= 0 or left < longest.get(v, 0)):
                stop = "time budget (%.0f s) spent" % args.time_budget
                rec.add("not_run", {"id": spec["id"], "variants": variants[variants.index(v):]})
                break
            t0 = time.time()
            try:
                with torch.no_grad(), (kfproblems.NoTF32() if v == "eager_notf32" else contextlib.nullcontext()):
                    fn = torch.compile(model, backend="inductor") if v == "compile" else model
                    r = time_fn(fn, inputs, args.trials, args.warmup, flush)
                r.update(hardware=hw, device=str(dev))
                merge_write(os.path.join(outdir, FILES[v]), args.level, spec["kernelbench_file"], r)
                rec.add("done", {"id": spec["id"], "variant": v, "mean": r["mean"],
                                 "seconds": round(time.time() - t0, 1)})
                print("%-52s %-12s mean %9.4f ms  median %9.4f  std %8.4f  (%.0fs)" %
                      (spec["id"], v, r["mean"], r["median"], r["std"], time.time() - t0), flush=True)
            except Exception as e:  # report, go on with the next one
                failed += 1
                rec.add("failed", {"id": spec["id"], "variant": v, "error": "%s: %s" % (type(e).__name__, e)})
                print("%-52s %-12s error %s: %s" % (spec["id"], v, type(e).__name__, e), flush=True)
                if isinstance(e, kfproblems.TF32RestoreError):  # eager would be timed without TF32
                    stop = str(e)
                    break
            longest[v] = max(longest.get(v, 0), time.time() - t0)
            if v == "compile":
                torch._dynamo.reset()
        del inputs, model
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    rec.finish(stop or "finished")
    print("baselines in %s; %d measurement(s) failed; %d done%s" %
          (outdir, failed, len(rec.doc["done"]), "; stopped: " + stop if stop else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
