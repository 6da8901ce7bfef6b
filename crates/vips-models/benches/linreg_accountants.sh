#!/usr/bin/env bash
# Private Bayesian linear regression calibrated by RDP against PLD (linreg's default since
# session 9): Wine, Kin8nm and Power, splits 0-4, eps in {0.5, 1, 2, 4}, delta = 1e-5, the same
# noise seed (= split) for both accountants, so the two runs of a cell draw the same standard
# normals and differ only in the noise multiplier. One JSON object per run on stdout.
# Usage: crates/vips-models/benches/linreg_accountants.sh [UCI_DIR] > OUT.jsonl   (repository root)
set -euo pipefail
UCI=${1:-../shared/data/uci}
cargo build --release -q -p vips-models --example linreg
E=${CARGO_TARGET_DIR:-target}/release/examples/linreg
for name in wine-quality-red kin8nm power-plant; do
  for split in 0 1 2 3 4; do
    n=$(wc -l < "$UCI/$name/data/index_train_$split.txt")
    for eps in 0.5 1 2 4; do
      for acc in rdp pld; do
        $E --uci "$UCI/$name" --split "$split" --population "$n" --epsilon "$eps" --delta 1e-5 \
          --noise-seed "$split" --accountant "$acc" --json
      done
    done
  done
done
