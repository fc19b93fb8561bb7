"""Graph passes, one at a time: anvil.transform.fold_constants()(mod)."""
import warnings

from . import _anvil
from ._context import PassContext
from .target import Target


class Pass:
    """One graph pass; call it on an IRModule. It runs alone (no other pass runs with it), at
    the enclosing PassContext's opt_level, for the enclosing ``with Target(...)`` (the host
    outside any)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, mod):
        target = Target.current()
        return _anvil.run_graph_pass(mod, self.name, PassContext.current().opt_level,
                                     str(target) if target is not None else "")

    def __repr__(self):
        return f"Pass({self.name})"


class Sequential(Pass):
    """Runs passes in order."""

    def __init__(self, passes):
        super().__init__("sequential")
        self.passes = list(passes)

    def __call__(self, mod):
        for p in self.passes:
            mod = p(mod)
        return mod


class BindParams(Pass):
    """Binds weights as constants: the parameters of `func_name` named in `params` (name ->
    NumPy array or NDArray) become constants of the module (TVM Relax's BindParams)."""

    def __init__(self, func_name, params):
        super().__init__("bind_params")
        self.func_name = func_name
        self.params = dict(params)

    def __call__(self, mod):
        return _anvil.bind_params(mod, self.func_name, self.params)


def bind_params(func_name, params):
    """anvil.transform.bind_params("main", params)(mod): see BindParams."""
    return BindParams(func_name, params)


def pass_names():
    """The graph passes (each once, in the recommended order), then the loop-IR passes."""
    return _anvil.graph_pass_names() + _anvil.tir_pass_names()


def _make(name):
    def factory():
        return Pass(name)

    factory.__name__ = name
    factory.__doc__ = f"The graph pass '{name}'."
    return factory


for _name in _anvil.graph_pass_names():
    globals()[_name] = _make(_name)


# ---- BYOC: partitioning for external code generators (TVM's names) ----------------------------

def get_pattern_table(compiler, target=None):
    """The pattern table of a built-in external code generator ("dnnl"): a list of
    (name, pattern, check) tuples, as TVM's relay.op.contrib.get_pattern_table returns. Its
    checks may depend on the CPU the kernels are compiled for (oneDNN's int8 layers: exact
    sums need VNNI or 7-bit weights): `target`, else the enclosing ``with Target(...)``, else
    the host."""
    if target is None:
        target = Target.current()
    return list(_anvil.byoc_pattern_table(compiler, str(target) if target is not None else ""))


class MergeComposite(Pass):
    """Each match of each (name, pattern[, check]) entry, in order, becomes a call of a
    function with Composite=name (TVM's relay.transform.MergeComposite)."""

    def __init__(self, pattern_table):
        super().__init__("merge_composite")
        self.pattern_table = list(pattern_table)

    def __call__(self, mod):
        return _anvil.byoc_merge_composite(mod, self.pattern_table)


class AnnotateTarget(Pass):
    """Every call an external compiler takes becomes a region for it, a function with
    Compiler=<name> (TVM's relay.transform.AnnotateTarget). `compilers`: a name or a list."""

    def __init__(self, compilers):
        super().__init__("annotate_target")
        self.compilers = [compilers] if isinstance(compilers, str) else list(compilers)

    def __call__(self, mod):
        return _anvil.byoc_annotate_target(mod, self.compilers)


def MergeCompilerRegions():  # noqa: N802 (TVM's name)
    """Neighbouring regions of one compiler become one (TVM's MergeCompilerRegions)."""
    return Pass("merge_compiler_regions")


def PartitionGraph():  # noqa: N802 (TVM's name)
    """Every region gets its global symbol, tvmgen_default_<compiler>_main_<i> (TVM's
    PartitionGraph)."""
    return Pass("partition_graph")


def register_support_check(compiler, op_name, check=None):
    """Registers check(call) -> bool: whether `compiler` takes a call of `op_name`
    (TVM's tvm.ir.register_op_attr(op_name, "target." + compiler)). Usable as a decorator."""
    def register(f):
        _anvil.byoc_register_support_check(compiler, op_name, f)
        return f

    return register(check) if check is not None else register


def FakeQuantizationToInteger():  # noqa: N802 (TVM's name)
    """Dequantize -> float op -> quantize regions (QDQ models) computed in integers with QNN ops
    (relay.transform.FakeQuantizationToInteger)."""
    return Pass("fake_quantization_to_integer")


def CanonicalizeOps():  # noqa: N802 (TVM's name)
    """Every QNN op becomes integer arithmetic on the core ops (TVM's
    relay.qnn.transform.CanonicalizeOps); the same as anvil.transform.canonicalize_qnn()."""
    return Pass("canonicalize_qnn")


class ToMixedPrecision(Pass):
    """Computes in `mixed_precision_type` ("bfloat16" or "float16") where that is safe (TVM's
    relay.transform.ToMixedPrecision): convolutions, dense layers and matrix products take
    half-precision operands and sum in float32; ops exact in half precision (relu, add, max
    pooling, reshapes, ...) follow their operands; softmax, exp, norms, means and long sums stay
    float32. Constant weights are converted at once; the module's inputs and outputs keep their
    types. With bfloat16 the convolutions use AMX tile products (tdpbf16ps) or AVX-512 BF16's
    vdpbf16ps where the target has them.

    missing_op_mode, for ops that the pass's table does not list (they stay float32): 0 raises a
    UserError naming them, 1 warns (the default), 2 is silent."""

    def __init__(self, mixed_precision_type="float16", missing_op_mode=1):
        super().__init__("to_mixed_precision")
        if missing_op_mode not in (0, 1, 2):
            raise _anvil.UserError(
                f"ToMixedPrecision: missing_op_mode must be 0, 1 or 2, not {missing_op_mode!r}")
        self.mixed_precision_type = str(mixed_precision_type)
        self.missing_op_mode = missing_op_mode

    def __call__(self, mod):
        out, missing = _anvil.to_mixed_precision(mod, self.mixed_precision_type)
        if missing and self.missing_op_mode != 2:
            message = ("ToMixedPrecision: these ops are not in the mixed precision table and "
                       "stay float32: " + ", ".join(missing))
            if self.missing_op_mode == 0:
                raise _anvil.UserError(message)
            warnings.warn(message, stacklevel=2)
        return out


def to_mixed_precision(mixed_precision_type="bfloat16", missing_op_mode=1):
    """The graph pass 'to_mixed_precision': ToMixedPrecision, bfloat16 by default."""
    return ToMixedPrecision(mixed_precision_type, missing_op_mode)
