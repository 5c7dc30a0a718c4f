#!/usr/bin/env python3
"""One markdown row per full `make bench` report: the figures docs/performance.md tabulates.

usage: rows.py <report.json>...
"""
import json
import sys


def main():
    for path in sys.argv[1:]:
        d = json.load(open(path))
        run = path.rsplit("/", 1)[-1][:-5]
        c1 = d["ceiling"]["observedPerSecond"]
        c2 = d["ceilingAfter"]["observedPerSecond"] if d.get("ceilingAfter") else None
        fanouts = {(f["label"], f["population"]): f for f in d["fanouts"]}
        main = fanouts[("broadcast", 1000000)]
        loaded = fanouts.get(("broadcast + targeted events", 1000000))
        cpu = main["cpu"]
        others = max(0.0, (cpu.get("machine") or 0) - (cpu["workers"] + (cpu.get("broker") or 0) + (cpu.get("redis") or 0) + cpu["benchmark"]))
        reference = max(c for c in (c1, c2) if c)
        ref_probe = (d["ceiling"] if c1 == reference else d["ceilingAfter"])["cpu"].get("hostProbeMilliseconds")
        rounds = d.get("rounds") or {}
        ratios = [f["ratioToCeiling"] for f in rounds.get("fanouts", []) if f.get("ratioToCeiling") is not None]
        median = sorted(ratios)[len(ratios) // 2] if len(ratios) % 2 == 1 else (
            (sorted(ratios)[len(ratios) // 2 - 1] + sorted(ratios)[len(ratios) // 2]) / 2 if ratios else None)
        exact = all(f["observed"] == f["expected"] for f in d["fanouts"] + rounds.get("fanouts", []))
        latency = {entry["label"]: entry for entry in d["latency"]}
        memory = {entry["population"]: max(entry["peakRSSBytes"]) for entry in d["memory"]}
        cells = [
            "`%s`" % run,
            "%s / %s" % (format(round(c1), ","), format(round(c2), ",") if c2 else "-"),
            "**%.2f s**, %.2f x" % (main["seconds"], main["ratioToCeiling"]),
            ("**%.2f x** (%s)" % (median, ", ".join("%.2f" % r for r in ratios))) if ratios else "-",
            ("%.2f s, %.2f x" % (loaded["seconds"], loaded["ratioToCeiling"])) if loaded else "-",
            "%.1f (%.1f) / %.1f / %.1f / %.2f / %.2f" % (cpu["workers"], cpu.get("workersLibrdkafka") or 0, cpu.get("broker") or 0,
                                                   cpu.get("redis") or 0, cpu["benchmark"], others),
            "%.2f / %.2f ms" % (cpu.get("hostProbeMilliseconds") or 0, ref_probe or 0),
            "**%.1f ms**" % latency["idle"]["p99Milliseconds"] if "idle" in latency else "-",
            "**%.1f ms**" % latency["during-broadcast"]["p99Milliseconds"] if "during-broadcast" in latency else "-",
            " / ".join("%d" % round(memory[k] / 1048576) for k in sorted(memory)) + " MB",
            "yes" if exact else "NO",
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
