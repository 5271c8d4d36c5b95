"""The TMEM column count of one buffer (tlx_alias.memdesc), against where Triton itself puts buffer 1.

The lowering sizes and places TMEM views with this count and the proof checks them with it: if it differs
from Triton's step, aliased buffers land on other columns than the layout says (the two-CTA 64-row tile
was counted 128 columns and stepped by 64: a silently wrong kernel). Each case compiles a 2-buffer
allocation on the CPU (test/tools/tmem_probe.py reads the step from the PTX) and compares.
"""
import pytest
from triton.experimental.gluon import language as gl

import tmem_probe
from tlx_alias import _triton as compat
from tlx_alias.memdesc import parse_aliases, parse_memdesc

CASES = [  # dtype, global shape, block, col_stride, two_ctas, CTA split (M, N), CTAs
    (gl.float32, (128, 64), (128, 64), 1, False, (1, 1), 1),
    (gl.bfloat16, (128, 64), (128, 64), 1, False, (1, 1), 1),      # packed: two per column
    (gl.bfloat16, (128, 64), (128, 64), 2, False, (1, 1), 1),      # unpacked: one per column
    (gl.float32, (128, 128), (128, 64), 1, False, (1, 1), 1),      # two 128-row blocks side by side
    (gl.float32, (256, 64), (128, 64), 1, False, (1, 1), 1),
    (gl.float32, (64, 128), (64, 64), 1, False, (1, 1), 1),        # two 64-row blocks share columns
    (gl.float32, (128, 128), (64, 128), 1, True, (2, 1), 2),       # two-CTA, 64 rows per CTA: half the columns
    (gl.bfloat16, (128, 128), (64, 128), 1, True, (2, 1), 2),
    (gl.float32, (256, 128), (128, 128), 1, False, (2, 1), 2),     # 128 rows per CTA of a 256-row pair
]


@pytest.mark.parametrize("dtype, shape, block, col_stride, two_ctas, split, ctas", CASES,
                         ids=[f"{c[0]}-{c[1][0]}x{c[1][1]}-b{c[2][0]}x{c[2][1]}-cs{c[3]}{'-2cta' if c[6] > 1 else ''}"
                              for c in CASES])
def test_buffer_columns_match_triton_step(dtype, shape, block, col_stride, two_ctas, split, ctas):
    layout = compat.tmem_layout(block, col_stride, two_ctas, split)
    (row, col), ttgir = tmem_probe.step(dtype, shape, layout, ctas)
    alloc = next(line for line in ttgir.splitlines() if "ttng.tmem_alloc" in line)
    md = parse_memdesc(alloc.split("-> ")[-1].split(" loc(")[0].strip(), parse_aliases(ttgir))
    assert row == 0
    assert md.buffer_units == col, md.text
