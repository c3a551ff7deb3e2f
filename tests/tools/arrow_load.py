#!/usr/bin/env python3
"""Loads every config of a dataset card with pyarrow.json.read_json and
with datasets.load_dataset(DIR, config), and the default config with
datasets.load_dataset(DIR) (offline: a local directory).

    arrow_load.py [--chunksize BYTES] DIR

`datasets` reads BYTES at a time (default 10 MiB) and casts each batch to
the types the card declares (dataset_info), else to the first batch's:
small batches show what a big file would do. One line per config:
"ok NAME rows=N" or "FAIL NAME (reader): message";
exits 1 on any failure. Run with the interpreter of a venv that has
pyarrow and datasets (tests/t0820-dataset-arrow.sh makes one)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrow_schema  # noqa: E402

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import datasets  # noqa: E402
import pyarrow.json as pj  # noqa: E402


def main(argv):
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
