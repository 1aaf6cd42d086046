#!/usr/bin/python3
"""plot_calibration.py draws both PNGs from a constructed `ibgr eval --out_json` report."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def question(index, task, confidence, eligible, right):
    return {"index": index, "task": task, "ok": True, "confidence": confidence,
            "raw_confidence": confidence, "committed": eligible, "correct": right,
            "eligible": eligible, "eligible_correct": eligible and right,
            "abstained_by_calibration": False, "calibration": "calibration/1"}


def main():
    report = {"runs": [
        {"dataset": "mcq", "questions": [question(i, "MULTIPLE_CHOICE", i / 10, i % 3 != 0,
                                                  i % 2 == 0) for i in range(10)]},
        {"dataset": "claims", "questions": [question(i, "FACT_VERIFICATION", 0.9, True, True)
                                            for i in range(4)]},
    ]}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "eval.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f)
        reliability = os.path.join(tmp, "reliability.png")
        coverage = os.path.join(tmp, "coverage.png")
        subprocess.run([sys.executable, os.path.join(HERE, "plot_calibration.py"),
                        "--report", f"run={path}", "--reliability", reliability,
                        "--coverage", coverage, "--compare_md", os.path.join(tmp, "t.md")],
                       check=True)
        with open(os.path.join(tmp, "t.md"), encoding="utf-8") as f:
            table = f.read()
        # 10 questions, 6 committed (i % 3 != 0), 3 of them right (1... even: 2, 4, 8).
        assert "| mcq | 10 | 30.0 % → 30.0 % | 6 → 6 | 50.0 % → 50.0 % |" in table, table
        assert "all fact verification (pooled)" in table, table
        for png in (reliability, coverage):
            with open(png, "rb") as f:
                header = f.read(8)
            assert header == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
            assert os.path.getsize(png) > 10000, f"{png} is suspiciously small"
        # A report without per-question records is refused with a message, not a traceback.
        bare = os.path.join(tmp, "bare.json")
        with open(bare, "w", encoding="utf-8") as f:
            json.dump({"runs": [{"dataset": "x"}]}, f)
        result = subprocess.run([sys.executable, os.path.join(HERE, "plot_calibration.py"),
                                 "--report", f"run={bare}", "--reliability",
                                 os.path.join(tmp, "x.png")], capture_output=True, text=True)
        assert result.returncode != 0 and "no per-question records" in result.stderr, result
    print("plot_calibration_test: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
