#!/usr/bin/env python3
"""Times PyTorch eager and torch.compile (inductor, default mode) on each
problem with kforge's protocol: inputs from reference.py's get_inputs() on
the GPU, 3 warm-ups, 100 timed trials, the L2 flushed before each trial
(writing a buffer well over the L2 size), CUDA events around the call.

Writes KernelBench's baseline layout, merged into what is there:
  problems/baselines/<gpu>/baseline_time_torch.json
  problems/baselines/<gpu>/baseline_time_torch_compile_inductor_default.json
  {"level1": {"<file>.py": {"mean", "std", "min", "max", "median",
                            "num_trials", "hardware", "device"}}}   (milliseconds)
Load them with `kforge baselines import FILE --gpu NAME --variant eager|compile`.

  tools/torch_baseline.py [--problems 19,23,40-45] [--variant eager|compile|both]
                          [--gpu NAME] [--trials 100] [--warmup 3] [--flush-mb 256]"""
import argparse
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfproblems  # noqa: E402

FILES = {"eager": "baseline_time_torch.json",
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--problems", default="")
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--variant", choices=["eager", "compile", "both"], default="eager")
    ap.add_argument("--gpu", help="directory name under problems/baselines (default: the device name)")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--flush-mb", type=int, default=256)
    ap.add_argument("--out", help="baselines directory (default ROOT/problems/baselines)")
    ap.add_argument("--device", default="cuda:0", help="cuda:N, or cpu for a smoke test")
    args = ap.parse_args()
    import torch
    dev = torch.device(args.device)
    hw = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    gpu = args.gpu or re.sub(r"[^A-Za-z0-9._-]+", "_", hw).strip("_")
    outdir = os.path.join(args.out or os.path.join(args.root, "problems", "baselines"), gpu)
    flush = torch.empty(args.flush_mb << 18, dtype=torch.float32, device=dev)
    variants = ["eager", "compile"] if args.variant == "both" else [args.variant]
    failed = 0
    for num, d in kfproblems.problem_dirs(args.root, args.level, args.problems):
        spec = kfproblems.load_spec(d)
        try:
            ns = kfproblems.load_reference(d)
            torch.manual_seed(num)
            model = kfproblems.build_model(ns, dev)
            # Draw on the device: CPU draws of multi-GB inputs take minutes.
            if hasattr(dev, "__enter__"):  # torch >= 2.0
                with dev:
                    raw = ns["get_inputs"]()
            else:
                raw = ns["get_inputs"]()
            inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in raw]
            for v in variants:
                t0 = time.time()
                with torch.no_grad():
                    fn = model if v == "eager" else torch.compile(model, backend="inductor")
                    r = time_fn(fn, inputs, args.trials, args.warmup, flush)
                r.update(hardware=hw, device=str(dev))
                merge_write(os.path.join(outdir, FILES[v]), args.level, spec["kernelbench_file"], r)
                print("%-52s %-7s mean %9.4f ms  median %9.4f  std %8.4f  (%.0fs)" %
                      (spec["id"], v, r["mean"], r["median"], r["std"], time.time() - t0), flush=True)
                if v == "compile":
                    torch._dynamo.reset()
            del inputs, model
        except Exception as e:  # report, go on with the next problem
            failed += 1
            print("%-52s error   %s: %s" % (spec["id"], type(e).__name__, e), flush=True)
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    print("baselines in %s; %d problem(s) failed" % (outdir, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
