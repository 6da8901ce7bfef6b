#!/usr/bin/env python3
"""Writes a synthetic BLR CSV (header f1..fD,target) and its public ranges file, for the
`fit blr-store` vs `fit blr --csv` measurement in docs/benchmarks.md ("BLR from a CSV record
store"). Features uniform in [-1, 1] (the declared ranges), label from a fixed logistic model.

    python3 benches/store/gen_blr_csv.py ROWS FEATURES OUT.csv RANGES.csv [SEED]
"""
import math
import random
import sys


def main() -> None:
    rows, dim, out, ranges = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    w = [rng.uniform(-2, 2) for _ in range(dim)]
    with open(ranges, "w") as f:
        f.write("name,lower,upper\n")
        for j in range(dim):
            f.write(f"f{j + 1},-1,1\n")
    with open(out, "w", buffering=1 << 20) as f:
        f.write(",".join(f"f{j + 1}" for j in range(dim)) + ",target\n")
        for _ in range(rows):
            x = [rng.uniform(-1, 1) for _ in range(dim)]
            p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, x))))
            y = 1 if rng.random() < p else 0
            f.write(",".join(f"{v:.5f}" for v in x) + f",{y}\n")


if __name__ == "__main__":
    main()
