"""networkx's Louvain on an edge list, for `cargo xtask louvain-bench`.

Usage: louvain_networkx.py GRAPH.tsv [--seed S] [--runs N] [--partition FILE]

GRAPH.tsv: a `# nodes N` line, then `a<TAB>b<TAB>weight` lines (each undirected edge
once). Times `networkx.community.louvain_communities` over N runs, run i with seed S + i
(graph loading not included), and prints JSON: the median and each run in ms, the
modularity (`networkx.community.modularity`) and community count of each run's result,
and, with --partition (one community label per line, node order), the modularity
networkx gives that partition.
"""

import argparse
import json
import statistics
import time

import networkx as nx


def read_graph(path):
    g = nx.Graph()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                key, _, value = line[1:].strip().partition(" ")
                if key == "nodes":
                    g.add_nodes_from(range(int(value)))
                continue
            a, b, w = line.split("\t")
            a, b, w = int(a), int(b), float(w)
            # Parallel edges add up, as in the Rust graph.
            if g.has_edge(a, b):
                g[a][b]["weight"] += w
            else:
                g.add_edge(a, b, weight=w)
    return g


def main():
    p = argparse.ArgumentParser()
    p.add_argument("graph")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--partition")
    args = p.parse_args()

    g = read_graph(args.graph)
    times, modularities, counts = [], [], []
    for run in range(args.runs):
        start = time.perf_counter()
        communities = nx.community.louvain_communities(
            g, weight="weight", resolution=1, seed=args.seed + run
        )
        times.append((time.perf_counter() - start) * 1e3)
        modularities.append(
            nx.community.modularity(g, communities, weight="weight", resolution=1)
        )
        counts.append(len(communities))
    out = {
        "networkx": nx.__version__,
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "median_ms": statistics.median(times),
        "runs_ms": times,
        "modularity": modularities,
        "communities": counts,
    }
    if args.partition:
        with open(args.partition) as f:
            labels = [int(x) for x in f.read().split()]
        groups = {}
        for node, label in enumerate(labels):
            groups.setdefault(label, set()).add(node)
        out["modularity_of_given"] = nx.community.modularity(
            g, list(groups.values()), weight="weight", resolution=1
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
