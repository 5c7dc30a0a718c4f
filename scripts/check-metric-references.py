"""Checks that a Grafana dashboard and Prometheus rules use only metrics Herald exports.

The exported names come from one or more /metrics scrapes of running Herald processes. Without
a scrape only the JSON/YAML structure is checked and the script says so.
"""
import argparse
import json
import re
import sys

import yaml

IDENT = re.compile(r"\b(herald_[a-zA-Z0-9_]+)\b")
SUFFIXES = ("_bucket", "_sum", "_count")


def referenced(expr):
    return set(IDENT.findall(expr))


def exported(scrape_paths):
    names = set()
    for path in scrape_paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("# TYPE "):
                    names.add(line.split()[2])
                elif line and not line.startswith("#"):
                    names.add(re.split(r"[{\s]", line, 1)[0])
    return names


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dashboard", required=True)
    parser.add_argument("--rules", required=True)
    parser.add_argument("--scrape", action="append", default=[])
    args = parser.parse_args()

    with open(args.dashboard, encoding="utf-8") as handle:
        dashboard = json.load(handle)
    exprs = [t["expr"] for p in dashboard.get("panels", []) for t in p.get("targets", [])]
    if not exprs:
        sys.exit(f"{args.dashboard}: no panel queries found")
    with open(args.rules, encoding="utf-8") as handle:
        rules = yaml.safe_load(handle)
    exprs += [r["expr"] for g in rules["groups"] for r in g["rules"]]

    used = set().union(*(referenced(e) for e in exprs))
    if not args.scrape:
        print(f"metric references: {len(used)} names used; no scrape given, names not compared")
        return
    have = exported(args.scrape)
    missing = sorted(n for n in used if n not in have and not any(
        n.endswith(s) and n[: -len(s)] in have for s in SUFFIXES))
    if missing:
        sys.exit("metrics referenced but not exported by Herald: " + ", ".join(missing))
    print(f"metric references: all {len(used)} names are exported ({len(have)} exported in the scrape)")


if __name__ == "__main__":
    main()
