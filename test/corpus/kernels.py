"""The verifier's corpus: small Gluon kernels written here in the index / aliasing idioms upstream's Gluon
tutorials and examples use (see README "The safety proof"), each with a clean form and seeded bugs chosen
by constexpr flags. Compiled at test time, on the CPU, for sm_90a / sm_100a with the installed Triton.

Idioms: RING monotone counter `c % N` carried through a persistent loop nest; TOGGLE `idx ^= 1`;
FLIP a buffer pair chosen by `1 - which` at each reset of a ring index; ROLLOVER an index/phase pair
advanced by `where(next == N, 0, next)` inside warp_specialize partitions;
PRED `(i - 1) % N` touched only under `pred = i >= 1`; WHILE a ring counter carried by a `while` loop;
BORROW P / alpha / m / l borrowed from the columns of an fp32 S buffer in TMEM; SLICE a 1-D SMEM slice
reinterpreted; STEAL an epilogue tile reinterpreted over a ring buffer and the next one (07-persistence's
STEALB); DOUBLE_STEP a 2-slot ring advanced once per tile and twice per inner step (so the inner loop
brings it back to its entry value: the attention example's O channel); TLX_TREELESS a TLX spec without a reuse tree whose views differ in size and count.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

import tlx_alias.language as tlx
from tlx_alias import _triton as compat


@gluon.jit
def ring_kernel(x_ptr, n_tiles, k_steps, N: gl.constexpr, WRAP: gl.constexpr, B: gl.constexpr):
    """RING: one counter for the whole persistent nest; slot = c % WRAP (WRAP == N when clean)."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    acc = gl.zeros([B, B], gl.float32, blocked)
    c = 0
    for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        for k in range(k_steps):
            slot = c % WRAP
            buf = ring.index(slot)
            buf.store(acc + (c // N & 1).to(gl.float32))
            acc += buf.load(blocked)
            c += 1
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def toggle_kernel(x_ptr, k_steps, STEP: gl.constexpr, B: gl.constexpr):
    """TOGGLE: a two-deep ring indexed by `idx ^= 1` (clean: STEP 0; bug: the next buffer, idx + 1)."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    a = gl.allocate_shared_memory(gl.float32, [2, B, B], layout)
    acc = gl.zeros([B, B], gl.float32, blocked)
    idx = 0
    phase = 0
    for k in range(k_steps):
        a.index(idx + STEP).store(acc + phase.to(gl.float32))
        acc += a.index(idx).load(blocked)
        idx ^= 1
        phase ^= idx
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def flip_kernel(x_ptr, k_steps, N: gl.constexpr, FLIP: gl.constexpr, B: gl.constexpr):
    """FLIP: a ring index reset at N, and a buffer pair chosen by `which = FLIP - which` at each reset (the
    `1 - phase` idiom; clean: FLIP 1; bug: FLIP 2, the pair's third buffer)."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    pair = gl.allocate_shared_memory(gl.float32, [2, B, B], layout)
    acc = gl.zeros([B, B], gl.float32, blocked)
    idx = 0
    which = 0
    for k in range(k_steps):
        ring.index(idx).store(acc)
        pair.index(which).store(acc + ring.index(idx).load(blocked))
        acc += pair.index(which).load(blocked)
        idx += 1
        if idx == N:
            idx = 0
            which = FLIP - which
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def _producer(ring, bars, n_tiles, k_steps, N: gl.constexpr, ROLL: gl.constexpr, B: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [1, 1], [1, 0])
    index = 0
    phase = 0
    for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        for k in range(k_steps):
            mbarrier.wait(bars.index(index), phase)
            ring.index(index).store(gl.zeros([B, B], gl.float32, blocked))
            nxt = index + 1
            wrap = nxt == ROLL
            index = gl.where(wrap, 0, nxt)
            phase = gl.where(wrap, phase ^ 1, phase)


@gluon.jit
def _consumer(ring, bars, x_ptr, n_tiles, k_steps, N: gl.constexpr, ROLL: gl.constexpr, B: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    acc = gl.zeros([B, B], gl.float32, blocked)
    index = 0
    for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        for k in range(k_steps):
            acc += ring.index(index).load(blocked)
            mbarrier.arrive(bars.index(index), count=1)
            nxt = index + 1
            index = gl.where(nxt == N, 0, nxt)
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def rollover_ws_kernel(x_ptr, n_tiles, k_steps, N: gl.constexpr, ROLL: gl.constexpr, B: gl.constexpr):
    """ROLLOVER: producer/consumer partitions over a ring; the producer's counter wraps at ROLL."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    bars = gl.allocate_shared_memory(gl.int64, [N, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(N):
        mbarrier.init(bars.index(i), count=1)
    gl.warp_specialize([(_consumer, (ring, bars, x_ptr, n_tiles, k_steps, N, ROLL, B)),
                        (_producer, (ring, bars, n_tiles, k_steps, N, ROLL, B))], [1], [24])


@gluon.jit
def pred_kernel(x_ptr, n, N: gl.constexpr, LAG: gl.constexpr, FROM: gl.constexpr, B: gl.constexpr):
    """PRED: release the buffer used LAG steps ago, `bars[(i - LAG) % N]`, only when i >= FROM (clean:
    FROM == LAG; bug: FROM 0 arrives on bars[-1] at i = 0)."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    bars = gl.allocate_shared_memory(gl.int64, [N, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(N):
        mbarrier.init(bars.index(i), count=1)
    acc = gl.zeros([B, B], gl.float32, blocked)
    for i in range(n):
        ring.index(i % N).store(acc)
        acc += ring.index(i % N).load(blocked)
        mbarrier.arrive(bars.index((i - LAG) % N), count=1, pred=i >= FROM)
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def while_kernel(x_ptr, tile_ids, n, N: gl.constexpr, ROLL: gl.constexpr, B: gl.constexpr):
    """WHILE: a persistent `while` loop over claimed tiles (a tile id < 0 ends it), its ring counter
    carried through the loop and wrapped at ROLL."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    acc = gl.zeros([B, B], gl.float32, blocked)
    index = 0
    step = 0
    tile = gl.program_id(0)
    while step < n:
        buf = ring.index(index)
        buf.store(acc + tile.to(gl.float32))
        acc += buf.load(blocked)
        nxt = index + 1
        index = gl.where(nxt == ROLL, 0, nxt)
        step += 1
        tile = gl.load(tile_ids + step)
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def _borrow(s, COL: gl.constexpr, W: gl.constexpr, BM: gl.constexpr):
    """W fp32 columns of S from COL, as the tutorial borrows alpha / m / l."""
    layout: gl.constexpr = TensorMemoryLayout((BM, W), col_stride=1)
    return compat.reinterpret(s.slice(COL, W), gl.float32, [BM, W], layout)


@gluon.jit
def borrow_kernel(x_ptr, n_iter, BM: gl.constexpr, BN: gl.constexpr, ALPHA: gl.constexpr, M_COL: gl.constexpr,
                  L_COL: gl.constexpr):
    """BORROW: S (fp32, BN columns) -> P (bf16 packed two per column: BN/2 columns), alpha, m (one column
    each) and l (two columns) after P (clean: ALPHA = BN/2, M_COL = BN/2 + 1, L_COL = BN/2 + 2)."""
    s_layout: gl.constexpr = TensorMemoryLayout((BM, BN), col_stride=1)
    p_layout: gl.constexpr = TensorMemoryLayout((BM, BN // 2), col_stride=1)
    s_tmem = allocate_tensor_memory(gl.float32, [2, BM, BN], s_layout)
    s_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, BN], s_layout, 4)
    p_reg: gl.constexpr = compat.tmem_reg_layout(gl.bfloat16, [BM, BN], p_layout, 4)
    a_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 1], TensorMemoryLayout((BM, 1), col_stride=1), 4)
    l_reg: gl.constexpr = compat.tmem_reg_layout(gl.float32, [BM, 2], TensorMemoryLayout((BM, 2), col_stride=1), 4)
    acc = gl.zeros([BM, BN], gl.float32, s_reg)
    for k in range(n_iter):
        s = s_tmem.index(k % 2)
        s.store(acc)
        x = s.load(s_reg)
        p = compat.reinterpret(s.slice(0, BN // 2), gl.bfloat16, [BM, BN], p_layout)
        p.store(x.to(gl.bfloat16))
        alpha = _borrow(s, ALPHA, 1, BM)
        m_i = _borrow(s, M_COL, 1, BM)
        l_i = _borrow(s, L_COL, 2, BM)
        alpha.store(gl.convert_layout(gl.max(x, axis=1)[:, None], a_reg))
        m_i.store(alpha.load(a_reg))
        l_i.store(gl.full([BM, 2], 1.0, gl.float32, l_reg))
        y = p.load(p_reg).to(gl.float32)
        acc += gl.convert_layout(gl.sum(l_i.load(l_reg), axis=1), gl.SliceLayout(1, s_reg))[:, None] + y
        acc += gl.convert_layout(gl.sum(m_i.load(a_reg), axis=1), gl.SliceLayout(1, s_reg))[:, None]
    offs = gl.arange(0, BN, layout=gl.SliceLayout(0, s_reg))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0))


@gluon.jit
def slice_kernel(x_ptr, OFF: gl.constexpr, WIDTH: gl.constexpr, VIEW: gl.constexpr):
    """SLICE: bytes [OFF, OFF + WIDTH) of a 2048-byte buffer, reinterpreted as VIEW int32 words (clean:
    VIEW * 4 <= WIDTH; bug: a 512-byte slice at 1536 read as 1024 bytes, past the buffer's end)."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])
    blocked: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    buf = gl.allocate_shared_memory(gl.int8, [2048], layout)
    part = buf.slice(OFF, WIDTH)
    words = compat.reinterpret(part, gl.int32, [VIEW], layout)
    words.store(gl.full([VIEW], 7, gl.int32, blocked))
    offs = gl.arange(0, VIEW, layout=blocked)
    gl.store(x_ptr + offs, words.load(blocked))


@gluon.jit
def tlx_treeless_kernel(x_ptr, n, QI: gl.constexpr, OI: gl.constexpr, RUNTIME: gl.constexpr, B: gl.constexpr):
    """TLX_TREELESS: `storage_alias_spec` without `set_buffer_overlap`: q (2 buffers of B x B fp16) and o
    (2 buffers of B x 2B fp16, twice q's size) at offset 0. Clean: q used at index QI = 0 and o at OI = 0,
    in lock step. Bug (RUNTIME): q indexed at i % 2, so q[1], a buffer of another stage, lies under o[0]."""
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    q = tlx.local_alloc((B, B), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    o = tlx.local_alloc((B, 2 * B), gl.float16, 2, tlx.storage_kind.smem, reuse=spec)
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    acc = gl.zeros([B, B], gl.float32, blocked)
    for i in range(n):
        qi = i % 2 if RUNTIME else QI
        q.index(qi).store(acc.to(gl.float16))
        acc += q.index(qi).load(blocked).to(gl.float32)
    o.index(OI).store(gl.zeros([B, 2 * B], gl.float16, blocked))
    out = o.index(OI).load(blocked)
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0) + gl.sum(gl.sum(out.to(gl.float32), axis=1), axis=0))


@gluon.jit
def steal_kernel(x_ptr, n, NB: gl.constexpr, MOD: gl.constexpr, B: gl.constexpr):
    """STEAL: a 2B x B fp32 tile over ring buffer `i % MOD` of NB buffers of B x B, and the one after it. A
    view derived from one buffer must stay in it (P1): with MOD = NB the last buffer's tile runs past the
    allocation's end, and the counterexample must say so (the index, the bytes); with MOD = NB - 1 it
    stays in the allocation but still reaches into the next buffer."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [NB, B, B], layout)
    for i in range(n):
        tile = compat.reinterpret(ring.index(i % MOD), gl.float32, [2 * B, B], layout)
        tile.store(gl.zeros([2 * B, B], gl.float32, blocked))
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(ring.index(0).load(blocked), axis=0))


@gluon.jit
def _advance(idx, phase, N: gl.constexpr):
    nxt = idx + 1
    wrap = nxt == N
    return gl.where(wrap, 0, nxt), gl.where(wrap, phase ^ 1, phase)


@gluon.jit
def double_step_kernel(x_ptr, n_tiles, k_steps, N: gl.constexpr, WRAP: gl.constexpr, B: gl.constexpr):
    """DOUBLE_STEP: an N-slot ring (index, phase) used once per tile before the inner loop and twice per inner
    step. With N = 2 the inner loop leaves the index where it found it: an inner-loop invariant `idx < 1`
    holds whenever it holds at entry, but the entry value is 0 or 1 by tile. Bug: the counter wraps at WRAP
    = N + 1."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ring = gl.allocate_shared_memory(gl.float32, [N, B, B], layout)
    idx = 0
    phase = 0
    acc = gl.zeros([B, B], gl.float32, blocked)
    for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
        ring.index(idx).store(acc)
        idx, phase = _advance(idx, phase, WRAP)
        for k in range(k_steps):
            acc += ring.index(idx).load(blocked)
            idx, phase = _advance(idx, phase, WRAP)
            ring.index(idx).store(acc)
            idx, phase = _advance(idx, phase, WRAP)
    offs = gl.arange(0, B, layout=gl.SliceLayout(0, blocked))
    gl.store(x_ptr + offs, gl.sum(acc, axis=0) + phase)
