"""OpenCV's Gaussian blur + Canny on one grey PNG, timed; the peer of `cargo xtask canny-compare`.

Usage: canny_opencv.py IN.png OUT.png --runs N --sigma S --ksize K --low L --high H

Blurs with a KxK Gaussian of the given sigma (replicated borders, the same support and
border rule as gui-vision's Canny), then runs cv2.Canny with the 3x3 Sobel operator and the
L2 gradient norm, so the thresholds mean what they mean in gui-vision. Writes the edges of
the last run to OUT.png and prints one JSON line: median milliseconds with OpenCV's default
thread count and with one thread, the thread count, and OpenCV's version.
"""

import argparse
import json
import statistics
import time

import cv2


def median_ms(gray, args):
    times = []
    edges = None
    for _ in range(args.warmup):
        blurred = cv2.GaussianBlur(
            gray, (args.ksize, args.ksize), args.sigma, borderType=cv2.BORDER_REPLICATE
        )
        cv2.Canny(blurred, args.low, args.high, apertureSize=3, L2gradient=True)
    for _ in range(args.runs):
        start = time.perf_counter()
        blurred = cv2.GaussianBlur(
            gray, (args.ksize, args.ksize), args.sigma, borderType=cv2.BORDER_REPLICATE
        )
        edges = cv2.Canny(blurred, args.low, args.high, apertureSize=3, L2gradient=True)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), edges


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--sigma", type=float, default=1.4)
    parser.add_argument("--ksize", type=int, default=7)
    parser.add_argument("--low", type=float, default=20.0)
    parser.add_argument("--high", type=float, default=50.0)
    args = parser.parse_args()

    gray = cv2.imread(args.input, cv2.IMREAD_GRAYSCALE)
    if gray is None:
        raise SystemExit(f"cannot read {args.input}")
    threads = cv2.getNumThreads()
    all_ms, edges = median_ms(gray, args)
    cv2.setNumThreads(1)
    one_ms, _ = median_ms(gray, args)
    cv2.imwrite(args.output, edges)
    print(
        json.dumps(
            {
                "all_threads_ms": all_ms,
                "one_thread_ms": one_ms,
                "threads": threads,
                "version": cv2.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
