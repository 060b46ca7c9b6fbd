#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Validate dioctl --json documents against dioctl's JSON Schema.

  tests/vm/json-check.py [--schema FILE] [--require KIND,... | --every-kind] PATH...

PATH: a file holding one document, or a directory of them (*.json); a
directory's index.tsv ("FILE<TAB>EXIT<TAB>ARGS" a line, which
tests/lib/dioctl_run.c writes in the guest for the programs that keep
dioctl's JSON) gives the exit status of the dioctl run that printed each
one ("-": not known).  A directory without index.tsv is one failed case,
and a document its index.tsv does not list fails its own: neither leaves
the exit status unchecked.  Each document is one test case: stdout held exactly
one JSON document (no duplicate keys), it validates against the schema
(tools/dioctl.schema.json, draft 2020-12), and its exit_code is the exit
status dioctl had.  The schema's own validity is one more case, and with
--require one case says every KIND of document (a command, or "error")
was seen valid (--every-kind: all of them, KINDS below).  Cases print as TAP lines on stderr; the last line on stdout is
"PASSED FAILED", which tests/vm/check.sh adds to the suite's counts.

Runs with the system's python3 (/usr/bin/python3) and the jsonschema of
Debian's python3-jsonschema (scripts/deps.sh).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "tools", "dioctl.schema.json")
KINDS = "features,query,read,write,scrub,tag get,tag set,error"
# The exit status of a document its directory's index.tsv does not list.
UNLISTED = "unlisted"


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError("duplicate key(s) %s" % ", ".join(dup))
    return dict(pairs)


def kind(doc):
    if isinstance(doc, dict):
        if doc.get("status") == "error":
            return "error"
        return str(doc.get("command"))
    return "?"


def where(err):
    return "$" + "".join("[%d]" % p if isinstance(p, int) else ".%s" % p
                         for p in err.absolute_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", default=SCHEMA)
    ap.add_argument("--require", default="",
                    help="comma-separated kinds that must be seen (of %s)" % KINDS)
    ap.add_argument("--every-kind", action="store_const", dest="require", const=KINDS,
                    help="--require all of them")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    passed = failed = 0
    n = 0

    def case(ok, name, why=()):
        nonlocal passed, failed, n
        n += 1
        if ok:
            passed += 1
            print("ok %d - %s" % (n, name), file=sys.stderr)
        else:
            failed += 1
            print("not ok %d - %s" % (n, name), file=sys.stderr)
            for line in why:
                print("#   %s" % line, file=sys.stderr)

    try:
        import jsonschema
        from jsonschema import Draft202012Validator
    except ImportError as e:
        case(False, "json-check: jsonschema", ["%s (install python3-jsonschema)" % e])
        print("%d %d" % (passed, failed))
        return 1
    try:
        with open(args.schema) as f:
            schema = json.load(f, object_pairs_hook=no_duplicates)
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema)
        case(True, "json-check: %s is a valid draft 2020-12 schema" % os.path.basename(args.schema))
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        case(False, "json-check: schema %s" % args.schema, [str(e).splitlines()[0]])
        print("%d %d" % (passed, failed))
        return 1

    docs = []  # (path, exit status or None, command line)
    for p in args.paths:
        if not os.path.isdir(p):
            docs.append((p, None, ""))
            continue
        # Without the index no document's exit status could be compared:
        # that is a failed case, never a comparison skipped.  So is a
        # document the index does not list ("-" in it: not known, allowed).
        index = {}
        try:
            with open(os.path.join(p, "index.tsv")) as f:
                for line in f:
                    fields = line.rstrip("\n").split("\t", 2)
                    if len(fields) == 3:
                        index[fields[0]] = (None if fields[1] == "-" else int(fields[1]), fields[2])
        except (OSError, ValueError) as e:
            case(False, "json-check: %s: index.tsv, the exit statuses of its documents" % p,
                 ["no index.tsv read: %s" % e])
            index = None
        for name in sorted(os.listdir(p)):
            if name.endswith(".json"):
                if index is None:
                    st, cmdline = None, ""
                elif name in index:
                    st, cmdline = index[name]
                else:
                    st, cmdline = UNLISTED, ""
                docs.append((os.path.join(p, name), st, cmdline))

    seen = set()
    for path, status, cmdline in docs:
        name = "json-check: %s%s" % (os.path.basename(path),
                                     " (dioctl %s)" % cmdline if cmdline else "")
        try:
            with open(path) as f:
                doc = json.loads(f.read(), object_pairs_hook=no_duplicates)
        except (OSError, ValueError) as e:
            case(False, name, ["not one JSON document: %s" % e])
            continue
        why = ["%s: %s" % (where(e), e.message)
               for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))]
        if status is UNLISTED:
            why.append("not in its directory's index.tsv: no exit status to compare")
        elif (status is not None and isinstance(doc, dict) and
                doc.get("exit_code") != status):
            why.append("exit_code %s, but dioctl exited with %d" % (doc.get("exit_code"), status))
        if why:
            why.append("kind: %s" % kind(doc))
        else:
            seen.add(kind(doc))
        case(not why, name, why[:20])

    if args.require:
        want = [k for k in args.require.split(",") if k]
        missing = [k for k in want if k not in seen]
        case(not missing, "json-check: a valid document of every kind (%s)" % ", ".join(want),
             ["none of: %s" % ", ".join(missing)] if missing else [])
    print("%d %d" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
