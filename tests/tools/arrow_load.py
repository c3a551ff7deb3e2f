#!/usr/bin/env python3
"""Loads every config of a dataset card with pyarrow.json.read_json and
with datasets.load_dataset(DIR, config), and the default config with
datasets.load_dataset(DIR) (offline: a local directory).

    arrow_load.py [--chunksize BYTES] DIR
    arrow_load.py --jobs FILE

--jobs: one Python for many loads and checks (importing datasets takes
over a second): FILE's lines are "OUT load [--chunksize BYTES] DIR" (as
above) or "OUT run SCRIPT" (a Python file run as __main__), each with its
stdout in OUT, stderr in OUT.err and exit status in OUT.rc; exits 0.

`datasets` reads BYTES at a time (default 10 MiB) and casts each batch to
the types the card declares (dataset_info), else to the first batch's:
small batches show what a big file would do. One line per config:
"ok NAME rows=N" or "FAIL NAME (reader): message";
exits 1 on any failure. Run with the interpreter of a venv that has
pyarrow and datasets (tests/t0820-dataset-arrow.sh makes one)."""
import contextlib
import os
import runpy
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrow_schema  # noqa: E402

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import datasets  # noqa: E402
import pyarrow.json as pj  # noqa: E402


def jobs(path):
    with open(path, encoding="utf-8") as f:
        lines = [l.split() for l in f if l.strip()]
    for job in lines:
        out, kind, args = job[0], job[1], job[2:]
        with open(out, "w") as o, open(out + ".err", "w") as e, \
                contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            try:
                if kind == "load":
                    rc = main(args)
                elif kind == "run" and len(args) == 1:
                    runpy.run_path(args[0], run_name="__main__")
                    rc = 0
                else:
                    print("bad job: %s" % " ".join(job), file=sys.stderr)
                    rc = 2
            except SystemExit as x:
                if x.code is None or isinstance(x.code, int):
                    rc = int(x.code or 0)
                else:
                    print(x.code, file=sys.stderr)
                    rc = 1
            except Exception:  # noqa: BLE001 - the job fails, the next ones run
                traceback.print_exc()
                rc = 1
        with open(out + ".rc", "w") as f:
            f.write("%d\n" % rc)
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "--jobs":
        return jobs(argv[1])
    kw = {}
    if len(argv) == 3 and argv[0] == "--chunksize":
        kw["chunksize"] = int(argv[1])
        argv = argv[2:]
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[0])
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        cfgs = arrow_schema.read_configs(f.read())
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    bad = 0
    for c in cfgs:
        for rel in c["paths"]:
            try:
                t = pj.read_json(os.path.join(root, rel))
                t.validate(full=True)
                print("ok %s rows=%d (pyarrow)" % (c["name"], t.num_rows))
            except Exception as e:  # noqa: BLE001 - report whatever the reader says
                bad += 1
                print("FAIL %s (pyarrow): %s" % (c["name"], str(e).split("\n")[0]))
        try:
            d = datasets.load_dataset(root, c["name"], split="train", **kw)
            print("ok %s rows=%d (datasets)" % (c["name"], d.num_rows))
        except Exception as e:  # noqa: BLE001
            bad += 1
            cause = e.__cause__ or e.__context__ or e
            print("FAIL %s (datasets): %s: %s" % (c["name"], type(e).__name__,
                                                  str(cause).split("\n")[0]))
    try:
        d = datasets.load_dataset(root, split="train", **kw)
        dflt = [c["name"] for c in cfgs if c["default"]]
        print("ok (default: %s) rows=%d (datasets)" % (",".join(dflt), d.num_rows))
    except Exception as e:  # noqa: BLE001
        bad += 1
        print("FAIL the default config (datasets): %s: %s" % (type(e).__name__, str(e).split("\n")[0]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
