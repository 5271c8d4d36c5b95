"""verify.wellformed and source.malformed: IR that parses but that its dialects reject is bad input at its
line:col in the user's file (never a crash of the proof, never a verdict); valid IR is never refused."""
import glob
import os

import pytest

from tlx_alias.memdesc import MalformedType, parse_memdesc
from tlx_alias.verify import prove_module
from tlx_alias.verify.source import load, load_generic, malformed, op_position, strip_locations
from tlx_alias.verify.wellformed import MalformedIR

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = os.path.join(ROOT, "test", "lit", "verify")
CLI_INPUTS = os.path.join(LIT, "cli", "Inputs")

KERNEL = """\
#loc1 = loc("k.py":3:5)
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> (), sym_name = "k", sym_visibility = "public"}> ({
  ^bb0(%n: i32 loc("n"(#loc1))):
    %c0 = "arith.constant"() <{value = 0 : i32}> {note = "a string with loc(\\"x\\":1:1) in it"} : () -> i32 loc(#loc1)
    %a = "ttg.local_alloc"() : () -> !ttg.memdesc<2x64x64xf32, #shared, #smem, mutable> loc("a"("k.py":4:5))
    %b = "ttg.memdesc_index"(%a, %c0) : (!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>, i32) -> !ttg.memdesc<64x64xf32, #shared, #smem, mutable> loc(callsite("k.py":5:5 at "k.py":9:1))
    %s = "arith.{op}"({operands}) : ({types}) -> i32 loc("k.py":6:5)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {{ttg.target = "cuda:90"}} : () -> ()
"""


def kernel(op="addi", operands="%c0, %c0", types="i32, i32"):
    return KERNEL.replace("{op}", op).replace("{operands}", operands).replace("{types}", types) \
        .replace("{{", "{").replace("}}", "}")


def test_strip_locations_keeps_every_position():
    text = kernel()
    bare = strip_locations(text)
    assert len(bare) == len(text) and bare.count("\n") == text.count("\n")
    assert "loc(" not in bare.replace('loc(\\"x\\"', "")          # the one in the string literal stays
    assert 'a string with loc(\\"x\\":1:1) in it' in bare
    assert bare.splitlines()[0].strip() == ""                      # the #loc1 definition is blanked out
    assert all(b in (a, " ") for a, b in zip(text, bare))          # what is left is where it was


def test_op_position_is_the_op_in_the_user_file():
    text = kernel(op="addi", operands="%c0", types="i32")         # addi with one operand: malformed
    loaded = load_generic(text, "k.mlir")
    loaded.text = text
    with loaded.context, pytest.raises(MalformedIR) as info:
        prove_module(loaded.module, None, loaded.aliases, "k.mlir")
    assert info.value.op.name == "arith.addi"
    assert op_position(text, loaded.module, info.value.op) == (10, 10)
    err = malformed(loaded, info.value)
    assert str(err).startswith("k.mlir:10:10: malformed IR: arith.addi: it has 1 operand, 2 expected (")
    assert err.pos == (10, 10)


@pytest.mark.parametrize("op,operands,types,problem", [
    ("cmpi", "%c0, %c0", "i32, i32", "its `predicate` is not one of the ten"),       # no predicate attribute
    ("select", "%c0, %c0", "i32, i32", "it has 2 operands, 3 expected"),
    ("index_cast", "%c0, %c0", "i32, i32", "it has 2 operands, 1 expected"),
])
def test_arith_arity_is_checked(op, operands, types, problem):
    text = kernel(op, operands, types)
    loaded = load_generic(text, "k.mlir")
    with loaded.context, pytest.raises(MalformedIR, match=problem):
        prove_module(loaded.module, None, loaded.aliases, "k.mlir")


@pytest.mark.parametrize("encoding,problem", [
    ("blockM = 128, blockN = 64, colStride = one", "colStride = one is not a positive integer"),
    ("blockM = 12.8, blockN = 64, colStride = 1", "blockM = 12.8 is not a positive integer"),
    ("blockM = 128, blockN = 0, colStride = 1", "blockN = 0 is not a positive integer"),
    ("blockM = 128, blockN = 64, colStride = 1, twoCTAs = yes", "twoCTAs = yes is neither true nor false"),
])
def test_tmem_encoding_numbers(encoding, problem):
    with pytest.raises(MalformedType, match=problem):
        parse_memdesc(f"!ttg.memdesc<128x64xf32, #ttng.tensor_memory_encoding<{encoding}>, "
                      "#ttng.tensor_memory, mutable>")


def test_memdesc_element_without_width():
    with pytest.raises(MalformedType) as info:
        parse_memdesc("!ttg.memdesc<2x64x64xf3Z, #shared, #smem, mutable>")
    assert info.value.element == "f3Z"
    assert parse_memdesc("tensor<4xi32>") is None                   # not a memdesc: still None


def _valid_inputs():
    files = [os.path.join(LIT, f) for f in ("tlx-fa-seed000.mlir", "hand-aliased-kernels.mlir",
                                              "hand-aliased-epilogue.mlir")]
    files += sorted(glob.glob(os.path.join(LIT, "bugs", "*.mlir")))
    files += [os.path.join(CLI_INPUTS, "unproven.mlir"), os.path.join(CLI_INPUTS, "with-declaration.mlir")]
    return [f for f in files if b'"tt.func"' in open(f, "rb").read()]


@pytest.mark.parametrize("path", _valid_inputs(), ids=os.path.basename)
def test_valid_inputs_are_not_refused(path):
    """The rules are never stricter than the dialects: every valid generic input of the lit tests passes."""
    from tlx_alias.verify import model, wellformed
    loaded = load(path)
    with loaded.context:
        funcs = [op.operation for op in loaded.module.body.operations if op.operation.name == "tt.func"]
        for f in funcs:
            wellformed.check(f)
        assert model.build(loaded.module, loaded.aliases, path)


def test_an_abort_in_tritons_parser_is_an_unreadable_input(monkeypatch, tmp_path):
    """Triton's parser can abort the whole process (3.8 on some shared memdesc shapes): tlx-verify parses in a
    forked child first, so the input is reported unreadable with the signal, the process lives on, and the
    child's temporary file is gone. (The abort is simulated: no release aborts on the same text.)"""
    from tlx_alias import _triton
    from tlx_alias.verify.source import InputError, load_triton
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_triton, "parse", lambda text, context, name="": os.abort())
    with pytest.raises(InputError) as err:
        load_triton("module {}", "dump.ttgir")
    assert "dump.ttgir: Triton's own parser aborts the process on this file (SIGABRT)" in str(err.value)
    assert "nothing in this file was checked" in str(err.value)
    assert list(tmp_path.iterdir()) == []
