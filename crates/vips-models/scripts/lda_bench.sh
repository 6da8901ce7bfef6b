#!/usr/bin/env bash
# Measurements behind the "vips-models: LDA" section of docs/benchmarks.md.
# Run from the workspace root after `cargo build --release -p vips-models --example lda`
# and the gensim venv set-up (see gensim_lda.py). Writes JSON lines under $OUT.
#   bash crates/vips-models/scripts/lda_bench.sh [speed|perplexity|privacy|synthetic|all]
# (perplexity: PASSES=1|2|3 and SEEDS=10 select the passes and the number of initial seeds)
set -euo pipefail
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release/examples/lda}
PY=${PY:-/work/venv-lda/bin/python}
NEWS=${NEWS:-../shared/data/news}
OUT=${OUT:-target/lda-bench}
REPS=${REPS:-3}
mkdir -p "$OUT"
what=${1:-all}
common=(--corpus "$NEWS" --topics 50 --batch-size 256 --tau0 1024 --kappa 0.7 --json)

# Tag a JSON line with the run name and the 1-minute load average at the time it finished.
tag() { sed "s/^{/{\"run\":\"$1\",\"load1\":$(cut -d' ' -f1 /proc/loadavg),/"; }

if [[ $what == speed || $what == all ]]; then
  # Side by side in one run, interleaved: non-private Rust (1 and 2 threads) and gensim.
  : > "$OUT/speed.jsonl"
  for r in $(seq 1 "$REPS"); do
    "$BIN" "${common[@]}" --threads 1 --noise-seed "$r" | tag rust_t1 >> "$OUT/speed.jsonl"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --seed "$r" | tag gensim_f32 >> "$OUT/speed.jsonl"
    "$BIN" "${common[@]}" --threads 2 --noise-seed "$r" | tag rust_t2 >> "$OUT/speed.jsonl"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --seed "$r" --dtype float64 | tag gensim_f64 >> "$OUT/speed.jsonl"
  done
fi

if [[ $what == perplexity || $what == all ]]; then
  # Held-out quality over initial seeds, interleaved: Rust (initial topics and Poisson batches both
  # from seed s), gensim streaming every document once per pass (its default), and gensim fed
  # Poisson batches like the Rust engine (control for the sampling scheme). PASSES expected passes.
  PASSES=${PASSES:-1}
  SEEDS=${SEEDS:-10}
  f="$OUT/perplexity_p$PASSES.jsonl"
  : > "$f"
  for s in $(seq 1 "$SEEDS"); do
    "$BIN" "${common[@]}" --passes "$PASSES" --seed "$s" --noise-seed "$s" | tag "rust_p$PASSES" >> "$f"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --passes "$PASSES" --seed "$s" | tag "gensim_stream_p$PASSES" >> "$f"
    "$PY" crates/vips-models/scripts/gensim_lda.py --corpus "$NEWS" --passes "$PASSES" --seed "$s" --sampling poisson | tag "gensim_poisson_p$PASSES" >> "$f"
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
