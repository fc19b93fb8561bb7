"""The PyTorch importer's slicing and indexing (convert_index.cpp) and its gather, scatter, mask,
sort and selection converters (convert_gather.cpp), traced and scripted, against PyTorch eager."""
from typing import List

import pytest
import torch

import anvil
from pt_cases import check_symbolic, module1, module2, module3
from pt_check import assert_close, check_module, import_module, run_anvil


def x345():
    torch.manual_seed(0)
    return torch.randn(3, 4, 5)


# ---- slice / select / narrow ----------------------------------------------------------------

def slices(x):
    return (x[1:], x[:, :-1], x[:, ::2], x[..., 1:4:2], x[-2:, 1:3], x[:, 10:], x[:, -10:2],
            x[0:0])


def selects(x):
    return x[0], x[:, -1], x[..., 2], x[1, 2], x.select(2, -5)


def narrows(x):
    return x.narrow(1, 1, 2), x.narrow(-1, -3, 3), torch.narrow(x, 0, 0, 3)


def list_slices(x):
    s: List[int] = x.shape[1:]
    t: List[int] = x.shape[::-1]
    return torch.zeros(s), torch.zeros(t), torch.zeros(x.shape[:-1])


@pytest.mark.parametrize("fn", [slices, selects, narrows, list_slices])
def test_slice_select_narrow(fn):
    check_module(module1(fn), [x345()])


def symbolic_slices(x):
    n = x.size(0)
    return x[1:], x[:-1], x[::2], x[-1], x[0], x[n - 1], x.narrow(0, 1, 1), x[:, 1:3]


def test_slices_of_symbolic_dimensions():
    sets = [[torch.randn(n, 4, 5)] for n in (3, 6)]
    check_symbolic(module1(symbolic_slices), sets, shapes=[("n", 4, 5)])


def negative_step(x):
    return x[::-1]


def test_negative_slice_step_is_an_error():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.slice(x, 0, 0, 3, -1)

    x = x345()
    with pytest.raises(anvil.UserError, match="step must be positive"):
        import_module(torch.jit.script(M()), [x])


def test_select_out_of_range_is_an_error():
    class M(torch.nn.Module):
        def forward(self, x):
            return x.select(1, 4)

    x = x345()
    with pytest.raises(anvil.UserError, match="index 4 is out of range"):
        import_module(torch.jit.script(M()), [x])


# ---- advanced indexing ----------------------------------------------------------------------

def index_one(x, i):
    return x[i], x[:, i], x[:, :, i], x[:, :, i.view(2, 1)]


def index_several(x, i):
    j = torch.flip(i, [0])
    return x[i, j], x[:, i, j], x[i, :, j], x[i.view(2, 1), :, j], x[i, 1:3, j]


def index_mask(x, i):
    return x[x > 0], x[x[:, :, 0] > 0], x[:, x[0, :, 0] > 0], x[x[:, 0, 0] > 0, 1]


@pytest.mark.parametrize("fn", [index_one, index_several, index_mask])
def test_index(fn):
    check_module(module2(fn), [x345(), torch.tensor([2, 0])])


def test_index_with_constant_tensors():
    class M(torch.nn.Module):
        def forward(self, x):
            return x[torch.tensor([0, -1])], x[:, [1, 3], [0, 4]]

    check_module(M(), [x345()], modes=("trace",))


def test_constant_index_out_of_range_is_an_error():
    class M(torch.nn.Module):
        def forward(self, x):
            return x[:, torch.tensor([0, 4])]

    x = torch.randn(2, 3)
    with pytest.raises(anvil.UserError, match="index 4 is out of bounds for dimension 1"):
        import_module(torch.jit.script(M()), [x])


def index_puts(x, i, v):
    a = x.clone()
    a[i] = v
    b = x.clone()
    b[x > 0] = 0.0
    c = x.index_put((i,), v, accumulate=True)
    d = x.index_put((i, i), torch.tensor(7.0))
    e = x.clone()
    e[x[:, 0, 0] > 0] = 1.0
    f = x.clone()
    f[x > 0.5] = x[x > 0.5] * 10
    g = x.clone()
    g[x[:, :, 0] > 0] = v[0]
    h = x.index_put((x[:, 0, 0] > 0,), v, accumulate=True)
    return a, b, c, d, e, f, g, h


def test_index_put():
    check_module(module3(index_puts), [x345(), torch.tensor([2, 0]), torch.randn(4, 5)])


def index_put_into_view(x, i):
    y = x.clone()
    y[:, i] = 1.0
    return y


def copy_into_view(x):
    y = x + 1
    y[0] = x[1]
    return y


def write_into_parts(x, i):
    y = x.clone()
    a, b = y.split([1, 2], 0)
    a[:, i] = 3.0
    b.masked_fill_(b > 0.5, 9.0)
    c = torch.zeros(2, 4, 5)
    p, q = c.unbind(0)
    q.scatter_(1, torch.zeros(4, 1, dtype=torch.int64), 4.0)
    r, s = c.chunk(2, 2)
    r.index_fill_(1, i, 5.0)
    t = c[1].T
    t[0] = 6.0
    c.swapdims(0, 2)[1] = 7.0
    return y, c


def test_writes_into_views_change_the_tensor_viewed():
    x, i = x345(), torch.tensor([2, 0])
    check_module(module2(index_put_into_view), [x, i])
    check_module(module1(copy_into_view), [x])
    check_module(module2(write_into_parts), [x, i])


def index_select(x, i):
    return x.index_select(1, i), torch.index_select(x, -1, i), x.index_select(0, i[0])


def take(x, i):
    return torch.take(x, i), torch.take(x, i.view(1, 2) * 7)


@pytest.mark.parametrize("fn", [index_select, take])
def test_index_select_take(fn):
    check_module(module2(fn), [x345(), torch.tensor([2, 0])])


# ---- gather / scatter / masks ---------------------------------------------------------------

def gathers(x, i):
    return torch.gather(x, 1, i), x.gather(-1, i[:, :, :2]), torch.take_along_dim(x, i, 1)


def take_along(x, i):
    return torch.take_along_dim(x, i[:, :1], 1), torch.take_along_dim(x, i.flatten()[:4])


def scatters(x, i):
    src = x * 10
    return (x.scatter(1, i, src), x.scatter(1, i[:, :2], src), x.scatter(2, i[:, :, :3], -1.0),
            x.scatter_add(1, i, src), x.scatter(1, i, src, reduce="add"),
            x.scatter(1, i, 2.0, reduce="multiply"), x.scatter_reduce(1, i, src, "sum"),
            x.scatter_reduce(1, i, src, "prod"))


def permutation_index():
    torch.manual_seed(1)
    return torch.stack([torch.stack([torch.randperm(4) for _ in range(5)], 1) for _ in range(3)])


@pytest.mark.parametrize("fn", [gathers, take_along, scatters])
def test_gather_scatter(fn):
    check_module(module2(fn), [x345(), permutation_index()])


def masks(x, m):
    return (x.masked_fill(m, 0.5), x.masked_fill(m[0], -1), x.masked_fill(m, torch.tensor(2.0)),
            torch.masked_select(x, m), x.masked_select(m[:, :1]))


def test_masks():
    x = x345()
    check_module(module2(masks), [x, x > 0.3])


def triangles(x):
    return x.tril(), x.triu(1), torch.tril(x, -1), torch.triu(x[0], -2)


def test_tril_triu():
    check_module(module1(triangles), [x345()])


def scatter_amax(x, i):
    return x.scatter_reduce(1, i, x, "amax")


def test_unsupported_scatter_reduce_is_an_error():
    x, i = x345(), permutation_index()
    with pytest.raises(anvil.UserError, match="reduce='amax'"):
        import_module(torch.jit.script(module2(scatter_amax)), [x, i])


# ---- sorting and selection ------------------------------------------------------------------

def topks(x):
    v, i = x.topk(2)
    w, j = torch.topk(x, 3, dim=1, largest=False)
    u, k = x.topk(1, 0)
    return v, i, w, j, u, k


def sorts(x):
    v, i = x.sort(1)
    w, j = torch.sort(x, descending=True)
    u, k = torch.sort(x, dim=0, stable=True)
    return v, i, w, j, u, k, x.argsort(), torch.argsort(x, 1, True), torch.msort(x)


@pytest.mark.parametrize("fn", [topks, sorts])
def test_topk_sort(fn):
    check_module(module1(fn), [x345()])


def stable_sort_ties(x):
    r = torch.round(x)
    v, i = torch.sort(r, dim=1, stable=True)
    w, j = torch.sort(r, dim=1, descending=True, stable=True)
    return v, i, w, j


def test_stable_sort_keeps_the_order_of_ties():
    check_module(module1(stable_sort_ties), [x345()])


def symbolic_topk(x):
    v, i = x.topk(2, 0)
    w, j = x.sort(0)
    return v, i, w, j


def test_sort_along_a_symbolic_dimension():
    sets = [[torch.randn(n, 4)] for n in (3, 6)]
    check_symbolic(module1(symbolic_topk), sets, shapes=[("n", 4)])


def nonzeros(x):
    return torch.nonzero(x > 0), torch.argwhere(x[0] > 0), torch.nonzero(x[0, 0] > 0)


def test_nonzero():
    check_module(module1(nonzeros), [x345()])


def test_nonzero_as_tuple_traced():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x > 0, as_tuple=True)

    check_module(M(), [x345()], modes=("trace",))


def write_into_input(x):
    x[x < 0] = 0.0
    x.masked_fill_(x > 1, 1.0)
    return x * 1


def test_in_place_writes_into_a_model_input():
    # Eager runs on a copy: the writes change the tensor they are given.
    for mode in ("trace", "script"):
        m = module1(write_into_input)
        expected = m(x345())
        scripted = torch.jit.trace(m, x345()) if mode == "trace" else torch.jit.script(m)
        mod, params = import_module(scripted, [x345()])
        assert_close(run_anvil(mod, params, [x345()]), [expected.numpy()], mode)


def index_adds(x, i):
    s = torch.ones(3, 2, 5)
    return (x.index_add(1, i, s), x.index_add(1, i, s, alpha=2.5), x.index_copy(1, i, s * 3),
            x.index_fill(1, i, -1.0), x.index_fill(2, i - 3, 7.0), x.index_fill(0, i[:1], 0))


def test_index_add_copy_fill():
    check_module(module2(index_adds), [x345(), torch.tensor([2, 0])])


def symbolic_masks(x):
    y = x.clone()
    y[x > 0.5] = 0.0
    return x[x > 0], torch.nonzero(x > 0.2), x[x[:, :, 0] > 0], torch.masked_select(x, x < 0), y


def test_masks_over_a_symbolic_batch():
    torch.manual_seed(0)
    sets = [[torch.randn(n, 4, 3)] for n in (2, 5)]
    check_symbolic(module1(symbolic_masks), sets, shapes=[("n", 4, 3)])


def runtime_positions(x, i):
    k = int(i[0])
    m = int(i[1])
    return x[:, k:], x[m:k], x[k], x[:, -k], x.narrow(2, i[1], 2), x.narrow(1, k - 4, 2)


def test_slices_at_positions_computed_at_run_time():
    check_module(module2(runtime_positions), [x345(), torch.tensor([2, 0])], modes=("script",))
