"""anvil.auto_scheduler in TVM's names: a model's tasks, the task scheduler's records, applying
them (alone, nested with autotvm's, or switched off), resuming, the tutorial's TE matmul, and
the errors."""
import json
import warnings

import numpy as np
import pytest

import anvil
from anvil import auto_scheduler, autotvm, te

# Two calls of one dense+bias+relu kernel (weight 2), two dense kernels, a softmax, and an
# elementwise exp (a "simple" task: no reduction).
MODEL = """
def @main(%x: Tensor[(4, 32), float32], %w: Tensor[(16, 32), float32],
          %b: Tensor[(16,), float32], %w2: Tensor[(8, 16), float32]) {
  %0 = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
  %1 = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
  (nn.softmax(add(nn.dense(%0, %w2), nn.dense(%1, %w2))), exp(%x))
}
"""
FAST = dict(number=1, repeat=2, min_repeat_ms=0)
USE_AUTO = {"relay.backend.use_auto_scheduler": True}


def _params():
    rng = np.random.default_rng(0)
    return {"w": rng.standard_normal((16, 32)).astype("float32"),
            "b": rng.standard_normal(16).astype("float32"),
            "w2": rng.standard_normal((8, 16)).astype("float32")}


def _options(log, trials, verbose=0):
    return auto_scheduler.TuningOptions(
        num_measure_trials=trials, num_measures_per_round=4, verbose=verbose, cost_model="none",
        runner=auto_scheduler.LocalRunner(**FAST),
        measure_callbacks=[auto_scheduler.RecordToFile(str(log))])


def _lines(path):
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def _run(lib, x):
    m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
    m.set_input("x", x)
    m.run()
    return [m.get_output(i).numpy() for i in range(2)]


@pytest.fixture(scope="module")
def model():
    return anvil.parse(MODEL), _params()


@pytest.fixture(scope="module")
def tuned(model, tmp_path_factory):
    """The model's tasks tuned for 8 trials: (tasks, weights, log)."""
    mod, params = model
    tasks, weights = auto_scheduler.extract_tasks(mod, params, "llvm")
    log = tmp_path_factory.mktemp("auto") / "records.json"
    auto_scheduler.TaskScheduler(tasks, weights).tune(_options(log, 8))
    return tasks, weights, log


def test_extract_tasks(model):
    mod, params = model
    tasks, weights = auto_scheduler.extract_tasks(mod, params, "llvm")
    assert [t.desc for t in tasks] == ["fused_dense_packed_bias_add_relu", "fused_dense_packed",
                                       "fused_dense_packed_add", "fused_softmax"]
    assert weights == [2, 1, 1, 1] == [t.weight for t in tasks]
    assert len({t.workload_key for t in tasks}) == 4
    assert all(t.workload_key.startswith("anvil-workload v1 | ") for t in tasks)
    assert all(t.target == anvil.target.Target("llvm").text for t in tasks)
    assert "softmax_sum(i, j) += softmax_exp[i, k]" in str(tasks[3].compute_dag)
    # The elementwise exp has no reduction: a "simple" task, listed only when asked for.
    everything, weights = auto_scheduler.extract_tasks(mod, params, "llvm",
                                                       include_simple_tasks=True)
    assert [t.desc for t in everything] == [t.desc for t in tasks] + ["fused_exp"]
    # The main function alone is accepted as TVM's mod["main"] is.
    x = anvil.graph.var("x", shape=(2, 3))
    function = anvil.graph.function([x], anvil.graph.op.nn.softmax(x))
    assert [t.desc for t in auto_scheduler.extract_tasks(function, None, "llvm")[0]] == [
        "fused_softmax"]


def test_task_scheduler_writes_auto_records(tuned):
    tasks, _, log = tuned
    lines = _lines(log)
    assert len(lines) == 8
    keys = {t.workload_key for t in tasks}
    assert {line["workload"] for line in lines} == keys
    auto = [line for line in lines if line.get("search") == "auto"]
    # Each task's first trial is its default schedule (a template record); the rest programs.
    assert len(auto) == 4 and all(line["config"] == {} and line["schedule"] for line in auto)
    assert all(line["error"] == "none" for line in lines)


def test_apply_history_best_replays_programs_with_untuned_outputs(model, tuned, tmp_path):
    mod, params = model
    tasks, _, log = tuned
    x = np.random.default_rng(1).standard_normal((4, 32)).astype("float32")
    untuned = _run(anvil.build(mod, target="llvm", params=params), x)
    # Only the programs: each workload that has one must have it replayed.
    programs = tmp_path / "programs.json"
    programs.write_text("".join(json.dumps(line) + "\n" for line in _lines(log)
                                if line.get("search") == "auto"))
    with auto_scheduler.ApplyHistoryBest(str(programs)):
        with anvil.transform.PassContext(opt_level=3, config=USE_AUTO):
            lib = anvil.build(mod, target="llvm", params=params)
    replayed = {k["workload"] for k in lib.tuning if k["program"]}
    assert replayed == {line["workload"] for line in _lines(programs)}
    for got, want in zip(_run(lib, x), untuned):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # TVM's switch off: the auto_scheduler block's records are left out of the build.
    with auto_scheduler.ApplyHistoryBest(str(programs)):
        with anvil.PassContext(config={"relay.backend.use_auto_scheduler": False}):
            lib = anvil.build(mod, target="llvm", params=params)
    assert not any(k["applied"] for k in lib.tuning)


def test_nested_with_autotvm_the_faster_record_wins(model, tuned, tmp_path):
    mod, params = model
    tasks, _, log = tuned
    # The template log lacks a workload that has programs, the auto log another one: each
    # block must contribute, and where both have a workload the faster record wins.
    only_auto = next(r["workload"] for r in _lines(log) if r.get("search") == "auto")
    only_template = next(t.workload_key for t in tasks if t.workload_key != only_auto)
    template = [r for r in _lines(log) if "search" not in r and r["workload"] != only_auto]
    auto = [r for r in _lines(log)
            if r.get("search") == "auto" and r["workload"] != only_template]
    paths = tmp_path / "template.json", tmp_path / "auto.json"
    for path, records in zip(paths, (template, auto)):
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    best = {}
    for r in template + auto:
        cost = sum(r["costs"]) / len(r["costs"])
        if r["workload"] not in best or cost < best[r["workload"]][0]:
            best[r["workload"]] = (cost, r.get("search") == "auto")
    with autotvm.apply_history_best(str(paths[0])):
        with auto_scheduler.ApplyHistoryBest(str(paths[1])):
            lib = anvil.build(mod, target="llvm", params=params)
    applied = {k["workload"]: k["program"] for k in lib.tuning if k["applied"]}
    assert applied == {w: is_auto for w, (_, is_auto) in best.items()}
    assert applied[only_template] is False and applied[only_auto] is True


def test_resume_never_measures_a_program_twice(model, tmp_path):
    mod, params = model
    tasks, weights = auto_scheduler.extract_tasks(mod, params, "llvm")
    log = tmp_path / "resume.json"
    for _ in range(2):
        auto_scheduler.TaskScheduler(tasks, weights).tune(_options(log, 8))
    lines = _lines(log)
    assert len(lines) == 16
    programs = [(line["workload"], json.dumps(line["schedule"])) for line in lines
                if line.get("search") == "auto"]
    assert len(programs) == 12 and len(set(programs)) == 12
    # load_log_file: an earlier run's records are resumed from in another file.
    other = tmp_path / "other.json"
    tuner = auto_scheduler.TaskScheduler(tasks, weights, load_log_file=str(log))
    tuner.tune(_options(other, 4))
    programs = [(line["workload"], json.dumps(line["schedule"])) for line in _lines(other)
                if line.get("search") == "auto"]
    assert len(_lines(other)) == 20 and len(set(programs)) == len(programs) == 16
    assert all(c < float("inf") for c in tuner.best_costs)


@auto_scheduler.register_workload
def matmul_add(N, L, M, dtype):
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    C = te.placeholder((N, M), name="C", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    matmul = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    out = te.compute((N, M), lambda i, j: matmul[i, j] + C[i, j], name="out")
    return [A, B, C, out]


def test_te_matmul_tutorial(tmp_path, capsys):
    N, L, M = 32, 48, 64
    task = auto_scheduler.SearchTask(func=matmul_add, args=(N, L, M, "float32"), target="llvm")
    assert task.workload_key == "anvil-workload v1 | te matmul_add(32, 48, 64, 'float32')"
    dag = str(task.compute_dag)
    assert "A = PLACEHOLDER [32, 48] float32" in dag
    assert "matmul(i, j) += A[i, k] * B[k, j]" in dag
    assert task.compute_dag.flop_ct == 2 * N * L * M + N * M
    log = tmp_path / "matmul.json"
    for _ in range(2):  # the second run resumes: no program is measured twice
        task.tune(_options(log, 6, verbose=2))
    assert "[matmul_add] trials 6/6" in capsys.readouterr().out
    lines = _lines(log)
    assert len(lines) == 12 and all(line["search"] == "auto" for line in lines)
    schedules = [json.dumps(line["schedule"]) for line in lines]
    assert len(set(schedules)) == 12 and schedules[0] == "[]"  # the default comes first

    sch, args = task.apply_best(log)
    assert [t.name for t in args] == ["A", "B", "C", "out"]
    func = anvil.build(sch, args, target="llvm")
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype("float32") for s in ((N, L), (L, M), (N, M)))
    out = np.zeros((N, M), "float32")
    func(a, b, c, out)
    np.testing.assert_allclose(out, a @ b + c, rtol=1e-4, atol=1e-4)
    assert "prim_func" in str(anvil.lower(sch, args))
    best = min(lines, key=lambda r: sum(r["costs"]) / len(r["costs"]))
    assert task.print_best(log) == str(sch) and len(str(sch).splitlines()) == len(
        best["schedule"])


def test_errors(model, tmp_path):
    mod, params = model
    with pytest.raises(anvil.UserError, match="RPCRunner: measuring on a remote device"):
        auto_scheduler.RPCRunner(key="x", host="127.0.0.1", port=9190)
    with pytest.raises(anvil.UserError, match="hardware_params is not supported"):
        auto_scheduler.SearchTask(func=matmul_add, args=(4, 4, 4, "float32"),
                                  hardware_params=object())
    with pytest.raises(anvil.UserError, match="target_host is not supported"):
        auto_scheduler.extract_tasks(mod, params, "llvm", target_host="llvm")
    with pytest.raises(anvil.UserError, match="cooldown_interval"):
        auto_scheduler.LocalRunner(cooldown_interval=1.0)
    tasks, weights = auto_scheduler.extract_tasks(mod, params, "llvm")
    with pytest.raises(anvil.UserError, match="strategy 'round-robin' is not supported"):
        auto_scheduler.TaskScheduler(tasks, weights, strategy="round-robin")
    with pytest.raises(anvil.UserError, match="measure_callbacks takes"):
        auto_scheduler.TuningOptions(measure_callbacks=[print])
    with pytest.raises(anvil.UserError, match="is not a registered workload"):
        auto_scheduler.SearchTask(func=lambda: [], args=())
    with pytest.raises(anvil.UserError, match="relay.backend.use_auto_scheduler' must be True"):
        anvil.PassContext(config={"relay.backend.use_auto_scheduler": "yes"})
    # Missing record: the file and the workload are named.
    task = auto_scheduler.SearchTask(func=matmul_add, args=(8, 8, 8, "float32"), target="llvm")
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(anvil.UserError, match=r"empty.json' has no successful auto-scheduler "
                                              r"record of workload .*matmul_add\(8, 8, 8"):
        task.apply_best(empty)
    # Cost models: a missing file when the options are made, an unreadable one when tuning.
    with pytest.raises(anvil.UserError, match="cost model file '.*missing.json' does not exist"):
        auto_scheduler.TuningOptions(cost_model=str(tmp_path / "missing.json"))
    bad = tmp_path / "bad_model.json"
    bad.write_text("not a model")
    options = auto_scheduler.TuningOptions(num_measure_trials=2, cost_model=str(bad), verbose=0)
    with pytest.raises(anvil.UserError, match="bad_model.json"):
        task.tune(options)
    with pytest.raises(anvil.UserError, match="bad_model.json"):
        auto_scheduler.TaskScheduler(tasks[:1]).tune(options)
    assert auto_scheduler.TuningOptions().cost_model == auto_scheduler.default_cost_model_path()


def test_builder_timeout_stops_slow_builds(model, tmp_path):
    """LocalBuilder(timeout=...) limits each candidate's compilation (in a child process): a
    build past it is killed and recorded as a build_timeout, in TE tasks and model tasks."""

    def options(log):
        return auto_scheduler.TuningOptions(
            num_measure_trials=2, num_measures_per_round=2, verbose=0, cost_model="none",
            builder=auto_scheduler.LocalBuilder(timeout=1e-4),
            runner=auto_scheduler.LocalRunner(**FAST),
            measure_callbacks=[auto_scheduler.RecordToFile(str(log))])

    task = auto_scheduler.SearchTask(func=matmul_add, args=(8, 8, 8, "float32"), target="llvm")
    te_log = tmp_path / "te.json"
    with pytest.warns(UserWarning, match="the default schedule failed \\(build_timeout: "
                                         "building took longer than 0.0001 s"):
        task.tune(options(te_log))
    assert [line["error"] for line in _lines(te_log)] == ["build_timeout"]

    mod, params = model
    tasks, weights = auto_scheduler.extract_tasks(mod, params, "llvm")
    model_log = tmp_path / "model.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # whether nothing tuned is worth a warning is not tested
        auto_scheduler.TaskScheduler(tasks, weights).tune(options(model_log))
    errors = {line["error"] for line in _lines(model_log)}
    assert errors == {"build_timeout"}, errors
    with pytest.raises(anvil.UserError, match="LocalBuilder: timeout must be a positive number"):
        auto_scheduler.LocalBuilder(timeout=0)
