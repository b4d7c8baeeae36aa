#!/usr/bin/env python3
"""Draws the screens of the fake Android app as PNG files (standard library only).

Run from anywhere: `python3 make_fixtures.py` rewrites the PNGs next to this script.
The screens are flat colours with boxes where app.json puts its tap regions, so the
vision pipeline finds widgets on them; nothing here comes from a real device.
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
W, H = 360, 640


def png(width, height, boxes, background):
    """boxes: (x1, y1, x2, y2, (r, g, b)), later boxes drawn over earlier ones."""
    rows = []
    for y in range(height):
        row = bytearray(background * width)
        for x1, y1, x2, y2, colour in boxes:
            if y1 <= y < y2:
                row[x1 * 3:x2 * 3] = bytes(colour) * (x2 - x1)
        rows.append(b"\x00" + bytes(row))
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(tag, data):
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def label(x1, y1, x2, y2, fill, ink=(250, 250, 250)):
    """A button: a filled box with a bar standing in for its text."""
    cy = (y1 + y2) // 2
    return [(x1, y1, x2, y2, fill), (x1 + 16, cy - 4, x1 + 16 + (x2 - x1) // 3, cy + 4, ink)]


def status_bar(width):
    return [(0, 0, width, 24, (30, 30, 30))]


def main(width, height):
    boxes = status_bar(width) + [(0, 24, width, 80, (25, 118, 210))]
    for i, colour in enumerate([(67, 160, 71), (229, 57, 53), (251, 140, 0), (142, 36, 170)]):
        y = 120 + i * 80
        boxes += label(20, y, width - 20, y + 56, colour)
    return png(width, height, boxes, (245, 245, 245))


def form(width, height):
    boxes = status_bar(width) + [(0, 24, width, 80, (0, 137, 123))]
    boxes += [(20, 120, width - 20, 176, (120, 120, 120)), (22, 122, width - 22, 174, (255, 255, 255))]
    boxes += [(20, 200, 60, 240, (0, 137, 123)), (24, 204, 56, 236, (255, 255, 255))]
    boxes += label(20, 280, width - 20, 336, (0, 137, 123))
    return png(width, height, boxes, (250, 250, 250))


def home(width, height):
    boxes = status_bar(width)
    for i in range(4):
        x = 24 + i * ((width - 48) // 4)
        boxes.append((x + 8, height - 120, x + 64, height - 64, (200, 200, 200)))
    return png(width, height, boxes, (38, 50, 56))


for name, draw in [("main", main), ("form", form), ("home", home)]:
    for suffix, size in [("", (W, H)), ("-land", (H, W))]:
        with open(os.path.join(HERE, f"{name}{suffix}.png"), "wb") as f:
            f.write(draw(*size))
