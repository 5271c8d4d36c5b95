"""A proof frees its Z3 context when it returns (issue 11: bounded memory over an autotuning sweep).

Reference counting alone must free it: a context that a reference cycle keeps alive waits for a full
garbage collection, and meanwhile a sweep of proofs held 15-50 of them (1.2-1.6 GB RSS).
`python benchmarks/proof_rss.py` measures the RSS over 1,000 proofs; this checks the cause, with the
garbage collector off, on a clean TLX layout and on a violation (whose report must stay readable).
"""
import gc
import os
import weakref

import pytest

import synth
from tlx_alias import verify
from tlx_alias.verify.source import load_generic

BUGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lit", "verify", "bugs")


def _prove_without_gc(monkeypatch, text, path):
    """(report, weak references to the Z3 contexts the proof used) with the cycle collector off."""
    made = []
    real = verify._z3_context

    def recording():
        ctx, made_ms = real()
        made.append(weakref.ref(ctx))
        return ctx, made_ms
    monkeypatch.setattr(verify, "_z3_context", recording)
    loaded = load_generic(text, path)
    gc.collect()
    gc.disable()
    try:
        with loaded.context:
            report = verify.prove_module(loaded.module, None, loaded.aliases, path)
        alive = [r for r in made if r() is not None]
    finally:
        gc.enable()
    return report, made, alive


def _bug(name):
    with open(os.path.join(BUGS, name)) as f:
        return f.read()


@pytest.mark.parametrize("name, text, expect", [
    ("seed000.mlir", lambda: synth.module_text(synth.seed000_fa()), "SAFE"),
    ("tlx-cross-stage.mlir", lambda: _bug("tlx-cross-stage.mlir"), "VIOLATION"),
])
def test_proof_frees_its_z3_context(monkeypatch, name, text, expect):
    report, made, alive = _prove_without_gc(monkeypatch, text(), name)
    assert len(made) == 1
    assert alive == [], "the proof's Z3 context outlived the proof (a reference cycle keeps it)"
    # the report holds plain data only, and is whole after the context is gone
    assert f"-> {expect} (" in report.text().splitlines()[-1], report.text()
    assert (expect == "VIOLATION") == bool(report.violations)


def test_a_context_made_ahead_reports_what_making_it_cost():
    """The next proof's context is made on another thread after each proof; the report that uses it says what
    that cost (`Report.context_ms`: not in `ms`, which is the proving thread's), so no work goes unaccounted."""
    loaded = load_generic(synth.module_text(synth.seed000_fa()), "seed000.mlir")
    with loaded.context:
        verify.prove_module(loaded.module, None, loaded.aliases)   # leaves a context made ahead
        report = verify.prove_module(loaded.module, None, loaded.aliases)
    assert report.context_ms > 0
