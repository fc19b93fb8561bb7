#!/usr/bin/python3
"""How fast the auto-scheduler gets there: one run of `anvil tune --search auto --trials N` per
starting cost model, and the model's estimated kernel time after 100 and after N measured trials.

    /usr/bin/python3 bench/models/trial_curve.py MODEL_DIR... [--trials 1000]
                                                 [--cost-models shipped none]

"shipped" is the pre-trained model (data/cost_model/model.json), "none" a model that learns from
the run alone, anything else a model file. The estimate is anvil tune's tuning curve (the sum over
kernels of calls x best measured time, the default schedule where none is better); "at 100 / at N"
is the share of the N-trial result that 100 trials already reach (1.00: all of it). The search's
own share of the wall time (everything but compiling and measuring) is from anvil tune's summary.
"""
import argparse
import csv
import datetime
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

sys.path.insert(0, HERE)
from compare import cpu_name, run  # noqa: E402


def latency_at(curve, trials):
    """The estimate once `trials` trials were measured (the last point when fewer ran)."""
    at = None
    for row in curve:
        at = row
        if row[0] >= trials:
            break
    return at[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--trials", type=int, default=1000)
    p.add_argument("--cost-models", nargs="+", default=["shipped", "none"])
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in a.models:
            label = os.path.basename(os.path.normpath(d))
            for cm in a.cost_models:
                records = os.path.join(tmp, f"{label}.{cm}.json")
                curve_path = os.path.join(tmp, f"{label}.{cm}.csv")
                cmd = [a.anvil, "tune", os.path.join(d, "model.onnx"), "--search", "auto",
                       "--trials", str(a.trials), "-o", records, "--curve", curve_path,
                       "--no-tuning-cache"]
                if cm != "shipped":
                    cmd += ["--cost-model", cm]
                _, out = run(cmd)
                print(out, file=sys.stderr)
                with open(curve_path) as f:
                    curve = [(int(r["trials"]), float(r["latency_ms"])) for r in csv.DictReader(f)]
                search = re.search(r"search ([0-9]+)% of the time", out).group(1)
                first = curve[0][1]
                at100, at_n = latency_at(curve, 100), latency_at(curve, a.trials)
                rows.append((label, cm, first, at100, at_n, at_n / at100, search))
    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores; "
          f"anvil tune --search auto --trials {a.trials}\n")
    print(f"| model | cost model | first estimate ms | after 100 trials | after {a.trials} "
          f"| at 100 / at {a.trials} | search share |")
    print("|---|---|---|---|---|---|---|")
    for label, cm, first, at100, at_n, ratio, search in rows:
        print(f"| {label} | {cm} | {first:.3f} | {at100:.3f} | {at_n:.3f} | {ratio:.2f} | "
              f"{search} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
