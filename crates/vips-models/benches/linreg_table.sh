#!/usr/bin/env bash
# Private and non-private Bayesian linear regression on Wine, Kin8nm and Power, splits 0-4,
# eps = 1, delta = 1e-5 (issue 19). Noise seed = split (reproducible; a seeded run is for
# experiments only). Prints one JSON object per run.
# Usage: crates/vips-models/benches/linreg_table.sh [UCI_DIR]   (from the repository root)
set -euo pipefail
UCI=${1:-../shared/data/uci}
cargo build --release -q -p vips-models --example linreg
E=target/release/examples/linreg
for ds in wine-quality-red:1439 kin8nm:7373 power-plant:8611; do
  name=${ds%%:*}; n=${ds##*:}
  for split in 0 1 2 3 4; do
    $E --uci "$UCI/$name" --split "$split" --json
    $E --uci "$UCI/$name" --split "$split" --population "$n" --epsilon 1 --delta 1e-5 \
      --noise-seed "$split" --json
  done
done
