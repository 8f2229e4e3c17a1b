#!/usr/bin/env python3
"""The anchors of `make bench`: transformers' own Qwen3VLVisionModel blocks on PyTorch CPU in
float32 with sdpa attention (the strongest anchor: torch's own BLAS, MKL on x86 wheels), or,
where transformers is not importable, a hand-written PyTorch tower (labelled as the fallback);
and OpenBLAS sgemm (through numpy) at the block's GEMM shapes, side by side with our engine.

    bench_torch.py CHECKPOINT --ours OURS.json [--threads N] [--blocks B]
    bench_torch.py --pairs CHECKPOINT --bin INSPECTOR [--patches P,..] [--threads T,..] [--rounds R]
    bench_torch.py --summary OURS.json...

OURS.json is `inspector bench --json` of the same checkpoint, patch counts and threads. Prints,
per patch count: our median block time, PyTorch's, and the ratio; then per GEMM shape ours
(OURS.json from `inspector bench --gemm`) beside OpenBLAS's, and which OpenBLAS kernel ran. Exits 0 with a message when torch or numpy
is missing (the anchors are optional; our numbers were printed already). --pairs runs ours and the
anchor in interleaved pairs and prints each cell's median ratio with its range (see paired());
--summary prints bench.sh's passes side by side.

The transformers anchor builds Qwen3VLVisionModel from the checkpoint's vision_config (depth cut
to the blocks timed, no deepstack), loads each block's weights from the checkpoint, runs the
model's own forward on a random page and times each block by hooks around it (the embedding and
the merger are not timed, as ours are not in a block's time). The fallback block is transformers' Qwen3-VL vision block written out in eager float32: LayerNorm, qkv Linear, rope
(rotate-half on 2D positions), per-head softmax(q k^T * scale) v, proj, residual, LayerNorm,
fc1, gelu_pytorch_tanh, fc2, residual. Weights come from the checkpoint's safetensors (bf16 and
f16 widened to float32 once, before timing), so both sides multiply the same numbers.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import struct
import subprocess
import sys
import time


def fail_soft(msg):
    print(f"bench anchors skipped: {msg}")
    sys.exit(0)


# BLAS threads are read when numpy loads OpenBLAS: take --threads before the import.
for i, a in enumerate(sys.argv):
    if a == "--threads" and i + 1 < len(sys.argv) and sys.argv[i + 1].isdigit() and sys.argv[i + 1] != "0":
        os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[i + 1]
try:
    import numpy as np
except ImportError:
    fail_soft("numpy is not installed (apt-get install python3-numpy)")
try:
    import torch
except ImportError:
    torch = None


def read_tensors(ckpt, names):
    """Reads the named tensors from the checkpoint's safetensors shards as float32 numpy."""
    index = os.path.join(ckpt, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            where = json.load(f)["weight_map"]
    else:
        where = {n: "model.safetensors" for n in names}
    out, headers = {}, {}
    for n in names:
        shard = os.path.join(ckpt, where[n])
        if shard not in headers:
            with open(shard, "rb") as f:
                size = struct.unpack("<Q", f.read(8))[0]
                headers[shard] = (json.loads(f.read(size)), 8 + size)
        hdr, base = headers[shard]
        info = hdr[n]
        b, e = info["data_offsets"]
        with open(shard, "rb") as f:
            f.seek(base + b)
            raw = f.read(e - b)
        dt = info["dtype"]
        if dt == "F32":
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dt == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise SystemExit(f"{shard}: tensor {n} has dtype {dt}, want F32, BF16 or F16")
        out[n] = a.reshape(info["shape"])
    return out


def blas_libs():
    """The shared libraries with "blas" in their name this process has loaded (numpy's BLAS
    among them)."""
    try:
        with open("/proc/self/maps") as f:
            return sorted({l.split()[-1] for l in f if "blas" in l.lower() and ".so" in l})
    except OSError:
        return []


def openblas_info():
    """(corename, config) of the OpenBLAS numpy's BLAS runs, or (None, what is known)."""
    libs = blas_libs()
    for lib in libs:
        try:
            h = ctypes.CDLL(lib)
            h.openblas_get_corename.restype = ctypes.c_char_p
            h.openblas_get_config.restype = ctypes.c_char_p
            return h.openblas_get_corename().decode(), h.openblas_get_config().decode()
        except (OSError, AttributeError):
            continue
    return None, "not OpenBLAS or unknown (" + ", ".join(os.path.basename(l) for l in libs) + ")"


def set_openblas_threads(n):
    """Sets the threads of the OpenBLAS numpy runs (openblas_set_num_threads); False where
    numpy's BLAS is not OpenBLAS. The pairs need it: their thread counts are a list, read after
    numpy loaded its BLAS."""
    for lib in blas_libs():
        try:
            ctypes.CDLL(lib).openblas_set_num_threads(ctypes.c_int(n))
            return True
        except (OSError, AttributeError):
            continue
    return False


def openblas_core():
    """The OpenBLAS kernel numpy's BLAS runs, for the label (and why, where it was forced)."""
    core, config = openblas_info()
    if core is None:
        return config
    label = f"{core} ({config})"
    detected = os.environ.get("BENCH_OPENBLAS_DETECTED")
    if detected:
        label += f"; set by bench_torch.py: OpenBLAS's own detection chose {detected}, a pre-AVX fallback, on this CPU"
    return label


# Kernels OpenBLAS falls back to when it does not know a CPU (DYNAMIC_ARCH), none with AVX.
PRE_AVX_CORES = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai",
                 "Coppermine", "Northwood", "Banias", "Opteron", "Barcelona", "Bobcat"}


def strongest_openblas_anchor():
    """Runs this script again with OPENBLAS_CORETYPE set where OpenBLAS's own detection fell
    back to a pre-AVX kernel on a CPU with AVX2 or AVX-512, so that the anchor is the
    strongest kernel the CPU runs. Debian 12's OpenBLAS 0.3.21 picks Prescott on Intel's
    Sapphire/Emerald Rapids: 40-65 GFLOP/s on 2 threads, where its SkylakeX kernel gives
    230-320. OpenBLAS reads the variable when it loads, hence the re-run. A variable the user
    set is left as it is."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    core, _ = openblas_info()
    if core not in PRE_AVX_CORES:
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next((l.split(":", 1)[1] for l in f if l.startswith("flags")), "").split())
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        best = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        best = "Haswell"
    else:
        return
    env = dict(os.environ, OPENBLAS_CORETYPE=best, BENCH_OPENBLAS_DETECTED=core)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def fastest_rate(call, flops, reps=5):
    """GFLOP/s of the fastest of reps calls after a warm-up, as `inspector bench --gemm` times
    ours: on a shared machine interference only ever slows a call down."""
    call()  # warm
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return flops / min(times) / 1e9


def sgemm_rate(m, k, n):
    """OpenBLAS sgemm (numpy) at [m, k] x [k, n]."""
    a = np.random.default_rng(1).standard_normal((m, k), dtype=np.float32)
    b = np.random.default_rng(2).standard_normal((k, n), dtype=np.float32)
    return fastest_rate(lambda: a @ b, 2 * m * k * n)


def torch_linear_rate(m, k, n, threads):
    """torch's F.linear (x [m, k] times W [n, k] transposed: our weight layout) in float32:
    torch's own BLAS (MKL on x86 wheels), the GEMM transformers runs."""
    torch.set_num_threads(threads)
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(1))
    w = torch.randn(n, k, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        return fastest_rate(lambda: torch.nn.functional.linear(x, w), 2 * m * k * n)


def rope_tables(h, w, hd, merge, theta=10000.0):
    """cos/sin [S, hd] in the merge-group order of the tower, rotate-half layout."""
    half = hd // 2
    inv = 1.0 / theta ** (torch.arange(0, half, 2, dtype=torch.float32) / half)
    hpos, wpos = [], []
    for gy in range(h // merge):
        for gx in range(w // merge):
            for dy in range(merge):
                for dx in range(merge):
                    hpos.append(gy * merge + dy)
                    wpos.append(gx * merge + dx)
    hp, wp = torch.tensor(hpos, dtype=torch.float32), torch.tensor(wpos, dtype=torch.float32)
    f = torch.cat([hp[:, None] * inv[None], wp[:, None] * inv[None]], dim=1)  # [S, hd/2]
    emb = torch.cat([f, f], dim=1)
    return emb.cos(), emb.sin()


def rot(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., h:], x[..., :h]], dim=-1) * sin


def torch_tower_anchor(ckpt, cfg, blocks, why):
    """(run, label) of the hand-written PyTorch tower (the fallback, used because of why): the
    blocks' weights read once; run(patches, threads) times blocks 0..blocks-1 on a random page
    and returns the median block seconds."""
    D, H = cfg["hidden_size"], cfg["num_heads"]
    hd, merge = D // H, cfg.get("spatial_merge_size", 2)
    weights = []
    for b in range(blocks):
        p = f"model.visual.blocks.{b}."
        names = [p + s for s in ["norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight",
                                 "attn.proj.bias", "norm2.weight", "norm2.bias", "mlp.linear_fc1.weight",
                                 "mlp.linear_fc1.bias", "mlp.linear_fc2.weight", "mlp.linear_fc2.bias"]]
        weights.append({k[len(p):]: torch.from_numpy(np.ascontiguousarray(v)) for k, v in read_tensors(ckpt, names).items()})

    def run(patches, threads):
        torch.set_num_threads(threads)
        h, w = page_grid(patches, merge)
        cos, sin = rope_tables(h, w, hd, merge)
        cos, sin = cos[:, None, :], sin[:, None, :]
        x = torch.randn(patches, D, generator=torch.Generator().manual_seed(1))
        times = []
        for t in weights:
            with torch.no_grad():
                start = time.perf_counter()
                y = torch.nn.functional.layer_norm(x, (D,), t["norm1.weight"], t["norm1.bias"], 1e-6)
                qkv = torch.nn.functional.linear(y, t["attn.qkv.weight"], t["attn.qkv.bias"]).view(patches, 3, H, hd)
                q, k, v = rot(qkv[:, 0], cos, sin), rot(qkv[:, 1], cos, sin), qkv[:, 2]
                q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [H, S, hd]
                a = torch.softmax(torch.matmul(q, k.transpose(1, 2)) * hd ** -0.5, dim=-1)
                o = torch.matmul(a, v).transpose(0, 1).reshape(patches, D)
                x = x + torch.nn.functional.linear(o, t["attn.proj.weight"], t["attn.proj.bias"])
                y = torch.nn.functional.layer_norm(x, (D,), t["norm2.weight"], t["norm2.bias"], 1e-6)
                y = torch.nn.functional.gelu(torch.nn.functional.linear(y, t["mlp.linear_fc1.weight"], t["mlp.linear_fc1.bias"]),
                                             approximate="tanh")
                x = x + torch.nn.functional.linear(y, t["mlp.linear_fc2.weight"], t["mlp.linear_fc2.bias"])
                times.append(time.perf_counter() - start)
        return statistics.median(times)

    return run, (f"the hand-written PyTorch tower (FALLBACK, a weaker anchor: {why}), PyTorch {torch.__version__} CPU "
                 f"({torch_blas()}), float32")


def page_grid(patches, merge):
    """The page of patches patches (h x w patches, whole merge groups, as near square as the
    count allows): the grid both anchors and `inspector bench` use."""
    groups = patches // (merge * merge)
    gh = int(math.isqrt(groups))
    while groups % gh:
        gh -= 1
    return gh * merge, groups // gh * merge


def transformers_anchor(ckpt, cfg, blocks):
    """(run, label) of transformers' Qwen3VLVisionModel, depth cut to the blocks timed, or (None,
    why). run(patches, threads) runs the model's own forward (its rope, its cu_seqlens, its
    attention dispatch) on a random page; hooks around each block take the block's time; it
    returns the median block seconds. The model is built and loaded once: it holds no state that
    depends on the page."""
    try:
        import transformers
        from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLVisionConfig
        from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionModel
    except Exception as e:  # not installed, or too old for Qwen3-VL
        return None, f"transformers not importable ({type(e).__name__}: {e})"
    conf = Qwen3VLVisionConfig(**dict(cfg, depth=blocks, deepstack_visual_indexes=[]))
    try:
        model = Qwen3VLVisionModel._from_config(conf, attn_implementation="sdpa", dtype=torch.float32)
    except TypeError:
        conf._attn_implementation = "sdpa"
        model = Qwen3VLVisionModel(conf).float()
    model.eval()
    for b, blk in enumerate(model.blocks):
        p = f"model.visual.blocks.{b}."
        names = [p + k for k in blk.state_dict()]
        state = {k[len(p):]: torch.from_numpy(np.ascontiguousarray(v)) for k, v in read_tensors(ckpt, names).items()}
        blk.load_state_dict(state, strict=True)
    began, times = {}, []
    for b, blk in enumerate(model.blocks):
        blk.register_forward_pre_hook(lambda m, a, b=b: began.__setitem__(b, time.perf_counter()))
        blk.register_forward_hook(lambda m, a, o, b=b: times.append(time.perf_counter() - began[b]))
    px = cfg.get("in_channels", 3) * cfg.get("temporal_patch_size", 2) * cfg["patch_size"] ** 2

    def run(patches, threads):
        torch.set_num_threads(threads)
        h, w = page_grid(patches, cfg.get("spatial_merge_size", 2))
        pixels = torch.randn(patches, px, generator=torch.Generator().manual_seed(1))
        times.clear()
        with torch.no_grad():
            model(pixels, grid_thw=torch.tensor([[1, h, w]]))
        return statistics.median(times)

    attn = getattr(model.config, "_attn_implementation", "?")
    return run, (f"transformers {transformers.__version__} Qwen3VLVisionModel blocks, "
                 f"PyTorch {torch.__version__} CPU ({torch_blas()}), float32, attention {attn}")


def strongest_anchor(ckpt, cfg, blocks):
    """(run, label): transformers' vision model where it imports, else the fallback tower (its
    label says why)."""
    run, label = transformers_anchor(ckpt, cfg, blocks)
    if run is None:
        return torch_tower_anchor(ckpt, cfg, blocks, label)
    return run, label


def torch_blas():
    """The BLAS torch was built with ("BLAS mkl", "BLAS open"), from its build configuration."""
    cfg = torch.__config__.show()
    i = cfg.find("BLAS_INFO=")
    if i < 0:
        return "BLAS unknown"
    return "BLAS " + cfg[i + len("BLAS_INFO="):].split(",")[0].strip()


def summary(paths):
    """The run's cells side by side from each thread count's JSON (bench.sh keeps them): ours over
    the anchor per thread count and patch count, each pass in run order, and the speed-up from
    the fewest threads to the most, ours and the anchor's, per pass pair (first with first)."""
    runs = []
    for p in paths:
        with open(p) as f:
            o = json.load(f)
        rows = [r for r in o["results"] if r["residency"] == "mapped" and r["tile"] == o["results"][0]["tile"]]
        runs.append((o.get("threads"), {r["patches"]: r for r in rows}))
    if not runs:
        return
    patches = sorted({p for _, rs in runs for p in rs})
    counts = sorted({t for t, _ in runs})
    print("Summary of the run (each thread count's passes in run order)")
    print(f"{'threads':>8} " + " ".join(f"{f'ours/anchor {p}':>20}" for p in patches))
    for t in counts:
        cells = []
        for p in patches:
            v = [rs[p]["block_s"] / rs[p]["anchor_s"] for tt, rs in runs if tt == t and p in rs and rs[p].get("anchor_s")]
            cells.append(f"{', '.join(f'{x:.2f}' for x in v) or '-':>20}")
        print(f"{t:>8} " + " ".join(cells))
    if len(counts) > 1:
        lo, hi = counts[0], counts[-1]
        print(f"speed-up {lo} -> {hi} threads, per pass (block time at {lo} over block time at {hi}):")
        for p in patches:
            a = [rs[p] for tt, rs in runs if tt == lo and p in rs]
            b = [rs[p] for tt, rs in runs if tt == hi and p in rs]
            ours = [f"{x['block_s'] / y['block_s']:.2f}" for x, y in zip(a, b)]
            anch = [f"{x['anchor_s'] / y['anchor_s']:.2f}" for x, y in zip(a, b) if x.get("anchor_s") and y.get("anchor_s")]
            print(f"  {p} patches: ours {', '.join(ours)}; anchor {', '.join(anch) or '-'}")


def ours_one(binary, ckpt, patches, threads, *extra):
    """`inspector bench --one` at patches and threads in a process of its own (mapped
    residency, the default tile), as `inspector bench` runs each configuration: its JSON."""
    cmd = [binary, "bench", "--one", "--checkpoint", ckpt, "--patches", str(patches), "--threads", str(threads),
           *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def ours_gemms(binary, ckpt, patches, threads):
    """Our block-0 GEMMs at rows = patches: {(rows, in, out): (GFLOP/s, GFLOP/s with the weight
    widened to float32 first or None)}, from `inspector bench --one --gemm` (fastest of 5 calls
    each)."""
    res = ours_one(binary, ckpt, patches, threads, "--gemm", "--blocks", "1")
    return {(g["rows"], g["in"], g["out"]): (g["gflops"], g.get("gflops_f32_weights")) for g in res.get("gemms") or []}


def ceiling_speedups(binary, lo, hi):
    """`inspector ceiling` at lo and hi threads, now: {unit: hi threads' rate over lo threads'
    (all threads, GFLOP/s)}, what code running at the machine's own ceiling would gain from lo to
    hi threads; {} when the inspector has no ceiling command or no kernel to time."""
    p = subprocess.run([binary, "ceiling", "--threads", f"{lo},{hi}", "--seconds", "0.3", "--json"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {}
    rate = {(u["unit"], u["threads"]): u["gflops_per_thread"] * u["threads"] for u in json.loads(p.stdout)}
    return {unit: rate[(unit, hi)] / rate[(unit, lo)] for unit, t in rate if t == lo and (unit, hi) in rate}


def block_gemms(cfg, rows):
    """The block's four GEMM shapes (rows, in, out): qkv, proj, fc1, fc2."""
    D, I = cfg["hidden_size"], cfg["intermediate_size"]
    return [(rows, D, 3 * D), (rows, D, D), (rows, D, I), (rows, I, D)]


def in_turn(r, ours, other):
    """(ours(), other()), ours run first in even rounds and second in odd ones, 0.2 s between
    them (the first side's worker threads spin down)."""
    if r % 2 == 0:
        a = ours()
        time.sleep(0.2)
        return a, other()
    b = other()
    time.sleep(0.2)
    return ours(), b


def spread(v, digits=2):
    """median (min-max) of v, the form every paired figure is printed in."""
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def paired(argv):
    """bench_torch.py --pairs CHECKPOINT --bin INSPECTOR --patches 1024,5120 --threads 2,8,16
    [--rounds R] [--blocks B] [--gemm]

    Ours and the anchor in pairs, seconds apart: every round runs every (threads, patches) cell
    once, each cell ours then the anchor (the order reversed every other round), so a machine
    that slows down part way through a run slows both sides of a pair, and every cell's pairs are
    spread over the whole run. A cell's figure is the median of its pairs' ratios, with their
    range; the speed-up from the fewest threads to the most is each round's own (its two block
    times minutes apart at most), median and range. The anchor is built once and warmed once per
    patch count (first touch of its weights, its allocator) before the first round; ours runs in
    a fresh process every time, as `inspector bench` runs it (its first-touch costs inside).
    With --gemm, each round also pairs our four GEMMs of block 0 (fastest of 5 calls each, and
    again with the weight widened to float32 first) with torch's F.linear at the same shapes,
    at the fewest threads and every patch count: the GEMM targets' ratios on the same footing.
    With more than one thread count, each round also times the machine's own ceiling (`inspector
    ceiling` at the fewest and the most threads): the speed-up code at that ceiling would get,
    beside ours and the anchor's."""
    ap = argparse.ArgumentParser(prog="bench_torch.py --pairs")
    ap.add_argument("checkpoint")
    ap.add_argument("--bin", required=True, help="the inspector to run")
    ap.add_argument("--patches", default="1024,5120")
    ap.add_argument("--threads", default=str(os.cpu_count()))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--gemm", action="store_true", help="also pair our GEMMs with torch's F.linear and OpenBLAS's sgemm")
    args = ap.parse_args(argv)
    if torch is None:
        print("paired anchor skipped: torch is not installed (apt-get install python3-torch)")
        return
    patches = [int(p) for p in args.patches.split(",")]
    threads = list(dict.fromkeys(int(t) for t in args.threads.split(",")))  # each count once, in order
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        cfg = json.load(f)["vision_config"]
    anchor, label = strongest_anchor(args.checkpoint, cfg, args.blocks)
    print(f"Ours and the anchor in pairs ({args.rounds} rounds, every cell once a round, the order reversed "
          f"every other round), per-block wall, median of blocks 0-{args.blocks - 1}; anchor: {label}")
    for p in patches:
        anchor(p, max(threads))
    pairs = {(t, p): [] for t in threads for p in patches}
    gemm_pairs = {shape: [] for p in patches for shape in block_gemms(cfg, p)}
    ceilings = []  # per round: {unit: the machine's own speed-up from the fewest threads to the most}
    openblas = args.gemm and set_openblas_threads(min(threads))  # numpy's sgemm beside ours, on our threads
    for r in range(args.rounds):
        if args.gemm:
            pair_gemms(args, cfg, min(threads), patches, gemm_pairs, r, openblas)
        if len(threads) > 1:
            ceilings.append(ceiling_speedups(args.bin, min(threads), max(threads)))
            if ceilings[-1]:
                print(f"  round {r + 1}, the machine's ceiling {min(threads)} -> {max(threads)} threads: "
                      + ", ".join(f"{u} {x:.2f}" for u, x in ceilings[-1].items()), flush=True)
        for t in threads:
            for p in patches:
                o, a = in_turn(r, lambda: ours_one(args.bin, args.checkpoint, p, t, "--blocks", str(args.blocks))["block_s"],
                               lambda: anchor(p, t))
                pairs[(t, p)].append((o, a))
                print(f"  round {r + 1}, {t} threads, {p} patches: ours {o:.3f} s, anchor {a:.3f} s, {o / a:.2f}",
                      flush=True)
    print(f"{'threads':>8} {'patches':>8} {'ours s':>19} {'anchor s':>19} {'ours/anchor':>17}")
    for (t, p), v in pairs.items():
        print(f"{t:>8} {p:>8} {spread([o for o, _ in v], 3):>19} {spread([a for _, a in v], 3):>19} "
              f"{spread([o / a for o, a in v]):>17}")
    if args.gemm:
        with_openblas = all(b for v in gemm_pairs.values() for _, _, _, b in v)
        print(f"GEMMs at {min(threads)} threads in pairs, against torch's F.linear ({torch_blas()}), float32"
              + (f", and OpenBLAS sgemm via numpy (kernel {openblas_core()})" if with_openblas else ""))
        print(f"{'rows x in x out':>22} {'ours GFLOP/s':>16} {'torch GFLOP/s':>16} {'ours/torch':>17} {'ours/f32-w':>17}"
              + (f" {'ours/OpenBLAS':>17}" if with_openblas else ""))
        for (m, k, n), v in gemm_pairs.items():
            line = (f"{f'{m}x{k}x{n}':>22} {spread([o for o, *_ in v], 0):>16} {spread([a for _, a, *_ in v], 0):>16} "
                    f"{spread([o / a for o, a, *_ in v]):>17}")
            line += f" {spread([o / f for o, _, f, _ in v]):>17}" if all(f for _, _, f, _ in v) else f" {'-':>17}"
            if with_openblas:
                line += f" {spread([o / b for o, _, _, b in v]):>17}"
            print(line)
    if len(threads) > 1:
        lo, hi = min(threads), max(threads)
        print(f"speed-up {lo} -> {hi} threads, each round's own (block time at {lo} over block time at {hi}):")
        for p in patches:
            ours = [x[0] / y[0] for x, y in zip(pairs[(lo, p)], pairs[(hi, p)])]
            anch = [x[1] / y[1] for x, y in zip(pairs[(lo, p)], pairs[(hi, p)])]
            print(f"  {p} patches: ours {spread(ours)}; anchor {spread(anch)}")
        units = [u for u in ceilings[0] if all(u in c for c in ceilings)] if all(ceilings) else []
        if units:
            print(f"  the machine's own ceiling (inspector ceiling: each unit's kernel on every thread at once, data "
                  f"in cache), each round's: " + "; ".join(f"{u} {spread([c[u] for c in ceilings])}" for u in units))


def pair_gemms(args, cfg, threads, patches, gemm_pairs, r, openblas):
    """One round of --gemm: per patch count, our four GEMMs against torch's F.linear and, with
    openblas (numpy's BLAS is OpenBLAS, set to threads), its sgemm at their shapes, our side
    first in odd rounds second in even ones, into gemm_pairs[(rows, in, out)] as (ours, torch,
    ours with float32 weights or None, OpenBLAS or None)."""
    for p in patches:
        shapes = block_gemms(cfg, p)
        ours, (tl, sg) = in_turn(r, lambda: ours_gemms(args.bin, args.checkpoint, p, threads),
                                 lambda: ({key: torch_linear_rate(*key, threads) for key in shapes},
                                          {key: sgemm_rate(*key) if openblas else None for key in shapes}))
        for key in shapes:
            if key not in ours:
                raise SystemExit(f"inspector bench --gemm gave no {key[0]}x{key[1]}x{key[2]} GEMM")
            gemm_pairs[key].append((ours[key][0], tl[key], ours[key][1], sg[key]))
        line = (f"  round {r + 1}, GEMMs at {threads} threads, {p} rows: ours/torch "
                + ", ".join(f"{ours[key][0] / tl[key]:.2f}" for key in shapes))
        if openblas:
            line += "; ours/OpenBLAS " + ", ".join(f"{ours[key][0] / sg[key]:.2f}" for key in shapes)
        print(line, flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--pairs":
        strongest_openblas_anchor()
        paired(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--summary":
        summary(sys.argv[2:])
        return
    strongest_openblas_anchor()
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--ours", required=True, help="inspector bench --json output")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--blocks", type=int, default=4)
    args = ap.parse_args()
    with open(args.ours) as f:
        ours = json.load(f)
    threads = args.threads or ours.get("threads") or os.cpu_count()
    with open(os.path.join(args.checkpoint, "config.json")) as f:
        cfg = json.load(f)["vision_config"]
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ and not (var == "OPENBLAS_CORETYPE" and "BENCH_OPENBLAS_DETECTED" in os.environ):
            print(f"note: {var}={os.environ[var]} is set; the OpenBLAS anchor is then not OpenBLAS's own choice")
    rows = [r for r in ours["results"] if r["tile"] == ours["results"][0]["tile"] and r["residency"] == "mapped"] or ours["results"]
    if torch is None:
        print("PyTorch anchor skipped: torch is not installed (apt-get install python3-torch)")
    else:
        run, label = strongest_anchor(args.checkpoint, cfg, args.blocks)
        for r in rows:
            anchor = run(r["patches"], threads)
            if r is rows[0]:
                print(f"Tower per block (median of blocks 0-{args.blocks - 1}), {threads} threads; anchor: {label}")
                print(f"{'patches':>8} {'ours s':>9} {'ours host ms':>13} {'host %':>7} {'block/halves':>13} {'anchor s':>9} {'ours/anchor':>12}")
            host = r.get("host_s")
            hostpct = f"{100 * host / r['block_s']:>7.1f}" if host is not None and r["block_s"] > 0 else f"{'-':>7}"
            host = f"{host * 1e3:>13.1f}" if host is not None else f"{'-':>13}"
            over = r.get("block_over_halves")
            over = f"{over:>13.2f}" if over else f"{'-':>13}"
            print(f"{r['patches']:>8} {r['block_s']:>9.3f} {host} {hostpct} {over} {anchor:>9.3f} {r['block_s'] / anchor:>12.2f}")
            r["anchor_s"] = anchor
    with open(args.ours, "w") as f:  # the anchors beside ours, for scripts/bench.sh's summary
        json.dump(ours, f)
    torch_blas_name = torch_blas() if torch is not None else ""
    print(f"\nGEMM at the block's shapes, rows = patches; our weights as the checkpoint holds them; "
          f"OpenBLAS via numpy {np.__version__} (kernel {openblas_core()})"
          + (f"; torch F.linear ({torch_blas_name})" if torch is not None else ""))
    f32w = any(g.get("gflops_f32_weights") for r in rows for g in r.get("gemms") or [])
    print(f"{'rows x in x out':>22} {'ours GFLOP/s':>13} {'OpenBLAS GFLOP/s':>17} {'ours/OpenBLAS':>14}"
          + (f" {'torch GFLOP/s':>14} {'ours/torch':>11}" if torch is not None else "")
          + (f" {'ours f32-w GFLOP/s':>19} {'ours/f32-w':>11}" if f32w else ""))
    for r in rows:
        S = r["patches"]
        ours_g = {(g["rows"], g["in"], g["out"]): g["gflops"] for g in r.get("gemms") or []}
        ours_f32w = {(g["rows"], g["in"], g["out"]): g.get("gflops_f32_weights") for g in r.get("gemms") or []}
        for (m, k, n) in block_gemms(cfg, S):
            blas = sgemm_rate(m, k, n)
            mine = ours_g.get((m, k, n))
            line = f"{f'{m}x{k}x{n}':>22} " + (f"{'-':>13} {blas:>17.0f} {'-':>14}" if mine is None else f"{mine:>13.0f} {blas:>17.0f} {mine / blas:>14.2f}")
            if torch is not None:
                tl = torch_linear_rate(m, k, n, threads)
                line += f" {tl:>14.0f} " + (f"{'-':>11}" if mine is None else f"{mine / tl:>11.2f}")
            if f32w:
                fw = ours_f32w.get((m, k, n))
                line += f" {'-':>19} {'-':>11}" if not fw or mine is None else f" {fw:>19.0f} {mine / fw:>11.2f}"
            print(line)
        gem = [g["gflops"] for g in r.get("gemms") or []]
        line = (f"{'':>22} in the tower: attention half {r['attention_gflops']:.0f}, MLP half {r['mlp_gflops']:.0f} GFLOP/s; "
                f"the attention op {r.get('attention_op_gflops', 0):.0f} GFLOP/s")
        if gem and r.get("attention_op_gflops"):
            line += f" = {r['attention_op_gflops'] / statistics.median(gem):.2f}x our median GEMM"
        print(line)

if __name__ == "__main__":
    main()
