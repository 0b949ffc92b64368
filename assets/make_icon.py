#!/usr/bin/env python3
"""Draws the application icon: a red scope trace on a dark, gridded screen.

Writes icon-256.png and icon-64.png beside this script. Only the standard library (zlib and
struct for the PNG container), so anyone can regenerate the icons:

    python3 assets/make_icon.py

The app embeds icon-256.png (see app/src/app/icon.rs); the window manager scales it.
"""

import math
import os
import struct
import zlib

BACKGROUND = (0x15, 0x18, 0x1D)
BEZEL = (0x2A, 0x2F, 0x38)
GRID = (0x26, 0x2C, 0x35)
TRACE = (0xFF, 0x40, 0x40)
# Samples per pixel along each axis: the edges are antialiased by averaging them.
SUPERSAMPLE = 4


def trace_y(x):
    """The trace's height (0 at the top, 1 at the bottom) at x in 0..1: a damped wave with one
    sharp spike, like a signal caught on a scope."""
    wave = 0.16 * math.sin(x * 2.0 * math.pi * 1.5) * (1.0 - 0.5 * x)
    spike = -0.30 * math.exp(-((x - 0.62) / 0.035) ** 2)
    return 0.56 + wave + spike


def distance_to_trace(px, py, samples):
    """Distance from (px, py) to the polyline through `samples` (all in 0..1 units)."""
    best = float("inf")
    for (ax, ay), (bx, by) in zip(samples, samples[1:]):
        dx, dy = bx - ax, by - ay
        length = dx * dx + dy * dy
        t = 0.0 if length == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length))
        cx, cy = ax + t * dx, ay + t * dy
        best = min(best, math.hypot(px - cx, py - cy))
    return best


def inside_rounded_square(x, y, margin, radius):
    """True when (x, y) in 0..1 lies in the square inset by `margin` with corners of `radius`."""
    lo, hi = margin + radius, 1.0 - margin - radius
    cx, cy = min(max(x, lo), hi), min(max(y, lo), hi)
    return math.hypot(x - cx, y - cy) <= radius


def colour_at(x, y, samples, size):
    """The colour of the point (x, y) in 0..1 units, or None outside the icon."""
    if not inside_rounded_square(x, y, 0.02, 0.16):
        return None
    if not inside_rounded_square(x, y, 0.07, 0.12):
        return BEZEL
    # The trace is at least about two pixels wide, so it survives the small icon.
    half_width = max(0.022, 1.1 / size)
    if distance_to_trace(x, y, samples) <= half_width:
        return TRACE
    grid_width = max(0.004, 0.5 / size)
    for k in range(1, 5):
        line = 0.07 + k * (0.86 / 5)
        if abs(x - line) <= grid_width or abs(y - line) <= grid_width:
            return GRID
    return BACKGROUND


def render(size):
    """RGBA rows of the icon at `size` x `size` pixels."""
    steps = 96
    samples = [(0.12 + 0.76 * i / steps, trace_y(i / steps)) for i in range(steps + 1)]
    rows = []
    for py in range(size):
        row = bytearray()
        for px in range(size):
            r = g = b = a = 0
            for sy in range(SUPERSAMPLE):
                for sx in range(SUPERSAMPLE):
                    x = (px + (sx + 0.5) / SUPERSAMPLE) / size
                    y = (py + (sy + 0.5) / SUPERSAMPLE) / size
                    colour = colour_at(x, y, samples, size)
                    if colour is not None:
                        r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 255
            n = SUPERSAMPLE * SUPERSAMPLE
            covered = a // 255
            if covered == 0:
                row += bytes(4)
            else:
                # Colour averaged over the covered samples; coverage as alpha.
                row += bytes((r // covered, g // covered, b // covered, a // n))
        rows.append(bytes(row))
    return rows


def png(size, rows):
    """A PNG file (8-bit RGBA, no interlace) holding `rows`."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for size in (256, 64):
        path = os.path.join(here, f"icon-{size}.png")
        with open(path, "wb") as out:
            out.write(png(size, render(size)))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
