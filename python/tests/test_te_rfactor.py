"""Schedule.rfactor from Python (TVM's spelling): the new stage, its loops, and the results."""
import numpy as np
import pytest

import anvil
from anvil import te


def row_sum(n, k_extent, reducer=te.sum):
    A = te.placeholder((n, k_extent), name="A")
    k = te.reduce_axis((0, k_extent), name="k")
    B = te.compute((n,), lambda i: reducer(A[i, k], axis=k), name="B")
    return A, B, k


def run(s, A, B, n, k_extent):
    f = anvil.build(s, [A, B], target="llvm")
    a = np.random.uniform(-2.0, -0.5, (n, k_extent)).astype("float32")
    b = anvil.nd.empty((n,), "float32")
    f(anvil.nd.array(a), b)
    return a, b.numpy()


@pytest.mark.parametrize("factor_axis", [0, 1])
def test_rfactor_inner_loop_vectorized(factor_axis):
    n, k_extent = 13, 100
    A, B, k = row_sum(n, k_extent)
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, factor=16)
    BF = s.rfactor(B, ki, factor_axis=factor_axis)
    assert BF.name == "B.rf"
    assert BF.shape == ((16, n) if factor_axis == 0 else (n, 16))
    assert [ax.name for ax in BF.op.axis][factor_axis] == "k.inner"
    assert [ax.name for ax in s[BF].op.reduce_axis] == ["k.outer"]
    assert [ax.name for ax in s[B].op.reduce_axis] == ["k.inner"]
    i = s[BF].op.axis[1 - factor_axis]
    s[BF].reorder(i, s[BF].op.reduce_axis[0], s[BF].op.axis[factor_axis])
    s[BF].vectorize(s[BF].op.axis[factor_axis])
    s[B].parallel(s[B].op.axis[0])
    assert f"rfactor(B, k.inner{', factor_axis=1' if factor_axis else ''})" in str(s)
    # The split's guard is `likely`: the pipeline peels the last k.outer iteration off, so the
    # factored axis becomes vector operations with no test left.
    text = str(anvil.lower(s, [A, B]))
    assert "ramp(" in text and "if " not in text, text
    a, b = run(s, A, B, n, k_extent)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_rfactor_max_outer_loop_computed_at_consumer():
    n, k_extent = 9, 70
    A, B, k = row_sum(n, k_extent, te.max)
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, nparts=4)
    BF = s.rfactor(B, ko)
    s[BF].compute_at(s[B], s[B].op.axis[0])
    a, b = run(s, A, B, n, k_extent)
    np.testing.assert_array_equal(b, a.max(axis=1))


def test_rfactor_errors():
    A, B, k = row_sum(8, 64)
    s = te.create_schedule(B.op)
    with pytest.raises(anvil.UserError, match="rfactor on stage 'B', axis 'i': it is a "
                                              "data-parallel axis"):
        s.rfactor(B, s[B].op.axis[0])
    ko, ki = s[B].split(k, factor=16)
    with pytest.raises(anvil.UserError, match="factor_axis 5 is out of range"):
        s.rfactor(B, ki, factor_axis=5)
