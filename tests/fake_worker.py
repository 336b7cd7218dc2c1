#!/usr/bin/env python3
"""A stand-in for `engine __worker` on machines without a GPU (tests only; ENGINE_WORKER points
the engine at it). It speaks the worker protocol (engine/cli/serve.c): a hello line, then one reply
line per request. Times are a smooth made-up function of the tile parameters, so rankings and
searches have something to find; chosen points misbehave the ways real kernels do:

  FAKE_FAULT=BM=64,BN=128   a point whose --set overrides include all of these faults: the reply
                            says status fault and broken, and the worker exits (a lost context)
  FAKE_CRASH=...            such a point kills the worker without a reply (abort)
  FAKE_HANG=...             such a point never answers (a kernel that never returns)
  FAKE_STALL=FILE           the first run request (FILE is missing: it is made) stalls before its
                            "started" (a set-up that makes no progress); FAKE_STALL=always: every one
  FAKE_WRONG=...            such a point fails verification
  FAKE_CLASS=tf32           the accuracy class every verification reports (default the request's dtype)
  FAKE_NOGPU=1              the hello reports that there is no GPU
  FAKE_DELAY=0.05           seconds each timed request takes
  FAKE_SLOW=1.5             every kernel (not cuBLAS) takes this many times as long (regressions)
  FAKE_LOG=FILE             append every request line to FILE (tests count them)
  FAKE_PIDS=FILE            append the worker's process id to FILE when it starts (tests signal it)
  FAKE_REPLAY=LOG.jsonl     answer with the stage-1 times a real tune logged for the same
                            configuration (a landscape measured once on a GPU, replayed to study
                            search strategies on the CPU); points the log lacks fail verification
"""
import json
import math
import os
import signal
import sys
import time


def matches(spec, sets):
    if not spec:
        return False
    want = set(spec.split(","))
    return want <= set(sets)


def fake_ms(sets, shape):
    p = dict(s.split("=", 1) for s in sets)
    ms = 1.0
    known = {"BM": (128, 0.25), "BN": (128, 0.2), "BK": (8, 0.15), "WM": (32, 0.1), "WN": (64, 0.1),
             "WNITER": (2, 0.05), "TM": (4, 0.1), "TN": (8, 0.1)}
    for name, value in p.items():
        best, weight = known.get(name, (16, 0.05))
        v = int(value)
        if v > 0 and name != "THREADS":
            ms *= 1 + weight * abs(math.log2(v / best))
    m, n, k = shape
    return ms * 2.0 * m * n * k / 45e12 * 1e3


def load_replay(path):
    table = {}
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("stage") == 1 and r.get("status") == "ok":
            table[tuple(sorted(r["configuration"].items()))] = (r["ms"], r["cublas_ms"])
    return table


def replayed(table, sets):
    want = dict((k, int(v)) for k, v in (s.split("=", 1) for s in sets))
    for cfg, times in table.items():
        d = dict(cfg)
        if all(d.get(k) == v for k, v in want.items()):
            return times
    return None


def main():
    device = 0
    argv = sys.argv[1:]
    if "--device" in argv:
        device = int(argv[argv.index("--device") + 1])
    out = sys.stdout
    if os.environ.get("FAKE_NOGPU"):
        out.write(json.dumps({"op": "hello", "code": 3, "error": "engine: no CUDA driver: fake (tests)"}) + "\n")
        out.flush()
        return 3
    out.write(json.dumps({"op": "hello", "device": device, "name": "Fake GPU %d" % device, "sm": 90, "sms": 132,
                          "clock_khz": 1980000, "l2_bytes": 50 << 20, "smem_optin": 232448,
                          "max_threads_sm": 2048, "driver": 13000, "cublas": 130100, "nvrtc": 13000,
                          "pid": os.getpid(), "dram_bps": 3.0e12, "l2_bps": 9.0e12}) + "\n")
    out.flush()
    if os.environ.get("FAKE_PIDS"):
        with open(os.environ["FAKE_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
    delay = float(os.environ.get("FAKE_DELAY", "0"))
    replay = load_replay(os.environ["FAKE_REPLAY"]) if os.environ.get("FAKE_REPLAY") else None
    log = os.environ.get("FAKE_LOG")
    for line in sys.stdin:
        req = json.loads(line)
        if log:
            with open(log, "a") as f:
                f.write(line)
        if req.get("op") == "exit":
            break
        sets = req.get("sets", [])
        shape = (req.get("M", 1), req.get("N", 1), req.get("K", 1))
        reply = {"id": req.get("id"), "nvrtc": 0}
        stall = os.environ.get("FAKE_STALL")
        if req.get("op") == "run" and stall and (stall == "always" or not os.path.exists(stall)):
            if stall != "always":
                open(stall, "w").close()
            time.sleep(3600)
        if req.get("op") == "run":
            out.write(json.dumps({"op": "started", "id": req.get("id")}) + "\n")
            out.flush()
        if req.get("op") == "cross_check":
            reply.update(status="ok", code=0, lines=["cross-check f32 cuBLAS vs FP64 Kahan CPU: ok (fake)"])
        elif matches(os.environ.get("FAKE_CRASH"), sets):
            os.kill(os.getpid(), signal.SIGABRT)
        elif matches(os.environ.get("FAKE_HANG"), sets):
            time.sleep(3600)
        elif matches(os.environ.get("FAKE_FAULT"), sets):
            reply.update(status="fault", code=3, broken=True,
                         error="engine/lab/session.c:212: cuStreamSynchronize(g->stream) failed: CUDA_ERROR_ILLEGAL_ADDRESS (fake)")
        else:
            reply.update(label="fake", template="fake", dtype=req.get("dtype") or "f32", switches="FULL_M=1",
                         params=" ".join(sets), regs=128, spill_bytes=0, smem_bytes=16384, threads=256,
                         occ_blocks=1, occ_pct=12.5, t_setup=0.0, t_compile=0.0, from_cache=True)
            times = replayed(replay, sets) if replay is not None else None
            if (matches(os.environ.get("FAKE_WRONG"), sets) or (replay is not None and times is None)) and req.get("verify"):
                reply.update(status="FAIL", code=1, checked=100, bad=3, nonfinite=0, max_ratio=12.0,
                             mismatches=[[0, 1, 1.5, 1.0, 0.01]], error="verification failed (fake)")
            else:
                reply.update(status="ok", code=0, checked=100, bad=0, nonfinite=0, max_ratio=0.1, mismatches=[])
                if req.get("verify"):  # as serve.c: the class and errors only where it verified (not a re-timing)
                    reply.update(t_verify=0.001, reference="dgemm" if (req.get("dtype") or "f32") == "f32" else "dd",
                                 err_max_u=3.0, err_mean_u=0.25, ref_err_max_u=7.0, ref_err_mean_u=0.28)
                    reply["class"] = os.environ.get("FAKE_CLASS") or req.get("dtype") or "f32"
                if req.get("time"):
                    time.sleep(delay)
                    ms = fake_ms(sets, shape)
                    cublas = 2.0 * shape[0] * shape[1] * shape[2] / 50e12 * 1e3
                    if times:
                        ms, cublas = times
                    ms *= float(os.environ.get("FAKE_SLOW", "1"))
                    reply.update(ms=ms, ms_min=ms * 0.99, ms_max=ms * 1.01, runs=req.get("runs", 3),
                                 clock_mhz=1980.0, power_w=500.0, t_bench=delay, cublas_ms=cublas,
                                 cublas_ms_min=cublas * 0.99, cublas_ms_max=cublas * 1.01, cublas_clock_mhz=1980.0)
                    # A tf32-class config is also timed beside cuBLAS FAST_TF32 (serve.c): 8x SGEMM's rate.
                    if '"accuracy": "tf32"' in open(req.get("path", "/dev/null")).read():
                        reply.update(cublas_tf32_ms=cublas / 8, cublas_tf32_ms_min=cublas / 8, cublas_tf32_ms_max=cublas / 8,
                                     cublas_tf32_clock_mhz=1755.0, cublas_tf32_power_w=690.0)
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if reply.get("broken"):
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
