#!/usr/bin/env python3
# peers.py -- step 4 of the GPU kit (docs/gpu.md): the kit's problems in
# PyTorch eager, torch.compile and hand-written Triton kernels, timed on the
# same GPU as tk's kernels so the report can put them side by side.
#
# Contract (tools/gpu-kit/Orchestrate.cpp writes problems.json, runs this with
# a timeout and merges peers.json into its report by name; keep them in step):
#
#   python3 peers.py --problems FILE --out FILE [--reps N] [--only NAME,NAME]
#
#   in:  {"problems": [{"name": str, "shape": [int...], "dtype": str,
#                       "params": {...}}, ...]}
#   out: {"python": "3.x", "torch": str|null, "triton": str|null,
#         "device": str|null,
#         "rows": [{"name": str, "torch_ms": float|null,
#                   "compile_ms": float|null, "triton_ms": float|null,
#                   "notes": str}, ...]}
#
# Every problem gets a row, whatever failed; notes say why a column is null,
# what each peer computes where it differs from tk, and how far each peer's
# output is from a float64 reference. The output is written atomically at the
# start, after every problem and at the end, so a timeout keeps what was done.
# Pass 1 runs torch eager and Triton for every problem, pass 2 torch.compile
# (the slow one: its compile time would otherwise starve the cheap columns).
# Exit 0 once the file is written (even if peers failed); 1 on bad arguments,
# an unreadable problems file or an unwritable output.
#
# Timing: CUDA events; 3 warm-up calls (torch.compile compiles in them, never
# timed); before every timed call the L2 is flushed by zeroing a 256 MiB
# buffer; the median of --reps (default 20, at least 10) in milliseconds.
#
# Debugging without a GPU (hidden flags): --device cpu runs everything on the
# CPU (perf_counter timing, no flush; it sets TRITON_INTERPRET=1 so the Triton
# kernels run in Triton's interpreter), --tiny shrinks every problem to a
# size that runs in seconds and still leaves masked tails, --no-compile skips
# torch.compile.
#
# Python 3.9+, stdlib + torch + triton only.

import argparse
import json
import math
import os
import platform
import statistics
import struct
import sys
import tempfile
import time
import traceback
import zlib


def _early_device():
    # TRITON_INTERPRET must be set before the kernels below are decorated.
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == "--device" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--device="):
            return a.split("=", 1)[1]
    return "cuda"


if _early_device() == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")


def short(e, limit=240):
    """An exception as one short line: its type and first lines."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    text = type(e).__name__ + (": " + " | ".join(lines[:2]) if lines else "")
    return text if len(text) <= limit else text[: limit - 3] + "..."


try:
    import torch
    import torch.nn.functional as F

    TORCH_ERR = None
except Exception as e:  # no torch: every row says so
    torch = F = None
    TORCH_ERR = short(e)

triton = tl = None
TRITON_ERR = "needs torch"
if torch is not None:
    try:
        import triton
        import triton.language as tl

        TRITON_ERR = None
    except Exception as e:
        triton = tl = None
        TRITON_ERR = short(e)


# --------------------------------------------------------------------------
# Triton kernels, in the style of Triton's tutorials.
# --------------------------------------------------------------------------

if triton is not None:

    # Elementwise (tutorial 01): one BLOCK of elements a program, the tail masked.
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)

    @triton.jit
    def complex_activation_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        out = tl.maximum((tl.sin(x) * tl.cos(y) + x) * y, 0.0)
        tl.store(out_ptr + offs, out, mask=mask)

    @triton.jit
    def sincos_chain_kernel(x_ptr, out_ptr, n, CHAIN: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        for i in tl.static_range(CHAIN):
            if i % 2 == 0:
                x = tl.sin(x)
            else:
                x = tl.cos(x)
        tl.store(out_ptr + offs, x, mask=mask)

    @triton.jit
    def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        u = 0.7978845608 * (x + 0.044715 * x * x * x)
        t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh(u), saturating to +-1
        tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)

    @triton.jit
    def swiglu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, a * tl.sigmoid(a) * b, mask=mask)

    # Seeded dropout (tutorial 04): the mask is Philox 4x32-10 of (seed, index).
    @triton.jit
    def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        keep = tl.rand(seed, offs) > p
        tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)

    # Fused softmax (tutorial 02): one row a program, the row in one block.
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < D
        x = tl.load(x_ptr + row * D + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * D + cols, num / tl.sum(num, axis=0), mask=mask)

    # Layer norm forward (tutorial 05): one row a program, in BLOCK chunks.
    @triton.jit
    def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, D, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_ptr += row * D
        out_ptr += row * D
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + cols, mask=cols < D, other=0.0)
        mean = tl.sum(acc, axis=0) / D
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < D, other=0.0)
            x = tl.where(cols < D, x - mean, 0.0)
            acc += x * x
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / D + eps)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < D
            w = tl.load(w_ptr + cols, mask=mask)
            b = tl.load(b_ptr + cols, mask=mask)
            x = tl.load(x_ptr + cols, mask=mask, other=0.0)
            tl.store(out_ptr + cols, (x - mean) * rstd * w + b, mask=mask)

    @triton.jit
    def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, D, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_ptr += row * D
        out_ptr += row * D
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < D, other=0.0)
            acc += x * x
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / D + eps)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < D
            w = tl.load(w_ptr + cols, mask=mask)
            x = tl.load(x_ptr + cols, mask=mask, other=0.0)
            tl.store(out_ptr + cols, x * rstd * w, mask=mask)

    # Cross entropy, one row a program: an online log-sum-exp over BLOCK
    # chunks of the vocabulary, kept per lane and combined at the end.
    @triton.jit
    def cross_entropy_kernel(x_ptr, t_ptr, out_ptr, V, ignore_index, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_ptr += row * V
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, V, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < V, other=-float("inf"))
            m_new = tl.maximum(m, x)
            # Lanes that have seen only padding stay (m, s) = (-inf, 0), no NaN.
            shift = tl.where(m_new > -float("inf"), m_new, 0.0)
            s = s * tl.exp(m - shift) + tl.exp(x - shift)
            m = m_new
        top = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - top), axis=0)
        t = tl.load(t_ptr + row)
        valid = t != ignore_index
        xt = tl.load(x_ptr + tl.where(valid, t, 0))
        tl.store(out_ptr + row, tl.where(valid, top + tl.log(total) - xt, 0.0))

    # Matmul (tutorial 03): grouped tile order, f32 accumulator, f32 output.
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m

        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
        tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    # Flash attention forward (tutorial 06): online softmax in base 2 over
    # BLOCK_N keys at a time; P rounded to f16 before P.V; f32 accumulator.
    @triton.jit
    def _attention_keys(acc, l_i, m_i, q, k_base, v_base, offs_m, L, lo, hi, qk_scale, D: tl.constexpr,
                        BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
        offs_d = tl.arange(0, D)
        for start_n in range(lo, hi, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            kv = offs_n[:, None] * D + offs_d[None, :]
            if MASKED:
                k = tl.load(k_base + kv, mask=offs_n[:, None] < L, other=0.0)
                v = tl.load(v_base + kv, mask=offs_n[:, None] < L, other=0.0)
            else:
                k = tl.load(k_base + kv)
                v = tl.load(v_base + kv)
            qk = tl.dot(q, tl.trans(k)) * qk_scale
            if MASKED:
                keep = offs_n[None, :] < L
                if CAUSAL:
                    keep = keep & (offs_n[None, :] <= offs_m[:, None])
                qk = tl.where(keep, qk, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.exp2(qk - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_new
        return acc, l_i, m_i

    @triton.jit
    def attention_kernel(q_ptr, k_ptr, v_ptr, out_ptr, L, qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
        start_m = tl.program_id(0)
        base = tl.program_id(1).to(tl.int64) * L * D
        q_ptr += base
        k_ptr += base
        v_ptr += base
        out_ptr += base
        offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, D)
        q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < L, other=0.0)
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
        if CAUSAL:
            # Keys left of this block of queries need no mask; the diagonal does.
            diag = start_m * BLOCK_M
            acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, L, 0, diag, qk_scale, D,
                                            BLOCK_N, False, True)
            acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, L, diag,
                                            tl.minimum(diag + BLOCK_M, L), qk_scale, D, BLOCK_N, True, True)
        else:
            full = (L // BLOCK_N) * BLOCK_N
            acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, L, 0, full, qk_scale, D,
                                            BLOCK_N, False, False)
            acc, l_i, m_i = _attention_keys(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, L, full, L, qk_scale, D,
                                            BLOCK_N, True, False)
        out = acc / l_i[:, None]
        tl.store(out_ptr + offs_m[:, None] * D + offs_d[None, :], out, mask=offs_m[:, None] < L)


# --------------------------------------------------------------------------
# Timing and checking.
# --------------------------------------------------------------------------

WARMUP = 3


class Ctx(object):
    """Where the peers run and how they are timed."""

    def __init__(self, device, reps, tiny):
        self.device = device
        self.cuda = device == "cuda"
        self.reps = reps
        self.tiny = tiny
        self.cache = None  # the L2 flush buffer (CUDA)
        # Row kernels' largest chunk: small under --tiny so the chunk loops
        # and their masked tails run in the interpreter.
        self.row_block = 256 if tiny else 4096

    def flush_buffer(self):
        if self.cuda and self.cache is None:
            self.cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")  # 256 MiB
        return self.cache


def bench(ctx, fn):
    """Runs fn() WARMUP times (compiling, for torch.compile), then times
    ctx.reps calls, the L2 flushed before each. Returns (median ms, the
    output of the last warm-up call)."""
    out = None
    for _ in range(WARMUP):
        out = fn()
    times = []
    if ctx.cuda:
        cache = ctx.flush_buffer()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(ctx.reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(ctx.reps)]
        torch.cuda.synchronize()
        for i in range(ctx.reps):
            cache.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    else:
        for _ in range(ctx.reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return float(statistics.median(times)), out


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def rel_err(out, ref):
    """max |out - ref| / max(1, |ref|) over every output (inf for NaN or a
    shape mismatch)."""
    worst = 0.0
    outs, refs = _as_tuple(out), _as_tuple(ref)
    if len(outs) != len(refs):
        return math.inf
    for o, r in zip(outs, refs):
        if tuple(o.shape) != tuple(r.shape):
            return math.inf
        if o.numel() == 0:
            continue
        r = r.to(o.device, torch.float64)
        e = float(((o.to(torch.float64) - r).abs() / r.abs().clamp_min(1.0)).max())
        if math.isnan(e):
            return math.inf
        worst = max(worst, e)
    return worst


class Spec(object):
    """One problem's peers: `eager(*args)` is the torch eager peer and what
    torch.compile compiles; `triton` lists (label, fn) launches; `check(out)`
    returns (error, extra note) of an output, compared with `tol`, or
    (error, extra note, tol) where the tolerance depends on the output."""

    def __init__(self, eager, args):
        self.eager = eager
        self.args = args
        self.reference = None  # () -> float64 tensor(s): the expected output
        self.tol = 1e-5
        self.measure = "max|err|/max(1,|ref|) vs float64"
        self.check = None  # overrides the comparison with `reference`
        self.triton_check = None  # overrides `check` for the Triton peer
        self.triton = []  # [(config label, fn() -> output)]
        self.triton_best = False  # time every config and keep the best (else the first that runs)
        self.no_triton = ""  # why there is no Triton peer
        self.notes = []  # what the peers compute where it differs from tk
        self._ref = None

    def error(self, out):
        if self.check is not None:
            return self.check(out)
        if self._ref is None:
            self._ref = self.reference()
        return rel_err(out, self._ref), ""


# --------------------------------------------------------------------------
# Problems: one function each, (ctx, problem) -> Spec.
# --------------------------------------------------------------------------


def dims(prob, count, what):
    shape = prob.get("shape")
    if not isinstance(shape, list) or len(shape) != count or not all(isinstance(d, int) and d > 0 for d in shape):
        raise ValueError("shape %r: expected %s" % (shape, what))
    return shape


def param(prob, key, default):
    params = prob.get("params") or {}
    return params.get(key, default)


def generator(ctx, prob):
    g = torch.Generator(device=ctx.device)
    g.manual_seed(zlib.crc32(prob["name"].encode()))
    return g


def uniform(ctx, g, shape, lo, hi, dtype=None):
    t = torch.rand(tuple(shape), generator=g, device=ctx.device, dtype=torch.float32) * (hi - lo) + lo
    return t if dtype is None else t.to(dtype)


FLAT_BLOCK = 1024


def flat_launch(kernel, inputs, n, **consts):
    out = torch.empty_like(inputs[0])
    kernel[(triton.cdiv(n, FLAT_BLOCK),)](*inputs, out, n, BLOCK=FLAT_BLOCK, num_warps=4, **consts)
    return out


def flat_spec(ctx, prob, inputs, eager, reference, kernel, **consts):
    (n,) = dims(prob, 1, "[n]")
    g = generator(ctx, prob)
    xs = tuple(uniform(ctx, g, (n,), -4, 4) for _ in range(inputs))
    s = Spec(eager, xs)
    s.reference = lambda: reference(*(x.double() for x in xs))
    s.triton = [("BLOCK=%d" % FLAT_BLOCK, lambda: flat_launch(kernel, xs, n, **consts))]
    return s


def peers_vector_add(ctx, prob):
    def vector_add(x, y):
        return x + y

    return flat_spec(ctx, prob, 2, vector_add, vector_add, add_kernel if triton else None)


def peers_complex_activation(ctx, prob):
    def complex_activation(x, y):
        return torch.relu((torch.sin(x) * torch.cos(y) + x) * y)

    return flat_spec(ctx, prob, 2, complex_activation, complex_activation,
                     complex_activation_kernel if triton else None)


def peers_sincos_chain(ctx, prob):
    chain = int(param(prob, "chain", 4))

    def sincos_chain(x):
        for i in range(chain):
            x = torch.sin(x) if i % 2 == 0 else torch.cos(x)
        return x

    s = flat_spec(ctx, prob, 1, sincos_chain, sincos_chain, sincos_chain_kernel if triton else None, CHAIN=chain)
    s.notes.append("chain %d: sin, cos, ... (torch eager: %d kernels)" % (chain, chain))
    return s


def peers_gelu(ctx, prob):
    def gelu(x):
        return F.gelu(x, approximate="tanh")

    def gelu64(x):
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    s = flat_spec(ctx, prob, 1, gelu, gelu64, gelu_kernel if triton else None)
    s.notes.append("triton: tanh(u) as 1-2/(exp(2u)+1)")
    return s


def peers_swiglu(ctx, prob):
    def swiglu(a, b):
        return F.silu(a) * b

    def swiglu64(a, b):
        return a * torch.sigmoid(a) * b

    return flat_spec(ctx, prob, 2, swiglu, swiglu64, swiglu_kernel if triton else None)


def philox_rand01(seed, offset):
    """Triton's tl.rand(seed, offset) (and tk's dropout mask), in Python:
    word 0 of Philox 4x32-10 of counter (offset, 0, 0, 0), key = the seed's
    64 bits, as a float32 in [0, 1)."""
    mask = 0xFFFFFFFF
    c = [offset & mask, 0, 0, 0]
    k = [seed & mask, (seed >> 32) & mask]
    for r in range(10):
        if r > 0:
            k = [(k[0] + 0x9E3779B9) & mask, (k[1] + 0xBB67AE85) & mask]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k[1]) & mask, p0 & mask]
    x = c[0] - (1 << 32) if c[0] >= (1 << 31) else c[0]
    x = -x - 1 if x < 0 else x

    def f32(v):
        return struct.unpack("f", struct.pack("f", v))[0]

    return f32(f32(float(x)) * f32(4.6566127342e-10))


def peers_dropout(ctx, prob):
    (n,) = dims(prob, 1, "[n]")
    p = float(param(prob, "p", 0.3))
    seed = int(param(prob, "seed", 0)) & ((1 << 64) - 1)
    g = generator(ctx, prob)
    x = uniform(ctx, g, (n,), -4, 4)
    if ctx.cuda:
        torch.cuda.manual_seed(seed)
    torch.manual_seed(seed & ((1 << 63) - 1))

    def dropout(x):
        return F.dropout(x, p=p, training=True)

    s = Spec(dropout, (x,))
    s.measure = "kept values max|err|/max(1,|ref|); keep rate within 6 sigma of 1-p"
    if n <= 4096:
        picks = list(range(n))
    else:
        picks = torch.randint(0, n, (4096,), generator=g, device=ctx.device).tolist() + [n - 1]
    philox = {}

    def check(out):
        kept = out != 0
        ref = x.double() / (1 - p)
        err = float(((out.double() - ref).abs() / ref.abs().clamp_min(1.0))[kept].max()) if bool(kept.any()) else 0.0
        if math.isnan(err) or bool(torch.isnan(out).any()):
            return math.inf, "NaN in output"
        rate = float(kept.double().mean())
        sigma = math.sqrt(max(p * (1 - p), 1e-12) / n)
        if abs(rate - (1 - p)) > 6 * sigma + 1e-9:
            return math.inf, "keep rate %.4f, expected %.4f" % (rate, 1 - p)
        return err, ""

    def check_triton(out):
        err, note = check(out)
        if not philox:
            for i in picks:
                philox[i] = philox_rand01(seed, i) > p
        got = out[torch.tensor(picks, device=out.device)].tolist()
        wrong = sum(1 for i, v in zip(picks, got) if (v != 0) != philox[i])
        if wrong:
            return math.inf, "mask differs from tk's Philox(seed, index) at %d of %d sampled indices" % (wrong, len(picks))
        return err, note

    s.check = check
    s.triton = [("BLOCK=%d" % FLAT_BLOCK, lambda: flat_launch(dropout_kernel, (x,), n, p=p, seed=seed))]
    s.triton_check = check_triton
    s.notes.append("torch/compile: F.dropout(training=True), torch's own RNG stream, not tk's mask "
                   "(checked by keep rate and kept values)")
    s.notes.append("triton: tl.rand(seed, index), the same Philox 4x32-10 mask as tk, compared with it at %d indices"
                   % len(picks))
    return s


def rows_of(ctx, prob, what="[rows, D]"):
    rows, d = dims(prob, 2, what)
    g = generator(ctx, prob)
    return rows, d, g, uniform(ctx, g, (rows, d), -4, 4)


def row_warps(block):
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


def peers_softmax(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)

    def softmax(x):
        return torch.softmax(x, dim=-1)

    block = triton.next_power_of_2(d) if triton else 0

    def launch():
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](x, out, d, BLOCK=block, num_warps=row_warps(block))
        return out

    s = Spec(softmax, (x,))
    s.reference = lambda: torch.softmax(x.double(), dim=-1)
    s.triton = [("BLOCK=%d" % block, launch)]
    return s


def peers_layernorm(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)
    w, b = uniform(ctx, g, (d,), -1, 1), uniform(ctx, g, (d,), -1, 1)
    eps = float(param(prob, "eps", 1e-5))

    def layernorm(x, w, b):
        return F.layer_norm(x, (d,), w, b, eps)

    block = min(triton.next_power_of_2(d), ctx.row_block) if triton else 0

    def launch():
        out = torch.empty_like(x)
        layernorm_kernel[(rows,)](x, w, b, out, d, eps, BLOCK=block, num_warps=row_warps(block))
        return out

    s = Spec(layernorm, (x, w, b))
    s.reference = lambda: F.layer_norm(x.double(), (d,), w.double(), b.double(), eps)
    s.tol = 1e-4
    s.triton = [("BLOCK=%d" % block, launch)]
    return s


def peers_rmsnorm(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)
    w = uniform(ctx, g, (d,), -1, 1)
    eps = float(param(prob, "eps", 1e-5))
    has_rms = hasattr(F, "rms_norm")

    def rmsnorm(x, w):
        if has_rms:
            return F.rms_norm(x, (d,), w, eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    block = min(triton.next_power_of_2(d), ctx.row_block) if triton else 0

    def launch():
        out = torch.empty_like(x)
        rmsnorm_kernel[(rows,)](x, w, out, d, eps, BLOCK=block, num_warps=row_warps(block))
        return out

    s = Spec(rmsnorm, (x, w))
    x64, w64 = x.double(), w.double()
    s.reference = lambda: x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * w64
    s.tol = 1e-4
    s.triton = [("BLOCK=%d" % block, launch)]
    if not has_rms:
        s.notes.append("torch: no F.rms_norm, the formula op by op")
    return s


def peers_layernorm_tanh_linear_relu(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)
    w = uniform(ctx, g, (d,), -1, 1)
    eps = float(param(prob, "eps", 1e-5))
    bias = float(param(prob, "b", 0.1))

    def layernorm_tanh_linear_relu(x, w):
        return torch.relu(torch.tanh(F.layer_norm(x, (d,), eps=eps)) @ w + bias)

    s = Spec(layernorm_tanh_linear_relu, (x, w))
    s.reference = lambda: torch.relu(torch.tanh(F.layer_norm(x.double(), (d,), eps=eps)) @ w.double() + bias)
    s.tol = 1e-4
    s.no_triton = "no Triton peer written (torch eager runs it op by op: that is the comparison)"
    return s


def peers_cross_entropy(ctx, prob):
    rows, v, g, x = rows_of(ctx, prob, "[rows, V]")
    ignore = int(param(prob, "ignore_index", -100))
    t = torch.randint(0, v, (rows,), generator=g, device=ctx.device, dtype=torch.int32)
    drop = torch.randint(0, 16, (rows,), generator=g, device=ctx.device) == 0
    if rows > 1:
        drop[rows // 2] = True  # at least one ignored row, at every size
    t = torch.where(drop, torch.full_like(t, ignore), t)
    t64 = t.long()

    def cross_entropy(x, t):
        return F.cross_entropy(x, t, reduction="none", ignore_index=ignore)

    block = min(triton.next_power_of_2(v), ctx.row_block) if triton else 0

    def launch():
        out = torch.empty(rows, device=x.device, dtype=torch.float32)
        cross_entropy_kernel[(rows,)](x, t, out, v, ignore, BLOCK=block, num_warps=8 if block >= 2048 else 4)
        return out

    s = Spec(cross_entropy, (x, t64))
    s.reference = lambda: F.cross_entropy(x.double(), t64, reduction="none", ignore_index=ignore)
    s.tol = 1e-4
    s.triton = [("BLOCK=%d" % block, launch)]
    s.notes.append("torch/compile: int64 targets (torch needs them; tk and triton read int32)")
    s.notes.append("triton: one row a program, online log-sum-exp over BLOCK chunks")
    return s


def peers_rope(ctx, prob):
    shape = prob.get("shape") or []
    batch = int(param(prob, "batch", shape[0] if len(shape) > 0 else 0))
    seq = int(param(prob, "seq", shape[1] if len(shape) > 1 else 0))
    qh = int(param(prob, "q_heads", shape[2] if len(shape) > 2 else 0))
    kh = int(param(prob, "k_heads", qh))
    d = int(param(prob, "D", shape[3] if len(shape) > 3 else 0))
    if min(batch, seq, qh, kh, d) <= 0 or d % 2:
        raise ValueError("rope needs params batch, seq, q_heads, k_heads, D (even)")
    g = generator(ctx, prob)
    q = uniform(ctx, g, (batch, seq, qh, d), -2, 2)
    k = uniform(ctx, g, (batch, seq, kh, d), -2, 2)
    cos, sin = uniform(ctx, g, (seq, d), -1, 1), uniform(ctx, g, (seq, d), -1, 1)

    def rope(q, k, cos, sin):
        half = q.shape[-1] // 2
        c = cos[:, :half][None, :, None, :]
        s = sin[:, :half][None, :, None, :]

        def rotate(x):
            x1, x2 = x[..., :half], x[..., half:]
            return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)

        return rotate(q), rotate(k)

    s = Spec(rope, (q, k, cos, sin))
    s.reference = lambda: rope(q.double(), k.double(), cos.double(), sin.double())
    s.no_triton = "no Triton peer (torch eager formula and torch.compile only)"
    s.notes.append("torch: one call rotates q and k, op by op (slices, 6 muls/adds, cat each)")
    return s


def peers_similarity(ctx, prob):
    samples, dim = dims(prob, 2, "[n_samples, n_dim]")
    g = generator(ctx, prob)
    x, y = uniform(ctx, g, (samples, dim), -2, 2), uniform(ctx, g, (samples, dim), -2, 2)

    def similarity(x, y):
        return ((x[:, :, None] - y[:, None, :]).abs() < 1).sum(0)

    def reference():
        # The same f32 differences, a few samples at a time: counts are exact.
        out = torch.zeros((dim, dim), dtype=torch.int64, device=x.device)
        step = max(1, (256 << 20) // (4 * dim * dim))
        for s0 in range(0, samples, step):
            out += ((x[s0:s0 + step, :, None] - y[s0:s0 + step, None, :]).abs() < 1).sum(0)
        return out

    refs = []

    def check(out):
        if not refs:
            refs.append(reference())
        if tuple(out.shape) != (dim, dim):
            return math.inf, "shape %s" % (tuple(out.shape),)
        return float((out.long() - refs[0]).abs().max()), ""

    s = Spec(similarity, (x, y))
    s.check = check
    s.tol = 0
    s.measure = "max|err| of the counts (exact)"
    s.no_triton = "no Triton peer"
    s.notes.append("torch eager materialises [n_samples, n_dim, n_dim] temporaries (%.2f GB each in f32), "
                   "int64 counts (tk: int32)" % (4.0 * samples * dim * dim / 1e9))
    return s


def peers_matmul(ctx, prob):
    m, n, k = dims(prob, 3, "[M, N, K]")
    g = generator(ctx, prob)
    a = uniform(ctx, g, (m, k), -1, 1, torch.float16)
    b = uniform(ctx, g, (k, n), -1, 1, torch.float16)

    def matmul(a, b):
        return torch.matmul(a, b)

    def reference():
        return a.double() @ b.double(), a.double().abs() @ b.double().abs()

    refs = []

    def check(out):
        if not refs:
            refs.extend(reference())
        ref, scale = refs
        if tuple(out.shape) != tuple(ref.shape):
            return math.inf, "shape %s" % (tuple(out.shape),)
        e = float(((out.double() - ref).abs() / scale.clamp_min(1.0)).max())
        tol = 1e-3 if out.dtype == torch.float16 else 1e-4
        return (math.inf if math.isnan(e) else e), "", tol

    def launch(bm, bn, bk, warps, stages):
        def run():
            c = torch.empty((m, n), device=a.device, dtype=torch.float32)
            grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
            matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps,
                                num_stages=stages)
            return c

        return ("BLOCK %dx%dx%d w%d s%d" % (bm, bn, bk, warps, stages), run)

    s = Spec(matmul, (a, b))
    s.check = check
    s.tol = 1e-4
    s.measure = "max|err|/max(1, sum|a||b|) vs float64"
    if ctx.tiny:
        s.triton = [launch(32, 32, 32, 4, 2)]
    else:  # A few fixed H100 configs, the best kept (Triton's autotune in small).
        s.triton = [launch(128, 256, 64, 8, 3), launch(128, 128, 64, 8, 4), launch(128, 128, 64, 4, 4)]
        s.triton_best = True
    s.notes.append("torch: torch.matmul f16 -> f16 output (cuBLAS; tk writes f32)")
    s.notes.append("triton: tutorial-03 matmul, f32 accumulate, f32 output like tk")
    return s


def peers_attention(ctx, prob):
    zh, l, d = dims(prob, 3, "[ZH, L, D]")
    causal = bool(param(prob, "causal", prob["name"].endswith("_causal")))
    scale = float(param(prob, "scale", 1 / math.sqrt(d)))
    g = generator(ctx, prob)
    q, k, v = (uniform(ctx, g, (zh, l, d), -1, 1, torch.float16) for _ in range(3))

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal, scale=scale)[0]

    # Query rows to check: all of them when few, else a sample and the last.
    if zh * l <= 4096:
        rows = torch.arange(l, device=q.device)
    else:
        rows = torch.cat([torch.randint(0, l, (255,), generator=g, device=q.device),
                          torch.tensor([l - 1], device=q.device)]).unique()

    refs = []

    def reference():
        qs = q[:, rows].double()
        sc = qs @ k.double().transpose(1, 2) * scale
        if causal:
            sc = sc.masked_fill(torch.arange(l, device=q.device)[None, :] > rows[:, None], -math.inf)
        return torch.softmax(sc, dim=-1) @ v.double()

    def check(out):
        if not refs:
            refs.append(reference())
        if tuple(out.shape) != (zh, l, d):
            return math.inf, "shape %s" % (tuple(out.shape),)
        e = float((out[:, rows].double() - refs[0]).abs().max())
        return (math.inf if math.isnan(e) else e), ""

    block_m, block_n = 128, 64

    def launch(warps, stages):
        def run():
            out = torch.empty((zh, l, d), device=q.device, dtype=torch.float32)
            attention_kernel[(triton.cdiv(l, block_m), zh)](q, k, v, out, l, scale * 1.4426950408889634, D=d,
                                                            BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
                                                            num_warps=warps, num_stages=stages)
            return out

        return ("BLOCK_M %d BLOCK_N %d w%d s%d" % (block_m, block_n, warps, stages), run)

    s = Spec(attention, (q, k, v))
    s.check = check
    s.tol = 1e-2
    s.measure = "max|err| vs float64 on %d query rows of every head" % int(rows.numel())
    warps = 8 if d >= 128 else 4
    s.triton = [launch(warps, 3), launch(warps, 2)]  # the second only if the first fails
    s.notes.append("torch: F.scaled_dot_product_attention on [1, ZH, L, D] (backend as torch picks), f16 output "
                   "(tk writes f32)")
    s.notes.append("triton: tutorial-06-style flash forward%s, P rounded to f16 before P.V, f32 output like tk"
                   % (", causal" if causal else ""))
    return s


PROBLEMS = {
    "vector_add": peers_vector_add,
    "complex_activation": peers_complex_activation,
    "sincos_chain": peers_sincos_chain,
    "gelu": peers_gelu,
    "swiglu": peers_swiglu,
    "dropout": peers_dropout,
    "softmax": peers_softmax,
    "layernorm": peers_layernorm,
    "rmsnorm": peers_rmsnorm,
    "layernorm_tanh_linear_relu": peers_layernorm_tanh_linear_relu,
    "cross_entropy": peers_cross_entropy,
    "rope": peers_rope,
    "similarity": peers_similarity,
    "matmul": peers_matmul,
    "attention_d64": peers_attention,
    "attention_d64_causal": peers_attention,
    "attention_d128": peers_attention,
    "attention_d128_causal": peers_attention,
}

FLAT = ("vector_add", "complex_activation", "sincos_chain", "gelu", "swiglu", "dropout")


def shrink(prob):
    """--tiny: the problem at a size the interpreter runs in seconds, with
    masked tails (no size a multiple of its block)."""
    p = dict(prob)
    p["params"] = dict(prob.get("params") or {})
    name = p.get("name")
    if name in FLAT:
        p["shape"] = [2500]
    elif name in ("softmax", "layernorm", "rmsnorm"):
        p["shape"] = [5, 1500]
    elif name == "layernorm_tanh_linear_relu":
        p["shape"] = [33, 1000]
    elif name == "cross_entropy":
        p["shape"] = [7, 5000]
    elif name == "rope":
        p["params"].update(batch=2, seq=33, q_heads=5, k_heads=3)
        p["shape"] = [2, 33, 5, int(p["params"].get("D", 64))]
    elif name == "similarity":
        p["shape"] = [33, 130]
    elif name == "matmul":
        p["shape"] = [130, 67, 100]
    elif name in PROBLEMS and name.startswith("attention"):
        shape = prob.get("shape") or [1, 1, 64]
        p["shape"] = [2, 130, shape[-1]]
    return p


# --------------------------------------------------------------------------
# The run: rows, passes, the output file.
# --------------------------------------------------------------------------

COLUMNS = (("torch", "torch_ms"), ("compile", "compile_ms"), ("triton", "triton_ms"))
PASSES = (("torch", "triton"), ("compile",))


class Row(object):
    def __init__(self, name):
        self.name = name
        self.ms = {"torch_ms": None, "compile_ms": None, "triton_ms": None}
        self.notes = []
        self.errs = []  # "peer err" against the reference
        self.measure = ""
        self.tol = None
        self.pending = ["torch", "triton", "compile"]

    def note(self, text):
        if text and text not in self.notes:
            self.notes.append(text)

    def done(self, peer):
        if peer in self.pending:
            self.pending.remove(peer)

    def to_json(self):
        notes = list(self.notes)
        if self.errs:
            notes.append("errors (%s, tol %s): %s" % (self.measure, "%g" % self.tol if self.tol is not None else "?",
                                                       ", ".join(self.errs)))
        if self.pending:
            notes.append("not reached: %s (peers.py stopped first)" % ", ".join(self.pending))
        row = {"name": self.name}
        for _, key in COLUMNS:
            ms = self.ms[key]
            row[key] = round(ms, 6) if isinstance(ms, float) and math.isfinite(ms) else None
        row["notes"] = "; ".join(notes)
        return row

    def state(self):
        return {"name": self.name, "ms": self.ms, "notes": self.notes, "errs": self.errs, "measure": self.measure,
                "tol": self.tol, "pending": self.pending}

    @staticmethod
    def from_state(d):
        r = Row(d["name"])
        r.ms, r.notes, r.errs = d["ms"], d["notes"], d["errs"]
        r.measure, r.tol, r.pending = d["measure"], d["tol"], d["pending"]
        return r


class ArgError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # bad arguments: exit 1, not argparse's 2
        raise ArgError(message)


def write_json(path, doc):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".peers-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=2, allow_nan=False)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def cuda_alive():
    try:
        torch.cuda.synchronize()
        return float(torch.ones(1, device="cuda").add(1).item()) == 2.0
    except Exception:
        return False


def release():
    if torch is not None and torch.cuda.is_available():
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass


def log(text):
    print("[peers] " + text, flush=True)


class Runner(object):
    def __init__(self, args, problems, ctx, header):
        self.args = args
        self.problems = problems
        self.ctx = ctx
        self.header = header
        self.rows = [Row(p["name"]) for p in problems]
        self.dead = False  # the CUDA context is lost: only a fresh process can go on

    def write(self):
        doc = dict(self.header)
        doc["rows"] = [r.to_json() for r in self.rows]
        write_json(self.args.out, doc)

    def all_rows(self, note):
        for r in self.rows:
            r.note(note)
            r.pending = []

    def run(self, start=(0, 0)):
        for pass_no, peers in enumerate(PASSES):
            for i, prob in enumerate(self.problems):
                if (pass_no, i) < start:
                    continue
                self.problem(pass_no, peers, prob, self.rows[i])
                release()
                self.write()
                if self.dead:
                    return (pass_no, i)
        return None

    def problem(self, pass_no, peers, prob, row):
        name = prob["name"]
        build = PROBLEMS.get(name)
        if build is None:
            row.note("no peer for this problem")
            row.pending = []
            return
        if "compile" in peers and self.args.no_compile:
            row.note("torch.compile: skipped (--no-compile)")
            row.done("compile")
            return
        try:
            spec = build(self.ctx, prob)
        except Exception as e:
            row.note("inputs: " + short(e))
            for peer in peers:
                row.done(peer)
            self.dead = self.ctx.cuda and not cuda_alive()
            return
        row.measure, row.tol = spec.measure, spec.tol
        if pass_no == 0:
            for n in spec.notes:
                row.note(n)
        for peer in peers:
            if self.dead:
                row.note("%s: not run, the CUDA context was lost" % peer)
            else:
                self.peer(peer, spec, row)
            row.done(peer)
        del spec

    def peer(self, peer, spec, row):
        key = dict(COLUMNS)[peer]
        if peer == "triton":
            if triton is None:
                row.note("triton: not importable (%s)" % TRITON_ERR)
                return
            if not spec.triton:
                row.note("triton: " + (spec.no_triton or "no Triton peer"))
                return
            runs = spec.triton
        elif peer == "compile":
            try:
                torch._dynamo.reset()
                compiled = torch.compile(spec.eager)
            except Exception as e:
                row.note("compile: " + short(e))
                return
            runs = [("", lambda: compiled(*spec.args))]
        else:
            runs = [("", lambda: spec.eager(*spec.args))]

        done = []  # (ms, label, agrees with the reference)
        for label, fn in runs:
            try:
                ms, out = bench(self.ctx, fn)
            except Exception as e:
                oom = torch.cuda.OutOfMemoryError if hasattr(torch.cuda, "OutOfMemoryError") else ()
                what = "out of GPU memory" if oom and isinstance(e, oom) else short(e)
                row.note("%s%s: %s" % (peer, " " + label if label else "", what))
                release()
                if self.ctx.cuda and not cuda_alive():
                    self.dead = True
                    row.note("%s: the CUDA context was lost; the rest runs in a fresh process" % peer)
                    return
                continue
            agrees = True
            try:
                check = spec.triton_check if peer == "triton" else None
                result = (check or spec.error)(out)
                err, extra = result[0], result[1]
                tol = result[2] if len(result) > 2 else spec.tol
                row.errs.append("%s%s %.2g%s" % (peer, " " + label if label and spec.triton_best else "", err,
                                                 " (tol %g)" % tol if tol != spec.tol else ""))
                agrees = err <= tol
                if not agrees:
                    row.note("%s%s DISAGREES with the reference: error %.3g > tol %g%s"
                             % (peer, " " + label if label else "", err, tol, " (" + extra + ")" if extra else ""))
            except Exception as e:
                row.note("%s check: %s" % (peer, short(e)))
                release()
            del out
            log("%s: %s%s %.4f ms" % (row.name, peer, " " + label if label else "", ms))
            done.append((ms, label, agrees))
            if not spec.triton_best:
                break
        if done:
            # The fastest config whose output agrees (the fastest at all if none does).
            ms, label, _ = min(done, key=lambda d: (not d[2], d[0]))
            row.ms[key] = ms
            if peer == "triton" and label:
                if len(done) > 1:
                    row.note("triton: %s, best of %s" % (label, "; ".join("%s %.4g ms" % (d[1], d[0]) for d in done)))
                else:
                    row.note("triton: " + label)


def parse_args(argv):
    ap = Parser(description="Times the GPU kit's problems in PyTorch eager, torch.compile and Triton.")
    ap.add_argument("--problems", required=True, help="problems.json from the kit")
    ap.add_argument("--out", required=True, help="peers.json to write")
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions, the median reported (>= 10)")
    ap.add_argument("--only", default="", help="comma-separated problem names")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-compile", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reps < 10:
        raise ArgError("--reps must be at least 10")
    return args


def load_problems(path, only):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ArgError("cannot read %s: %s" % (path, e))
    problems = doc.get("problems") if isinstance(doc, dict) else None
    if not isinstance(problems, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                                 for p in problems):
        raise ArgError("%s: expected {\"problems\": [{\"name\": ..., \"shape\": [...], ...}, ...]}" % path)
    if only:
        wanted = [n for n in only.split(",") if n]
        missing = [n for n in wanted if n not in [p["name"] for p in problems]]
        if missing:
            print("peers.py: --only names not in %s: %s" % (path, ", ".join(missing)), file=sys.stderr)
        problems = [p for p in problems if p["name"] in wanted]
    return problems


def main(argv):
    try:
        args = parse_args(argv)
        problems = load_problems(args.problems, args.only)
    except ArgError as e:
        print("peers.py: %s" % e, file=sys.stderr)
        return 1
    if args.tiny:
        problems = [shrink(p) for p in problems]

    header = {"python": platform.python_version(), "torch": None, "triton": None, "device": None}
    resume = json.loads(os.environ.pop("PEERS_RESUME", "null") or "null")
    ctx = Ctx(args.device, args.reps, args.tiny)
    runner = Runner(args, problems, ctx, header)
    if resume:
        runner.rows = [Row.from_state(d) for d in resume["rows"]]

    try:
        if torch is None:
            runner.all_rows("torch not importable (%s): no peers ran" % TORCH_ERR)
            runner.write()
            return 0
        header["torch"] = torch.__version__
        header["triton"] = triton.__version__ if triton is not None else None
        if args.device == "cuda":
            if not torch.cuda.is_available():
                runner.all_rows("no CUDA device (torch.cuda.is_available() is False): no peers ran")
                runner.write()
                return 0
            header["device"] = torch.cuda.get_device_name()
        else:
            header["device"] = "cpu (debug run%s)" % (", Triton interpreter" if os.environ.get("TRITON_INTERPRET") == "1" else "")
        runner.write()
        log("torch %s, triton %s, %s, %d problems, %d reps" % (header["torch"], header["triton"], header["device"],
                                                              len(problems), args.reps))
        try:
            stopped = runner.run(tuple(resume["at"]) if resume else (0, 0))
        except Exception as e:  # a bug here, not in a peer: keep what was done
            for r in runner.rows:
                if r.pending:
                    r.note("not run: peers.py failed (%s)" % short(e))
                    r.pending = []
            runner.write()
            traceback.print_exc()
            return 0
        if stopped is not None:
            restarts = resume["restarts"] + 1 if resume else 1
            if restarts > 3:
                for r in runner.rows:
                    if r.pending:
                        r.note("not run: the CUDA context was lost %d times" % restarts)
                        r.pending = []
                runner.write()
                return 0
            pass_no, i = stopped
            state = {"rows": [r.state() for r in runner.rows], "at": [pass_no, i + 1], "restarts": restarts}
            os.environ["PEERS_RESUME"] = json.dumps(state)
            log("CUDA context lost at %s; going on in a fresh process" % problems[i]["name"])
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + list(argv))
            except OSError as e:
                for r in runner.rows:
                    if r.pending:
                        r.note("not run: the CUDA context was lost and peers.py could not restart (%s)" % short(e))
                        r.pending = []
                runner.write()
                return 0
    except OSError as e:
        print("peers.py: cannot write %s: %s" % (args.out, e), file=sys.stderr)
        return 1
    log("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
