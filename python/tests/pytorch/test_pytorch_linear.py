"""PyTorch linear algebra against eager: linear (any input rank, 1-D weight), matmul for every
rank combination with batch broadcasting, mm, bmm, mv, dot, addmm, baddbmm, addmv (alpha,
beta), einsum and t, and their errors."""
import pytest
import torch
import torch.nn.functional as F

import anvil
from pt_check import check_module, import_module


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7), (2, 1, 3, 7)])
def test_linear_any_rank(shape):
    torch.manual_seed(0)
    check_module(torch.nn.Linear(7, 4), [torch.randn(*shape)])
    check_module(torch.nn.Linear(7, 4, bias=False), [torch.randn(*shape)])


class FunctionalLinear(torch.nn.Module):
    def forward(self, x, w, b):
        return F.linear(x, w, b), F.linear(x, w), F.linear(x, w, b[0])


def test_linear_with_weights_as_inputs():
    torch.manual_seed(0)
    check_module(FunctionalLinear(), [torch.randn(2, 3, 5), torch.randn(4, 5), torch.randn(4)])


def test_integer_linear():
    check_module(FunctionalLinear(), [torch.randint(-9, 9, (2, 3, 5)),
                                      torch.randint(-9, 9, (4, 5)), torch.randint(-9, 9, (4,))])


class Matmul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


@pytest.mark.parametrize("a,b", [
    ((5,), (5,)),
    ((5,), (5, 3)),
    ((4, 5), (5,)),
    ((4, 5), (5, 3)),
    ((2, 4, 5), (5,)),
    ((5,), (2, 5, 3)),
    ((2, 4, 5), (5, 3)),
    ((4, 5), (2, 5, 3)),
    ((2, 4, 5), (2, 5, 3)),
    ((2, 1, 4, 5), (3, 5, 6)),
    ((3, 1, 4, 5), (1, 2, 5, 6)),
])
def test_matmul_rank_combinations(a, b):
    torch.manual_seed(0)
    check_module(Matmul(), [torch.randn(*a), torch.randn(*b)])


@pytest.mark.parametrize("a,b", [((5,), (5,)), ((5,), (2, 5, 3)), ((4, 5), (5,)),
                                 ((2, 1, 4, 5), (3, 5, 6))])
def test_integer_matmul(a, b):
    check_module(Matmul(), [torch.randint(-9, 9, a), torch.randint(-9, 9, b)])


class IntegerScaledSums(torch.nn.Module):
    def forward(self, c, a, b, v):
        return torch.addmm(c, a, b, beta=2, alpha=-3), torch.addmv(a[0], b, v, beta=0, alpha=2)


def test_integer_addmm_and_addmv():
    check_module(IntegerScaledSums(), [torch.randint(-9, 9, (3, 5)), torch.randint(-9, 9, (3, 4)),
                                       torch.randint(-9, 9, (4, 5)), torch.randint(-9, 9, (5,))])


class Products(torch.nn.Module):
    def forward(self, a, b, batch_a, batch_b, v):
        return (torch.mm(a, b), torch.bmm(batch_a, batch_b), torch.mv(a, v), torch.dot(v, v),
                a.t(), v.t(), a @ b)


def test_mm_bmm_mv_dot_t():
    torch.manual_seed(0)
    check_module(Products(), [torch.randn(3, 4), torch.randn(4, 5), torch.randn(2, 3, 4),
                              torch.randn(2, 4, 5), torch.randn(4)])


class ScaledSums(torch.nn.Module):
    def forward(self, c, a, b, batch_a, batch_b, v):
        return (torch.addmm(c, a, b), torch.addmm(c, a, b, beta=0.5, alpha=2.0),
                torch.addmm(c[0], a, b, beta=0, alpha=-1),
                torch.baddbmm(c, batch_a, batch_b), torch.baddbmm(c, batch_a, batch_b, beta=2,
                                                                  alpha=0.25),
                torch.addmv(c[:, 0], a, v, beta=3.0, alpha=0.5))


def test_addmm_baddbmm_addmv():
    torch.manual_seed(0)
    check_module(ScaledSums(), [torch.randn(3, 5), torch.randn(3, 4), torch.randn(4, 5),
                                torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(4)])


class BetaZero(torch.nn.Module):
    def forward(self, c, a, b):
        return torch.addmm(c, a, b, beta=0)


def test_addmm_with_beta_zero_ignores_nan_in_self():
    torch.manual_seed(0)
    c = torch.full((3, 5), float("nan"))
    check_module(BetaZero(), [c, torch.randn(3, 4), torch.randn(4, 5)])


class Einsum(torch.nn.Module):
    def __init__(self, equation):
        super().__init__()
        self.equation = equation

    def forward(self, a, b):
        return torch.einsum(self.equation, a, b)


@pytest.mark.parametrize("equation,a,b", [
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),
    ("i,j->ij", (3,), (4,)),
    ("ij,ij->", (3, 4), (3, 4)),
    ("...ij,...jk", (2, 3, 4), (2, 4, 5)),
    ("ab,cb", (3, 4), (5, 4)),
    ("iJ, Jk -> ki", (3, 4), (4, 2)),
    # Size-1 axes broadcast against the other operand's.
    ("...ij,...jk", (1, 3, 4), (2, 4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (1, 4, 5)),
    ("ij,jk", (3, 1), (4, 5)),
    ("...ij,jk", (2, 1, 3, 4), (4, 5)),
])
def test_einsum(equation, a, b):
    torch.manual_seed(0)
    check_module(Einsum(equation), [torch.randn(*a), torch.randn(*b)])


class EinsumOne(torch.nn.Module):
    def forward(self, a):
        return torch.einsum("ii->i", a), torch.einsum("ij->ji", a), torch.einsum("ii", a)


def test_einsum_one_operand():
    torch.manual_seed(0)
    check_module(EinsumOne(), [torch.randn(4, 4)])


def test_operands_of_different_dtypes_are_an_error():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    m = torch.jit.trace(Matmul(), (a, b))
    with pytest.raises(anvil.UserError, match="expects operands of one dtype, got float32 and "
                       "float64"):
        import_module(m, [a, b.double()])


def test_mm_of_the_wrong_rank_is_an_error():
    class Mm(torch.nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)

    a, b = torch.randn(3, 4), torch.randn(4, 5)
    with pytest.raises(anvil.UserError, match="operand 0 must be a matrix, got a 3-D tensor"):
        import_module(torch.jit.trace(Mm(), (a, b)), [a, b], shapes=[(1, 3, 4), (4, 5)])


def test_bmm_batches_of_different_sizes_are_an_error():
    class Bmm(torch.nn.Module):
        def forward(self, a, b):
            return torch.bmm(a, b)

    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    with pytest.raises(anvil.UserError, match="the batches have different sizes, 2 and 3"):
        import_module(torch.jit.trace(Bmm(), (a, b)), [a, b], shapes=[(2, 3, 4), (3, 4, 5)])


def test_t_of_a_3d_tensor_is_an_error():
    class T(torch.nn.Module):
        def forward(self, a):
            return a.t()

    a = torch.randn(3, 4)
    with pytest.raises(anvil.UserError, match="t.. expects a tensor of at most 2 dimensions"):
        import_module(torch.jit.trace(T(), a), [a], shapes=[(2, 3, 4)])


class LinearStack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 4)

    def forward(self, x, m):
        y = self.fc(x)
        return y, torch.matmul(y, m), torch.einsum("bsd,de->bse", y, m), torch.bmm(y, y.transpose(1, 2))


def test_symbolic_batch():
    torch.manual_seed(0)
    check_module(LinearStack(), [torch.randn(2, 3, 5), torch.randn(4, 6)],
                 shapes=[("N", "S", 5), (4, 6)])
