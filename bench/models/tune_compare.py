#!/usr/bin/python3
"""Tuned Anvil against untuned Anvil and ONNX Runtime, interleaved, medians and ratios.

    /usr/bin/python3 bench/models/tune_compare.py [--models resnet18 mobilenet_v2]
                                                  [--time-budget 10m] [--tuner xgb]
                                                  [--search template|auto] [--cost-model FILE]
                                                  [--threads 1 2] [--rounds 5] [--repeat 20]

Per model: `anvil tune MODEL --time-budget B -o records` (a fresh records file and tuning cache
in a temporary directory, so every run tunes from scratch), then `anvil compile` twice — untuned,
and with --tuning-records — and per thread count `rounds` rounds alternate Anvil untuned, Anvil
tuned and ONNX Runtime (with --tune-per-thread, the model is tuned once per thread count with
`anvil tune --threads T`, as a deployment on T threads would be, and each count is timed with its
own records) (onnxruntime-node, `npm ci` in bench/models), each timing `repeat` runs
and reporting their median; the table shows the median of the per-round medians and the ratios.
The tuned model's output is compared with the test data like compare.py does. Then the records
are applied once more (a second compile) and timed again: "reapplied" is that latency over the
first tuned one, which must stay within 3 %. The tuning's own cost is reported from anvil tune's
summary (seconds per measured trial, compilation included; with --search auto also the share of
the wall time the search itself took: sketches, evolution, cost model). --search auto tunes with
the auto-scheduler (anvil tune --search auto, the shipped cost model unless --cost-model names
another or "none"); --models also takes directories, e.g. bench/models/generated/* from
generate_transformers.py.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")

sys.path.insert(0, HERE)
from compare import (StepFailed, anvil_median, cpu_name, fmt, peak_binary,  # noqa: E402
                     measure_peak, ort_median, run)
from model_flops import model_flops  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    p.add_argument("--model-dir", default=DEFAULT_MODELS)
    p.add_argument("--time-budget", default="10m")
    p.add_argument("--tuner", default="xgb")
    p.add_argument("--search", default="template", choices=["template", "auto"])
    p.add_argument("--cost-model", default=None,
                   help="the auto search's starting model (default: the shipped one; none)")
    p.add_argument("--tune-threads", type=int, default=0,
                   help="threads the candidates are measured with (0: all cores)")
    p.add_argument("--tune-per-thread", action="store_true",
                   help="tune once per thread count, measuring candidates at that count")
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--anvil", default=os.path.join(ROOT, "build", "src", "driver", "cli", "anvil"))
    a = p.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("onnxruntime-node is not installed: run `npm ci` in bench/models")
    with open(os.path.join(HERE, "package.json")) as f:
        ort_version = json.load(f)["dependencies"]["onnxruntime-node"]

    rows, notes = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        # The machine's fp32 FMA peak per thread count: "% peak" is the tuned model's FLOP rate
        # over it (FLOPs counted from the ONNX graph, as compare.py does).
        peak_exe = peak_binary(a.anvil, tmp)
        peaks = {t: measure_peak(peak_exe, t)[0] for t in a.threads}
        for name in a.models:
            d = name if os.path.isdir(name) else os.path.join(a.model_dir, name)
            label = os.path.basename(os.path.normpath(d))
            model, inputs = os.path.join(d, "model.onnx"), os.path.join(d, "test_data_set_0")
            def tune_and_build(suffix, tune_threads):
                """Tunes (fresh records and cache), compiles twice with the records; returns
                (tuned .so, reapplied .so, trials, seconds per trial)."""
                records = os.path.join(tmp, f"{label}{suffix}.records.json")
                tuned_so = os.path.join(tmp, f"{label}{suffix}.tuned.so")
                again_so = os.path.join(tmp, f"{label}{suffix}.again.so")
                cmd = [a.anvil, "tune", model, "-o", records, "--time-budget", a.time_budget,
                       "--tuner", a.tuner, "--threads", str(tune_threads), "--tuning-cache",
                       os.path.join(tmp, f"cache-{label}{suffix}"), "--search", a.search]
                if a.search == "auto" and a.cost_model:
                    cmd += ["--cost-model", a.cost_model]
                _, out = run(cmd)
                print(out, file=sys.stderr)
                per_trial = float(re.search(r"\(([0-9.]+) s per trial", out).group(1))
                search = re.search(r"search ([0-9]+)% of the time", out)
                notes.setdefault(label + " search", f"search {search.group(1)}% of the tuning "
                                 "time" if search else "")
                trials = int(re.search(r"; ([0-9]+) trials in", out).group(1))
                run([a.anvil, "compile", model, "-o", tuned_so, "--tuning-records", records])
                run([a.anvil, "compile", model, "-o", again_so, "--tuning-records", records])
                code, out = run([a.anvil, "run", tuned_so, "--inputs", inputs, "--compare",
                                 inputs], ok_codes=(0, 1))
                if code == 1:
                    notes[label] = "tuned output differs from the reference"
                return tuned_so, again_so, trials, per_trial

            untuned_so = os.path.join(tmp, label + ".so")
            builds = {}
            try:
                run([a.anvil, "compile", model, "-o", untuned_so])
                if a.tune_per_thread:
                    for t in a.threads:
                        builds[t] = tune_and_build(f".t{t}", t)
                else:
                    shared = tune_and_build("", a.tune_threads)
                    builds = {t: shared for t in a.threads}
            except StepFailed as e:
                notes[label] = f"not run: {e}"
                print(f"{label}: {notes[label]}", file=sys.stderr)
                continue
            for t in a.threads:
                tuned_so, again_so, trials, per_trial = builds[t]
                untuned, tuned, again, ort = [], [], [], []
                for _ in range(a.rounds):
                    untuned.append(anvil_median(a.anvil, untuned_so, inputs, t, a.repeat))
                    tuned.append(anvil_median(a.anvil, tuned_so, inputs, t, a.repeat))
                    ort.append(ort_median(model, inputs, t, a.repeat))
                    again.append(anvil_median(a.anvil, again_so, inputs, t, a.repeat))
                um, tm, am, om = (statistics.median(x) for x in (untuned, tuned, again, ort))
                peak = 100 * model_flops(model) / (tm * 1e-3) / (peaks[t] * 1e9)
                rows.append((label, t, um, tm, am, om, trials, per_trial, peak))
                print(f"{label:<16}{t:>4}{um:11.3f}{tm:11.3f}{om:11.3f}", file=sys.stderr)

    print(f"{datetime.date.today().isoformat()}, {cpu_name()}, {os.cpu_count()} cores; "
          f"ONNX Runtime {ort_version} (onnxruntime-node); anvil tune --time-budget "
          f"{a.time_budget} --search {a.search}"
          f"{' --tuner ' + a.tuner if a.search == 'template' else ''}"
          f"{' --cost-model ' + a.cost_model if a.search == 'auto' and a.cost_model else ''}"
          f"{' per thread count' if a.tune_per_thread else ''}\n")
    print("| model | threads | untuned ms | tuned ms | ORT ms | tuned / ORT | untuned / ORT "
          "| tuned / untuned | tuned % peak | reapplied | trials | s per trial |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, t, um, tm, am, om, trials, per_trial, peak in rows:
        print(f"| {label} | {t} | {um:.3f} | {tm:.3f} | {om:.3f} | {tm / om:.2f} | "
              f"{um / om:.2f} | {tm / um:.2f} | {peak:.0f} % | {am / tm:.3f} | {trials} | "
              f"{per_trial:.3f} |")
    for label, note in notes.items():
        if note:
            print(f"\n{label}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
