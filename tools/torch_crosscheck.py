#!/usr/bin/env python3
"""Cross-checks kforge's problems against PyTorch itself.

kforge writes, per problem, a directory DUMP/<NNN_Name>/ holding spec.json,
inputs/<name>.npy and oracle/<name>.json (the CPU oracle's double-precision
values at a sample of output indices), with
  kforge problems inputs ID --out DUMP/<NNN_Name> [--seed S] [--samples N]
and, when the engine writes them, outputs/<name>.npy (the GPU reference's
full outputs; preferred when present). This tool runs the PyTorch module of
the problem's reference.py on those inputs and compares at the spec's
tolerance (fp32: atol = rtol = 1e-4). `kforge problems check` compares the
GPU reference with the same oracle, so the two together tie reference.cu
to PyTorch.

  tools/torch_crosscheck.py --dump DUMP [--level 1|2|3] [--problems 19,23,40-45]
                            [--device cuda] [--torch-defaults] [--json REPORT]
                            [--kforge KFORGE [--seed S] [--inputs-timeout SEC]
                             [--gpu-reference [--samples N]]] [--dry-run]

With --kforge, each problem is dumped just before its check (kforge problems
inputs) and its dump deleted after it: full-size dumps of all 100 problems
do not fit one disk, and one process avoids importing torch 100 times.
--gpu-reference samples reference.cu (kforge problems inputs --gpu-reference)
instead of the CPU oracle: level 3's deep models, where the oracle at full
size costs minutes per problem; `kforge problems check` ties the two where
the oracle is affordable. Level 3: params by torch_param (state_dict) or
torch_attr (a plain tensor attribute), forward's tensors in spec order,
torch.randn inside forward returns the `randn` inputs.

The module runs in training mode (KernelBench's: BatchNorm on batch
statistics). Parameters (role "param") are copied into the module: by their
torch_param name (state_dict key; level 2; a module parameter the spec lacks
is NaN, so that a read of it fails the check), else in the order of
model.parameters() (level 1). A level-2 dropout is made the graph's:
x * mask / (1 - p) with the problem's mask input (docs/graph-ir.md). By
default TF32 is off, so PyTorch computes in true fp32; --torch-defaults keeps
PyTorch's defaults (cuDNN convolutions may then use TF32 and differ by more
than 1e-4). --dry-run lists what would be checked (kforge ID, dump
directory) without torch.
Exit 0 when every checked problem agrees, 1 otherwise."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfproblems  # noqa: E402

TOL = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2, "exact": 0.0}


def load_npy(path, dtype):
    import numpy as np
    import torch
    a = np.load(path)
    if dtype == "bfloat16":  # stored as raw uint16 bits
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a)


def run_forward(d, spec, tensors, device, float64, level):
    """KernelBench's module of problem d on `tensors` (name -> tensor on
    device): (outputs, None), or (None, why)."""
    import torch
    ns = kfproblems.load_reference(d)
    torch.manual_seed(0)
    model = kfproblems.build_model(ns, device)
    model.train()  # KernelBench's mode: BatchNorm on batch statistics
    if float64:
        model = model.double()
        tensors = {k: (v.double() if v.is_floating_point() else v) for k, v in tensors.items()}
    why = kfproblems.copy_params(model, spec, tensors)
    if why:
        return None, why
    masks = set(name for name, _ in kfproblems.mask_nodes(spec))
    fwd_inputs = [t["name"] for t in spec["inputs"] if t["role"] == "input" and t["name"] not in masks]
    names = kfproblems.forward_arg_names(model)
    fargs = []
    pos = 0
    drawn = []
    if level == 3:
        # forward's tensors in spec order (arguments with defaults too: 33's
        # initial_hidden); torch.randn inside forward returns the `randn` inputs
        drawn = [tensors[n] for n in fwd_inputs if n.startswith("randn")]
        fargs = [tensors[n] for n in fwd_inputs if not n.startswith("randn")]
        names = []
    for n in names:
        if n in tensors and n not in masks:
            fargs.append(tensors[n])
        elif n in spec.get("scalars", {}):
            fargs.append(spec["scalars"][n])
        else:  # positional fallback, in spec order
            while pos < len(fwd_inputs) and fwd_inputs[pos] in names:
                pos += 1
            if pos >= len(fwd_inputs):
                return None, "forward argument %s has no input" % n
            fargs.append(tensors[fwd_inputs[pos]])
            pos += 1
    real_randn = torch.randn
    if drawn:
        torch.randn = lambda *a, **k: drawn.pop(0)
    try:
        with torch.no_grad(), kfproblems.MaskedDropout(spec, tensors):
            out = model(*fargs)
    finally:
        torch.randn = real_randn
    return list(out) if isinstance(out, (tuple, list)) else [out], None


def load_inputs(spec, pdir, device):
    return {t["name"]: load_npy(os.path.join(pdir, "inputs", t["name"] + ".npy"), t["dtype"]).to(device)
            for t in spec["inputs"]}


def redraw(spec, tensors, bound, seed):
    """The engine's extra draw (engine/worker_eval.c dist_override): float
    inputs drawn uniform or normal without a post op become U[-r, r) (bound
    r) or N(0, 1) (bound None); parameters PyTorch sets to a constant c
    become U[c-1, c+1)."""
    import torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    out = dict(tensors)
    for t in spec["inputs"]:
        x = tensors[t["name"]]
        dist = t.get("dist", {})
        if not x.is_floating_point() or dist.get("post"):
            continue
        if t["role"] == "input" and dist.get("kind") in ("uniform", "normal"):
            lo, hi = (-bound, bound) if bound is not None else (0.0, 0.0)
        elif t["role"] == "param" and dist.get("kind") == "constant":
            c = float(dist.get("value", 0.0))
            lo, hi = c - 1.0, c + 1.0
        else:
            continue
        if bound is None and t["role"] == "input":
            v = torch.randn(x.shape, generator=g, dtype=torch.float64)
        else:
            v = lo + (hi - lo) * torch.rand(x.shape, generator=g, dtype=torch.float64)
        out[t["name"]] = v.to(x.dtype).to(x.device)
    return out


def judge(a, b, tol):
    """The engine's verdict on fp32 output a against exact b on an extra draw:
    every element within atol + rtol*|b|, or (no NaN) the largest error
    within atol + rtol*max|b| (worker_eval.c, normwise)."""
    a, b = a.double(), b.double()
    diff = (a - b).abs()
    bad = ~(diff <= tol + tol * b.abs())
    nan = bool(torch_isnan_any(a))
    maxabs = float(diff.max()) if diff.numel() else 0.0
    scale = float(b.abs().max()) if b.numel() else 0.0
    ok = not bool(bad.any()) or (not nan and maxabs <= tol + tol * scale)
    return {"ok": ok, "max_abs": maxabs, "max_ref": scale, "mismatches": int(bad.sum()), "nan": nan}


def torch_isnan_any(a):
    import torch
    return torch.isnan(a).any()


def condition_one(d, dump, device, args):
    """PyTorch's own fp32 forward (TF32 off) against its float64 forward on
    the extra draw, at each bound of --bounds (descending) until one passes:
    where fp32 itself misses at r = 100, no kernel can pass that draw."""
    import torch
    spec = kfproblems.load_spec(d)
    pdir = os.path.join(dump, os.path.basename(d))
    res = {"id": spec["id"], "status": "skipped", "draw": args.draw, "bounds": []}
    if not os.path.isdir(os.path.join(pdir, "inputs")):
        res["reason"] = "no inputs in %s" % pdir
        return res
    base = load_inputs(spec, pdir, device)
    tol = TOL[spec["tolerance"]]
    bounds = [float(x) for x in args.bounds.split(",")] if args.draw == "wide" else [None]
    for r in bounds:
        tensors = redraw(spec, base, r, args.seed)
        got, why = run_forward(d, spec, tensors, device, False, args.level)
        if why:
            res.update(status="error", reason=why)
            return res
        exact, why = run_forward(d, spec, tensors, device, True, args.level)
        if why:
            res.update(status="error", reason=why)
            return res
        outs = [dict(judge(a, b, tol), name=t["name"]) for t, a, b in zip(spec["outputs"], got, exact)]
        del got, exact
        ok = all(o["ok"] for o in outs)
        res["bounds"].append({"bound": r, "ok": ok, "outputs": outs})
        if ok:
            res.update(status="ok", largest_passing=r)
            break
    else:
        res["status"] = "FAIL"
    return res


def check_one(d, dump, device, args):
    import torch
    spec = kfproblems.load_spec(d)
    base = os.path.basename(d)
    pdir = os.path.join(dump, base)
    res = {"id": spec["id"], "status": "skipped"}
    if not os.path.isdir(os.path.join(pdir, "inputs")):
        res["reason"] = "no inputs in %s" % pdir
        return res
    tensors = load_inputs(spec, pdir, device)
    outs, why = run_forward(d, spec, tensors, device, args.float64, args.level)
    if why:
        res.update(status="error", reason=why)
        return res
    tol = TOL[spec["tolerance"]]
    res.update(status="ran", outputs=[])
    ok = True
    for t, o in zip(spec["outputs"], outs):
        path = os.path.join(pdir, "outputs", t["name"] + ".npy")
        opath = os.path.join(pdir, "oracle", t["name"] + ".json")
        entry = {"name": t["name"], "shape": list(o.shape)}
        want = 1
        for x in t["shape"]:
            want *= spec["sizes"][x] if isinstance(x, str) else x
        if o.numel() != want:  # flat oracle indices would point elsewhere
            entry.update(status="FAIL", reason="PyTorch gives %d elements, the spec %d" % (o.numel(), want))
            ok = False
            res["outputs"].append(entry)
            continue
        if not os.path.exists(path) and os.path.exists(opath):
            # kforge's CPU oracle (or GPU reference) at a sample of flat indices
            with open(opath) as f:
                smp = json.load(f)
            idx = torch.tensor(smp["index"], dtype=torch.long, device=o.device)
            b = o.reshape(-1)[idx].double()
            # a null value (NaN or inf in kforge) never matches
            a = torch.tensor([float("nan") if v is None else v for v in smp["value"]],
                             dtype=torch.float64, device=o.device)
            diff = (a - b).abs()
            bad = ~(diff <= tol + tol * b.abs())
            entry.update(source=smp.get("source", "cpu oracle") + " sample", samples=len(smp["index"]),
                         max_abs=float(diff.max()), mismatches=int(bad.sum()),
                         status="ok" if not bool(bad.any()) else "FAIL")
            if bad.any():
                k = int(bad.nonzero()[0][0])
                entry["first_mismatch"] = {"index": smp["index"][k], "kforge": smp["value"][k],
                                           "torch": float(b[k])}
            ok = ok and entry["status"] == "ok"
            res["outputs"].append(entry)
            continue
        if not os.path.exists(path):
            entry["status"] = "no kforge output"
            res["outputs"].append(entry)
            continue
        ref = load_npy(path, t["dtype"]).to(device)
        if tuple(ref.shape) != tuple(o.shape) and ref.numel() == o.numel():
            ref = ref.reshape(o.shape)
        if tuple(ref.shape) != tuple(o.shape):
            entry.update(status="FAIL", reason="shape %s vs PyTorch %s" % (tuple(ref.shape), tuple(o.shape)))
            ok = False
            res["outputs"].append(entry)
            continue
        a, b = ref.double(), o.double()
        diff = (a - b).abs()
        bad = ~(diff <= tol + tol * b.abs())
        entry.update(max_abs=float(diff.max()) if diff.numel() else 0.0,
                     max_rel=float((diff / b.abs().clamp_min(1e-30)).max()) if diff.numel() else 0.0,
                     mismatches=int(bad.sum()), status="ok" if not bool(bad.any()) else "FAIL")
        ok = ok and entry["status"] == "ok"
        res["outputs"].append(entry)
    res["status"] = "ok" if ok and all(e.get("status") == "ok" for e in res["outputs"]) else (
        "FAIL" if not ok else "ran")
    return res


def dump_one(args, d, pdir):
    """kforge problems inputs for problem d into pdir (bounded in time)."""
    import subprocess
    env = dict(os.environ, KFORGE_ROOT=args.root)
    extra = ["--gpu-reference", "--samples", str(args.samples)] if args.gpu_reference else []
    if args.draw:
        extra = ["--inputs-only"]
    subprocess.run([args.kforge, "problems", "inputs", kfproblems.kforge_id(args.level, d), "--out", pdir,
                    "--seed", str(args.seed)] + extra, check=True, stdout=subprocess.DEVNULL, env=env,
                   timeout=args.inputs_timeout)


def write_report(path, results):
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--dump", required=True, help="directory of per-problem dumps")
    ap.add_argument("--problems", default="", help="numbers, ranges, name substrings: 19,23,40-45,Softmax")
    ap.add_argument("--level", type=int, default=1, help="1, 2 or 3")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--torch-defaults", action="store_true", help="keep PyTorch's TF32 defaults")
    ap.add_argument("--float64", action="store_true",
                    help="run the module in float64 (tells PyTorch's fp32 rounding from a wrong reference)")
    ap.add_argument("--json", help="write the full report here")
    ap.add_argument("--kforge", help="dump each problem with this kforge first, delete it after")
    ap.add_argument("--seed", type=int, default=1, help="input seed for --kforge dumps")
    ap.add_argument("--gpu-reference", action="store_true",
                    help="--kforge dumps sample the GPU reference instead of the CPU oracle "
                         "(kforge problems inputs --gpu-reference; level 3's deep models)")
    ap.add_argument("--samples", type=int, default=4096, help="values per output with --gpu-reference")
    ap.add_argument("--inputs-timeout", type=float, default=900,
                    help="seconds one --kforge dump may take (900)")
    ap.add_argument("--draw", choices=["wide", "normal"],
                    help="no kforge output: PyTorch fp32 against PyTorch float64 on the engine's extra "
                         "draw (is the problem fp32-conditioned there?)")
    ap.add_argument("--bounds", default="100,10,4,2,1",
                    help="--draw wide: the bounds r of U[-r, r) to try, largest first (100,10,4,2,1)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print each problem's kforge ID and dump directory; no torch needed")
    args = ap.parse_args()
    kfproblems.check_level(ap, args.level)
    if args.level == 3 and not args.dry_run:
        kfproblems.ensure_einops()
    todo = kfproblems.problem_dirs(args.root, args.level, args.problems)
    if not todo:
        ap.error("no level-%d problem matches '%s' under %s" % (args.level, args.problems, args.root))
    if args.dry_run:
        for num, d in todo:
            print("%s %s" % (kfproblems.kforge_id(args.level, d), os.path.join(args.dump, os.path.basename(d))))
        return 0
    import shutil
    import torch
    if not args.torch_defaults:  # for the whole run
        kfproblems.NoTF32().__enter__()
    results, failed = [], 0
    for num, d in todo:
        pdir = os.path.join(args.dump, os.path.basename(d))
        t0 = time.time()
        try:
            if args.kforge:
                shutil.rmtree(pdir, ignore_errors=True)
                dump_one(args, d, pdir)
            r = (condition_one if args.draw else check_one)(d, args.dump, args.device, args)
        except Exception as e:  # report and go on
            r = {"id": "level%d/%s" % (args.level, os.path.basename(d)), "status": "error",
                 "reason": "%s: %s" % (type(e).__name__, e)}
        if args.kforge:
            shutil.rmtree(pdir, ignore_errors=True)
        r["seconds"] = round(time.time() - t0, 1)
        results.append(r)
        if r["status"] in ("FAIL", "error"):
            failed += 1
        if args.draw:
            detail = " ".join("r=%s:%s(max_abs %.3g of max %.3g, %d bad)" % (
                b["bound"], "ok" if b["ok"] else "FAIL", max(o["max_abs"] for o in b["outputs"]),
                max(o["max_ref"] for o in b["outputs"]), sum(o["mismatches"] for o in b["outputs"]))
                for b in r.get("bounds", []))
        else:
            detail = "; ".join("%s max_abs %.3g mismatches %s %s" % (o["name"], o.get("max_abs", float("nan")),
                                                                   o.get("mismatches", "-"), o["status"])
                           for o in r.get("outputs", []))
        print("%-52s %-7s %s" % (r["id"], r["status"], detail or r.get("reason", "")), flush=True)
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
        if args.json:  # the report so far, should a time limit stop the run
            write_report(args.json, results)
    print("%d checked, %d failed" % (len(results), failed))
    if args.json:
        write_report(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
