"""Shared pytest setup: test tooling on the path; property tests derandomized under CI (repeatable results)."""
import os
import sys

import pytest
from hypothesis import settings

TEST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# test tooling (synth, the mutation harness), the hand-aliased kernels of the lit suite, the fuzzers
sys.path[:0] = [os.path.join(TEST, "tools"), os.path.join(TEST, "lit", "verify", "Inputs"),
                 os.path.join(TEST, "fuzz")]

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


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The tlx-alias hook installed, and a Triton cache of the test's own (every compile runs the pipeline)."""
    from tlx_alias.plugin import hook
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    hook.install()


@pytest.fixture(scope="module")
def private_cache(tmp_path_factory):
    """A Triton cache of the test module's own, unless WS_TEST_SHARED_CACHE=1 (`scripts/gpu_run.sh ws` and
    `gemm-ws` set it: the benchmark that follows then finds the kernels the tests compiled)."""
    with pytest.MonkeyPatch.context() as mp:
        if os.environ.get("WS_TEST_SHARED_CACHE") != "1":
            mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("triton-cache")))
        yield


@pytest.fixture(scope="module")
def fuzz_runner():
    """The fuzzers' kernel runner with its imports done once per module (test/fuzz/kernel_runner.py)."""
    import kernel_runner
    kernel_runner.prepare()
