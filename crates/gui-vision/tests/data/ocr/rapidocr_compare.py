"""Times rapidocr-onnxruntime's PP-OCR text detection on the screens benches/ocr.rs uses,
for a side-by-side with gui-vision's `TextDetector`.

    python3 -m pip install rapidocr-onnxruntime==1.4.4
    python3 rapidocr_compare.py [runs]

The screens tile settings.png (beside this script) to 1280x800 and 1080x2400. rapidocr is
run with its own defaults (shorter side scaled to 736) and with gui-vision's resize rule
(longer side at most 960, sides multiples of 32), so the model input sizes match ours.
Prints one JSON object per line; then the boxes rapidocr finds on settings.png and the
time to recognise those lines.
"""

import json
import os
import statistics
import sys
import time

import cv2
import numpy as np
from rapidocr_onnxruntime import RapidOCR
from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

HERE = os.path.dirname(os.path.abspath(__file__))


def tiled(tile, w, h):
    reps = (h // tile.shape[0] + 1, w // tile.shape[1] + 1, 1)
    return np.ascontiguousarray(np.tile(tile, reps)[:h, :w])


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    tile = cv2.imread(os.path.join(HERE, "settings.png"))  # BGR, as rapidocr expects
    engine = RapidOCR()
    det = engine.text_det
    rapid_default = det.get_preprocess

    def ours_rule(_max_wh):
        return DetPreProcess(960, "max", det.mean, det.std)

    for w, h in [(1280, 800), (1080, 2400)]:
        screen = tiled(tile, w, h)
        for label, rule in [("rapidocr-default", rapid_default), ("limit-max-960", ours_rule)]:
            det.get_preprocess = rule
            boxes, _ = det(screen)  # warm-up
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                boxes, _ = det(screen)
                times.append((time.perf_counter() - start) * 1e3)
            print(json.dumps({
                "screen": f"{w}x{h}",
                "resize": label,
                "input": list(rule(max(w, h))(screen).shape[2:]),
                "median_ms": round(statistics.median(times), 1),
                "boxes": 0 if boxes is None else len(boxes),
            }))
    det.get_preprocess = ours_rule
    boxes, _ = det(tile)
    rects = []
    for b in boxes:
        x0, y0 = b.min(axis=0)
        x1, y1 = b.max(axis=0)
        rects.append([int(x0), int(y0), int(x1 - x0), int(y1 - y0)])
    rects.sort(key=lambda r: (r[1], r[0]))
    print(json.dumps({"settings.png boxes (x, y, w, h)": rects}))
    # Recognition of those lines, as benches/ocr.rs `recognise` times it.
    crops = [tile[y:y + h, x:x + w] for x, y, w, h in rects]
    texts, _ = engine.text_rec(crops)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        engine.text_rec(crops)
        times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({
        "recognise": f"{len(crops)}-lines",
        "median_ms": round(statistics.median(times), 1),
        "texts": [t[0] for t in texts],
    }))


if __name__ == "__main__":
    main()
