#!/usr/bin/env python3
"""A small test fixture from a real store: the rows of a few problems, in the
store's own schema (user_version kept), everything else removed.

    python3 tests/tools/sample_store.py IN.db OUT.db PROBLEM_ID...

Made tests/fixtures/v010-sample.db.zst from the published v0.1.0 store
(`git show c943289:docs/results/level1-builtin-v0.1.0/kforge-merged.db.zst`),
then `zstd -19`."""
import os
import shutil
import sqlite3
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, dst, keep = sys.argv[1], sys.argv[2], sys.argv[3:]
    if os.path.exists(dst):
        sys.exit("%s exists" % dst)
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    db.execute("PRAGMA foreign_keys = OFF")
    marks = ",".join("?" * len(keep))
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
        col = "id" if t == "problems" else "problem_id" if "problem_id" in cols else None
        if col:
            db.execute("DELETE FROM %s WHERE %s NOT IN (%s)" % (t, col, marks), keep)
    orphans = [
        "DELETE FROM idea_categories WHERE idea_id NOT IN (SELECT id FROM ideas)",
        "DELETE FROM kernels WHERE hash NOT IN (SELECT kernel_hash FROM candidates UNION "
        "SELECT kernel_hash FROM evals UNION SELECT kernel_hash FROM verifications)",
        "DELETE FROM compiles WHERE kernel_hash NOT IN (SELECT hash FROM kernels)",
        "DELETE FROM compile_kernels WHERE compile_id NOT IN (SELECT id FROM compiles)",
        "DELETE FROM eval_trials WHERE eval_id NOT IN (SELECT id FROM evals)",
    ]
    for q in orphans:
        db.execute(q)
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
