"""Shared pytest setup: test tooling on the path; property tests derandomized under CI (repeatable results)."""
import os
import sys

import pytest
from hypothesis import settings

TEST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# test tooling (synth, the mutation harness) and the hand-aliased kernels of the lit suite
sys.path[:0] = [os.path.join(TEST, "tools"), os.path.join(TEST, "lit", "verify", "Inputs")]

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def refused(capfd):
    """refused(kernels, name): does the installed Triton refuse kernel `name` of a kernel collection (a module
    with `rejected_by_this_triton` and `compile_ttgir`) itself? If so, checks that compiling it raises and
    prints the diagnostic the collection lists for this release."""
    def check(kernels, name) -> bool:
        rejected = kernels.rejected_by_this_triton(name)
        if rejected:
            with pytest.raises(Exception):
                kernels.compile_ttgir(name)
            assert rejected in capfd.readouterr().err
        return bool(rejected)
    return check
