"""Tree edit distances from the PyPI `apted` package (1.0.3), for cross-checks and timing.

Reads a JSON list of [bracket_a, bracket_b] pairs from the file named by argv[1]; prints a
JSON list of [distance, seconds] per pair. Used by gui-layout's cross-check test and by
`cargo xtask ted-compare`.
"""
import json
import sys
import time

from apted import APTED
from apted.helpers import Tree

sys.setrecursionlimit(100000)
results = []
with open(sys.argv[1], encoding="utf-8") as f:
    pairs = json.load(f)
for a, b in pairs:
    ta, tb = Tree.from_text(a), Tree.from_text(b)
    start = time.perf_counter()
    d = APTED(ta, tb).compute_edit_distance()
    results.append([d, time.perf_counter() - start])
json.dump(results, sys.stdout)
