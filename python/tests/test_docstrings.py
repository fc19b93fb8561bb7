"""Every public function, class and class member of the package has a docstring (pybind11's
generated signature line alone does not count), so help() says what each one does."""
import inspect
import re

import anvil
from anvil import auto_scheduler, autotvm, frontend, graph, nd, rpc, runtime, te, transform
from anvil.autotvm import callback, measure, record, space, task, tuner
from anvil.graph import op as graph_op

MODULES = [anvil, te, nd, runtime, rpc, graph, graph_op, transform, frontend, autotvm, callback,
           measure, record, space, task, tuner, auto_scheduler] + [
               getattr(auto_scheduler, name) for name in auto_scheduler.__all__
               if name.islower() and hasattr(getattr(auto_scheduler, name), "__file__")]


def _has_text(obj, name):
    """Whether obj's docstring says something beyond a pybind11 signature line."""
    # __doc__ itself: inspect.getdoc would fall back to a base class's text (Exception's).
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return False
    lines = [line.strip() for line in doc.strip().splitlines() if line.strip()]
    # pybind11 writes "name(arg: type, ...) -> type" before the user's text (for overloads,
    # "Overloaded function." and then "1. name(...)" before each overload's text).
    signature = re.compile(r"^(\d+\. )?" + re.escape(name) + r"\(.*\)( -> .*)?$")
    if lines[0] == "Overloaded function.":
        lines = [line for line in lines[1:] if not signature.match(line)]
    elif signature.match(lines[0]):
        lines = lines[1:]
    return bool(lines)


def _public(names):
    return [n for n in names if not n.startswith("_")]


def _undocumented():
    missing = []
    seen = set()
    for module in MODULES:
        for name in _public(dir(module)):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            where = f"{module.__name__}.{name}"
            if not _has_text(obj, getattr(obj, "__name__", name)):
                missing.append(where)
            if not inspect.isclass(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            # Members the class itself defines (not object's or an enum's machinery).
            for member_name in _public(vars(obj)):
                member = vars(obj)[member_name]
                if isinstance(member, (staticmethod, classmethod)):
                    member = getattr(obj, member_name)
                if not (callable(member) or isinstance(member, property)):
                    continue
                if not _has_text(member, member_name):
                    missing.append(f"{where}.{member_name}")
    return missing


def test_public_api_is_documented():
    missing = _undocumented()
    assert not missing, "public API without a docstring:\n  " + "\n  ".join(missing)


def test_check_sees_pybind_signature_only_docs():
    # The check itself: a bare pybind11 signature does not pass, text after it does.
    assert not _has_text(type("T", (), {"__doc__": "f(x: int) -> int"}), "f")
    assert _has_text(type("T", (), {"__doc__": "f(x: int) -> int\n\nDoubles x."}), "f")
    assert not _has_text(property(lambda self: 1), "p")
    overloaded = "Overloaded function.\n\n1. f(x: int) -> int\n\n2. f(x: str) -> str\n"
    assert not _has_text(type("T", (), {"__doc__": overloaded}), "f")
