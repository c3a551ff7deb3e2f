#!/usr/bin/env python3
"""Prints a store's content canonically: every table's rows sorted, so two
stores with the same content print the same text whatever the row order.
--exclude table.column (repeatable) drops volatile columns; --exclude table drops a
whole table (search_sessions: one row per invocation, so a killed and resumed search
has more than an uninterrupted one)."""
import sqlite3
import sys

args = sys.argv[1:]
exclude = set()
while args and args[0] == "--exclude":
    exclude.add(args[1])
    args = args[2:]
db = sqlite3.connect("file:%s?mode=ro" % args[0], uri=True)
tables = [r[0] for r in db.execute(
    "SELECT name FROM sqlite_master WHERE type='table' AND name != 'meta' ORDER BY name")]
for t in tables:
    if t in exclude:
        continue
    cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)
            if "%s.%s" % (t, r[1]) not in exclude]
    rows = db.execute("SELECT %s FROM %s" % (", ".join(cols), t)).fetchall()
    print("== %s (%d rows)" % (t, len(rows)))
    for r in sorted(rows, key=repr):
        print(repr(r))
