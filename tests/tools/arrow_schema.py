#!/usr/bin/env python3
"""Checks that every config of a dataset card loads with Arrow's JSON reader
(pyarrow.json.read_json, which Hugging Face `datasets` uses), without pyarrow.

    arrow_schema.py [--arrow-only] [--chunk BYTES] [--need-features] [--print] DIR

DIR holds the card (README.md with a YAML `configs:` block) and the files it
names. The schema of each config is inferred as Arrow's reader infers it:
null unifies with anything, int64 widens to double, an empty list or object
unifies with any list or object, objects unify field by field (missing
fields are null); a string against a number, a list against a scalar, an
object against a list... is a conflict (pyarrow: "JSON parse error:
Column(/a/[]) changed from string to number in row N"). An empty file is an
error too ("Empty JSON file"). Strings are strings (Arrow reads some dates
as timestamps, but falls back to string, never to a conflict).

Stricter than Arrow unless --arrow-only:
- integers and reals in one field: Arrow widens within one read, but
  `datasets` reads 10 MiB batches and casts each to the first batch's
  schema, which a real cannot take when the first batch saw only integers;
- a config with `dataset_info` features in the card: they must be the
  rows' types, written as kforge writes them (`datasets` casts every batch
  to them); without: every batch of --chunk bytes (default 10 MiB, as
  `datasets`) must cast to the first one's schema (a later batch with an
  object field the first never saw fails there, as does a typed column
  that was all null in the first batch);
- a real must be written as the shortest text that reads back to the same
  double (3.879863, not 3.8798629999999998);
- no list starts with null: pyarrow's reader then returns a table with
  invalid offsets (apache/arrow#51305: `datasets` fails with "array slice
  would exceed array length");
- exactly one config is `default: true`;
- with --need-features, every config has dataset_info features.
Prints one line per problem and exits 1 when there is any; --print shows
the inferred schemas.
"""
import json
import os
import re
import sys

NULL, BOOL, INT, FLOAT, STR = "null", "bool", "int64", "double", "string"
KIND = {NULL: "null", BOOL: "boolean", INT: "number", FLOAT: "number", STR: "string"}


class Conflict(Exception):
    pass


def kind(t):
    if isinstance(t, tuple):
        return "array" if t[0] == "list" else "object"
    return KIND[t]


def infer(v, path="", strict=False):
    if v is None:
        return NULL
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, str):
        return STR
    if isinstance(v, list):
        if strict and v and v[0] is None:
            raise Conflict("Column(%s) has a list that starts with null (Arrow's JSON reader "
                           "then builds invalid list offsets: apache/arrow#51305)" % path)
        t = NULL
        for x in v:
            t = unify(t, infer(x, path + "/[]", strict), path + "/[]", strict)
        return ("list", t)
    return ("struct", {k: infer(x, path + "/" + k, strict) for k, x in v.items()})


def unify(a, b, path, strict=False):
    """The type of a column holding values of types a and b."""
    if a == NULL:
        return b
    if b == NULL or a == b:
        return a
    if a in (INT, FLOAT) and b in (INT, FLOAT):
        if strict:
            raise Conflict("Column(%s) mixes integers and reals" % path)
        return FLOAT
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        if a[0] == "list":
            return ("list", unify(a[1], b[1], path + "/[]", strict))
        out = dict(a[1])
        for k, t in b[1].items():
            out[k] = unify(out[k], t, path + "/" + k, strict) if k in out else t
        return ("struct", out)
    raise Conflict("Column(%s) changed from %s to %s" % (path or "/", kind(a), kind(b)))


def castable(src, dst, path):
    """Whether `datasets` can cast a later batch's column (src) to the
    first batch's (dst): null to anything, int64 to double, a struct with
    a subset of the fields."""
    if src == dst or src == NULL:
        return
    if src == INT and dst == FLOAT:
        return
    if isinstance(src, tuple) and isinstance(dst, tuple) and src[0] == dst[0]:
        if src[0] == "list":
            castable(src[1], dst[1], path + "/[]")
            return
        for k, t in src[1].items():
            if k not in dst[1]:
                raise Conflict("Column(%s/%s) is in a later batch, not in the first" % (path, k))
            castable(t, dst[1][k], path + "/" + k)
        return
    raise Conflict("Column(%s) is %s in a later batch, %s in the first" % (path or "/", show(src), show(dst)))


def show(t):
    if not isinstance(t, tuple):
        return t
    if t[0] == "list":
        return "list<%s>" % show(t[1])
    return "struct<%s>" % ", ".join("%s: %s" % (k, show(v)) for k, v in sorted(t[1].items()))


def sig_digits(text):
    m = re.match(r"-?(\d*)(?:\.(\d*))?(?:[eE].*)?$", text)
    d = ((m.group(1) or "") + (m.group(2) or "")).lstrip("0").rstrip("0")
    return len(d) or 1


def shortest_digits(x):
    r = repr(x)
    if r in ("inf", "-inf", "nan"):
        return 0
    return sig_digits(r)


def yaml_features(t, indent):
    """The `features:` block of dataset_info for a file of type t, as
    kforge writes it (dataset/features.c), for comparison."""
    out = []

    def dtype(x):
        return {NULL: "'null'", FLOAT: "float64"}.get(x, x)

    def body(x, ind):
        if not isinstance(x, tuple):
            out.append("dtype: %s\n" % dtype(x))
        elif x[0] == "list" and not isinstance(x[1], tuple):
            out.append("sequence: %s\n" % dtype(x[1]))
        elif x[0] == "list" and x[1][0] == "struct":
            out.append("list:")
            fields(x[1][1], ind)
        elif x[0] == "list":
            out.append("sequence:\n" + " " * (ind + 2))
            body(x[1], ind + 2)
        else:
            out.append("struct:")
            fields(x[1], ind)

    def fields(f, ind):
        if not f:
            out.append(" []\n")
            return
        out.append("\n")
        for k in sorted(f, key=lambda k: k.encode()):
            out.append("%s- name: %s\n%s" % (" " * ind, json.dumps(k, ensure_ascii=False), " " * (ind + 2)))
            body(f[k], ind + 2)

    out.append(" " * indent + "features:")
    fields(t[1], indent)
    return "".join(out)


def read_features(card):
    """config name -> its dataset_info text (the lines after
    `- config_name:`), from the card's front matter."""
    lines = card.split("\n")
    out, cur, inside = {}, None, False
    for ln in lines[1:]:
        if ln == "---":
            break
        if not ln.startswith(" ") and not ln.startswith("-"):
            inside = ln.rstrip() == "dataset_info:"
            continue
        if not inside:
            continue
        m = re.match(r"- config_name: *(\S+)$", ln)
        if m:
            cur = m.group(1)
            out[cur] = ""
        elif cur:
            out[cur] += ln + "\n"
    return out


def read_configs(card):
    """(name, path, default) per config of the card's YAML front matter.
    Only the shapes kforge writes: `- config_name:`, `data_files:` with
    `- split: ...` / `path: ...`, `default: true`."""
    lines = card.split("\n")
    if not lines or lines[0] != "---":
        raise Conflict("README.md has no YAML front matter")
    out, cur, in_cfg = [], None, False
    for ln in lines[1:]:
        if ln == "---":
            break
        if not ln.startswith(" ") and not ln.startswith("-"):
            in_cfg = ln.rstrip() == "configs:"
            continue
        if not in_cfg:
            continue
        m = re.match(r"- config_name: *(\S+)$", ln)
        if m:
            cur = {"name": m.group(1), "paths": [], "default": False}
            out.append(cur)
            continue
        m = re.match(r"\s+(?:- )?path: *(\S+)$", ln)
        if m and cur:
            cur["paths"].append(m.group(1))
        if re.match(r"\s+default: *true$", ln) and cur:
            cur["default"] = True
    return out


def check_config(root, cfg, arrow_only, chunk, problems, schemas, declared=None):
    for rel in cfg["paths"]:
        name = "%s (%s)" % (cfg["name"], rel)
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            problems.append("%s: no such file" % name)
            continue
        bad_reals = []

        def real(text):
            x = float(text)
            if len(bad_reals) < 3 and sig_digits(text) > shortest_digits(x):
                bad_reals.append("%s (shortest: %r)" % (text, x))
            return x

        t, first, batch_t, batch_bytes, n = ("struct", {}), None, NULL, 0, 0
        try:
            with open(path, "rb") as f:
                for n, raw in enumerate(f):
                    v = json.loads(raw, parse_float=real)
                    if not isinstance(v, dict):
                        raise Conflict("row %d is not an object" % n)
                    try:
                        row = infer(v, "", not arrow_only)
                        t = unify(t, row, "", not arrow_only)
                        if not arrow_only:
                            batch_t = unify(batch_t, row, "", False)
                    except Conflict as e:
                        raise Conflict("JSON parse error: %s in row %d" % (e, n))
                    batch_bytes += len(raw)
                    if not arrow_only and declared is None and batch_bytes >= chunk:
                        if first is None:
                            first = batch_t
                        else:
                            castable(batch_t, first, "")
                        batch_t, batch_bytes = NULL, 0
                if not arrow_only and declared is None and first is not None and batch_t != NULL:
                    castable(batch_t, first, "")
            if os.path.getsize(path) == 0:
                raise Conflict("Empty JSON file")
        except Conflict as e:
            problems.append("%s: %s" % (name, e))
            continue
        except ValueError as e:
            problems.append("%s: not JSON lines: %s" % (name, e))
            continue
        if bad_reals and not arrow_only:
            problems.append("%s: reals not in their shortest form: %s" % (name, ", ".join(bad_reals)))
        if declared is not None and not arrow_only and declared != yaml_features(t, 2):
            problems.append("%s: the card's dataset_info features are not the rows' types" % name)
        schemas[cfg["name"]] = t


def main(argv):
    arrow_only, chunk, show_schema, need_features, args = False, 10 << 20, False, False, []
    it = iter(argv)
    for a in it:
        if a == "--arrow-only":
            arrow_only = True
        elif a == "--chunk":
            chunk = int(next(it))
        elif a == "--need-features":
            need_features = True
        elif a == "--print":
            show_schema = True
        else:
            args.append(a)
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, problems, schemas = args[0], [], {}
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        card = f.read()
    try:
        cfgs = read_configs(card)
    except Conflict as e:
        print(e)
        return 1
    feats = read_features(card)
    for c in cfgs:
        if need_features and c["name"] not in feats:
            problems.append("%s: no dataset_info features in the card" % c["name"])
    if not cfgs:
        problems.append("README.md declares no configs")
    if not arrow_only and sum(c["default"] for c in cfgs) != 1:
        problems.append("%d configs are `default: true` (want 1)" % sum(c["default"] for c in cfgs))
    for c in cfgs:
        check_config(root, c, arrow_only, chunk, problems, schemas, feats.get(c["name"]))
    for p in problems:
        print(p)
    if show_schema:
        for k, t in schemas.items():
            print("%s: %s" % (k, show(t)))
    print("%d configs, %d problems" % (len(cfgs), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
