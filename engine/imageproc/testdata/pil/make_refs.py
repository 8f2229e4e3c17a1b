#!/usr/bin/env python3
"""Writes the GIF and 16-bit PNG inputs under engine/imageproc/testdata/pil/ and what
PIL makes of each, the way the reference pipeline loads an image.

    python3 make_refs.py OUTDIR

Every input is built byte by byte here (no encoder decides anything): GIFs whose first
frame is smaller than the logical screen, at an offset, with and without a transparency
index, global and local colour tables, and 16-bit PNGs of each colour type. For each
input NAME it writes NAME.ppm (binary P6: the RGB bytes of transformers'
image_utils.load_image, i.e. PIL.Image.open, ImageOps.exif_transpose, convert("RGB"))
and a line in manifest.json: PIL's mode and size at open, or the error PIL raised.
manifest.json also records the Pillow and transformers versions and, per input,
whether transformers' image_transforms.convert_to_rgb (which composites alpha on
white) would give other bytes than load_image.
"""
import io
import json
import os
import struct
import sys
import zlib

import PIL
from PIL import Image

# --------------------------------------------------------------------------- GIF


def lzw_literal_codes(pixels, mcs):
    """Codes that spell pixels one literal each, with a clear code often enough that
    the code width never grows (at most clear-2 literals after each clear)."""
    clear = 1 << mcs
    codes, run = [clear], 0
    for p in pixels:
        assert 0 <= p < clear
        if run == clear - 2:
            codes.append(clear)
            run = 0
        codes.append(p)
        run += 1
    return codes


def pack_codes(codes, width):
    out, acc, nbits = bytearray(), 0, 0
    for c in codes:
        acc |= c << nbits
        nbits += width
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def sub_blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out.append(len(chunk))
        out += chunk
    out.append(0)
    return bytes(out)


def table_bits(n):
    bits = 0
    while (2 << bits) < n:
        bits += 1
    return bits


def color_table(colors):
    n = 2 << table_bits(len(colors))
    raw = b"".join(bytes(c) for c in colors)
    return raw + b"\0" * (3 * n - len(raw))


def gce(trns=None, flags=None):
    f = (1 if trns is not None else 0) if flags is None else flags
    return b"!\xf9\x04" + bytes([f]) + b"\x0a\x00" + bytes([trns or 0]) + b"\0"


def frame(x, y, w, h, pixels, mcs=2, lct=None, interlace=False, eoi_after=None):
    assert len(pixels) == w * h
    flags = 0x40 if interlace else 0
    out = b"," + struct.pack("<HHHH", x, y, w, h)
    if lct is not None:
        flags |= 0x80 | table_bits(len(lct))
        out += bytes([flags]) + color_table(lct)
    else:
        out += bytes([flags])
    if interlace:  # pixels are given in display order; the stream is in pass order
        rows = [pixels[r * w:(r + 1) * w] for r in range(h)]
        order = list(range(0, h, 8)) + list(range(4, h, 8)) + list(range(2, h, 4)) + list(range(1, h, 2))
        pixels = [p for r in order for p in rows[r]]
    codes = lzw_literal_codes(pixels if eoi_after is None else pixels[:eoi_after], mcs)
    codes.append((1 << mcs) + 1)  # end of information
    return out + bytes([mcs]) + sub_blocks(pack_codes(codes, mcs + 1))


def gif(w, h, blocks, gct=None, bg=0):
    flags = 0
    table = b""
    if gct is not None:
        flags = 0x80 | 0x70 | table_bits(len(gct))
        table = color_table(gct)
    return b"GIF89a" + struct.pack("<HH", w, h) + bytes([flags, bg if gct else 0, 0]) + table + b"".join(blocks) + b";"


PAL4 = [(200, 10, 10), (10, 200, 10), (10, 10, 200), (250, 250, 0)]
PAL8 = [(1, 2, 3), (40, 50, 60), (90, 80, 70), (130, 20, 200), (7, 150, 9), (222, 111, 33), (64, 64, 255), (255, 128, 0)]
RAMP4 = [(i, i, i) for i in range(4)]
P33 = [0, 1, 2, 3, 2, 1, 0, 3, 1]


def gifs():
    big = [(x * 3 + y) % 4 for y in range(4) for x in range(4)]
    inter = [(x + 2 * y) % 4 for y in range(9) for x in range(4)]
    return {
        # frame 0 smaller than the screen; background index 2 in the header
        "gif_offset_bg": gif(7, 5, [frame(2, 1, 3, 3, P33)], PAL4, bg=2),
        "gif_offset_trns": gif(7, 5, [gce(3), frame(2, 1, 3, 3, P33)], PAL4, bg=2),
        "gif_local_trns": gif(7, 5, [gce(5), frame(1, 2, 4, 2, [0, 5, 7, 1, 2, 3, 4, 6], mcs=3, lct=PAL8)], PAL4, bg=1),
        "gif_local_notrns": gif(7, 5, [frame(1, 2, 4, 2, [0, 5, 7, 1, 2, 3, 4, 6], mcs=3, lct=PAL8)], PAL4, bg=1),
        # frame 0 reaching past the screen: PIL grows the canvas
        "gif_beyond_screen": gif(4, 3, [frame(2, 1, 4, 4, big)], PAL4),
        # no colour table at all, and an identity ramp: PIL's mode "L", gray = index
        "gif_no_palette": gif(6, 4, [gce(1), frame(1, 1, 3, 3, P33)]),
        "gif_ramp_trns": gif(6, 4, [gce(2), frame(1, 1, 3, 3, P33)], RAMP4),
        # a two-entry table with indices 2 and 3 in the frame, transparency index 3
        "gif_short_palette": gif(5, 3, [gce(3), frame(1, 0, 3, 3, P33)], PAL4[:2]),
        "gif_interlaced": gif(6, 11, [frame(1, 1, 4, 9, inter, interlace=True)], PAL4),
        # comment and application extensions, a later frame, a stray byte PIL skips
        "gif_two_frames": gif(6, 4, [b"!\xfe\x05hello\0", b"!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\0",
                                     frame(3, 1, 3, 3, P33), gce(0), frame(0, 0, 6, 4, [3] * 24)], PAL4),
        "gif_stray_byte": gif(6, 4, [gce(3), b"\x00", frame(1, 1, 3, 3, P33)], PAL4),
        # a second graphic control block without the transparency flag
        "gif_two_gce": gif(6, 4, [gce(3), gce(None), frame(1, 1, 3, 3, P33)], PAL4),
        # end of information after 5 of 9 pixels
        "gif_early_eoi": gif(6, 4, [frame(1, 1, 3, 3, P33, eoi_after=5)], PAL4),
        "gif_zero_frame": gif(6, 4, [frame(1, 1, 0, 0, [])], PAL4),
    }

# --------------------------------------------------------------------------- PNG


def chunk(typ, data):
    return struct.pack(">I", len(data)) + typ + data + struct.pack(">I", zlib.crc32(typ + data) & 0xFFFFFFFF)


def png16(w, h, ctype, samples, trns=None):
    """samples: one list of 16-bit values per row, channels interleaved."""
    raw = b"".join(b"\0" + struct.pack(">%dH" % len(r), *r) for r in samples)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, ctype, 0, 0, 0))
    if trns is not None:
        out += chunk(b"tRNS", struct.pack(">%dH" % len(trns), *trns))
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


G16 = [0x0000, 0x0001, 0x00FF, 0x0100, 0x7FFF, 0x80FF, 0xAB12, 0xFFFF]


def pngs():
    gray = [G16[:4], G16[4:]]
    rgb = [[G16[i], G16[(i + 3) % 8], G16[(i + 5) % 8]] for i in range(8)]
    rgb_rows = [sum(rgb[:4], []), sum(rgb[4:], [])]
    alpha = [0xFFFF, 0x8000, 0x0000, 0x00FF, 0x1234, 0xFFFF, 0x0001, 0x8080]
    ga = [[G16[i], alpha[i]] for i in range(8)]
    rgba = [rgb[i] + [alpha[i]] for i in range(8)]
    return {
        "png16_gray": png16(4, 2, 0, gray),
        "png16_gray_trns": png16(4, 2, 0, gray, trns=[0x00FF]),
        "png16_graya": png16(4, 2, 4, [sum(ga[:4], []), sum(ga[4:], [])]),
        "png16_rgb": png16(4, 2, 2, rgb_rows),
        "png16_rgb_trns": png16(4, 2, 2, rgb_rows, trns=rgb[2]),
        "png16_rgba": png16(4, 2, 6, [sum(rgba[:4], []), sum(rgba[4:], [])]),
    }

# --------------------------------------------------------------------------- refs


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    try:
        import transformers
        from transformers.image_utils import load_image
        from transformers.image_transforms import convert_to_rgb
        tv = transformers.__version__
    except Exception as e:  # still useful without transformers: the same three steps
        from PIL import ImageOps
        tv = "unavailable: %r" % (e,)
        convert_to_rgb = None

        def load_image(p):
            return ImageOps.exif_transpose(Image.open(p)).convert("RGB")
    manifest = {"pillow": PIL.__version__, "transformers": tv, "inputs": []}
    for name, data in sorted({**gifs(), **pngs()}.items()):
        ext = ".gif" if name.startswith("gif") else ".png"
        path = os.path.join(out, name + ext)
        with open(path, "wb") as f:
            f.write(data)
        entry = {"input": name + ext}
        try:
            with Image.open(path) as im:
                entry["open_mode"], entry["open_size"] = im.mode, list(im.size)
            rgb = load_image(path)
            assert rgb.mode == "RGB"
            with open(os.path.join(out, name + ".ppm"), "wb") as f:
                f.write(b"P6\n%d %d\n255\n" % rgb.size + rgb.tobytes())
            entry["ref"] = name + ".ppm"
            if convert_to_rgb is not None:
                alt = convert_to_rgb(Image.open(path))
                entry["convert_to_rgb_same"] = alt.tobytes() == rgb.tobytes()
        except Exception as e:
            entry["error"] = "%s: %s" % (type(e).__name__, e)
        manifest["inputs"].append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
