#!/usr/bin/python3
"""Reliability diagram and accuracy-vs-coverage curves from `ibgr eval --out_json` reports.

    tools/eval/plot_calibration.py --report before=before.json --report after=after.json \
        --reliability=reliability.png --coverage=coverage.png --compare_md=table.md

Reads the per-question records of each run ("questions": confidence, eligible, eligible_correct;
see tools/eval/calibration_eval.h). The reliability diagram pools every run of a report: 15
equal-width confidence bins (confidence clamped to [0, 1]), the accuracy of each bin against the
diagonal, with the expected calibration error in the title. The coverage figure has one panel per
dataset: eligible answers ranked by confidence, accuracy of the top share against the share of
all questions answered. --compare_md writes the before (first report) -> after (last report)
table per dataset and pooled per task. --question_class keeps one class's questions. Needs matplotlib (python3-matplotlib, scripts/install_deps.sh).
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BINS = 15


def load(spec):
    label, sep, path = spec.partition("=")
    if not sep:
        raise SystemExit(f"--report: expected LABEL=FILE, got {spec!r}")
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    runs = report.get("runs", [])
    if not any("questions" in run for run in runs):
        raise SystemExit(f"{path}: no per-question records (was it written by ibgr eval "
                         "--out_json from this build?)")
    return label, runs


def eligible(run, task=None):
    """(confidence, right) of the answers a threshold could commit, in question order."""
    out = []
    for q in run.get("questions", []):
        if q.get("eligible") and (task is None or q.get("task") == task):
            out.append((min(max(q["confidence"], 0.0), 1.0), bool(q["eligible_correct"])))
    return out


def reliability(points):
    counts = [0] * BINS
    conf = [0.0] * BINS
    right = [0] * BINS
    for c, ok in points:
        b = min(BINS - 1, int(c * BINS))
        counts[b] += 1
        conf[b] += c
        right[b] += ok
    n = max(1, len(points))
    ece = sum(abs(right[b] / counts[b] - conf[b] / counts[b]) * counts[b] / n
              for b in range(BINS) if counts[b])
    return counts, conf, right, ece


TASKS = ["MULTIPLE_CHOICE", "FACT_VERIFICATION"]


def plot_reliability(reports, path):
    """One row per task, one column per report."""
    fig, axes = plt.subplots(len(TASKS), len(reports),
                             figsize=(4.5 * len(reports), 4.2 * len(TASKS)), squeeze=False)
    for row, task in enumerate(TASKS):
        for col, (label, runs) in enumerate(reports):
            points = [p for run in runs for p in eligible(run, task)]
            draw_reliability(axes[row][col], f"{label}, {task.lower().replace('_', ' ')}", points)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_reliability(ax, title, points):
    """Bars of the share right per confidence bin (bin counts on top) and the diagonal."""
    counts, conf, right, ece = reliability(points)
    width = 1.0 / BINS
    centers = [(b + 0.5) * width for b in range(BINS)]
    acc = [right[b] / counts[b] if counts[b] else 0 for b in range(BINS)]
    ax.bar(centers, acc, width=width * 0.9, color="#4c72b0", edgecolor="black",
           label="accuracy")
    ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect calibration")
    for b in range(BINS):
        if counts[b]:
            ax.text(centers[b], min(acc[b] + 0.02, 0.9), str(counts[b]), ha="center",
                    fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (clamped to [0, 1])")
    ax.set_ylabel("share right")
    ax.set_title(f"{title}: ECE {ece:.3f} (n={len(points)}, {BINS} bins)", fontsize=9)
    ax.legend(loc="upper left", fontsize=7)


def curve(run):
    total = len(run.get("questions", []))
    points = sorted(eligible(run), key=lambda p: -p[0])
    xs, ys, right = [], [], 0
    for k, (_, ok) in enumerate(points, start=1):
        right += ok
        xs.append(k / total)
        ys.append(right / k)
    return xs, ys


def plot_coverage(reports, path):
    datasets = []
    for _, runs in reports:
        for run in runs:
            if run["dataset"] not in datasets:
                datasets.append(run["dataset"])
    cols = 3
    rows = (len(datasets) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for i, name in enumerate(datasets):
        ax = axes[i // cols][i % cols]
        for label, runs in reports:
            for run in runs:
                if run["dataset"] == name:
                    xs, ys = curve(run)
                    if xs:
                        ax.plot(xs, ys, marker=".", markersize=3, label=label)
        ax.set_title(name, fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("coverage (share of questions answered)", fontsize=7)
        ax.set_ylabel("accuracy when committed", fontsize=7)
        if ax.lines:
            ax.legend(fontsize=7)
    for j in range(len(datasets), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def pct(x):
    return f"{100 * x:.1f} %"


def figures(questions):
    """Committed, right, coverage, ECE (committed and eligible) of a list of question records."""
    committed = [q for q in questions if q["committed"]]
    elig = [(min(max(q["confidence"], 0.0), 1.0), bool(q["eligible_correct"]))
            for q in questions if q["eligible"]]
    right = sum(bool(q["correct"]) for q in committed)
    n = max(1, len(questions))
    return {
        "n": len(questions), "committed": len(committed), "right": right,
        "accuracy": right / n, "coverage": len(committed) / n,
        "awc": pct(right / len(committed)) if committed else "n/a",
        "ece_committed": reliability([(min(max(q["confidence"], 0.0), 1.0), bool(q["correct"]))
                                      for q in committed])[3],
        "ece_eligible": reliability(elig)[3], "eligible": len(elig),
    }


def compare_markdown(reports):
    """Before (first report) -> after (last report), per dataset and pooled per task."""
    (before_label, before), (after_label, after) = reports[0], reports[-1]
    rows = []
    for run in before:
        match = [r for r in after if r["dataset"] == run["dataset"]]
        if match:
            rows.append((run["dataset"], run["questions"], match[0]["questions"]))
    for task in TASKS:
        pick = lambda runs: [q for r in runs for q in r.get("questions", []) if q["task"] == task]
        if pick(before):
            rows.append((f"all {task.lower().replace('_', ' ')} (pooled)", pick(before),
                         pick(after)))
    out = [f"{before_label} → {after_label}; ECE over {BINS} equal-width bins, confidence clamped "
           "to [0, 1]; eligible = committed or withdrawn by the calibration.", "",
           "| dataset | n | accuracy | committed | accuracy when committed | coverage | "
           "ECE committed | ECE eligible, after (n) |", "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for name, bq, aq in rows:
        b, a = figures(bq), figures(aq)
        out.append(f"| {name} | {b['n']} | {pct(b['accuracy'])} → {pct(a['accuracy'])} | "
                   f"{b['committed']} → {a['committed']} | {b['awc']} → {a['awc']} | "
                   f"{pct(b['coverage'])} → {pct(a['coverage'])} | "
                   f"{b['ece_committed']:.3f} → {a['ece_committed']:.3f} | "
                   f"{a['ece_eligible']:.3f} ({a['eligible']}) |")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", action="append", required=True, help="LABEL=eval.json")
    parser.add_argument("--reliability", required=True, help="reliability diagram PNG")
    parser.add_argument("--coverage", help="accuracy-vs-coverage PNG")
    parser.add_argument("--compare_md", help="Markdown table: first report -> last report")
    parser.add_argument("--question_class",
                        help="only the questions of this class (kg_lookup, clinical_reasoning, "
                             "claim; records without a class, from builds before it, are kept)")
    args = parser.parse_args(argv)
    reports = [load(spec) for spec in args.report]
    if args.question_class:
        for _, runs in reports:
            for run in runs:
                run["questions"] = [q for q in run.get("questions", [])
                                    if q.get("question_class", "") in ("", args.question_class)]
    plot_reliability(reports, args.reliability)
    if args.coverage:
        plot_coverage(reports, args.coverage)
    if args.compare_md:
        with open(args.compare_md, "w", encoding="utf-8") as f:
            f.write(compare_markdown(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
