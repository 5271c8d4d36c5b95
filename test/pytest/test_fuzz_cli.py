"""A short run of the tlx-verify fuzzer (test/fuzz/fuzz_cli.py; derandomized under CI), and checks that its
oracle catches each kind of broken contract (a fuzzer that cannot fail finds nothing)."""
import os
import signal
import sys
import tempfile
import time

from hypothesis import HealthCheck, given, settings

import tlx_alias.bridge  # noqa: F401  (imported once, before the forks)
from tlx_alias.verify import cli

import fuzz_cli
from forked import run_forked

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VALID = fuzz_cli.corpus()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_cli.bad_inputs(VALID))
def test_bad_inputs_keep_the_cli_contract(case):
    assert fuzz_cli.check(case) == [], case.how


def test_the_corpus_is_the_valid_inputs():
    assert "tlx-fa-seed000.mlir" in VALID and "tlx-cross-stage.mlir" in VALID and len(VALID) >= 5
    seed = fuzz_cli.Case(VALID["tlx-fa-seed000.mlir"], ".mlir", "as is")
    path, o = fuzz_cli.run_case(seed)
    assert (o.code, o.stderr, fuzz_cli.failures(seed, path, o)) == (0, "", []) and "-> SAFE" in o.stdout


EMPTY = fuzz_cli.Case(b"", ".mlir", "empty")


def test_the_oracle_flags_a_traceback(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda argv: 1 / 0)
    assert fuzz_cli.check(EMPTY) == ["Python traceback", "input not named"]


def test_the_oracle_flags_exit_0_without_a_kernel_and_an_odd_status(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda argv: print(argv[0]) or 0)
    assert fuzz_cli.check(EMPTY) == ["exit 0 without a kernel"]
    monkeypatch.setattr(cli, "main", lambda argv: print(argv[0]) or 7)
    assert fuzz_cli.check(EMPTY) == ["exit status 7"]


def test_the_oracle_flags_a_crash_and_a_file_left_behind(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda argv: os.kill(os.getpid(), signal.SIGSEGV))
    assert fuzz_cli.check(EMPTY) == ["killed by SIGSEGV"]
    monkeypatch.setattr(cli, "main", lambda argv: (tempfile.mkstemp(), print(argv[0], file=sys.stderr), 2)[2])
    assert fuzz_cli.check(EMPTY) == ["file left behind"]


def test_the_oracle_flags_an_unnamed_input(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda argv: print("tlx-verify: error: something", file=sys.stderr) or 2)
    assert fuzz_cli.check(EMPTY) == ["input not named"]


def test_the_oracle_flags_a_proof_crash_and_tallies_malformed_ir(monkeypatch):
    def crash(argv):
        print(f"tlx-verify: error: {argv[0]}: the proof failed on this input: IndexError: x (a tlx-verify bug; "
              "please report it with this file)", file=sys.stderr)
        return 2
    monkeypatch.setattr(cli, "main", crash)
    assert fuzz_cli.check(EMPTY) == ["proof crash"]
    monkeypatch.undo()
    bad_for = os.path.join(ROOT, "test", "lit", "verify", "cli", "Inputs", "for-without-iv.mlir")
    path, o = fuzz_cli.run_case(fuzz_cli.Case(open(bad_for, "rb").read(), ".mlir", "as is"))
    assert (o.code, fuzz_cli.internal_error(o), fuzz_cli.malformed(o)) == (2, None, "malformed IR"), o.stderr


def test_a_forked_case_is_killed_at_its_deadline():
    """The fuzzers' child: a hang is killed and reported as one; an exit status comes back as it is."""
    status, hung = run_forked(lambda: time.sleep(60), 0.2)
    assert hung and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    status, hung = run_forked(lambda: os._exit(3), 60)
    assert not hung and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3
    status, hung = run_forked(lambda: None, 60)   # a child that returns still ends its process
    assert not hung and os.WEXITSTATUS(status) == 70
