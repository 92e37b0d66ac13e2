# harness.py -- part of peers.py (step 4 of the GPU kit): what a problem
# hands the runner (Spec), where the peers run (Ctx), how they are timed
# (bench: CUDA events, L2 flush, median) and how far they are from float64.

import math
import statistics
import time

from triton_kernels import torch


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
        self.no_compile = ""  # why torch.compile is not run
        self.notes = []  # what the peers compute where it differs from tk
        self._ref = None

    def error(self, out):
        if self.check is not None:
            return self.check(out)
        if self._ref is None:
            self._ref = self.reference()
        return rel_err(out, self._ref), ""

