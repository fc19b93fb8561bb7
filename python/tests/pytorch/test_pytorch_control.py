"""The PyTorch importer on scripted control flow: If and loops decided at run time (control.if,
control.loop on the VM), unrolled loops, lists built in loops, model assertions."""
from typing import List, Optional

import numpy as np
import pytest
import torch

import anvil
from pt_check import check_module, import_module, run_anvil, assert_close


def script_check(module, inputs, shapes=None):
    check_module(module, inputs, modes=("script",), shapes=shapes)


def imported_text(module, inputs):
    mod, _ = import_module(torch.jit.script(module.eval()), inputs)
    return str(mod)


def run_scripted(module, inputs):
    module = module.eval()
    mod, params = import_module(torch.jit.script(module), inputs)
    return mod, params


# --- If on a condition known only at run time ---------------------------------------------------

class IfSum(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y


def test_if_on_run_time_condition_takes_both_branches():
    m = IfSum()
    x = torch.randn(3, 4).abs()
    script_check(m, [x])
    script_check(m, [-x])
    assert "control.if" in imported_text(m, [x])


def test_if_one_import_serves_both_branches():
    m = IfSum().eval()
    x = torch.randn(2, 5).abs() + 0.1
    mod, params = run_scripted(m, [x])
    for inp in (x, -x):
        assert_close(run_anvil(mod, params, [inp]), [m(inp).numpy()], "branch")


class IfFlag(torch.nn.Module):
    """Branches of different shapes, using outer tensors and the module's weights."""

    def __init__(self):
        super().__init__()
        self.wide = torch.nn.Linear(4, 6)
        self.narrow = torch.nn.Linear(4, 3)

    def forward(self, x, flag):
        outer = x * 3
        if bool(flag > 0):
            y = torch.relu(self.wide(outer))
        else:
            y = self.narrow(x) + outer[:, :3]
        return y


def test_if_branches_of_different_shapes_with_outer_values_and_weights():
    torch.manual_seed(0)
    m = IfFlag().eval()
    x = torch.randn(2, 4)
    mod, params = run_scripted(m, [x, torch.tensor([1.0])])
    assert "control.if" in str(mod)
    for flag in (torch.tensor([1.0]), torch.tensor([-1.0])):
        out = run_anvil(mod, params, [x, flag])
        assert_close(out, [m(x, flag).detach().numpy()], f"flag {flag.item()}")


class NestedIf(torch.nn.Module):
    def forward(self, x, a, b):
        if bool(a > 0):
            if bool(b > 0):
                y = x + 1
            else:
                y = x * x
            z = y * 2
        else:
            z = x - 5
        return z


def test_nested_ifs():
    m = NestedIf().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x, torch.tensor(1.0), torch.tensor(1.0)])
    for a in (1.0, -1.0):
        for b in (1.0, -1.0):
            ins = [x, torch.tensor(a), torch.tensor(b)]
            assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"a={a} b={b}")


class IfNumbersAndTuples(torch.nn.Module):
    def forward(self, x, c):
        if bool(c > 0):
            k = 2
            pair = (x + 1, x * 2)
        else:
            k = 3
            pair = (x - 1, x * 3)
        return pair[0] * k, pair[1]


def test_if_returning_numbers_and_tuples():
    m = IfNumbersAndTuples().eval()
    x = torch.randn(4)
    mod, params = run_scripted(m, [x, torch.tensor(1.0)])
    for c in (1.0, -1.0):
        ins = [x, torch.tensor(c)]
        expected = [t.numpy() for t in m(*ins)]
        assert_close(run_anvil(mod, params, ins), expected, f"c={c}")


class IfOptional(torch.nn.Module):
    def forward(self, x, c):
        y: Optional[torch.Tensor] = None
        if bool(c > 0):
            y = x
        if y is None:
            return x
        return y


def test_if_choosing_between_none_and_a_tensor_is_an_error():
    with pytest.raises(anvil.UserError, match="in one branch and a"):
        run_scripted(IfOptional(), [torch.randn(2), torch.tensor(1.0)])


# --- model assertions ---------------------------------------------------------------------------

class Asserting(torch.nn.Module):
    def forward(self, x):
        assert bool(x.sum() > -100.0), "the sum is too small"
        return x * 2


def test_assertion_checked_at_run_time():
    m = Asserting().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x])
    assert "bind_values" in str(mod)
    assert_close(run_anvil(mod, params, [x]), [m(x).numpy()], "passes")
    with pytest.raises(Exception, match="the sum is too small"):
        run_anvil(mod, params, [torch.full((3,), -100.0)])


class RaiseInBranch(torch.nn.Module):
    def forward(self, x, c):
        if bool(c < 0):
            raise ValueError("c must not be negative")
        y = x + c
        if bool(c > 10):
            y = y * 0
        return y


def test_raise_in_branch_checked_at_run_time():
    m = RaiseInBranch().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x, torch.tensor(1.0)])
    for c in (1.0, 20.0):
        ins = [x, torch.tensor(c)]
        assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"c={c}")
    with pytest.raises(Exception, match="c must not be negative"):
        run_anvil(mod, params, [x, torch.tensor(-1.0)])


class AssertInsideBranch(torch.nn.Module):
    def forward(self, x, c):
        if bool(c > 0):
            assert bool(x.sum() < 100.0), "too large"
            y = x + 1
        else:
            y = x - 1
        return y


def test_assertion_inside_a_run_time_branch():
    m = AssertInsideBranch().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x, torch.tensor(1.0)])
    for c in (1.0, -1.0):
        ins = [x, torch.tensor(c)]
        assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"c={c}")
    with pytest.raises(Exception, match="too large"):
        run_anvil(mod, params, [torch.full((3,), 50.0), torch.tensor(1.0)])
    # The branch that does not assert does not check.
    big = torch.full((3,), 50.0)
    assert_close(run_anvil(mod, params, [big, torch.tensor(-1.0)]), [big.numpy() - 1], "else")


class AlwaysRaises(torch.nn.Module):
    def forward(self, x, c):
        if bool(c > 0):
            raise ValueError("a")
        else:
            raise ValueError("b")
        return x


def test_both_branches_raising_is_an_import_error():
    with pytest.raises(anvil.UserError, match="both branches raise"):
        run_scripted(AlwaysRaises(), [torch.randn(2), torch.tensor(1.0)])


# --- loops --------------------------------------------------------------------------------------

class StaticLoop(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = x
        for i in range(self.n):
            h = torch.relu(self.lin(h)) * 0.5 + i
        return h


def test_for_range_import_time_count_is_a_graph_loop():
    torch.manual_seed(0)
    m = StaticLoop(5)
    x = torch.randn(2, 4)
    script_check(m, [x])
    text = imported_text(m, [x])
    assert "control.loop" in text and text.count("nn.dense") == 1


def test_a_thousand_iterations_are_not_unrolled():
    torch.manual_seed(0)
    m = StaticLoop(1000)
    x = torch.randn(2, 4)
    script_check(m, [x])
    assert imported_text(m, [x]).count("nn.dense") == 1


def test_one_iteration_is_converted_in_place():
    m = StaticLoop(1)
    x = torch.randn(2, 4)
    script_check(m, [x])
    assert "control.loop" not in imported_text(m, [x])


class RunTimeCount(torch.nn.Module):
    def forward(self, x):
        h = x
        for i in range(int(x.sum())):
            h = h * 0.5 + i
        return h


def test_for_range_of_a_run_time_count():
    m = RunTimeCount().eval()
    x = torch.full((2, 2), 1.0)
    mod, params = run_scripted(m, [x])
    assert "control.loop" in str(mod)
    for v in (0.0, 0.5, 1.0, 2.0):
        inp = torch.full((2, 2), v)
        assert_close(run_anvil(mod, params, [inp]), [m(inp).numpy()], f"v={v}")


class RunTimeCountFromInput(torch.nn.Module):
    def forward(self, x, n):
        total = torch.zeros_like(x)
        for i in range(int(n)):
            total = total + x * i
        return total


def test_for_range_of_an_int_input():
    m = RunTimeCountFromInput().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x, torch.tensor(3)])
    for n in (0, 1, 4):
        ins = [x, torch.tensor(n)]
        assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"n={n}")


class WhileLoop(torch.nn.Module):
    def forward(self, x, limit):
        h = x
        steps = torch.zeros(1)
        while bool(steps < limit):
            h = h * 2 - 1
            steps = steps + 1
        return h, steps


def test_while_loop_with_a_run_time_condition():
    m = WhileLoop().eval()
    x = torch.randn(2, 3)
    mod, params = run_scripted(m, [x, torch.tensor([3.0])])
    assert "control.loop" in str(mod)
    for limit in (0.0, 1.0, 3.0, 5.0):
        ins = [x, torch.tensor([limit])]
        expected = [t.numpy() for t in m(*ins)]
        assert_close(run_anvil(mod, params, ins), expected, f"limit={limit}")


class LoopWithBreak(torch.nn.Module):
    def forward(self, x):
        h = x
        for i in range(10):
            h = h + 1
            if bool(h.sum() > 20.0):
                break
        return h


def test_for_loop_with_break():
    m = LoopWithBreak().eval()
    mod, params = run_scripted(m, [torch.zeros(2)])
    assert "control.loop" in str(mod)
    for v in (0.0, 3.0, 50.0):
        inp = torch.full((2,), v)
        assert_close(run_anvil(mod, params, [inp]), [m(inp).numpy()], f"v={v}")


class NestedLoops(torch.nn.Module):
    def forward(self, x):
        h = x
        for i in range(4):
            for j in range(3):
                h = h * 0.9 + (i - j)
        return h


def test_nested_loops():
    script_check(NestedLoops(), [torch.randn(3)])


class LoopInRunTimeBranch(torch.nn.Module):
    def forward(self, x, c):
        h = x
        if bool(c > 0):
            for i in range(6):
                h = h + i * c
        return h


def test_loop_inside_a_run_time_branch():
    m = LoopInRunTimeBranch().eval()
    x = torch.randn(3)
    mod, params = run_scripted(m, [x, torch.tensor(1.0)])
    for c in (2.0, -1.0):
        ins = [x, torch.tensor(c)]
        assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"c={c}")


class ImportTimeCounter(torch.nn.Module):
    def forward(self, x):
        k = 1
        for i in range(4):
            k = k * 2 + i
        return x * k


def test_loop_carrying_an_import_time_number_is_unrolled():
    m = ImportTimeCounter()
    x = torch.randn(3)
    script_check(m, [x])
    assert "control.loop" not in imported_text(m, [x])


class OverList(torch.nn.Module):
    def forward(self, a, b, c):
        xs = [a, b, c]
        total = torch.zeros_like(a)
        for x in xs:
            total = total * 2 + x
        return total


def test_loop_over_a_list_of_tensors_is_unrolled():
    ins = [torch.randn(3), torch.randn(3), torch.randn(3)]
    script_check(OverList(), ins)


class AppendInLoop(torch.nn.Module):
    def forward(self, x):
        outs: List[torch.Tensor] = []
        h = x
        for i in range(5):
            h = h * 0.5 + 1
            outs.append(h)
            outs.append(h * i)
        return outs


def test_list_appended_in_a_graph_loop():
    m = AppendInLoop()
    x = torch.randn(2, 3)
    script_check(m, [x])
    assert "control.loop" in imported_text(m, [x])


class AppendRunTimeCount(torch.nn.Module):
    def forward(self, x, n):
        outs: List[torch.Tensor] = []
        for i in range(int(n)):
            outs.append(x * i)
        return outs


def test_list_appended_in_a_loop_of_run_time_count_is_an_error():
    with pytest.raises(anvil.UserError, match="list of a length known only at run time"):
        run_scripted(AppendRunTimeCount(), [torch.randn(2), torch.tensor(3)])


class AppendInRunTimeBranch(torch.nn.Module):
    def forward(self, x, c):
        outs: List[torch.Tensor] = [x]
        if bool(c > 0):
            outs.append(x * 2)
        return outs[0]


def test_append_in_a_run_time_branch_is_an_error():
    with pytest.raises(anvil.UserError, match="changes a value defined outside a branch"):
        run_scripted(AppendInRunTimeBranch(), [torch.randn(2), torch.tensor(1.0)])


class GrowingLoop(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        h = x
        for i in range(self.n):
            h = torch.cat([h, x * i], 0)
        return h


def test_loop_whose_carried_shape_grows_is_unrolled_when_short():
    m = GrowingLoop(3)
    x = torch.randn(2, 3)
    script_check(m, [x])
    assert "control.loop" not in imported_text(m, [x])


def test_loop_whose_carried_shape_grows_runs_as_a_graph_loop_when_long():
    m = GrowingLoop(100)
    x = torch.randn(2, 3)
    script_check(m, [x])
    assert "control.loop" in imported_text(m, [x])


class LoopIndexArithmetic(torch.nn.Module):
    def forward(self, x):
        acc = torch.zeros_like(x)
        for i in range(7):
            acc = acc + x * (i * i) - i / 2
        return acc


def test_loop_index_in_arithmetic():
    m = LoopIndexArithmetic()
    x = torch.randn(4)
    script_check(m, [x])
    assert "control.loop" in imported_text(m, [x])


# --- checks decided at import time --------------------------------------------------------------

class ImportTimeChecks(torch.nn.Module):
    def forward(self, x):
        assert x.dim() in (2, 3), f"expected a 2-D or 3-D input, got {x.dim()}-D"
        name = "rank{}".format(x.dim())
        sizes = list(x.size())
        if (name.find("3") != -1 and not x.is_cuda and not torch.is_grad_enabled()
                and x.is_floating_point() and not x.requires_grad and str(x.device) == "cpu"):
            return x * sizes[0]
        return x


def test_checks_and_flags_are_decided_at_import_time():
    m = ImportTimeChecks()
    script_check(m, [torch.randn(2, 3, 4)])
    script_check(m, [torch.randn(2, 3)])
    assert "control.if" not in imported_text(m, [torch.randn(2, 3, 4)])


def test_failing_import_time_check_shows_the_formatted_message():
    with pytest.raises(anvil.UserError, match="expected a 2-D or 3-D input, got 4-D"):
        run_scripted(ImportTimeChecks(), [torch.randn(1, 2, 3, 4)])


# --- symbolic sizes -----------------------------------------------------------------------------

class SizeInLoop(torch.nn.Module):
    def forward(self, x, h):
        n = x.size(0)
        for i in range(5):
            h = h * 0.5 + n
        return h


class IfOnSize(torch.nn.Module):
    def forward(self, x):
        if x.size(0) > 3:
            y = x * 2
        else:
            y = x - 1
        return y


def test_symbolic_size_used_in_a_graph_loop():
    m = SizeInLoop().eval()
    h = torch.randn(2)
    mod, params = import_module(torch.jit.script(m), [torch.randn(4, 3), h],
                                shapes=[(-1, 3), (2,)])
    assert "control.loop" in str(mod)
    for n in (2, 6):
        ins = [torch.randn(n, 3), h]
        assert_close(run_anvil(mod, params, ins), [m(*ins).numpy()], f"n={n}")


def test_if_on_a_symbolic_size_is_decided_at_run_time():
    m = IfOnSize().eval()
    mod, params = import_module(torch.jit.script(m), [torch.randn(5, 2)], shapes=[(-1, 2)])
    assert "control.if" in str(mod)
    for n in (2, 5):
        x = torch.randn(n, 2)
        assert_close(run_anvil(mod, params, [x]), [m(x).numpy()], f"n={n}")


class AppendStraight(torch.nn.Module):
    def forward(self, x):
        outs: List[torch.Tensor] = []
        outs.append(x + 1)
        outs.append(x * 2)
        return torch.stack(outs)


def test_append_outside_loops():
    script_check(AppendStraight(), [torch.randn(2, 3)])


class AppendMany(torch.nn.Module):
    def forward(self, x):
        outs: List[torch.Tensor] = []
        for i in range(5000):
            outs.append(x * i)
        return outs[0]


def test_appending_too_many_items_in_a_graph_loop_is_an_error():
    with pytest.raises(anvil.UserError, match="at most 4096 items"):
        run_scripted(AppendMany(), [torch.randn(2)])
