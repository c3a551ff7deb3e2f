"""What one run of the tests (tests/run-tests.sh) computes once and then
reuses: kforge's `problems inputs` (the inputs' draw and the CPU oracle's
sample of the outputs) for a problem folder, and the Python graph
evaluator's values for a spec and its inputs. Many checks emulate several
kernels of one problem at the same sizes (each core, tiling, mutation), in
one test file or several; the oracle behind them is the same.

The results live in KF_RUN_CACHE, a folder run-tests.sh makes for one run
and removes after it (never kept across runs: a new kforge is a new run);
without it everything is computed every time. A result's key is a hash of
everything it depends on: kforge's binary (path, size, time), the command
line but its output folder, every file of the problem folder, the KFORGE_*
variables; for the evaluator, its source, the spec and the input files.
Parallel jobs that want the same result wait for the first (a lock per key).
Only a run that succeeded is kept; a failed one is left to its caller as
it was."""
import array
import fcntl
import hashlib
import json
import os
import shutil
import subprocess


def _dir():
    d = os.environ.get("KF_RUN_CACHE")
    if not d or not os.path.isdir(d):
        return None
    return d


def _hash_files(h, folder):
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        h.update(b"\0F" + name.encode())
        if os.path.isdir(p):
            _hash_files(h, p)
        elif os.path.isfile(p):
            with open(p, "rb") as f:
                h.update(f.read())


class _Locked:
    """An exclusive lock on DIR/KEY.lock while in the with block."""

    def __init__(self, path):
        self.path = path + ".lock"

    def __enter__(self):
        self.f = open(self.path, "a")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def problem_inputs(cmd, pdir, env=None, **kw):
    """subprocess.run(cmd, env=env, **kw) for cmd = [KFORGE, "problems",
    "inputs", ID, "--out", OUT, ...] where pdir is the problem folder ID
    names (under env's KFORGE_ROOT): OUT as that run writes it, and its
    CompletedProcess (the first run's stdout and stderr)."""
    cache = _dir()
    i = cmd.index("--out")
    out = cmd[i + 1]
    # kept only where OUT holds nothing but what kforge writes
    if cache is None or not os.path.isdir(pdir) or (os.path.isdir(out) and os.listdir(out)):
        return subprocess.run(cmd, env=env, **kw)
    try:
        st = os.stat(cmd[0])
    except OSError:
        return subprocess.run(cmd, env=env, **kw)
    h = hashlib.sha256()
    h.update(("%s %d %d\0" % (os.path.realpath(cmd[0]), st.st_size, st.st_mtime_ns)).encode())
    h.update("\0".join(cmd[1:i] + cmd[i + 2:]).encode())
    e = os.environ if env is None else env
    h.update(json.dumps(sorted((k, v) for k, v in e.items() if k.startswith("KFORGE_")
                               and k not in ("KFORGE_ROOT", "KFORGE_DB"))).encode())
    _hash_files(h, pdir)
    key = os.path.join(cache, "inputs-" + h.hexdigest()[:40])
    text = kw.get("text") or kw.get("universal_newlines")
    with _Locked(key):
        if not os.path.isdir(key):
            r = subprocess.run(cmd, env=env, **kw)
            if r.returncode == 0:
                tmp = "%s.%d.tmp" % (key, os.getpid())
                shutil.rmtree(tmp, ignore_errors=True)
                shutil.copytree(out, os.path.join(tmp, "out"))
                for name, s in (("stdout", r.stdout), ("stderr", r.stderr)):
                    if s is not None:
                        with open(os.path.join(tmp, name), "wb") as f:
                            f.write(s.encode() if isinstance(s, str) else s)
                os.rename(tmp, key)
            return r
        shutil.copytree(os.path.join(key, "out"), out, dirs_exist_ok=True)
    std = []
    for name in ("stdout", "stderr"):
        p = os.path.join(key, name)
        s = open(p, "rb").read() if os.path.exists(p) else None
        std.append(s.decode() if s is not None and text else s)
    return subprocess.CompletedProcess(cmd, 0, std[0], std[1])


def graph_values(graph_eval, spec, idir):
    """graph_eval.evaluate(spec, graph_eval.load_inputs(spec, idir)).data,
    as floats."""
    def compute():
        return [float(v) for v in graph_eval.evaluate(spec, graph_eval.load_inputs(spec, idir)).data]
    cache = _dir()
    if cache is None:
        return compute()
    h = hashlib.sha256()
    with open(graph_eval.__file__, "rb") as f:
        h.update(f.read())
    h.update(json.dumps(spec, sort_keys=True).encode())
    for t in spec["inputs"]:
        p = os.path.join(idir, t["name"] + ".npy")
        h.update(b"\0I" + t["name"].encode())
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    key = os.path.join(cache, "graph-" + h.hexdigest()[:40])
    with _Locked(key):
        if os.path.exists(key):
            a = array.array("d")
            with open(key, "rb") as f:
                a.frombytes(f.read())
            return a.tolist()
        vals = compute()
        tmp = "%s.%d.tmp" % (key, os.getpid())
        with open(tmp, "wb") as f:
            f.write(array.array("d", vals).tobytes())
        os.rename(tmp, key)
        return vals
