# problems.py -- part of peers.py (step 4 of the GPU kit): the peers of each
# problem, one function a problem ((ctx, problem) -> Spec), the name -> function
# table and the --tiny sizes.

import math
import struct
import zlib

from harness import Spec
from triton_kernels import F, torch, triton

if triton is not None:
    from triton_kernels import (add_kernel, attention_kernel, complex_activation_kernel, cross_entropy_kernel,
                                cumsum_kernel, dropout_kernel, gelu_kernel, layernorm_kernel, matmul_kernel,
                                quantize_fp8_kernel, recurrence_kernel, rmsnorm_kernel, sincos_chain_kernel,
                                softmax_kernel, sort_kernel, swiglu_kernel, transpose_kernel)


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


def peers_cumsum_rows(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)

    def cumsum_rows(x):
        return torch.cumsum(x, dim=-1)

    block = min(triton.next_power_of_2(d), 1024) if triton else 0

    def launch():
        out = torch.empty_like(x)
        cumsum_kernel[(rows,)](x, out, d, BLOCK=block, num_warps=4)
        return out

    s = Spec(cumsum_rows, (x,))
    s.reference = lambda: torch.cumsum(x.double(), dim=-1)
    s.tol = 1e-3  # D * 2^-24 * max|x| at D = 4096: an f32 prefix sum's worst case
    s.triton = [("BLOCK=%d" % block, launch)]
    return s


def peers_recurrence_rows(ctx, prob):
    rows, d, g, b = rows_of(ctx, prob)
    a = uniform(ctx, g, (rows, d), 0.5, 0.95)

    def recurrence_rows(a, b):
        h = torch.zeros(rows, device=a.device, dtype=a.dtype)
        out = torch.empty_like(b)
        for t in range(a.shape[1]):
            h = a[:, t] * h + b[:, t]
            out[:, t] = h
        return out

    block = min(triton.next_power_of_2(d), 1024) if triton else 0

    def launch():
        out = torch.empty_like(b)
        recurrence_kernel[(rows,)](a, b, out, d, BLOCK=block, num_warps=4)
        return out

    s = Spec(recurrence_rows, (a, b))
    s.reference = lambda: recurrence_rows(a.double(), b.double())
    s.tol = 1e-4
    s.no_compile = "a Python loop over D steps: dynamo would unroll it"
    s.triton = [("BLOCK=%d" % block, launch)]
    s.notes.append("torch: no native op; a loop over the sequence, two kernels a step (Mamba's reference)")
    s.notes.append("triton: tl.associative_scan and tl.reduce of (a, b) pairs, BLOCK-wide chunks with a carry")
    return s


def peers_sort_rows(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)
    if d > 1024:
        raise ValueError("sort_rows sorts rows of at most 1024")

    def sort_rows(x):
        return torch.sort(x, dim=-1).values

    block = triton.next_power_of_2(d) if triton else 0

    def launch():
        out = torch.empty_like(x)
        sort_kernel[(rows,)](x, out, d, BLOCK=block, num_warps=4)
        return out

    s = Spec(sort_rows, (x,))
    s.reference = lambda: torch.sort(x.double(), dim=-1).values
    s.tol = 0.0
    s.triton = [("BLOCK=%d" % block, launch)]
    s.notes.append("triton: tl.sort of one row, +inf padding")
    return s


def peers_quantize_fp8_rows(ctx, prob):
    rows, d, g, x = rows_of(ctx, prob)
    if rows > 1:
        x[1].zero_()  # an all-zero row, as the kit's: the scale's floor
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is None:
        raise ValueError("torch has no float8_e4m3fn")

    def quantize_fp8_rows(x):
        s = (x.abs().amax(dim=-1, keepdim=True) / 448.0).clamp_min(1.0 / (448.0 * 512.0))
        return (x / s).to(fp8), s

    block = min(triton.next_power_of_2(d), 1024) if triton else 0

    def launch():
        out = torch.empty((rows, d), device=x.device, dtype=fp8)
        scale = torch.empty((rows, 1), device=x.device, dtype=torch.float32)
        quantize_fp8_kernel[(rows,)](x, out, scale, d, BLOCK=block, num_warps=4)
        return out, scale

    want = quantize_fp8_rows(x)

    def check(out):
        q, s = out
        wrong = int((q.view(torch.uint8) != want[0].view(torch.uint8)).sum()) + int((s != want[1]).sum())
        return float(wrong), "codes and scales that differ from torch eager's"

    s = Spec(quantize_fp8_rows, (x,))
    s.check = check
    s.tol = 0.0
    s.measure = "codes and scales that differ from torch eager's (f32 steps, torch's float8_e4m3fn rounding)"
    s.triton = [("BLOCK=%d" % block, launch)]
    s.notes.append("triton: div_rn(x, s).to(tl.float8e4nv) (IEEE division, as tk and torch), one row a program")
    return s


def peers_transpose(ctx, prob):
    m, n = dims(prob, 2, "[M, N]")
    g = generator(ctx, prob)
    x = uniform(ctx, g, (m, n), -4, 4, torch.float16)

    def transpose(x):
        return x.t().contiguous()

    def launch():
        y = torch.empty((n, m), device=x.device, dtype=torch.float16)
        transpose_kernel[(triton.cdiv(m, 64), triton.cdiv(n, 64))](x, y, m, n, B=64, num_warps=4)
        return y

    s = Spec(transpose, (x,))
    s.reference = lambda: x.t().double()
    s.tol = 0.0
    s.triton = [("B=64", launch)]
    s.notes.append("torch: x.t().contiguous(); triton: 64x64 tiles, tl.trans, 4 warps")
    return s


def peers_matmul_fp8(ctx, prob):
    m, n, k = dims(prob, 3, "[M, N, K]")
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is None:
        raise ValueError("torch has no float8_e4m3fn")
    g = generator(ctx, prob)
    a = uniform(ctx, g, (m, k), -4, 4).to(fp8)
    b = uniform(ctx, g, (k, n), -4, 4).to(fp8)
    sa, sb = uniform(ctx, g, (m, 1), 0.5, 2), uniform(ctx, g, (1, n), 0.5, 2)
    b_col = b.t().contiguous().t()  # _scaled_mm wants B column-major

    def matmul_fp8(a, b_col, sa, sb):
        return torch._scaled_mm(a, b_col, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

    s = Spec(matmul_fp8, (a, b_col, sa, sb))
    s.reference = lambda: (a.double() @ b.double()) * sa.double() * sb.double()
    s.tol = 1e-2
    s.measure = "max|err|/max(1,|ref|) vs float64 (torch's output is bf16)"
    s.no_triton = "no Triton peer written"
    s.notes.append("torch: torch._scaled_mm, row-wise scales, bf16 output (tk writes f32), fp8 tensor cores")
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
    "cumsum_rows": peers_cumsum_rows,
    "recurrence_rows": peers_recurrence_rows,
    "sort_rows": peers_sort_rows,
    "quantize_fp8_rows": peers_quantize_fp8_rows,
    "transpose": peers_transpose,
    "matmul_fp8": peers_matmul_fp8,
    "matmul_fp8_bt": peers_matmul_fp8,
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
    elif name in ("cumsum_rows", "recurrence_rows"):
        p["shape"] = [5, 1500]
    elif name == "sort_rows":
        p["shape"] = [5, 1000]
    elif name == "quantize_fp8_rows":
        p["shape"] = [5, 1500]
    elif name == "transpose":
        p["shape"] = [130, 67]
    elif name in ("matmul_fp8", "matmul_fp8_bt"):
        p["shape"] = [130, 67, 100]
    elif name == "matmul":
        p["shape"] = [130, 67, 100]
    elif name in PROBLEMS and name.startswith("attention"):
        shape = prob.get("shape") or [1, 1, 64]
        p["shape"] = [2, 130, shape[-1]]
    return p
