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

  tools/torch_crosscheck.py --dump DUMP [--problems 19,23,40-45] [--device cuda]
                            [--torch-defaults] [--json REPORT] [--kforge KFORGE [--seed S]]

With --kforge, each problem is dumped just before its check (kforge problems
inputs) and its dump deleted after it: full-size dumps of all 100 problems
do not fit one disk, and one process avoids importing torch 100 times.

Parameters (role "param": norm affine weights, conv/linear weights) are
copied into the module's parameters in order. By default TF32 is off, so
PyTorch computes in true fp32; --torch-defaults keeps PyTorch's defaults
(cuDNN convolutions may then use TF32 and differ by more than 1e-4).
Exit 0 when every checked problem agrees, 1 otherwise."""
import argparse
import json
import os
import sys

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


def check_one(d, dump, device, args):
    import torch
    spec = kfproblems.load_spec(d)
    base = os.path.basename(d)
    pdir = os.path.join(dump, base)
    res = {"id": spec["id"], "status": "skipped"}
    if not os.path.isdir(os.path.join(pdir, "inputs")):
        res["reason"] = "no inputs in %s" % pdir
        return res
    ns = kfproblems.load_reference(d)
    torch.manual_seed(0)
    model = kfproblems.build_model(ns, device)
    tensors = {}
    for t in spec["inputs"]:
        tensors[t["name"]] = load_npy(os.path.join(pdir, "inputs", t["name"] + ".npy"),
                                      t["dtype"]).to(device)
    params = [t for t in spec["inputs"] if t["role"] == "param"]
    mparams = list(model.parameters())
    if params:
        if len(params) != len(mparams):
            res.update(status="error", reason="%d spec params, %d module params" %
                       (len(params), len(mparams)))
            return res
        with torch.no_grad():
            for t, mp in zip(params, mparams):
                src = tensors[t["name"]]
                if tuple(src.shape) != tuple(mp.shape):
                    res.update(status="error", reason="param %s shape %s, module %s" %
                               (t["name"], tuple(src.shape), tuple(mp.shape)))
                    return res
                mp.copy_(src)
    fwd_inputs = [t["name"] for t in spec["inputs"] if t["role"] == "input"]
    names = kfproblems.forward_arg_names(model)
    fargs = []
    pos = 0
    for n in names:
        if n in tensors:
            fargs.append(tensors[n])
        elif n in spec.get("scalars", {}):
            fargs.append(spec["scalars"][n])
        else:  # positional fallback, in spec order
            while pos < len(fwd_inputs) and fwd_inputs[pos] in names:
                pos += 1
            if pos >= len(fwd_inputs):
                res.update(status="error", reason="forward argument %s has no input" % n)
                return res
            fargs.append(tensors[fwd_inputs[pos]])
            pos += 1
    with torch.no_grad():
        out = model(*fargs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    tol = TOL[spec["tolerance"]]
    res.update(status="ran", outputs=[])
    ok = True
    for t, o in zip(spec["outputs"], outs):
        path = os.path.join(pdir, "outputs", t["name"] + ".npy")
        opath = os.path.join(pdir, "oracle", t["name"] + ".json")
        entry = {"name": t["name"], "shape": list(o.shape)}
        if not os.path.exists(path) and os.path.exists(opath):
            # kforge's CPU oracle at a sample of flat indices
            with open(opath) as f:
                smp = json.load(f)
            idx = torch.tensor(smp["index"], dtype=torch.long, device=o.device)
            b = o.reshape(-1)[idx].double()
            a = torch.tensor(smp["value"], dtype=torch.float64, device=o.device)
            diff = (a - b).abs()
            bad = ~(diff <= tol + tol * b.abs())
            entry.update(source="oracle sample", samples=len(smp["index"]),
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--dump", required=True, help="directory of per-problem dumps")
    ap.add_argument("--problems", default="", help="numbers, ranges, name substrings: 19,23,40-45,Softmax")
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--torch-defaults", action="store_true", help="keep PyTorch's TF32 defaults")
    ap.add_argument("--json", help="write the full report here")
    ap.add_argument("--kforge", help="dump each problem with this kforge first, delete it after")
    ap.add_argument("--seed", type=int, default=1, help="input seed for --kforge dumps")
    args = ap.parse_args()
    import torch
    if not args.torch_defaults:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    results, failed = [], 0
    for num, d in kfproblems.problem_dirs(args.root, args.level, args.problems):
        pdir = os.path.join(args.dump, os.path.basename(d))
        try:
            if args.kforge:
                import shutil
                import subprocess
                shutil.rmtree(pdir, ignore_errors=True)
                subprocess.run([args.kforge, "problems", "inputs", os.path.basename(d), "--out", pdir,
                                "--seed", str(args.seed)], check=True, stdout=subprocess.DEVNULL)
            r = check_one(d, args.dump, args.device, args)
        except Exception as e:  # report and go on
            r = {"id": "level%d/%s" % (args.level, os.path.basename(d)), "status": "error",
                 "reason": "%s: %s" % (type(e).__name__, e)}
        if args.kforge:
            import shutil
            shutil.rmtree(pdir, ignore_errors=True)
        results.append(r)
        if r["status"] in ("FAIL", "error"):
            failed += 1
        detail = "; ".join("%s max_abs %.3g mismatches %s %s" % (o["name"], o.get("max_abs", float("nan")),
                                                                   o.get("mismatches", "-"), o["status"])
                           for o in r.get("outputs", []))
        print("%-52s %-7s %s" % (r["id"], r["status"], detail or r.get("reason", "")), flush=True)
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
        if args.json:  # the report so far, should a time limit stop the run
            with open(args.json + ".tmp", "w") as f:
                json.dump(results, f, indent=2)
            os.replace(args.json + ".tmp", args.json)
    print("%d checked, %d failed" % (len(results), failed))
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(results, f, indent=2)
        os.replace(args.json + ".tmp", args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
