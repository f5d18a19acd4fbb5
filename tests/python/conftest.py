"""Shared fixtures of the Python tests (README "Tests"): CTest runs them with PYTHONPATH at the
build's python/ folder, AXE_CLI at the calculator and, for test_dist*.py, under mpirun."""
import os
import random
import shutil
import subprocess

import pytest


def seed():
    """The seed of the random tests: AXE_TEST_SEED (printed on failure through the test ids)."""
    return int(os.environ.get("AXE_TEST_SEED", "20260121"))


@pytest.fixture
def rng():
    return random.Random(seed())


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("AXE_CLI") or shutil.which("axe")
    if not path or not os.path.exists(path):
        pytest.skip("the axe calculator is not built (AXE_CLI unset)")

    def run(*args, ok=True):
        p = subprocess.run([path, *args], capture_output=True, text=True, timeout=60)
        if ok and p.returncode != 0:
            raise AssertionError("axe %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return p

    return run
