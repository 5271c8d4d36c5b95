"""tlx-verify / tlx-opt on bad input: exit status, message (file, line, what to change), other inputs checked.

Most tests call `main()` in-process (the console scripts are `sys.exit(main())`); the broken-pipe test and
the tracebacks it is about need a real process. test/lit/verify/cli/ holds one reproducer per class.
"""
import io
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from tlx_alias import _triton
from tlx_alias.python_passes import tlx_opt
from tlx_alias.textin import NotText, decode
from tlx_alias.verify import cli
from tlx_alias.targets import SMEM_BYTES as SMEM_LIMIT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = os.path.join(ROOT, "test", "lit", "verify")
SEED = os.path.join(LIT, "tlx-fa-seed000.mlir")                 # safe, sm_100, one TMEM spec
BUG = os.path.join(LIT, "bugs", "tlx-cross-stage.mlir")         # a P3 violation
UNPROVEN = os.path.join(LIT, "cli", "Inputs", "unproven.mlir")  # P5 "cannot prove", nothing violated


def run(capsys, *args):
    """(exit status, stdout, stderr) of tlx-verify ARGS; a usage error is argparse's SystemExit(2)."""
    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def results(out):
    """{path: status} from the result lines."""
    return dict(reversed(m.groups()) for m in re.finditer(r"^tlx-verify: ([A-Z]+) +(\S+)$", out, re.M))


def write(path, data: bytes):
    path.write_bytes(data)
    return str(path)


SEED_BYTES = open(SEED, "rb").read()


# ------------------------------------------------------------------------------------ 1: not UTF-8

def test_decode_names_line_character_column_and_byte_offset():
    assert decode("é ok\n".encode(), "f.mlir") == "é ok\n"
    with pytest.raises(NotText, match=r"^f\.mlir:3:4: not UTF-8 text: byte 0xff at offset 12; "):
        decode(b"one\ntwo\n\xc3\xa9ab\xff\n", "f.mlir")    # line 3: 'é' is one character, two bytes


def test_not_utf8_is_exit_2_naming_the_byte_and_the_other_inputs_are_checked(tmp_path, capsys):
    binary = write(tmp_path / "picture.ttgir", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    lines = SEED_BYTES.split(b"\n")
    comment = write(tmp_path / "comment.mlir", b"\n".join(lines[:3] + [b"// caf\xe9"] + lines[3:]))
    offset = len(b"\n".join(lines[:3])) + 1 + len(b"// caf")
    code, out, err = run(capsys, binary, comment, SEED)
    assert code == 2
    assert f"tlx-verify: error: {binary}:1:1: not UTF-8 text: byte 0x89 at offset 0; " in err
    assert f"tlx-verify: error: {comment}:4:7: not UTF-8 text: byte 0xe9 at offset {offset}; " in err
    assert results(out) == {binary: "UNREADABLE", comment: "UNREADABLE", SEED: "SAFE"}
    assert "-> SAFE" in out and "Traceback" not in err


def test_tlx_opt_reads_its_input_the_same_way(tmp_path, capsys, monkeypatch):
    bad = write(tmp_path / "bad.mlir", b"// ok\n// \xff\n")
    assert tlx_opt.main([bad]) == 2
    assert capsys.readouterr().err == (f"tlx-opt: error: {bad}:2:4: not UTF-8 text: byte 0xff at offset 9; MLIR "
                                       "input must be UTF-8 (remove or re-encode that byte; a binary file cannot "
                                       "be read)\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\x00\xfe")))
    assert tlx_opt.main(["-"]) == 2
    assert capsys.readouterr().err.startswith("tlx-opt: error: <stdin>:1:2: not UTF-8 text: byte 0xfe at offset 1")


# ------------------------------------------------------------------------------------ 2: no kernel

@pytest.mark.parametrize("name, data", [
    ("empty.mlir", b""), ("comments.ttgir", b"// nothing here\n\n"),
    ("module.mlir", b'"builtin.module"() ({\n^bb0:\n}) {ttg.target = "cuda:100"} : () -> ()\n'), ("/dev/null", None)])
def test_a_file_without_a_kernel_is_unreadable_not_safe(tmp_path, capsys, name, data):
    path = name if data is None else write(tmp_path / name, data)
    code, out, err = run(capsys, path)
    assert code == 2
    assert err.startswith(f"tlx-verify: error: no kernel (tt.func) found in {path}: tlx-verify checks the kernels "
                          "of a Triton .ttgir dump")
    assert results(out) == {path: "UNREADABLE"} and "SAFE" not in out


def test_an_mlir_enable_dump_log_is_named_for_what_it_is(tmp_path, capsys):
    """MLIR_ENABLE_DUMP prints the module after every pass: the parser stopped at the second module's attribute
    aliases ("redefinition of attribute alias"), a message that said nothing of the file (a helper's sweep)."""
    module = SEED_BYTES.decode()
    log = "".join(f"// -----// IR Dump Before Pass{k}: pass{k} ('builtin.module' operation) //----- //\n{module}\n"
                  for k in range(3))
    path = write(tmp_path / "dump.mlir", log.encode())
    code, out, err = run(capsys, path)
    assert code == 2 and results(out) == {path: "UNREADABLE"}, out
    assert err.startswith(f"tlx-verify: error: {path}: this is an MLIR_ENABLE_DUMP log (3 modules, one per pass), "
                          "not one kernel: give tlx-verify the kernel's .ttgir"), err


# ------------------------------------------------------------------------------------ 3: parse errors

@pytest.mark.parametrize("suffix, form", [(".mlir", "generic MLIR"), (".ttgir", "Triton IR")])
@pytest.mark.parametrize("cut, where, message", [
    (lambda b: b[:3000], "21:74", "expected '}' in attribute dictionary"),
    (lambda b: b"\n".join(b.split(b"\n")[:39] + b.split(b"\n")[40:]), "43:34", "use of undeclared SSA value name")])
def test_a_parse_error_names_the_users_file_line_and_column(tmp_path, capsys, suffix, form, cut, where, message):
    path = write(tmp_path / f"cut{suffix}", cut(SEED_BYTES))
    code, out, err = run(capsys, path)
    assert code == 2
    assert err == f"tlx-verify: error: {path}:{where}: {message} (reading it as {form})\n"


@pytest.fixture(params=["in memory", "temporary file"])
def text_path(request, monkeypatch, tmp_path):
    """Triton's parser reads text from an in-memory file where Linux has one, else from a temporary file (here
    forced by a memfd_create that fails, in an empty TMPDIR that must stay empty)."""
    scratch = tmp_path / "TMPDIR"
    scratch.mkdir()
    if request.param == "temporary file":
        monkeypatch.setattr(os, "memfd_create", lambda *a: (_ for _ in ()).throw(OSError("no memfd here")),
                            raising=False)
        monkeypatch.setattr(_triton.tempfile, "tempdir", str(scratch))
    yield request.param
    assert os.listdir(scratch) == []


def test_triton_parse_names_the_text_as_asked(text_path):
    assert '"<lowered module>":1:1' in _triton.parse("garbage", _triton.new_context())[1]   # the plugin's use
    err = _triton.parse("garbage", _triton.new_context(), name="k.ttgir")[1]
    assert '"k.ttgir":1:1' in err and "tlx-alias-" not in err and "/proc/self" not in err


def test_lines_of_a_triton_form_file_without_locations_name_that_file(tmp_path, capsys, text_path):
    """Triton gives an op without `loc(...)` its position in the text it parsed: tlx-verify reports it as a line of
    the user's file, not of the in-memory or temporary file Triton read the text from."""
    text = re.sub(r' loc\((?:[^()"]|"[^"]*"|\([^()]*\))*\)', "", open(BUG).read())
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#loc"))
    assert "loc(" not in text
    path = write(tmp_path / "no-locations.ttgir", text.encode())
    code, out, err = run(capsys, path)
    assert code == 1 and f"qk_tiles indexed at {path}:29; m_tiles indexed at {path}:73" in out
    assert "/proc/self" not in out and "tlx-alias-" not in out


def test_triton_parse_reads_the_whole_text(text_path):
    """A module larger than a pipe's buffer, with a non-ASCII string, comes back as written."""
    names = "".join(f'    "tt.func"() ({{\n      "tt.return"() : () -> ()\n    }}) {{function_type = () -> (), '
                    f'sym_name = "k{i}", sym_visibility = "private", note = "é{i}"}} : () -> ()\n' for i in range(600))
    module, err = _triton.parse(f"module {{\n{names}}}\n", _triton.new_context())
    assert err == "" and module is not None
    text = module.str()
    assert len(text) > 65536 and text.count("tt.func") == 600 and r'note = "\C3\A9599"' in text   # é, escaped


# ------------------------------------------------------------------------------------ 4: --target

@pytest.mark.parametrize("text, capability", [("sm_90", 90), ("sm_90a", 90), ("sm_100a", 100), ("sm_103a", 103),
                                              ("sm_120", 120), ("cuda:100", 100), ("100", 100)])
def test_target_spellings(text, capability):
    assert cli.parse_target(text) == capability


def test_every_capability_with_limits_is_a_target_and_no_other():
    for c in range(0, 200):
        if c in SMEM_LIMIT:
            assert cli.parse_target(f"sm_{c}a") == cli.parse_target(f"cuda:{c}") == c
        else:
            with pytest.raises(ValueError):
                cli.parse_target(f"sm_{c}")


@given(st.text(max_size=12) | st.from_regex(r"(sm_|cuda:)?-?[0-9]{1,4}a?", fullmatch=True))
def test_any_target_text_is_a_capability_with_limits_or_a_value_error_naming_it(text):
    try:
        assert cli.parse_target(text) in SMEM_LIMIT
    except ValueError as exc:
        assert repr(text) in str(exc)


@pytest.mark.parametrize("budget", ["abc", "0", "-5"])
def test_a_bad_p7_budget_is_a_usage_error_naming_the_knob(capsys, monkeypatch, budget):
    monkeypatch.setenv("TLX_ALIAS_P7_STEPS", budget)
    code, out, err = run(capsys, SEED)
    assert code == 2 and out == ""
    assert f"TLX_ALIAS_P7_STEPS={budget!r} is not a positive number of ops" in err
    assert "set TLX_ALIAS_P7_STEPS to a positive integer (default 20000)" in err


@pytest.mark.parametrize("text", ["foo", "", "cuda:abc", "-1", "sm_0", "sm_90a sm_100a", "sm_100b", " sm_90",
                                  "sm_\u0661\u0660\u0660", "100\n"])
def test_a_bad_target_is_a_usage_error_listing_what_is_accepted(capsys, text):
    code, out, err = run(capsys, SEED, f"--target={text}")
    assert code == 2 and out == ""
    assert f"tlx-verify: error: --target {text!r} is not a target tlx-verify knows: give sm_<N>, sm_<N>a, " \
           f"cuda:<N> or <N>, with N one of {', '.join(map(str, sorted(SMEM_LIMIT)))}" in err


def test_a_good_target_is_used(capsys):
    assert run(capsys, SEED, "--target", "sm_100a")[0] == 0
    code, out, _ = run(capsys, SEED, "--target", "sm_90a")       # TMEM on Hopper: a real P6 violation
    assert code == 1 and "P6 spec0: VIOLATION: sm_90 has no tensor memory" in out


# ------------------------------------------------------------------------------------ 5: --map-svg

def test_map_svg_into_a_missing_directory_prints_the_verdicts_then_fails(tmp_path, capsys):
    svg = tmp_path / "missing" / "map.svg"
    code, out, err = run(capsys, SEED, "--map-svg", svg)
    assert code == 2 and "-> SAFE" in out and results(out) == {SEED: "SAFE"}
    assert err == (f"tlx-verify: error: --map-svg {svg}: cannot write: No such file or directory (the directory "
                   "must exist and be writable)\n")
    assert not (tmp_path / "missing").exists()
    code, out, err = run(capsys, BUG, "--map-svg", svg)
    assert code == 1 and "cannot write" in err                   # the violation is what the status says
    code, out, err = run(capsys, SEED, "--map-svg", tmp_path)     # a directory
    assert code == 2 and "cannot write: Is a directory" in err and os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------------ 6: directories

def test_a_directory_is_walked_for_ttgir_files_in_sorted_order(tmp_path, capsys):
    for rel, src in [("b/k.ttgir", SEED), ("a/x/k.ttgir", BUG), ("a/k.ttgir", UNPROVEN), ("a/k.mlir", SEED),
                     ("a/k.json", SEED), ("a/x/k.ttir", SEED)]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(open(src, "rb").read())
    code, out, err = run(capsys, tmp_path)
    assert code == 1 and err == ""
    lines = [ln for ln in out.splitlines() if re.match(r"tlx-verify: [A-Z]+ ", ln)]
    assert lines == [f"tlx-verify: UNPROVEN   {tmp_path}/a/k.ttgir", f"tlx-verify: VIOLATION  {tmp_path}/a/x/k.ttgir",
                     f"tlx-verify: SAFE       {tmp_path}/b/k.ttgir"]


def test_a_directory_without_ttgir_is_exit_2(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.mlir").write_bytes(SEED_BYTES)
    code, out, err = run(capsys, tmp_path)
    assert code == 2 and results(out) == {str(tmp_path): "UNREADABLE"}
    assert err == (f"tlx-verify: error: {tmp_path}: no .ttgir file in this directory or below it: give a Triton "
                   "cache or TRITON_KERNEL_DUMP directory, or the files themselves\n")


# ------------------------------------------------------------------------------------ 7: broken pipe

def test_a_closed_stdout_ends_quietly_with_the_status_of_every_input(tmp_path):
    """`| head` once head has gone: every write fails with EPIPE. The second input is still checked. (Run from a
    folder without a `tlx_alias/` in it, so that a wheel install runs the installed package.)"""
    read_end, write_end = os.pipe()
    os.close(read_end)
    r = subprocess.run([sys.executable, "-m", "tlx_alias.verify.cli", SEED, UNPROVEN], stdout=write_end,
                       stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    os.close(write_end)
    assert (r.returncode, r.stderr) == (3, "")


# ------------------------------------------------------------------------------------ 8: exit statuses

def test_cannot_prove_is_exit_3_unless_allowed(capsys):
    code, out, _ = run(capsys, UNPROVEN)
    assert code == 3 and "P5 ring: CANNOT PROVE" in out and out.endswith("1 unproven, 0 safe -> exit 3\n")
    assert run(capsys, UNPROVEN, "--strict")[0] == 3
    assert run(capsys, UNPROVEN, "--allow-unproven")[0] == 0
    assert run(capsys, BUG, "--allow-unproven")[0] == 1
    code, _, err = run(capsys, UNPROVEN, "--allow-unproven", "--strict")
    assert code == 2 and "not allowed with argument" in err


@pytest.mark.parametrize("inputs, status", [
    ((SEED,), 0), ((SEED, UNPROVEN), 3), ((UNPROVEN, "missing.mlir", SEED), 2), (("missing.mlir", BUG, UNPROVEN), 1),
    ((BUG, "missing.mlir"), 1)])
def test_several_inputs_exit_with_the_first_of_violation_unreadable_unproven(capsys, inputs, status):
    code, out, _ = run(capsys, *inputs)
    assert code == status
    assert list(results(out)) == list(inputs)


def test_json_has_a_status_per_input_unreadable_ones_included(capsys):
    code, out, err = run(capsys, "--json", "missing.mlir", BUG, UNPROVEN)
    doc = json.loads(out)
    assert code == 1 and [(d["path"], d["status"]) for d in doc] == [
        ("missing.mlir", "unreadable"), (BUG, "violation"), (UNPROVEN, "unproven")]
    assert doc[0]["error"] == "missing.mlir: cannot read: No such file or directory" and doc[1]["verdicts"]


def test_a_proof_that_crashes_is_reported_as_such_and_the_rest_checked(capsys, monkeypatch):
    import tlx_alias.verify as verify
    real = verify.prove_module

    def prove(module, target, aliases, path):
        if path == BUG:
            raise RuntimeError("boom\nsecond line")
        return real(module, target, aliases, path)
    monkeypatch.setattr(verify, "prove_module", prove)
    code, out, err = run(capsys, BUG, SEED)
    assert code == 2 and results(out) == {BUG: "UNREADABLE", SEED: "SAFE"}
    assert err == (f"tlx-verify: error: {BUG}: the proof failed on this input: RuntimeError: boom (a tlx-verify "
                   "bug; please report it with this file)\n")


PADDED = """\
#padded = #ttg.padded_shared<[64:+64] {order = [1, 0], shape = [64, 1024]}>
#smem = #ttg.shared_memory
"builtin.module"() ({
  "tt.func"() <{function_type = () -> (), sym_name = "k", sym_visibility = "public"}> ({
    %a = "ttg.local_alloc"() : () -> !ttg.memdesc<64x1024xf16, #padded, #smem, mutable> loc("k.py":7:5)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:90", "ttg.num-warps" = 4 : i32} : () -> ()
"""


def test_a_padded_shared_layout_is_refused_as_unsupported_not_proven(tmp_path, capsys):
    """Triton pads inside and between the buffers of a padded layout (64 x 1024 fp16 with 64 of padding per 64
    takes 262,016 bytes, not 131,072): sized as unpadded, P6 said "proven" on an allocation over the SM's
    limit. The checker does not size it: the file is unsupported input, nothing proven."""
    code, out, err = run(capsys, write(tmp_path / "padded.mlir", PADDED.encode()))
    assert code == 2, (out, err)
    assert results(out) == {str(tmp_path / "padded.mlir"): "UNREADABLE"}
    assert "unsupported IR" in err and "padded shared layout" in err and "nothing in this file was checked" in err
