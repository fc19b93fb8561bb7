import os
import pathlib
import sys

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("ANVIL_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))

# CTest sets PYTHONPATH to the build tree's python/; run by hand (python3 -m pytest python/tests)
# the package is found there too: $ANVIL_BUILD_DIR/python, else <checkout>/build/python.
try:
    import anvil  # noqa: F401
except ImportError:
    for name in [m for m in sys.modules if m == "anvil" or m.startswith("anvil.")]:
        del sys.modules[name]
    build_dir = pathlib.Path(os.environ.get("ANVIL_BUILD_DIR", SOURCE_DIR / "build"))
    sys.path.insert(0, str(build_dir.resolve() / "python"))


@pytest.fixture
def source_dir():
    return SOURCE_DIR


# Under CI=true a skipped test is a failure: scripts/install_deps.sh --tests installs every package
# a test needs, so a skip there means the install step is incomplete. Only tests marked
# `hardware` (a GPU, which CI never has) may skip. Elsewhere skips stay skips.
def pytest_configure(config):
    config.addinivalue_line("markers", "hardware: needs hardware CI never has; may skip in CI")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    in_ci = os.environ.get("CI", "") in ("true", "1")
    if in_ci and report.skipped and item.get_closest_marker("hardware") is None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI=true: {reason} "
                           "(scripts/install_deps.sh --tests must install what this test needs)")
