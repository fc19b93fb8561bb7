"""Configurations of Python templates: cfg.define_split / define_knob / define_reorder /
define_annotate and the entities cfg[name] returns (TVM's autotvm.task.space).

Every knob is an integer knob of a C++ te::ScheduleConfig, so a template's space, its
configurations and its records are those of the built-in schedules:

- a two-way split is its inner factor, among the divisors of the axis's extent (policy
  "factors") or the powers of two up to it ("power2"); default 1, TVM's first configuration;
- a split into three or more parts, a reorder, an annotation, and a knob whose candidates are
  not distinct integers are the index of one alternative in a list (default 0: the first);
- a knob whose candidates are distinct integers takes their values (default: the first).
"""
import itertools

from .. import _anvil

_at = _anvil.autotvm


def _extent(axis):
    """The constant extent of an axis (an IterVar, or an int)."""
    if isinstance(axis, int) and not isinstance(axis, bool):
        return axis
    try:
        dom = axis.dom
    except AttributeError:
        raise _anvil.UserError(
            f"expected an axis (IterVar) or an extent (int), got {type(axis).__name__}") from None
    extent = _at.const_int(dom[1])
    if extent is None:
        raise _anvil.UserError(f"axis {axis.name} has no constant extent ({dom[1]}); tuning "
                               "needs constant shapes")
    return extent


def _divisors(n, limit):
    return [f for f in range(1, min(n, limit) + 1) if n % f == 0]


def _powers_of_two(n, limit):
    out, f = [], 1
    while f <= min(n, limit):
        out.append(f)
        f *= 2
    return out


def _factorizations(extent, parts, policy, limit):
    """Every (f_1, ..., f_parts) of inner factors whose product fits the extent, all ones
    first."""
    if parts == 0:
        return [()]
    out = []
    choices = _divisors(extent, limit) if policy == "factors" else _powers_of_two(extent, limit)
    for f in choices:
        rest = extent // f if policy == "factors" else max(1, extent // f)
        for tail in _factorizations(rest, parts - 1, policy, limit):
            out.append(tail + (f,))
    out.sort(key=lambda t: (sum(x != 1 for x in t), t))
    return out


class SplitEntity:
    """cfg["tile_x"] of a split: .size is [outer, ..., inner]; .apply splits an axis."""

    def __init__(self, size):
        self.size = list(size)

    def apply(self, sch, op, axis):
        """Splits `axis` of s[op] into len(size) loops and returns them, outermost first."""
        outs = []
        for factor in reversed(self.size[1:]):
            axis, inner = sch[op].split(axis, factor=factor)
            outs.append(inner)
        return [axis] + outs[::-1]

    def __repr__(self):
        return f"sp{self.size}"


class OtherOptionEntity:
    """cfg[name] of define_knob: the chosen candidate is .val."""

    def __init__(self, val):
        self.val = val

    def __repr__(self):
        return repr(self.val)


class ReorderEntity:
    """cfg[name] of define_reorder: .perm orders the axes; .apply reorders them."""

    def __init__(self, perm):
        self.perm = list(perm)

    def apply(self, sch, op, axes):
        """Reorders `axes` of s[op] by the chosen permutation and returns them in that order."""
        ordered = [axes[i] for i in self.perm]
        sch[op].reorder(*ordered)
        return ordered

    def __repr__(self):
        return f"re{self.perm}"


class AnnotateEntity:
    """cfg[name] of define_annotate: one of "none", "unroll", "vec" per axis."""

    def __init__(self, anns):
        self.anns = list(anns)

    def apply(self, sch, op, axes):
        """Unrolls or vectorizes each of `axes` of s[op] as chosen; returns the axes."""
        for axis, ann in zip(axes, self.anns):
            if ann == "unroll":
                sch[op].unroll(axis)
            elif ann == "vec":
                sch[op].vectorize(axis)
        return list(axes)

    def __repr__(self):
        return f"an{self.anns}"


_ANNOTATIONS = {
    "try_unroll": lambda last: ["none", "unroll"],
    "try_vec": lambda last: ["none", "vec"] if last else ["none"],
    "try_unroll_vec": lambda last: ["none", "unroll", "vec"] if last else ["none", "unroll"],
}


class ConfigEntity:
    """The `cfg` of a template (autotvm.get_config()): declares knobs and returns their values.

    values: knob name -> value (a record's config); knobs it does not name take their defaults.
    is_fallback: no tuning record chose these values.
    """

    def __init__(self, values=None, is_fallback=False):
        self._config = _at.ScheduleConfig(dict(values or {}))
        self._entities = {}
        self._declared = {}
        self.flop = 0
        self.is_fallback = is_fallback

    # -- declarations -------------------------------------------------------------------------

    def _declare(self, name, kind, choices, default):
        """The value of an integer knob; the same declaration twice is one knob."""
        if not isinstance(name, str) or not name:
            raise _anvil.UserError(f"a knob's name is a non-empty string, not {name!r}")
        signature = (kind, tuple(choices), default)
        known = self._declared.get(name)
        if known is not None and known != signature:
            raise _anvil.UserError(f"knob {name!r} is declared twice with different choices")
        self._declared[name] = signature
        return self._config.define_knob(name, list(choices), default)

    def define_split(self, name, axis, num_outputs=2, policy="factors", max_factor=None,
                     filter=None):  # noqa: A002 (TVM's name)
        """Splits `axis` (an IterVar or an extent) into num_outputs loops; cfg[name].size is
        [outer, ..., inner], cfg[name].apply(s, C, axis) does the split. policy "factors": inner
        factors divide the extent; "power2": they are powers of two. max_factor bounds each inner
        factor; filter(SplitEntity) -> bool drops candidates."""
        extent = _extent(axis)
        if policy not in ("factors", "power2"):
            raise _anvil.UserError(
                f"define_split {name!r}: unknown policy {policy!r}; use 'factors' or 'power2'")
        if not isinstance(num_outputs, int) or num_outputs < 2:
            raise _anvil.UserError(f"define_split {name!r}: num_outputs must be 2 or more")
        limit = extent if max_factor is None else int(max_factor)
        if limit < 1:
            raise _anvil.UserError(f"define_split {name!r}: max_factor must be at least 1")
        sizes = []
        for inner in _factorizations(extent, num_outputs - 1, policy, limit):
            product = 1
            for f in inner:
                product *= f
            size = [-(-extent // product)] + list(inner)
            if filter is None or filter(SplitEntity(size)):
                sizes.append(size)
        if not sizes:
            raise _anvil.UserError(f"define_split {name!r}: the filter leaves no candidate")
        if num_outputs == 2 and policy == "factors" and filter is None:
            # The C++ split knob: the value is the inner factor itself.
            inner = self._declare(name, "split", [s[1] for s in sizes], sizes[0][1])
            size = [extent // inner, inner]
        else:
            size = sizes[self._declare(name, "split", range(len(sizes)), 0)]
        self._entities[name] = SplitEntity(size)
        return self._entities[name]

    def define_knob(self, name, candidates):
        """A choice among `candidates` (any values); cfg[name].val is the chosen one."""
        candidates = list(candidates)
        if not candidates:
            raise _anvil.UserError(f"define_knob {name!r}: no candidates")
        ints = all(isinstance(c, int) and not isinstance(c, bool) for c in candidates)
        if ints and len(set(candidates)) == len(candidates):
            val = self._declare(name, "knob", candidates, candidates[0])
        else:
            val = candidates[self._declare(name, "knob", range(len(candidates)), 0)]
        self._entities[name] = OtherOptionEntity(val)
        return self._entities[name]

    def define_reorder(self, name, axes, policy="all", candidate=None):
        """An order of `axes`: policy "all" (every permutation, at most 6 axes), "identity", or
        "candidate" with candidate=[[axes in one order], ...]."""
        axes = list(axes)
        if policy == "all":
            if len(axes) > 6:
                raise _anvil.UserError(f"define_reorder {name!r}: 'all' takes at most 6 axes")
            perms = list(itertools.permutations(range(len(axes))))
        elif policy == "identity":
            perms = [tuple(range(len(axes)))]
        elif policy == "candidate":
            if not candidate:
                raise _anvil.UserError(f"define_reorder {name!r}: policy 'candidate' needs "
                                       "candidate=[[axes...], ...]")
            perms = []
            for order in candidate:
                try:
                    perm = tuple(axes.index(a) for a in order)
                except ValueError:
                    raise _anvil.UserError(f"define_reorder {name!r}: a candidate names an axis "
                                           "that is not among the axes") from None
                if sorted(perm) != list(range(len(axes))):
                    raise _anvil.UserError(f"define_reorder {name!r}: a candidate must order "
                                           "every axis once")
                perms.append(perm)
        else:
            raise _anvil.UserError(f"define_reorder {name!r}: unknown policy {policy!r}; use "
                                   "'all', 'identity' or 'candidate'")
        self._entities[name] = ReorderEntity(perms[self._declare(name, "reorder",
                                                                 range(len(perms)), 0)])
        return self._entities[name]

    def define_annotate(self, name, axes, policy):
        """Unrolling/vectorizing `axes`: policy "try_unroll", "try_vec" (the last axis) or
        "try_unroll_vec"; cfg[name].apply(s, C, axes) applies the choice."""
        if policy not in _ANNOTATIONS:
            raise _anvil.UserError(f"define_annotate {name!r}: unknown policy {policy!r}; use "
                                   + ", ".join(sorted(_ANNOTATIONS)))
        axes = list(axes)
        options = [_ANNOTATIONS[policy](i == len(axes) - 1) for i in range(len(axes))]
        combos = list(itertools.product(*options))
        self._entities[name] = AnnotateEntity(combos[self._declare(name, "annotate",
                                                                   range(len(combos)), 0)])
        return self._entities[name]

    def add_flop(self, flop):
        """Adds to the floating-point operations of one run (for GFLOPS in progress reports)."""
        self.flop += flop

    # -- reading ------------------------------------------------------------------------------

    def __getitem__(self, name):
        try:
            return self._entities[name]
        except KeyError:
            raise _anvil.UserError(f"cfg[{name!r}]: no knob of that name was declared; declared: "
                                   + ", ".join(self._entities)) from None

    @property
    def space(self):
        """The knobs declared so far (a ConfigSpace)."""
        return self._config.space

    @property
    def values(self):
        """Knob name -> value, for every declared knob (what a record stores)."""
        return dict(self._config.resolved())

    def __repr__(self):
        body = ",".join(f"{k}: {v!r}" for k, v in self._entities.items())
        return f"[{body}]" + (" (fallback)" if self.is_fallback else "")
