"""anvil.autotvm in TVM's names: tasks from a model, the four tuners on a conv task, applying
the best records, the tutorial's matmul template, and the errors."""
import re
import warnings

import numpy as np
import pytest

import anvil
from anvil import autotvm, graph, te

TUNERS = [autotvm.tuner.XGBTuner, autotvm.tuner.GATuner, autotvm.tuner.RandomTuner,
          autotvm.tuner.GridSearchTuner]
FAST = dict(number=1, repeat=2)


def _model():
    """Three 3x3 conv+relu layers; the last two have the same shapes (one task, weight 2)."""
    rng = np.random.default_rng(0)
    x = graph.var("x", shape=(1, 8, 16, 16))

    def conv(v, cin, cout):
        w = rng.standard_normal((cout, cin, 3, 3)).astype("float32") * 0.1
        return graph.op.nn.relu(graph.op.nn.conv2d(v, graph.const(w), padding=[1, 1, 1, 1]))

    return graph.IRModule.from_expr(graph.function([x], conv(conv(conv(x, 8, 16), 16, 16), 16,
                                                                 16)))


@pytest.fixture(scope="module")
def model_tasks():
    """The model and its convolution kernel tasks (not its algorithm tasks, nor the layout
    transform's)."""
    mod = _model()
    tasks = autotvm.task.extract_from_program(mod, target="llvm")
    return mod, [t for t in tasks if not t.algorithm and t.name.startswith("fused_conv2d")]


def _defaults(space):
    return {k.name: k.default for k in space.knobs}


def test_extract_from_program(model_tasks):
    _, tasks = model_tasks
    assert [t.weight for t in tasks] == [1, 2]
    for t in tasks:
        assert t.kind == "model"
        assert t.name.startswith("fused_conv2d")
        assert t.workload.startswith("anvil-workload v1 | ")
        assert t.target == anvil.target.Target("llvm").text
        sizes = [len(k.choices) for k in t.config_space.knobs]
        assert len(t.config_space) == int(np.prod(sizes)) > 1
        for k in t.config_space.knobs:
            assert k.default in k.choices
        assert "ConfigSpace (len=" in str(t.config_space)
    assert tasks[0].workload != tasks[1].workload


def test_layout_tasks_come_first_and_their_records_choose_the_blocks(tmp_path):
    mod = _model()
    tasks = autotvm.task.extract_from_program(mod, target="llvm")
    layouts = [t for t in tasks if t.layout]
    assert tasks[:len(layouts)] == layouts
    # One per channel count with a choice: 16. (8, the first convolution's input, has one block
    # only: unblocked is no choice where Winograd could compute a convolution.)
    assert [(t.name, [(k.name, k.choices, k.default) for k in t.config_space.knobs])
            for t in layouts] == [("channel block 16 (3 convolutions)", [("block", [8, 16], 16)])]
    assert all(not t.algorithm and t.weight == 1 for t in layouts)
    assert all(t.workload.startswith("anvil-workload v1 | layout block | channels ")
               for t in layouts)

    # A record choosing blocks of 8 for the 16 channels: inside apply_history_best that task is
    # not listed again, and the kernels compute on NCHW8c values.
    log = tmp_path / "layout.json"
    log.write_text(_record(layouts[0], {"block": 8}))
    with autotvm.apply_history_best(str(log)):
        again = autotvm.task.extract_from_program(mod, target="llvm")
    assert not [t for t in again if t.layout]
    kernels = [t for t in tasks if t.name.startswith("fused_conv2d")]
    blocked8 = [t for t in again if t.name.startswith("fused_conv2d")]
    assert any("(1, 2, 16, 16, 8)" in t.workload for t in blocked8)
    assert not any("(1, 2, 16, 16, 8)" in t.workload for t in kernels)

    # Tuning a layout task measures each block.
    log = tmp_path / "tuned.json"
    autotvm.tuner.GridSearchTuner(layouts[0]).tune(
        n_trial=5, measure_option=autotvm.measure_option(**FAST),
        callbacks=[autotvm.callback.log_to_file(str(log))])
    records = autotvm.record.load_from_file(log)
    assert sorted(r.config["block"] for r in records) == [8, 16]
    assert all(r.ok() for r in records)


def test_algorithm_tasks_come_after_the_layouts_and_their_records_choose_the_kernels(tmp_path):
    mod = _model()
    tasks = autotvm.task.extract_from_program(mod, target="llvm")
    layouts = [t for t in tasks if t.layout]
    algorithms = [t for t in tasks if t.algorithm]
    assert tasks[len(layouts):len(layouts) + len(algorithms)] == algorithms
    assert [t.weight for t in algorithms] == [1, 2]  # the two shapes of 3x3 convolution
    for t in algorithms:
        assert [(k.name, k.choices, k.default) for k in t.config_space.knobs] == [
            ("algorithm", [0, 2, 4], 0)]
    assert not any("winograd" in t.name for t in tasks)

    # A record choosing F(4,3) for the repeated convolution: inside apply_history_best its
    # algorithm task is not listed again, and its kernels are Winograd's.
    log = tmp_path / "algorithm.json"
    log.write_text(_record(algorithms[1], {"algorithm": 4}))
    with autotvm.apply_history_best(str(log)):
        again = autotvm.task.extract_from_program(mod, target="llvm")
    assert [t.workload for t in again if t.algorithm] == [algorithms[0].workload]
    assert any("winograd" in t.name for t in again if not t.algorithm)

    # Tuning an algorithm task measures its three variants.
    log = tmp_path / "tuned.json"
    autotvm.tuner.GridSearchTuner(algorithms[0]).tune(
        n_trial=5, measure_option=autotvm.measure_option(**FAST),
        callbacks=[autotvm.callback.log_to_file(str(log))])
    records = autotvm.record.load_from_file(log)
    assert sorted(r.config["algorithm"] for r in records) == [0, 2, 4]
    assert all(r.ok() for r in records)


def test_template_tuning_resumes_from_its_log(tmp_path):
    task = autotvm.task.create("tutorial/matmul", args=(32, 32, 32, "float32"), target="llvm")
    log = tmp_path / "resume.json"
    option = autotvm.measure_option(**FAST)
    first = autotvm.tuner.RandomTuner(task)
    first.tune(n_trial=4, measure_option=option,
               callbacks=[autotvm.callback.log_to_file(str(log))])
    second = autotvm.tuner.RandomTuner(task)
    second.tune(n_trial=4, measure_option=option,
                callbacks=[autotvm.callback.log_to_file(str(log))])
    records = autotvm.record.load_from_file(log)
    configs = [tuple(sorted(r.config.items())) for r in records]
    assert len(records) == 8
    assert len(set(configs)) == 8  # nothing measured twice
    best = min(records, key=lambda r: r.mean_cost())
    assert second.best_cost == pytest.approx(best.mean_cost())
    assert second.best_config == best.config


@pytest.mark.parametrize("tuner_class", TUNERS, ids=lambda c: c.__name__)
def test_tune_conv_task_writes_records(model_tasks, tuner_class, tmp_path):
    _, tasks = model_tasks
    task = tasks[1]
    log = tmp_path / "conv.json"
    seen = []
    tuner = tuner_class(task)
    tuner.tune(n_trial=4, measure_option=autotvm.measure_option(**FAST),
               callbacks=[autotvm.callback.log_to_file(str(log)),
                          lambda tnr, inputs, results: seen.extend(zip(inputs, results))])
    records = autotvm.record.load_from_file(log)
    assert len(records) == 4
    assert all(r.workload == task.workload and r.target == task.target for r in records)
    # The default configuration is measured first: it is the reference and the baseline.
    assert records[0].config == _defaults(task.config_space)
    assert all(r.ok() for r in records), [r.message for r in records]
    assert len({tuple(sorted(r.config.items())) for r in records}) == 4
    # The callbacks saw the same measurements, batch by batch.
    assert [inp.config for inp, _ in seen] == [r.config for r in records]
    assert all(res.error_no == 0 and len(res.costs) == 2 for _, res in seen)
    best = min(records, key=lambda r: r.mean_cost())
    assert tuner.best_config == best.config
    assert tuner.best_cost == pytest.approx(best.mean_cost())


def test_apply_history_best_keeps_outputs(model_tasks, tmp_path):
    mod, tasks = model_tasks
    log = tmp_path / "model.json"
    for task in tasks:
        autotvm.tuner.RandomTuner(task).tune(
            n_trial=3, measure_option=autotvm.measure_option(**FAST),
            callbacks=[autotvm.callback.log_to_file(str(log))])
    # A record of a configuration far from the default, made the best by its cost, proves the
    # outputs do not depend on the applied configuration.
    task = tasks[1]
    record = autotvm.record.TuningRecord()
    record.workload = task.workload
    record.target = task.target
    record.config = {k.name: k.choices[0] for k in task.config_space.knobs}
    assert record.config != _defaults(task.config_space)
    record.costs = [1e-12]
    with open(log, "a") as f:
        f.write(record.to_line() + "\n")

    x = np.random.default_rng(1).standard_normal((1, 8, 16, 16)).astype("float32")

    def run(lib):
        m = anvil.runtime.GraphModule(lib["default"](anvil.cpu()))
        m.run(x=x)
        return m.get_output(0).numpy()

    untuned = anvil.build(mod, target="llvm")
    assert not any(k["applied"] for k in untuned.tuning)
    with autotvm.apply_history_best(str(log)):
        tuned = anvil.build(mod, target="llvm")
    applied = {k["workload"]: k for k in tuned.tuning if k["applied"]}
    assert set(applied) == {t.workload for t in tasks}
    assert applied[task.workload]["record_cost"] == 1e-12
    np.testing.assert_allclose(run(tuned), run(untuned), rtol=1e-4, atol=1e-5)


@autotvm.template("tutorial/matmul")
def matmul(N, L, M, dtype):
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    k = s[C].op.reduce_axis[0]
    cfg = autotvm.get_config()
    cfg.define_split("tile_y", y, num_outputs=2)
    cfg.define_split("tile_x", x, num_outputs=2)
    yo, yi = cfg["tile_y"].apply(s, C, y)
    xo, xi = cfg["tile_x"].apply(s, C, x)
    s[C].reorder(yo, xo, k, yi, xi)
    cfg.add_flop(2 * N * L * M)
    return s, [A, B, C]


N = L = M = 64


@pytest.fixture(scope="module")
def matmul_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("matmul") / "matmul.log"
    task = autotvm.task.create("tutorial/matmul", args=(N, L, M, "float32"), target="llvm")
    tuner = autotvm.tuner.XGBTuner(task)
    tuner.tune(n_trial=6,
               measure_option=autotvm.measure_option(
                   builder=autotvm.LocalBuilder(),
                   runner=autotvm.LocalRunner(number=2, repeat=2, timeout=10)),
               callbacks=[autotvm.callback.log_to_file(str(log))])
    return task, tuner, log


def test_matmul_template_space():
    task = autotvm.task.create("tutorial/matmul", args=(N, L, M, "float32"), target="llvm")
    assert task.kind == "template"
    assert task.workload == ("anvil-workload v1 | template tutorial/matmul(64, 64, 64, "
                             "'float32')")
    assert task.flop == 2 * N * L * M
    divisors = [1, 2, 4, 8, 16, 32, 64]
    assert [(k.name, k.choices, k.default) for k in task.config_space.knobs] == [
        ("tile_y", divisors, 1), ("tile_x", divisors, 1)]
    assert len(task.config_space) == 49
    assert "tile_y: [1, 2, 4, 8, 16, 32, 64] default=1" in str(task.config_space)


def test_matmul_template_tuned_and_applied(matmul_log):
    task, tuner, log = matmul_log
    records = autotvm.record.load_from_file(log)
    assert len(records) == 6
    assert records[0].config == {"tile_x": 1, "tile_y": 1}
    assert all(r.ok() and r.workload == task.workload for r in records)
    assert "split(C, i, factor=" in records[1].schedule
    best = min(records, key=lambda r: r.mean_cost())
    assert tuner.best_config == best.config
    assert tuner.best_flops == pytest.approx(2 * N * L * M / best.mean_cost())

    with autotvm.apply_history_best(str(log)) as history:
        assert history.query("llvm", task.workload).config == best.config
        with anvil.target.Target("llvm"):
            s, arg_bufs = matmul(N, L, M, "float32")
            func = anvil.build(s, arg_bufs)
    printed = str(s)
    assert f"split(C, i, factor={best.config['tile_y']})" in printed
    assert f"split(C, j, factor={best.config['tile_x']})" in printed
    a = np.random.rand(N, L).astype("float32")
    b = np.random.rand(L, M).astype("float32")
    c = np.zeros((N, M), "float32")
    func(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_template_outside_history_uses_defaults():
    s, _ = matmul(N, L, M, "float32")
    assert "factor=1)" in str(s)
    with pytest.raises(anvil.UserError, match="only available inside a template"):
        autotvm.get_config()


@pytest.mark.parametrize("tuner_class", TUNERS[1:], ids=lambda c: c.__name__)
def test_other_tuners_on_template(tuner_class, tmp_path, capsys):
    task = autotvm.task.create("tutorial/matmul", args=(32, 32, 32, "float32"))
    log = tmp_path / "m.log"
    tuner = tuner_class(task)
    tuner.tune(n_trial=3, measure_option=autotvm.measure_option(**FAST),
               callbacks=[autotvm.callback.progress_bar(3, prefix="[mm]"),
                          autotvm.callback.log_to_file(str(log))])
    records = autotvm.record.load_from_file(log)
    assert len(records) == 3 and all(r.ok() for r in records)
    out = capsys.readouterr().out
    assert "[mm] Current/Best:" in out and "GFLOPS | Progress: (3/3)" in out


def test_failing_configuration_is_a_failed_trial(tmp_path):
    @autotvm.template("test/picky")
    def picky(n):
        A = te.placeholder((n,), name="A")
        B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
        s = te.create_schedule(B.op)
        cfg = autotvm.get_config()
        cfg.define_knob("unroll", [0, 1, 2])
        if cfg["unroll"].val == 2:
            raise ValueError("no such schedule")
        if cfg["unroll"].val:
            s[B].unroll(s[B].op.axis[0])
        return s, [A, B]

    task = autotvm.task.create("test/picky", args=(16,))
    log = tmp_path / "picky.log"
    autotvm.tuner.GridSearchTuner(task).tune(
        n_trial=10, measure_option=autotvm.measure_option(**FAST),
        callbacks=[autotvm.callback.log_to_file(str(log))])
    records = autotvm.record.load_from_file(log)
    assert [r.config["unroll"] for r in records] == [0, 1, 2]  # the space runs out
    assert [r.error for r in records] == ["none", "none", "compile"]
    assert "ValueError: no such schedule" in records[2].message


def test_builder_timeout_is_a_build_timeout(model_tasks, tmp_path):
    """LocalBuilder(timeout=...) limits each candidate's compilation (a child process killed
    past it): the trial is a BUILD_TIMEOUT, for a template task and for a model's task."""
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(timeout=1e-4),
                                    runner=autotvm.LocalRunner(**FAST))
    task = autotvm.task.create("tutorial/matmul", args=(16, 16, 16, "float32"), target="llvm")
    _, tasks = model_tasks
    for i, t in enumerate([task, tasks[1]]):
        seen = []
        log = tmp_path / f"{i}.json"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the default failed: tuning stops
            autotvm.tuner.RandomTuner(t).tune(
                n_trial=2, measure_option=option,
                callbacks=[autotvm.callback.log_to_file(str(log)),
                           lambda tnr, inputs, results: seen.extend(results)])
        assert seen and all(r.error_no == autotvm.measure.MeasureErrorNo.BUILD_TIMEOUT for r in seen)
        assert {r.error for r in autotvm.record.load_from_file(log)} == {"build_timeout"}


def test_space_entities():
    def schedule(values):
        A = te.placeholder((64, 32), name="A")
        B = te.compute((64, 32), lambda i, j: A[i, j] + 1.0, name="B")
        s = te.create_schedule(B.op)
        cfg = autotvm.ConfigEntity(values)
        y, x = s[B].op.axis
        cfg.define_split("y", y, num_outputs=3)
        cfg.define_knob("mode", ["a", "b"])
        cfg.define_reorder("order", [y, x], policy="all")
        ys = cfg["y"].apply(s, B, y)
        cfg.define_annotate("ann", [ys[2]], policy="try_unroll")
        cfg["ann"].apply(s, B, [ys[2]])
        return cfg, s

    cfg, s = schedule({})
    assert cfg["y"].size == [64, 1, 1] and cfg["mode"].val == "a"
    assert cfg["order"].perm == [0, 1] and cfg["ann"].anns == ["none"]
    knobs = {k.name: k for k in cfg.space.knobs}
    # 3-way splits of 64 whose two inner factors multiply to a divisor: 28 of them.
    assert len(knobs["y"].choices) == 28
    pick = 5
    cfg, s = schedule({"y": pick, "mode": 1, "order": 1, "ann": 1})
    outer, mid, inner = cfg["y"].size
    assert outer * mid * inner == 64 and (mid, inner) != (1, 1)
    assert cfg["mode"].val == "b" and cfg["order"].perm == [1, 0]
    assert cfg["ann"].anns == ["unroll"]
    assert "unroll(B" in str(s)
    with pytest.raises(anvil.UserError, match="declared twice"):
        c = autotvm.ConfigEntity()
        c.define_knob("k", [1, 2])
        c.define_knob("k", [1, 3])


def test_corrupt_line_is_a_warning(matmul_log, tmp_path):
    task, _, log = matmul_log
    bad = tmp_path / "bad.log"
    lines = open(log).read().splitlines()
    bad.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:]) + "\n")
    with pytest.warns(UserWarning, match=re.escape(str(bad)) + r":3: .*line skipped"):
        history = autotvm.apply_history_best(str(bad))
    assert history.query("llvm", task.workload) is not None
    with pytest.warns(UserWarning, match=r":3: "):
        assert len(autotvm.record.load_from_file(bad)) == 6


def test_errors(tmp_path):
    with pytest.raises(anvil.UserError, match="no autotvm template is registered as 'nope/mm'"):
        autotvm.task.create("nope/mm", args=(1,))
    task = autotvm.task.create("tutorial/matmul", args=(8, 8, 8, "float32"))
    with pytest.raises(anvil.UserError, match="bogus"):
        autotvm.tuner.Tuner(task, "bogus")
    with pytest.raises(anvil.UserError, match="does not exist"):
        autotvm.apply_history_best(str(tmp_path / "missing.json"))
    with pytest.raises(anvil.UserError, match="n_trial"):
        autotvm.tuner.RandomTuner(task).tune(n_trial=0)
    with pytest.raises(anvil.UserError, match="runner"):
        autotvm.measure_option(runner="rpc")
    with pytest.raises(anvil.UserError, match="number"):
        autotvm.LocalRunner(number=0)
    with pytest.raises(anvil.UserError, match="arguments must be"):
        autotvm.task.create("tutorial/matmul", args=(8, 8, 8, object()))


def test_callback_exception_ends_tuning(model_tasks):
    class Stop(Exception):
        pass

    def stop(tuner, inputs, results):
        raise Stop("enough")

    # The C++ loop runs without the GIL; the callback's exception still reaches the caller.
    with pytest.raises(Stop, match="enough"):
        autotvm.tuner.RandomTuner(model_tasks[1][0]).tune(
            n_trial=4, measure_option=autotvm.measure_option(**FAST), callbacks=[stop])


def _record(task, config):
    record = autotvm.record.TuningRecord()
    record.workload = task.workload
    record.target = task.target
    record.config = config
    record.costs = [1e-6]
    return record.to_line() + "\n"


def test_records_of_another_space_are_not_applied(model_tasks, tmp_path):
    mod, tasks = model_tasks
    log = tmp_path / "stale.json"
    stale = dict(_defaults(tasks[0].config_space), tile_ow=3)  # 3 is not a choice
    log.write_text(_record(tasks[0], stale))
    with autotvm.apply_history_best(str(log)):
        with pytest.warns(UserWarning, match="tuning record not applied.*tile_ow = 3"):
            lib = anvil.build(mod, target="llvm")
    assert not any(k["applied"] for k in lib.tuning)

    task = autotvm.task.create("tutorial/matmul", args=(N, L, M, "float32"))
    log.write_text(_record(task, {"tile_y": 3, "tile_x": 4}))
    with autotvm.apply_history_best(str(log)):
        with pytest.warns(UserWarning, match="does not fit its knobs"):
            s, _ = matmul(N, L, M, "float32")
    assert "split(C, i, factor=1)" in str(s)
