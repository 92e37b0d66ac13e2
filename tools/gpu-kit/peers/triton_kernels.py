# triton_kernels.py -- part of peers.py (step 4 of the GPU kit): the guarded
# imports of torch and triton (a machine without them still gets rows, with
# notes saying why) and the hand-written @triton.jit kernels.


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


    # Scans and sorts along rows: one row a program, BLOCK-wide chunks with a
    # carry, like tk's kit.tk kernels.
    @triton.jit
    def cumsum_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        carry = 0.0
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
            tl.store(out_ptr + row * D + cols, tl.cumsum(x, axis=0) + carry, mask=cols < D)
            carry += tl.sum(x, axis=0)

    @triton.jit
    def _linear(al, bl, ar, br):
        return al * ar, bl * ar + br

    # Mamba's selective scan, h = a * h + b, with tl.associative_scan.
    @triton.jit
    def recurrence_kernel(a_ptr, b_ptr, h_ptr, D, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        carry = 0.0
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            a = tl.load(a_ptr + row * D + cols, mask=cols < D, other=1.0)
            b = tl.load(b_ptr + row * D + cols, mask=cols < D, other=0.0)
            ap, bp = tl.associative_scan((a, b), 0, _linear)
            tl.store(h_ptr + row * D + cols, ap * carry + bp, mask=cols < D)
            at, bt = tl.reduce((a, b), 0, _linear)
            carry = at * carry + bt

    @triton.jit
    def sort_kernel(x_ptr, out_ptr, D, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=float("inf"))
        tl.store(out_ptr + row * D + cols, tl.sort(x), mask=cols < D)

    # vLLM-style per-token fp8 quantisation: one row a program.
    @triton.jit
    def quantize_fp8_kernel(x_ptr, out_ptr, scale_ptr, D, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        top = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            top = tl.maximum(top, tl.abs(tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)))
        s = tl.maximum(tl.max(top, axis=0) / 448.0, 1.0 / (448.0 * 512.0))
        tl.store(scale_ptr + row, s)
        for off in range(0, D, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * D + cols, mask=cols < D, other=0.0)
            tl.store(out_ptr + row * D + cols, tl.math.div_rn(x, s).to(tl.float8e4nv), mask=cols < D)

    # A tiled transpose, B x B tiles (tl.trans: Triton's swizzled shared layout).
    @triton.jit
    def transpose_kernel(x_ptr, y_ptr, M, N, B: tl.constexpr):
        rm = tl.program_id(0) * B + tl.arange(0, B)
        rn = tl.program_id(1) * B + tl.arange(0, B)
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        t = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
        tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(t), mask=tl.trans(mask))
