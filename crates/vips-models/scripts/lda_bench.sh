#!/usr/bin/env bash
# Measurements behind the "vips-models: LDA" section of docs/benchmarks.md.
# Run from the workspace root after `cargo build --release -p vips-models --example lda`
# and the gensim venv set-up (see gensim_lda.py). Writes JSON lines under $OUT.
#   bash crates/vips-models/scripts/lda_bench.sh [speed|privacy|synthetic|all]
set -euo pipefail
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release/examples/lda}
PY=${PY:-/work/venv-lda/bin/python}
NEWS=${NEWS:-../shared/data/news}
OUT=${OUT:-target/lda-bench}
REPS=${REPS:-3}
mkdir -p "$OUT"
what=${1:-all}
common=(--corpus "$NEWS" --topics 50 --batch-size 256 --tau0 1024 --kappa 0.7 --json)

if [[ $what == speed || $what == all ]]; then
  # Side by side in one run, alternating: non-private Rust (1 and 2 threads) and gensim.
  : > "$OUT/speed.jsonl"
  for r in $(seq 1 "$REPS"); do
    "$BIN" "${common[@]}" --threads 1 --noise-seed "$r" | sed "s/^{/{\"run\":\"rust_t1\",/" >> "$OUT/speed.jsonl"
    "$BIN" "${common[@]}" --threads 2 --noise-seed "$r" | sed 's/^{/{"run":"rust_t2",/' >> "$OUT/speed.jsonl"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --seed "$r" | sed 's/^{/{"run":"gensim_f32",/' >> "$OUT/speed.jsonl"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --seed "$r" --dtype float64 | sed 's/^{/{"run":"gensim_f64",/' >> "$OUT/speed.jsonl"
  done
fi

if [[ $what == privacy || $what == all ]]; then
  : > "$OUT/privacy_news.jsonl"
  for eps in 0.5 1 2 4; do
    for r in $(seq 1 "$REPS"); do
      "$BIN" "${common[@]}" --epsilon "$eps" --delta 1e-5 --noise-seed "$r" | sed "s/^{/{\"run\":\"news_eps$eps\",/" >> "$OUT/privacy_news.jsonl"
    done
  done
  for r in $(seq 1 "$REPS"); do
    "$BIN" "${common[@]}" --doc-length 500 --noise-seed "$r" | sed 's/^{/{"run":"news_nonprivate_N500",/' >> "$OUT/privacy_news.jsonl"
  done
fi

if [[ $what == synthetic || $what == all ]]; then
  D=${SYNTH_DOCS:-40000}; S=${SYNTH_BATCH:-2000}
  syn=(--synthetic --synthetic-docs "$D" --synthetic-vocab 8000 --synthetic-length 500 --topics 50
       --batch-size "$S" --tau0 1024 --kappa 0.7 --json --noise-seed 1)
  : > "$OUT/privacy_synthetic.jsonl"
  "$BIN" "${syn[@]}" | sed 's/^{/{"run":"synthetic_nonprivate",/' >> "$OUT/privacy_synthetic.jsonl"
  for eps in 0.5 1 2 4; do
    "$BIN" "${syn[@]}" --epsilon "$eps" --delta 1e-5 | sed "s/^{/{\"run\":\"synthetic_eps$eps\",/" >> "$OUT/privacy_synthetic.jsonl"
  done
fi
