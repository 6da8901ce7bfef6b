#!/usr/bin/env python3
"""Summarise the JSON lines written by lda_bench.sh into the Markdown tables of docs/benchmarks.md.

    python3 crates/vips-models/scripts/lda_bench_report.py target/lda-bench
"""
import json
import statistics as st
import sys
from collections import defaultdict
from pathlib import Path


def load(path):
    groups = defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                groups[d["run"]].append(d)
    return groups


def ms(values, digits=0):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = st.mean(values)
    if len(values) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {st.stdev(values):.{digits}f}"


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "target/lda-bench")
    speed = load(out / "speed.jsonl")
    if speed:
        print("| run | docs / CPU-s | docs / s (wall) | bound (Hoffman) | completion | load (1 min) | n |")
        print("|---|---|---|---|---|---|---|")
        for run, rows in speed.items():
            if run.startswith("rust"):
                cpu = [r["docs_per_cpu_second"] for r in rows]
                wall = [r["docs_per_second"] for r in rows]
            else:
                cpu = [r["docs_per_cpu_second"] for r in rows]
                wall = [r["docs_per_second"] for r in rows]
            print(f"| {run} | {ms(cpu)} | {ms(wall)} | {ms([r['perplexity_bound_hoffman'] for r in rows])} "
                  f"| {ms([r['completion_perplexity'] for r in rows])} | {ms([r.get('load1') for r in rows], 1)} "
                  f"| {len(rows)} |")
        print()
        for t in ("rust_t1", "rust_t2"):
            rust = [r["docs_per_cpu_second"] for r in speed.get(t, [])]
            gensim = [r["docs_per_cpu_second"] for r in speed.get("gensim_f32", [])]
            if rust and gensim:
                print(f"ratio {t} / gensim_f32 (docs per CPU-second, means): {st.mean(rust) / st.mean(gensim):.2f}")
        t1 = [r["docs_per_second"] for r in speed.get("rust_t1", [])]
        t2 = [r["docs_per_second"] for r in speed.get("rust_t2", [])]
        if t1 and t2:
            print(f"wall-clock speed-up 2 threads / 1 thread (docs/s, means): {st.mean(t2) / st.mean(t1):.2f}")
    for path in sorted(out.glob("perplexity_p*.jsonl")):
        groups = load(path)
        print(f"\n{path.name} (mean ± sd; ± standard error of the mean in brackets):\n")
        print("| run | bound (Hoffman) | completion | docs processed | load (1 min) | n |")
        print("|---|---|---|---|---|---|")
        means = {}
        for run, rows in groups.items():
            b = [r["perplexity_bound_hoffman"] for r in rows]
            c = [r["completion_perplexity"] for r in rows]
            docs = [r.get("docs_processed", r.get("expected_records_processed")) for r in rows]
            se = st.stdev(b) / len(b) ** 0.5 if len(b) > 1 else float("nan")
            means[run] = (st.mean(b), se, st.mean(c))
            print(f"| {run} | {ms(b)} [± {se:.0f}] | {ms(c)} | {ms(docs)} | {ms([r.get('load1') for r in rows], 1)} | {len(rows)} |")
        rust = [m for r, m in means.items() if r.startswith("rust")]
        for run, m in means.items():
            if rust and run.startswith("gensim"):
                gap = rust[0][0] / m[0] - 1
                se = ((rust[0][1] / m[0]) ** 2 + (rust[0][0] * m[1] / m[0] ** 2) ** 2) ** 0.5
                print(f"rust vs {run}: bound {100 * gap:+.1f}% (± {100 * se:.1f}% s.e.), "
                      f"completion {100 * (rust[0][2] / m[2] - 1):+.1f}%")
    for name in ("privacy_news.jsonl", "privacy_synthetic.jsonl"):
        groups = load(out / name)
        if not groups:
            continue
        print(f"\n{name}:\n")
        print("| run | epsilon | noise multiplier | iterations | bound (Hoffman) | completion | clipped | topic TV (mean) | n |")
        print("|---|---|---|---|---|---|---|---|---|")
        for run, rows in groups.items():
            eps = rows[0]["epsilon"]
            sigma = rows[0]["noise_multiplier"]
            tv = [r["topic_recovery"]["mean_tv"] for r in rows if r.get("topic_recovery")]
            print(f"| {run} | {'inf' if eps is None else f'{eps:.3f}'} | {'-' if sigma is None else f'{sigma:.3f}'} "
                  f"| {rows[0]['iterations']} | {ms([r['perplexity_bound_hoffman'] for r in rows])} "
                  f"| {ms([r['completion_perplexity'] for r in rows])} | {ms([r['clipped_fraction'] for r in rows], 3)} "
                  f"| {ms(tv, 3) if tv else '-'} | {len(rows)} |")


if __name__ == "__main__":
    main()
