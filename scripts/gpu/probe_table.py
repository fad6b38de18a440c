"""The comparison's table from probe_compare.py's OUT/summary.json (issue 30; docs/probe.md).

    python3 scripts/gpu/probe_table.py OUT/summary.json > OUT/table.md

Per job: vramdoc probe's value (verdict, trials, seconds), whether it ran 50 steps in a fresh
process and whether the next value failed (and, after --check-recommended, whether probe's recommended
value ran 50 steps); each finder's value (seconds, sizes tried) and whether
it ran 50 steps. "-": the case did not run (the deadline) or found nothing. Then each probe's
trials in order: the value ("x": out of memory), the driver's peak and the allocator's own peak
(the step hook's `peak=`, "n/a" from a hook without it), GiB.
"""
import json
import sys

FINDERS = (("accelerate", "accelerate"), ("lightning-binsearch", "Lightning binsearch"), ("lightning-power", "Lightning power"))


def fifty(cases, name):
    c = cases.get(name)
    if not c:
        return "not run"
    if c.get("held_50"):
        return "ran 50"
    if c.get("oom"):
        return "**OOM** at step %d" % c.get("steps", 0)
    return "failed (exit %s, %d steps)" % (c.get("exit"), c.get("steps", 0))


def probe_cell(case):
    r = case.get("result") or {}
    if not r:
        return "no result (exit %s, %s s)" % (case.get("exit"), case.get("seconds"))
    value = r.get("largest_ok")
    untried = r.get("untried")
    extra = "; %s-%s untried" % (untried["first"], untried["last"]) if untried else ""
    return "%s (%s%s, %d trials, %s s; recommended %s)" % (value, r.get("verdict"), extra, len(r.get("trials") or []),
                                                           case.get("seconds"), r.get("recommended"))


def gib(v):
    return "n/a" if v is None else "%.2f" % (v / 2**30)


def trials_line(case):
    """`name: 1 (1.32 / 0.95) 4 (...) 196x ...`: each trial's driver / allocator peak, GiB."""
    r = case.get("result") or {}
    cells = ["%s%s%s (%s / %s)" % (t["value"], "x" if t.get("outcome") == "oom" else "", " confirm" if t.get("confirmation") else "",
                                   gib(t.get("peak_bytes")), gib(t.get("allocated_peak_bytes"))) for t in r.get("trials") or []]
    return "%s: %s" % (case["name"], " ".join(cells) or "no trials")


def main():
    summary = json.load(open(sys.argv[1]))
    cases = {c["name"]: c for c in summary["cases"]}
    probes = [c for c in summary["cases"] if c["name"].startswith("probe-") and "-check-" not in c["name"]]
    print("CUDA context %d MiB; %s s; %d cases not started\n" % (summary.get("context_bytes", 0) >> 20, summary.get("seconds"),
                                                                 summary.get("not_started", 0)))
    def rec_check(p):  # the recommended value's 50-step check (probe_compare.py --check-recommended), when it ran
        r = p.get("result") or {}
        rec, v = r.get("recommended"), r.get("largest_ok")
        return cases.get("%s-check-%s" % (p["name"], rec)) if rec and v and rec < v else None

    recommended = any(rec_check(p) for p in probes)
    print("| job (card) | vramdoc probe | 50 steps | next value, 50 steps |%s %s |" % (" recommended, 50 steps |" if recommended else "",
                                                                                  " | ".join(f[1] for f in FINDERS)))
    print("|---|---|---|---|" + ("---|" if recommended else "") + "---|" * len(FINDERS))
    for p in sorted(probes, key=lambda c: c["name"]):
        r = p.get("result") or {}
        v = r.get("largest_ok")
        key = p["name"][len("probe-"):]
        row = ["%s (%g GiB)" % (key, p.get("card_gib", 0)), probe_cell(p)]
        if key.endswith("-seq"):
            row += ["(its confirmation: %s)" % ("held" if r.get("confirmed") else "none"), "-"]
        else:
            row += [fifty(cases, "%s-check-%s" % (p["name"], v)) if v else "-",
                    fifty(cases, "%s-check-%s" % (p["name"], v + 1)) if v else "-"]
        if recommended:
            row.append("%s: %s" % (r["recommended"], fifty(cases, rec_check(p)["name"])) if rec_check(p) else "-")
        for finder, _ in FINDERS:
            a = cases.get("%s-%s" % (finder, key))
            res = (a or {}).get("result") or {}
            if not res.get("value"):
                row.append("-" if not a else "none (exit %s, %s s)" % (a.get("exit"), a.get("seconds")))
                continue
            row.append("%s (%s s, %d sizes), %s" % (res["value"], res.get("seconds"), len(res.get("trials") or []),
                                                  fifty(cases, "%s-%s-check-%s" % (finder, key, res["value"]))))
        print("| " + " | ".join(row) + " |")
    print("\nTrials (value, driver peak / allocator peak, GiB):\n")
    for p in sorted(probes, key=lambda c: c["name"]):
        print("- " + trials_line(p))
    for what in ("killed at the deadline", "not started: the deadline"):
        names = [c["name"] for c in summary["cases"] if c.get("exit") == what]
        if names:
            print("\n%s: %s" % (what.capitalize(), ", ".join(names)))


if __name__ == "__main__":
    main()
