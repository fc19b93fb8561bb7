"""Shards of the network tests: ctest runs `pytest --shard K/N` N times side by side."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "pytorch"))


def pytest_addoption(parser):
    parser.addoption("--shard", default="0/1", help="K/N: run every N-th test starting at K")


def pytest_collection_modifyitems(config, items):
    k, n = (int(v) for v in config.getoption("--shard").split("/"))
    items[:] = [item for i, item in enumerate(items) if i % n == k]
