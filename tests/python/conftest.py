"""Shared fixtures of the Python module's tests: the built `ridge` binary to compare with, and its JSON output."""
import json
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def ridge_cli():
    """Runs `ridge ARGS --format json` and returns the parsed document; skips when the binary is unknown."""
    binary = os.environ.get("RIDGE_BINARY")
    if not binary or not os.path.exists(binary):
        pytest.skip("RIDGE_BINARY is not set to the built ridge binary")

    def run(*args):
        out = subprocess.run([binary, *args, "--format", "json"], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


def without_inputs(doc):
    """A JSON document less what it was asked ("inputs"), which the CLI and Python spell differently."""
    return {k: v for k, v in doc.items() if k != "inputs"}
