"""A synthetic level-2 problem next to a real one, for the graph tests
(t0923, t0926): spec is the real problem's spec, changed by the caller;
it gets its own id, number and name and the real one's reference.py and
reference.cu (the graph evaluator and the oracle read the spec's graph)."""
import json
import os
import shutil


def write(src, num, name, spec):
    spec.update(id="level2/%03d_%s" % (num, name), number=num, name=name)
    spec["outputs"][0]["shape"] = spec["attrs"]["graph"][-1]["shape"]
    d = os.path.join(os.path.dirname(src), "%03d_%s" % (num, name))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "spec.json"), "w") as f:
        json.dump(spec, f)
    for f in ("reference.py", "reference.cu"):
        shutil.copy(os.path.join(src, f), d)

