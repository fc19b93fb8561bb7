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
