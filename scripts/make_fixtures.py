#!/usr/bin/env python3
"""Regenerate the reference tensors the Go tests compare against, with transformers.

Runs wherever torch and transformers (5.x) are installed; CPU is enough. Two kinds:

  tower  OUT.safetensors [--family qwen3_vl|qwen2_vl|qwen2_5_vl]
      A random tiny vision tower (float32) of the family with its weights, an input X
      (pixel_values rows), grids G and every block output, the merger and the deepstack
      outputs -- the same layout as shared/spec/fixtures/qwen3vl_vision_tiny_f32. The
      metadata holds the vision config ("cfg") and the family ("model_type"). For the
      families other than qwen3_vl it also holds, per block i and query N of QUERIES,
      q{N}.blk{i}.attn_row [H, S]: the attention row over the segment the block used
      (transformers' own cu_seqlens), and for qwen2_5_vl the window order
      (window_index, per merge unit) and cu_window_seqlens. Block outputs are in the order
      the blocks see the rows (qwen2_5_vl: window order); the merger in the processor's.

  e2e CHECKPOINT_DIR IMAGE OUT.safetensors [--queries 0,10,...]
      An image file -> transformers' load_image (EXIF orientation) -> the PIL image
      processor read from the checkpoint's preprocessor_config.json -> the tower in
      float32 with the checkpoint's weights. Writes the tensors of the CLI's dump contract
      (pixel_values, grid_thw, embed, blocks.{i}.out, merger, deepstack.{k}) and, per query
      patch N, q{N}.blocks.{i}.attn_row [H, S]: softmax(q_N . K^T * scale) over the query's
      segment, with q and k from the block's own qkv and transformers' own rope.

      With --bf16 the weights are rounded to bfloat16 and stored as BF16, the float32 outputs
      are those of the rounded weights, and bfloat16_{sdpa,eager}_blk{i} and
      bfloat16_{sdpa,eager}_pooler_output hold transformers' own bfloat16 run (CUDA where
      there is one), upcast to float32.

  ablate TOWER.safetensors OUT.safetensors --heads 1:2,3:*
      The tower of a `tower` file (its weights, X and G) run again with attention heads
      ablated where their output enters attn.proj (a forward pre-hook on proj): BLOCK:HEAD
      pairs, * for every head of a block. zero_blk{i}, zero_pooler_output, zero_deepstack{k}:
      the heads' columns set to 0; mean_*: replaced by their mean over the page's rows.

  mask TOWER.safetensors OUT.safetensors --rows 3,4,5
      The tower of a `tower` file run again with the pixel_values rows listed (patches, in
      the processor's order) replaced by the page's per-channel mean (input occlusion):
      masked_blk{i}, masked_pooler_output, masked_deepstack{k}.

  patchhead TOWER.safetensors OUT.safetensors --block 1 --head 2 --rows 3,4,5
      Patching one head: block B's attn (what attn.proj reads) in head H's columns at the
      rows replaced by a second input XB's (forward pre-hooks on proj): XB, patched_blk{i},
      patched_pooler_output, patched_deepstack{k}.
  patch TOWER.safetensors OUT.safetensors --block 1 --rows 3,4,5
      Activation patching: a second input XB (random, the same grids) is run and its block
      BLOCK output captured; the tower's own X is run again with that block's output rows
      replaced by XB's (a forward hook on the block): XB, patched_blk{i},
      patched_pooler_output, patched_deepstack{k}.

  keymask TOWER.safetensors OUT.safetensors --rows 3,4,5 --from 1
      Masking patches as keys: from block FROM on, no query attends to the rows listed (the
      processor's order, mapped to the blocks' order) -- transformers' own eager attention
      function given an additive -inf attention_mask on their columns (the modeling module's
      eager_attention_forward wrapped, the tower run with attn_implementation eager); the
      rows stay as queries. masked_blk{i}, masked_pooler_output, masked_deepstack{k}.

  droptokens TOWER.safetensors OUT.safetensors --keep 20 --after 1
      Token dropping: the attention each patch receives in block AFTER (per segment of that
      block's cu_seqlens, softmax(q k^T * scale) in float64 from transformers' own qkv and
      rope, the mean over heads summed over the queries), summed per merge unit; the KEEP
      most received units (ties to the lower unit; the gap at the cut must be clear) go on:
      forward pre-hooks on the later blocks gather their hidden state, rope tables and
      cu_seqlens to the kept rows, and forward hooks on the mergers put their rows back on
      the page's units (0 for a dropped one). received (float32), kept_units (the blocks' unit order),
      dropped_blk{i} (the kept rows only after AFTER), dropped_pooler_output,
      dropped_deepstack{k}.

  scalehead TOWER.safetensors OUT.safetensors --scale 1:2=0.5,2:0=1.5
      Scaling heads: block B's attn (what attn.proj reads) in head H's columns multiplied by
      F (a forward pre-hook on proj), for each B:H=F: scaled_blk{i}, scaled_pooler_output,
      scaled_deepstack{k}.

  exif-jpeg IMAGE OUT.jpg ORIENTATION
      Writes IMAGE as a 4:4:4 JPEG whose pixels are stored so that applying the EXIF
      orientation tag gives the upright image back (tests the orientation path).
"""
import argparse
import json
import os
import struct

import torch


def save(path, tensors, metadata=None):
    """Minimal safetensors writer (float32 / bfloat16 / int64), so no extra package is needed."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.dtype == torch.int64:
            dt = "I64"
        elif t.dtype == torch.bfloat16:
            t, dt = t.view(torch.int16), "BF16"
        else:
            t, dt = t.to(torch.float32), "F32"
        b = t.numpy().tobytes()
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    js = json.dumps(header).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def vision_classes(model_type):
    if model_type.startswith("qwen3_5"):
        from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5VisionConfig, Qwen3_5VisionModel
        return Qwen3_5VisionConfig, Qwen3_5VisionModel
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionConfig, Qwen3VLVisionModel
    return Qwen3VLVisionConfig, Qwen3VLVisionModel


def load_checkpoint(ckpt):
    from safetensors.torch import load_file
    cfg = json.load(open(os.path.join(ckpt, "config.json")))
    vc = dict(cfg["vision_config"])
    vc.pop("model_type", None)
    Config, Model = vision_classes(cfg["model_type"])
    model = Model(Config(**vc)).eval().to(torch.float32)
    state = {}
    for k, v in load_file(os.path.join(ckpt, "model.safetensors")).items():
        for p in ("model.visual.", "visual."):
            if k.startswith(p):
                state[k[len(p):]] = v.to(torch.float32)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if "inv_freq" not in m]
    assert not missing and not unexpected, (missing, unexpected)
    return cfg, model


def capture(model):
    """Hooks: the input of block 0, every block's output, every attention call's inputs."""
    rec = {"out": [], "attn": []}
    model.blocks[0].register_forward_pre_hook(lambda m, a, kw: rec.__setitem__("embed", (a[0] if a else kw["hidden_states"]).clone()), with_kwargs=True)
    for blk in model.blocks:
        blk.register_forward_hook(lambda m, a, o: rec["out"].append((o[0] if isinstance(o, tuple) else o).clone()))
        blk.attn.register_forward_pre_hook(lambda m, a, kw: rec["attn"].append((m, a, kw)), with_kwargs=True)
    return rec


def attention_rows(model, rec, queries, grid):
    """softmax(q_N . K^T * scale) per head over N's segment, q/k as transformers makes them."""
    import importlib
    mod = importlib.import_module(type(model.blocks[0].attn).__module__)
    rope = mod.apply_rotary_pos_emb_vision
    seg_len = int(grid[1] * grid[2])
    out = {}
    for i, (attn, args, kw) in enumerate(rec["attn"]):
        hs = args[0] if args else kw["hidden_states"]
        cos, sin = kw["position_embeddings"]
        S = hs.shape[0]
        qkv = attn.qkv(hs).reshape(S, 3, attn.num_heads, -1).permute(1, 0, 2, 3)
        q, k = rope(qkv[0], qkv[1], cos, sin)
        for n in queries:
            s0 = n // seg_len * seg_len
            sc = torch.einsum("hd,shd->hs", q[n].float(), k[s0:s0 + seg_len].float()) * attn.scaling
            row = torch.zeros(attn.num_heads, S)
            row[:, s0:s0 + seg_len] = torch.softmax(sc, dim=-1)
            out["q%d.blocks.%d.attn_row" % (n, i)] = row
    return out


def cmd_e2e(a):
    from transformers import AutoImageProcessor
    from transformers.image_utils import load_image
    cfg, model = load_checkpoint(a.checkpoint)
    ip = AutoImageProcessor.from_pretrained(a.checkpoint, backend="pil")
    assert "Pil" in type(ip).__name__, type(ip)
    img = load_image(a.image)  # applies the EXIF orientation
    r = ip(images=img, return_tensors="pt")
    px, grid = r["pixel_values"], r["image_grid_thw"]
    rec = capture(model)
    with torch.no_grad():
        o = model(px, grid_thw=grid)
        rows = attention_rows(model, rec, [int(q) for q in a.queries.split(",")], grid[0].tolist())
    t = {"pixel_values": px, "grid_thw": grid[0], "embed": rec["embed"], "merger": o.pooler_output}
    for i, b in enumerate(rec["out"]):
        t["blocks.%d.out" % i] = b
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        t["deepstack.%d" % k] = d
    t.update(rows)
    import transformers
    save(a.out, t, {"transformers": transformers.__version__, "torch": torch.__version__,
                    "image": os.path.basename(a.image), "checkpoint": os.path.basename(a.checkpoint.rstrip("/")),
                    "queries": a.queries, "processor": type(ip).__name__})
    print("wrote", a.out, "grid", grid.tolist(), "pixels", tuple(px.shape))


def tiny_tower(family):
    """The tiny tower of each family: 4 blocks of 64 (4 heads), merger out 96."""
    if family == "qwen2_vl":
        from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
        from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VisionTransformerPretrainedModel
        cfg = Qwen2VLVisionConfig(depth=4, embed_dim=64, num_heads=4, mlp_ratio=2, hidden_size=96)
        return cfg, Qwen2VisionTransformerPretrainedModel(cfg), 14
    if family == "qwen2_5_vl":
        from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLVisionConfig
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VisionTransformerPretrainedModel
        # window 56 px = 2 merge units of 2 patches of 14: several windows, edge ones smaller
        cfg = Qwen2_5_VLVisionConfig(depth=4, hidden_size=64, num_heads=4, intermediate_size=120, out_hidden_size=96,
                                     window_size=56, fullatt_block_indexes=[1, 3])
        return cfg, Qwen2_5_VisionTransformerPretrainedModel(cfg), 14
    Config, Model = vision_classes("qwen3_vl")
    cfg = Config(depth=4, hidden_size=64, num_heads=4, intermediate_size=128, out_hidden_size=96,
                 num_position_embeddings=64, deepstack_visual_indexes=[1, 2])
    return cfg, Model(cfg), 16


def segment_rows(model, rec, queries):
    """Per block and query N: softmax(q_N . K^T * scale) per head over the segment of
    transformers' cu_seqlens for that block that holds N, zero elsewhere."""
    import importlib
    mod = importlib.import_module(type(model.blocks[0].attn).__module__)
    rope = mod.apply_rotary_pos_emb_vision
    out = {}
    for i, (attn, args, kw) in enumerate(rec["attn"]):
        hs = args[0] if args else kw["hidden_states"]
        cos, sin = kw["position_embeddings"]
        cu = [int(x) for x in kw["cu_seqlens"].tolist()]
        S = hs.shape[0]
        qkv = attn.qkv(hs).reshape(S, 3, attn.num_heads, -1).permute(1, 0, 2, 3)
        q, k = rope(qkv[0], qkv[1], cos, sin)
        for n in queries:
            s0 = max(c for c in cu if c <= n)
            s1 = min(c for c in cu if c > n)
            sc = torch.einsum("hd,shd->hs", q[n].float(), k[s0:s1].float()) * attn.scaling
            row = torch.zeros(attn.num_heads, S)
            row[:, s0:s1] = torch.softmax(sc, dim=-1)
            out["q%d.blk%d.attn_row" % (n, i)] = row
    return out


def bf16_runs(m, X, G):
    """The tower in bfloat16 (sdpa and eager), on CUDA where there is one: every block output and
    the merger, upcast to float32."""
    import copy
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    out = {}
    for impl in ("sdpa", "eager"):
        mb = copy.deepcopy(m).to(torch.bfloat16).to(dev)
        mb.set_attn_implementation(impl)
        rec = capture(mb)
        with torch.no_grad():
            o = mb(X.to(torch.bfloat16).to(dev), grid_thw=G.to(dev))
        for i, b in enumerate(rec["out"]):
            out["bfloat16_%s_blk%d" % (impl, i)] = b.float().cpu()
        out["bfloat16_%s_pooler_output" % impl] = o.pooler_output.float().cpu()
    return out


def cmd_tower(a):
    torch.manual_seed(a.seed)
    cfg, m, patch = tiny_tower(a.family)
    m = m.eval()
    with torch.no_grad():
        for p in m.parameters():  # HF init leaves biases at 0 and norms at 1: exercise them
            p.add_(torch.randn_like(p) * 0.05)
            if a.bf16:
                p.copy_(p.to(torch.bfloat16).to(torch.float32))
    G = torch.tensor([[1, 4, 6], [2, 4, 4], [1, 10, 12]])
    X = torch.randn(int(G.prod(-1).sum()), 3 * 2 * patch * patch)
    rec = capture(m)
    with torch.no_grad():
        o = m(X, grid_thw=G)
        rows = segment_rows(m, rec, [0, 5, 27, 40, 100, 175]) if a.family != "qwen3_vl" else {}
    t = {"model.visual." + k: v for k, v in m.state_dict().items() if "inv_freq" not in k}
    t.update({"X": X, "G": G, "pooler_output": o.pooler_output, "last_hidden_state": o.last_hidden_state,
              "embed": rec["embed"]})
    for i, b in enumerate(rec["out"]):
        t["blk%d" % i] = b
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        t["deepstack%d" % k] = d
    if a.family == "qwen2_5_vl":
        from transformers.vision_utils import get_vision_window_index
        wi, cu = get_vision_window_index(G, spatial_merge_size=cfg.spatial_merge_size, window_size=cfg.window_size,
                                         patch_size=cfg.patch_size)
        t["window_index"], t["cu_window_seqlens"] = wi.to(torch.int64), cu.to(torch.int64)
    t.update(rows)
    if a.bf16:
        t.update(bf16_runs(m, X, G))
        for k in list(t):
            if k.startswith("model.visual."):
                t[k] = t[k].to(torch.bfloat16)
    import transformers
    save(a.out, t, {"cfg": cfg.to_json_string(), "model_type": a.family,
                    "transformers": transformers.__version__, "torch": torch.__version__})
    print("wrote", a.out, {k: tuple(v.shape) for k, v in t.items() if not k.startswith("model.")})


def load_tower(path):
    """A `tower` file's model (float32), input and grids."""
    from safetensors.torch import load_file
    from safetensors import safe_open
    with safe_open(path, "pt") as f:
        meta = f.metadata()
    family = meta.get("model_type", "qwen3_vl")
    vc = json.loads(meta["cfg"])
    vc.pop("model_type", None)
    if family == "qwen3_vl":
        Config, Model = vision_classes("qwen3_vl")
        m = Model(Config(**vc))
    else:
        cfg, m, _ = tiny_tower(family)
    t = load_file(path)
    state = {k[len("model.visual."):]: v.float() for k, v in t.items() if k.startswith("model.visual.")}
    missing, unexpected = m.load_state_dict(state, strict=False)
    assert not [x for x in missing if "inv_freq" not in x] and not unexpected, (missing, unexpected)
    return m.eval().float(), t["X"].float(), t["G"]


def cmd_ablate(a):
    m, X, G = load_tower(a.tower)
    H = m.blocks[0].attn.num_heads
    hd = m.blocks[0].attn.head_dim if hasattr(m.blocks[0].attn, "head_dim") else m.blocks[0].attn.qkv.in_features // H
    heads = {}
    for pair in a.heads.split(","):
        b, h = pair.split(":")
        heads.setdefault(int(b), set()).update(range(H) if h == "*" else {int(h)})
    out = {}
    for mode in ("zero", "mean"):
        hooks = []
        for b, hs in heads.items():
            def pre(mod, args, hs=hs):
                x = args[0].clone()
                for h in hs:
                    cols = x[:, h * hd:(h + 1) * hd]
                    x[:, h * hd:(h + 1) * hd] = 0 if mode == "zero" else cols.mean(dim=0, keepdim=True)
                return (x,) + tuple(args[1:])
            hooks.append(m.blocks[b].attn.proj.register_forward_pre_hook(pre))
        rec = capture(m)
        with torch.no_grad():
            o = m(X, grid_thw=G)
        for hk in hooks:
            hk.remove()
        for i, blk in enumerate(rec["out"]):
            out["%s_blk%d" % (mode, i)] = blk
        out["%s_pooler_output" % mode] = o.pooler_output
        for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
            out["%s_deepstack%d" % (mode, k)] = d
    import transformers
    save(a.out, out, {"heads": a.heads, "tower": os.path.basename(a.tower), "transformers": transformers.__version__})
    print("wrote", a.out, sorted(out))


def cmd_scalehead(a):
    m, X, G = load_tower(a.tower)
    H = m.blocks[0].attn.num_heads
    hd = m.blocks[0].attn.qkv.in_features // H
    scale = {}
    for item in a.scale.split(","):
        bh, f = item.split("=")
        b, h = bh.split(":")
        scale.setdefault(int(b), {})[int(h)] = float(f)
    hooks = []
    for b, hs in scale.items():
        def pre(mod, args, hs=hs):
            x = args[0].clone()
            for h, f in hs.items():
                x[:, h * hd:(h + 1) * hd] = x[:, h * hd:(h + 1) * hd] * f
            return (x,) + tuple(args[1:])
        hooks.append(m.blocks[b].attn.proj.register_forward_pre_hook(pre))
    rec = capture(m)
    with torch.no_grad():
        o = m(X, grid_thw=G)
    for hk in hooks:
        hk.remove()
    out = {}
    for i, blk in enumerate(rec["out"]):
        out["scaled_blk%d" % i] = blk
    out["scaled_pooler_output"] = o.pooler_output
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        out["scaled_deepstack%d" % k] = d
    import transformers
    save(a.out, out, {"scale": a.scale, "tower": os.path.basename(a.tower), "transformers": transformers.__version__})
    print("wrote", a.out, sorted(out))


def cmd_mask(a):
    m, X, G = load_tower(a.tower)
    rows = [int(r) for r in a.rows.split(",")]
    C = m.config.in_channels
    S = X.shape[0]
    per = X.view(S, C, -1)
    mean = per.mean(dim=(0, 2), dtype=torch.float64).float()  # per channel, over the page
    X2 = per.clone()
    X2[rows] = mean.view(1, C, 1).expand(len(rows), C, per.shape[2])
    X2 = X2.view(S, -1)
    rec = capture(m)
    with torch.no_grad():
        o = m(X2, grid_thw=G)
    out = {"masked_pooler_output": o.pooler_output}
    for i, blk in enumerate(rec["out"]):
        out["masked_blk%d" % i] = blk
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        out["masked_deepstack%d" % k] = d
    import transformers
    save(a.out, out, {"rows": a.rows, "tower": os.path.basename(a.tower), "transformers": transformers.__version__})
    print("wrote", a.out, sorted(out))


def cmd_patch(a):
    m, X, G = load_tower(a.tower)
    rows = [int(r) for r in a.rows.split(",")]
    torch.manual_seed(7)
    XB = torch.randn_like(X)
    rec = capture(m)
    with torch.no_grad():
        m(XB, grid_thw=G)
    src = rec["out"][a.block].clone()  # in the order the blocks see the rows
    layout_rows = layout_rows_of(m, G, rows)

    def hook(mod, args, out):
        o = out[0] if isinstance(out, tuple) else out
        o = o.clone()
        o[layout_rows] = src[layout_rows]
        return (o,) + tuple(out[1:]) if isinstance(out, tuple) else o
    h = m.blocks[a.block].register_forward_hook(hook)
    save_patched(a, m, X, G, XB, h, {})


def save_patched(a, m, X, G, XB, hook, meta):
    """Runs X with hook in place (then removed) and writes the patched outputs and XB."""
    rec = capture(m)
    with torch.no_grad():
        o = m(X, grid_thw=G)
    hook.remove()
    out = {"XB": XB, "patched_pooler_output": o.pooler_output}
    for i, blk in enumerate(rec["out"]):
        out["patched_blk%d" % i] = blk
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        out["patched_deepstack%d" % k] = d
    import transformers
    meta.update({"rows": a.rows, "block": str(a.block), "tower": os.path.basename(a.tower),
                 "transformers": transformers.__version__})
    save(a.out, out, meta)
    print("wrote", a.out, sorted(out))


def layout_rows_of(m, G, rows):
    """The blocks' row index of each processor row (Qwen2.5-VL's windows reorder them)."""
    order = list(range(int(G.prod(dim=1).sum())))
    if hasattr(m, "window_size"):
        from transformers.vision_utils import get_vision_window_index
        wi, _ = get_vision_window_index(G, spatial_merge_size=m.spatial_merge_size, window_size=m.window_size,
                                        patch_size=m.patch_size)
        u = m.spatial_merge_size ** 2
        order = [int(w) * u + k for w in wi.tolist() for k in range(u)]
    inv = {p: i for i, p in enumerate(order)}
    return [inv[r] for r in rows]


def cmd_patchhead(a):
    """One head's slice of attn (what proj reads) at rows of block a.block replaced by a second
    input's, by forward pre-hooks on attn.proj (the source run's captured, the patched run's
    replaced)."""
    m, X, G = load_tower(a.tower)
    rows = [int(r) for r in a.rows.split(",")]
    H = m.blocks[0].attn.num_heads
    D = m.blocks[0].attn.proj.in_features
    hd = D // H
    torch.manual_seed(7)
    XB = torch.randn_like(X)
    got = {}

    def grab(mod, args):
        got["src"] = args[0].clone()
    h = m.blocks[a.block].attn.proj.register_forward_pre_hook(grab)
    with torch.no_grad():
        m(XB, grid_thw=G)
    h.remove()
    lr = layout_rows_of(m, G, rows)
    c0, c1 = a.head * hd, (a.head + 1) * hd

    def put(mod, args):
        x = args[0].clone()
        x[lr, c0:c1] = got["src"][lr, c0:c1]
        return (x,) + tuple(args[1:])
    h = m.blocks[a.block].attn.proj.register_forward_pre_hook(put)
    save_patched(a, m, X, G, XB, h, {"head": str(a.head)})


def cmd_keymask(a):
    """Keys masked from block a.frm on through transformers' eager attention with an additive
    mask: each block's attention module records its cu_seqlens (a forward pre-hook), the
    wrapped eager function masks the columns of the chunk it is called on (the chunks come in
    cu_seqlens order)."""
    import importlib
    m, X, G = load_tower(a.tower)
    m.set_attn_implementation("eager")
    rows = [int(r) for r in a.rows.split(",")]
    masked = torch.zeros(X.shape[0], dtype=torch.bool)
    masked[layout_rows_of(m, G, rows)] = True
    mod = importlib.import_module(type(m.blocks[0].attn).__module__)
    eager = mod.eager_attention_forward
    state = {"block": -1, "chunk": 0, "cu": None, "calls": 0}
    index = {id(b.attn): i for i, b in enumerate(m.blocks)}

    def pre(mod_, args, kw):
        state["block"], state["chunk"] = index[id(mod_)], 0
        state["cu"] = [int(c) for c in kw["cu_seqlens"].tolist()]

    def masked_eager(module, query, key, value, attention_mask, **kw):
        i, c = state["block"], state["chunk"]
        state["chunk"] += 1
        if i >= a.frm:
            s0, s1 = state["cu"][c], state["cu"][c + 1]
            assert key.shape[-2] == s1 - s0, (key.shape, s0, s1)
            assert attention_mask is None
            bias = torch.zeros(s1 - s0, dtype=query.dtype)
            bias[masked[s0:s1]] = float("-inf")
            attention_mask = bias.view(1, 1, 1, -1)
            state["calls"] += 1
        return eager(module, query, key, value, attention_mask, **kw)
    hooks = [b.attn.register_forward_pre_hook(pre, with_kwargs=True) for b in m.blocks]
    mod.eager_attention_forward = masked_eager
    try:
        rec = capture(m)
        with torch.no_grad():
            o = m(X, grid_thw=G)
    finally:
        mod.eager_attention_forward = eager
        for h in hooks:
            h.remove()
    assert state["calls"] > 0, "the wrapped eager attention was never called"
    out = {"masked_pooler_output": o.pooler_output}
    for i, blk in enumerate(rec["out"]):
        out["masked_blk%d" % i] = blk
    for k, d in enumerate(getattr(o, "deepstack_features", None) or []):
        out["masked_deepstack%d" % k] = d
    import transformers
    save(a.out, out, {"rows": a.rows, "from": str(a.frm), "tower": os.path.basename(a.tower),
                      "transformers": transformers.__version__, "masked_calls": str(state["calls"])})
    print("wrote", a.out, sorted(out), "masked calls", state["calls"])


def cmd_droptokens(a):
    import importlib
    m, X, G = load_tower(a.tower)
    mod = importlib.import_module(type(m.blocks[0].attn).__module__)
    rope = mod.apply_rotary_pos_emb_vision
    u = m.config.spatial_merge_size ** 2
    S = X.shape[0]
    rec = capture(m)
    with torch.no_grad():
        m(X, grid_thw=G)
        attn, args, kw = rec["attn"][a.after]
        hs = args[0] if args else kw["hidden_states"]
        cos, sin = kw["position_embeddings"]
        cu = [int(c) for c in kw["cu_seqlens"].tolist()]
        qkv = attn.qkv(hs).reshape(S, 3, attn.num_heads, -1).permute(1, 0, 2, 3)
        q, k = rope(qkv[0], qkv[1], cos, sin)
        received = torch.zeros(S, dtype=torch.float64)
        for s0, s1 in zip(cu[:-1], cu[1:]):
            if s1 > s0:
                sc = torch.einsum("qhd,khd->hqk", q[s0:s1].double(), k[s0:s1].double()) * attn.scaling
                received[s0:s1] += torch.softmax(sc, dim=-1).mean(0).sum(0)
    score = received.view(-1, u).sum(1)
    order = sorted(range(len(score)), key=lambda i: (-float(score[i]), i))
    if a.keep < len(order):
        gap = float(score[order[a.keep - 1]] - score[order[a.keep]]) / float(score[order[a.keep - 1]])
        assert gap > 1e-5, "the cut at %d falls between two nearly equal scores (%g): choose another --keep" % (a.keep, gap)
    units = sorted(order[:a.keep])
    idx = torch.tensor([w * u + j for w in units for j in range(u)])

    def compact_cu(c):
        kept = torch.zeros(S + 1, dtype=torch.int64)
        kept[idx + 1] = 1
        before = kept.cumsum(0)
        return torch.unique_consecutive(before[c.long()]).to(c.dtype)

    def pre(mod_, args, kw):
        kw = dict(kw)
        hs = args[0] if args else kw.pop("hidden_states")
        if hs.shape[0] == S:
            hs = hs[idx]
        c, s_ = kw["position_embeddings"]
        kw["position_embeddings"] = (c[idx], s_[idx])
        kw["cu_seqlens"] = compact_cu(kw["cu_seqlens"])
        return (hs,) + tuple(args[1:]), kw

    def merger_in(mod_, args):  # a drop after the last block: the merger reads the kept rows
        return (args[0][idx],) + tuple(args[1:]) if args[0].shape[0] == S else None

    def merger_out(mod_, args, out):
        if out.shape[0] != len(units):
            return None
        full = out.new_zeros(S // u, out.shape[1])
        full[torch.tensor(units)] = out
        return full
    hooks = [b.register_forward_pre_hook(pre, with_kwargs=True) for b in m.blocks[a.after + 1:]]
    mergers = [m.merger] + list(getattr(m, "deepstack_merger_list", None) or [])
    hooks += [mg.register_forward_pre_hook(merger_in) for mg in mergers[:1]]
    hooks += [mg.register_forward_hook(merger_out) for mg in mergers]
    rec = capture(m)
    try:
        with torch.no_grad():
            o = m(X, grid_thw=G)
    finally:
        for h in hooks:
            h.remove()
    out = {"received": received, "kept_units": torch.tensor(units, dtype=torch.int64), "dropped_pooler_output": o.pooler_output}
    for i, blk in enumerate(rec["out"]):
        assert blk.shape[0] == (S if i <= a.after else len(idx)), (i, blk.shape)
        out["dropped_blk%d" % i] = blk
    for k_, d in enumerate(getattr(o, "deepstack_features", None) or []):
        out["dropped_deepstack%d" % k_] = d
    import transformers
    save(a.out, out, {"keep": str(a.keep), "after": str(a.after), "tower": os.path.basename(a.tower),
                      "transformers": transformers.__version__})
    print("wrote", a.out, sorted(out), "units", units)


def cmd_exif_jpeg(a):
    from PIL import Image
    img = Image.open(a.image).convert("RGB")
    # The inverse of what exif_transpose does for each orientation.
    inverse = {1: None, 2: Image.FLIP_LEFT_RIGHT, 3: Image.ROTATE_180, 4: Image.FLIP_TOP_BOTTOM,
               5: Image.TRANSPOSE, 6: Image.ROTATE_90, 7: Image.TRANSVERSE, 8: Image.ROTATE_270}[a.orientation]
    stored = img.transpose(inverse) if inverse is not None else img
    exif = Image.Exif()
    exif[0x0112] = a.orientation
    stored.save(a.out, "JPEG", quality=95, subsampling=0, exif=exif.tobytes())
    from PIL import ImageOps
    back = ImageOps.exif_transpose(Image.open(a.out))
    assert back.size == img.size, (back.size, img.size)
    print("wrote", a.out, "stored", stored.size, "upright", back.size)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("e2e")
    e.add_argument("checkpoint")
    e.add_argument("image")
    e.add_argument("out")
    e.add_argument("--queries", default="0")
    t = sub.add_parser("tower")
    t.add_argument("out")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--family", default="qwen3_vl", choices=["qwen3_vl", "qwen2_vl", "qwen2_5_vl"])
    t.add_argument("--bf16", action="store_true", help="bf16-rounded weights stored as BF16, and bfloat16 runs")
    ab = sub.add_parser("ablate")
    ab.add_argument("tower")
    ab.add_argument("out")
    ab.add_argument("--heads", required=True)
    mk = sub.add_parser("mask")
    mk.add_argument("tower")
    mk.add_argument("out")
    mk.add_argument("--rows", required=True)
    pt = sub.add_parser("patch")
    pt.add_argument("tower")
    pt.add_argument("out")
    pt.add_argument("--block", type=int, required=True)
    pt.add_argument("--rows", required=True)
    ph = sub.add_parser("patchhead")
    ph.add_argument("tower")
    ph.add_argument("out")
    ph.add_argument("--block", type=int, required=True)
    ph.add_argument("--head", type=int, required=True)
    ph.add_argument("--rows", required=True)
    km = sub.add_parser("keymask")
    km.add_argument("tower")
    km.add_argument("out")
    km.add_argument("--rows", required=True)
    km.add_argument("--from", dest="frm", type=int, required=True)
    dt = sub.add_parser("droptokens")
    dt.add_argument("tower")
    dt.add_argument("out")
    dt.add_argument("--keep", type=int, required=True)
    dt.add_argument("--after", type=int, required=True)
    sh = sub.add_parser("scalehead")
    sh.add_argument("tower")
    sh.add_argument("out")
    sh.add_argument("--scale", required=True)
    j = sub.add_parser("exif-jpeg")
    j.add_argument("image")
    j.add_argument("out")
    j.add_argument("orientation", type=int)
    a = p.parse_args()
    {"e2e": cmd_e2e, "tower": cmd_tower, "ablate": cmd_ablate, "mask": cmd_mask, "patch": cmd_patch, "patchhead": cmd_patchhead, "keymask": cmd_keymask, "droptokens": cmd_droptokens, "scalehead": cmd_scalehead, "exif-jpeg": cmd_exif_jpeg}[a.cmd](a)


if __name__ == "__main__":
    main()
