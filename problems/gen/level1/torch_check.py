#!/usr/bin/env python3
"""Checks the matmul/conv/pool problems against PyTorch on the CPU (no GPU):

1. full size: each committed reference.py builds its Model from
   get_init_inputs(), and the module's parameters have the shapes and order
   of the spec's params (KernelBench's argument binding, 73's quirk included);
2. small size: the small variant of each problem (problems/gen/level1/emulate.py)
   runs in PyTorch in float64 on random inputs, with the spec's params copied
   into the module, and must agree with the C oracle (oracle_b_eval) to 1e-9.

    python3 problems/gen/level1/torch_check.py --oracle build/tests/oracle_b_eval [NUM...]

Needs torch (Debian's python3-torch works). Exit 1 on any disagreement."""
import argparse, importlib.util, json, os, random, shutil, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec_ = importlib.util.spec_from_file_location("emulate", os.path.join(HERE, "emulate.py"))
emu = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(emu)
gen = emu.gen

def model_of(py_text):
    ns = {}
    exec(compile(py_text, "reference.py", "exec"), ns)
    return ns, ns["Model"](*ns["get_init_inputs"]())

def full_size(spec, py_text):
    import torch
    with torch.device("meta") if hasattr(torch, "device") and hasattr(torch.device, "__enter__") else _null():
        _, m = model_of(py_text)
    got = [tuple(p.shape) for p in m.parameters()]
    want = [tuple(gen.resolve(t["shape"], spec["sizes"])) for t in spec["inputs"] if t["role"] == "param"]
    if got != want:
        return "module params %s, spec params %s" % (got, want)
    return None

class _null:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False

def load_bin(path, n):
    with open(path, "rb") as f:
        return list(struct.unpack("<%df" % n, f.read()))

def small_size(spec, py_text, d, oracle):
    import torch
    r = subprocess.run([oracle, d, os.path.join(d, "in"), os.path.join(d, "oracle.bin")],
                       capture_output=True, text=True)
    if r.returncode:
        return "oracle failed: " + r.stderr
    raw = open(os.path.join(d, "oracle.bin"), "rb").read()
    want = struct.unpack("<%dd" % (len(raw) // 8), raw)
    ns, m = model_of(py_text)
    m = m.double()
    tensors = {}
    for t in spec["inputs"]:
        shape = gen.resolve(t["shape"], spec["sizes"])
        vals = load_bin(os.path.join(d, "in", t["name"] + ".bin"), gen.prod(shape))
        tensors[t["name"]] = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    params = [t["name"] for t in spec["inputs"] if t["role"] == "param"]
    mp = list(m.parameters())
    if len(mp) != len(params):
        return "%d module params, %d spec params" % (len(mp), len(params))
    with torch.no_grad():
        for name, p in zip(params, mp):
            if tuple(p.shape) != tuple(tensors[name].shape):
                return "param %s: module %s, spec %s" % (name, tuple(p.shape), tuple(tensors[name].shape))
            p.copy_(tensors[name])
        args = [tensors[t["name"]] for t in spec["inputs"] if t["role"] == "input"]
        out = m(*args).reshape(-1).tolist()
    if len(out) != len(want):
        return "PyTorch gives %d outputs, the oracle %d" % (len(out), len(want))
    for i, (x, y) in enumerate(zip(out, want)):
        if abs(x - y) > 1e-9 * (1 + abs(y)):
            return "element %d: PyTorch %.17g, oracle %.17g" % (i, x, y)
    return None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..", "..", "..")))
    ap.add_argument("nums", nargs="*", type=int)
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch not importable")
        return 2
    work = tempfile.mkdtemp(prefix="kf-torch-")
    rng = random.Random(99)
    bad = n = 0
    try:
        for rows, tiny, build in ((gen.MATMUL, emu.tiny_matmul, gen.build_matmul),
                                  (gen.POOL, emu.tiny_pool, gen.build_pool),
                                  (gen.CONV, emu.tiny_conv, gen.build_conv)):
            for row in rows:
                if a.nums and row[0] not in a.nums:
                    continue
                n += 1
                spec, py, _ = build(row)
                base = os.path.join(a.root, "problems", "level1", spec["id"].split("/")[1])
                with open(os.path.join(base, "reference.py")) as f:
                    err = full_size(json.load(open(os.path.join(base, "spec.json"))), f.read())
                if not err:
                    tspec, tpy, tcu = build(tiny(row))
                    d = os.path.join(work, tspec["id"].split("/")[1])
                    os.makedirs(d)
                    with open(os.path.join(d, "spec.json"), "w") as f:
                        json.dump(tspec, f)
                    for name, text in (("reference.py", tpy), ("reference.cu", tcu)):
                        with open(os.path.join(d, name), "w") as f:
                            f.write(text)
                    emu.write_inputs(tspec, os.path.join(d, "in"), rng)
                    err = small_size(tspec, tpy, d, a.oracle)
                if err:
                    bad += 1
                    print("%d: %s" % (row[0], err))
    finally:
        shutil.rmtree(work)
    print("checked %d problems against PyTorch, %d disagree" % (n, bad))
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
