"""A short fixed-seed run of the reuse-tree fuzzer (test/fuzz/fuzz_trees.py), its oracle checked against hand
calculations, and checks that its judge catches each failure class (a fuzzer that cannot fail finds nothing)."""
import ast

import pytest

import fuzz_trees
import kernel_runner
from fuzz_trees import Case, Group, Leaf, expect

SEED = 20261124    # its 24 cases reach every verdict of the oracle (checked below)
CASES = 24          # about 1 s each on the 2-core CI machine


pytestmark = pytest.mark.usefixtures("fuzz_runner")


@pytest.mark.parametrize("index", range(CASES))
def test_random_trees_match_the_oracle(index):
    case, src, exp, o, found = fuzz_trees.check(SEED, index)
    assert found == [], f"--seed {SEED} --case {index}\n{src}"


def test_the_fixed_seed_covers_every_verdict():
    verdicts = {expect(fuzz_trees.draw_case(SEED, i)).verdict for i in range(CASES)}
    assert verdicts == {"ok", "not-multiple", "over-capacity", "too-small", "not-divisible", "overlap"}
    cases = [fuzz_trees.draw_case(SEED, i) for i in range(CASES)]
    assert {c.storage for c in cases} == {"smem", "tmem"} and any(c.ring for c in cases)
    assert any(c.explicit for c in cases) and any(not c.overlap for c in cases)


def test_the_oracle_imports_nothing_of_the_project():
    tree = ast.parse(open(fuzz_trees.__file__).read())
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    assert not {m for m in imported if m and m.startswith("tlx_alias")}, imported


# ---------------------------------------------------------------------------------------------- the oracle by hand

def seed000(explicit=None):
    """README's demo: qk 128x128 fp32 (128 cols), p 128x64 bf16 (32 cols) sub-tiled by 2, alpha/l/m 1 col."""
    leaves = [Leaf("qk", (128, 128), "float32", 2), Leaf("p", (128, 64), "bfloat16", 4),
              Leaf("alpha", (128, 1), "float32", 2), Leaf("l", (128, 1), "float32", 2),
              Leaf("m", (128, 1), "float32", 2)]
    inner = Group("g2", "distinct", 1, [Group("g1", "shared", 2, ["p"]), "alpha", "l", "m"])
    tree = Group("g3", "shared", 1, ["qk", inner])
    return Case("hand", "tmem", 100, leaves, tree, explicit, True, False)


def test_the_oracle_reproduces_the_readme_demo_layout():
    exp = expect(seed000())
    assert exp.verdict == "ok" and exp.total == 256
    assert exp.addresses == {"qk": [0, 128], "p": [0, 32, 128, 160], "alpha": [64, 192], "l": [65, 193],
                             "m": [66, 194]}


def test_the_oracle_on_smem_distinct_alignment_and_explicit_sizes():
    # distinct(a 64 B, b 128 B): b starts at 128, not 64 (128-byte alignment); the tree is 256 B, the stride 256
    leaves = [Leaf("a", (4, 16), "int8", 2), Leaf("b", (8, 16), "int8", 2)]
    tree = Group("g1", "distinct", 1, ["a", "b"])
    exp = expect(Case("hand", "smem", 90, leaves, tree, None, True, False))
    assert (exp.verdict, exp.addresses, exp.total) == ("ok", {"a": [0, 256], "b": [128, 384]}, 512)
    # an explicit size only enlarges the backing; one byte short is too small
    assert expect(Case("hand", "smem", 90, leaves, tree, 4096, True, False)).total == 4096
    assert expect(Case("hand", "smem", 90, leaves, tree, 511, True, False)).verdict == "too-small"


def test_the_oracle_rejects_a_buffer_off_its_size():
    # distinct(a 128 B, b 256 B): b at 128 is not a multiple of 256
    leaves = [Leaf("a", (8, 16), "int8", 1), Leaf("b", (8, 16), "float16", 1)]
    exp = expect(Case("hand", "smem", 90, leaves, Group("g1", "distinct", 1, ["a", "b"]), None, True, False))
    assert exp.verdict == "not-multiple" and exp.lines == {"# @leaf:b"}


# ---------------------------------------------------------------------------------------------- the judge

def _ok_case():
    case = seed000()
    src = fuzz_trees.source(case)
    return src, expect(case)


def _outcome(status="ok", **kw):
    return kernel_runner.Outcome(status, "/k.py", **kw)


def test_the_judge_accepts_the_expected_outcome():
    src, exp = _ok_case()
    o = _outcome(views=exp.addresses, backings=[("tmem", 256)])
    assert fuzz_trees.judge(src, exp, o, 100) == []


def test_the_judge_flags_each_failure_class():
    src, exp = _ok_case()
    views = dict(exp.addresses, p=[0, 32, 64, 96])
    classes = lambda o: [c for c, _ in fuzz_trees.judge(src, exp, o, 100)]  # noqa: E731
    assert classes(_outcome(views=views, backings=[("tmem", 256)])) == ["wrong offset"]
    assert classes(_outcome(views=exp.addresses, backings=[("tmem", 512)])) == ["wrong offset"]
    assert classes(_outcome(views=exp.addresses, backings=[("tmem", 256)], left=["x.mlir"])) == ["file left behind"]
    assert classes(_outcome("killed", error={"signal": "SIGABRT"})) == ["crash"]
    assert classes(_outcome("exception", error={"type": "KeyError", "message": "x"})) == ["crash"]
    assert classes(_outcome("tlx-error", error={"message": "[tlx-verify P1] cannot prove: x"})) == ["cannot prove"]
    assert classes(_outcome("tlx-error", error={"message": "too small", "src": "/k.py:10"})) == ["wrong verdict"]
    assert classes(_outcome(views=exp.addresses, backings=[("tmem", 256)],
                            warnings=[("x", "/k.py:3")])) == ["missing warning"]


def test_the_judge_flags_an_error_without_the_expected_line():
    leaves = [Leaf("a", (8, 16), "int8", 1), Leaf("b", (8, 16), "float16", 1)]
    case = Case("hand", "smem", 90, leaves, Group("g1", "distinct", 1, ["a", "b"]), None, True, False)
    src, exp = fuzz_trees.source(case), expect(case)
    line = kernel_runner.line_of(src, "# @leaf:b")
    msg = "buffer 'b': buffer_offset (128) must be a multiple of the original buffer size (256)"
    assert fuzz_trees.judge(src, exp, _outcome("tlx-error", error={"message": msg, "src": f"/k.py:{line}"}), 90) == []
    for where in (None, f"/k.py:{line - 1}"):
        found = fuzz_trees.judge(src, exp, _outcome("tlx-error", error={"message": msg, "src": where}), 90)
        assert [c for c, _ in found] == ["unclear error"]
    assert [c for c, _ in fuzz_trees.judge(src, exp, _outcome(views={}, backings=[]), 90)] == ["wrong verdict"]
