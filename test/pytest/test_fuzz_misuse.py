"""Every misuse kind of test/fuzz/fuzz_misuse.py once, with a fixed seed (derandomized in CI): each must end
in a TlxAliasError at the offending kernel line (or a warning there); and checks that the judge catches each
failure class."""

import pytest

import fuzz_misuse
import kernel_runner

SEED = 20261124


pytestmark = pytest.mark.usefixtures("fuzz_runner")


@pytest.mark.parametrize("kind", fuzz_misuse.KINDS, ids=lambda k: k.__name__)
def test_each_misuse_gets_a_clear_answer_at_its_line(kind):
    name, src, want, o, found = fuzz_misuse.check(SEED, fuzz_misuse.KINDS.index(kind), kind)
    assert found == [], src
    assert o.status == ("tlx-error" if want == "error" else "ok")


SRC = fuzz_misuse.module(["spec = tlx.storage_alias_spec()  # @bad"], "a test")
BAD = f"/k.py:{kernel_runner.line_of(SRC, '# @bad')}"


def _outcome(status, **kw):
    return kernel_runner.Outcome(status, "/k.py", **kw)


def test_the_judge_flags_each_failure_class():
    classes = lambda want, o: [c for c, _ in fuzz_misuse.judge(SRC, want, o)]  # noqa: E731
    assert classes("error", _outcome("tlx-error", error={"src": BAD, "message": "x"})) == []
    assert classes("error", _outcome("ok")) == ["silent compile"]
    assert classes("error", _outcome("tlx-error", error={"src": None, "message": "x"})) == ["unclear error"]
    assert classes("error", _outcome("tlx-error", error={"src": "/k.py:1", "message": "x"})) == ["unclear error"]
    assert classes("error", _outcome("exception", error={"type": "RuntimeError"})) == ["crash"]
    assert classes("error", _outcome("killed", error={"signal": "SIGABRT"})) == ["crash"]
    assert classes("warning", _outcome("ok", warnings=[("w", BAD)])) == []
    assert classes("warning", _outcome("ok", warnings=[("w", "/k.py:1")])) == ["missing warning"]
    assert classes("warning", _outcome("ok", warnings=[("w", BAD)], left=["f"])) == ["file left behind"]
