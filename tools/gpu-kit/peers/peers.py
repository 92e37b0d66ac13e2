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
# Python 3.9+, stdlib + torch + triton only. A package run as a script (its
# directory goes on sys.path): peers.py (this: the CLI, the two passes, the
# output file), problems.py (each problem's peers), harness.py (Spec, timing,
# the error measure), triton_kernels.py (the guarded imports, the kernels).

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import traceback


def _early_device():
    # TRITON_INTERPRET must be set before triton_kernels.py decorates its kernels.
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == "--device" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--device="):
            return a.split("=", 1)[1]
    return "cuda"


if _early_device() == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree or the kit

from harness import Ctx, bench  # noqa: E402
from problems import PROBLEMS, shrink  # noqa: E402
from triton_kernels import TORCH_ERR, TRITON_ERR, short, torch, triton  # noqa: E402


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
            if spec.no_compile:
                row.note("compile: not run (%s)" % spec.no_compile)
                return
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
