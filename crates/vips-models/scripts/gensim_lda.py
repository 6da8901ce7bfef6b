#!/usr/bin/env python3
"""Reference run of gensim's online LDA on a UCI bag-of-words corpus, scored exactly as the Rust
example scores its model, for the side-by-side comparison in docs/benchmarks.md.

Set up once:   python3 -m venv /work/venv-lda && /work/venv-lda/bin/pip install "gensim==4.4.*"
Run:           /work/venv-lda/bin/python crates/vips-models/scripts/gensim_lda.py \
                   --corpus ../shared/data/news --topics 50 --batch-size 256 --tau0 1024 --kappa 0.7

Prints one JSON object: training docs per CPU-second (time.process_time around LdaModel(...)),
the held-out per-word bound in both conventions (gensim's log_perplexity with total_docs = number
of test documents, and Hoffman et al. 2010 / onlineldavb.py with total_docs = number of training
documents), perplexity = exp(-bound) (nats; gensim's own log line prints 2**(-bound)), and
document-completion perplexity with the same alternate-token split as the Rust code
(tokens enumerated in word-id order, even positions observed, odd positions held out).
"""
import argparse
import gzip
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import gensim  # noqa: E402
from gensim.models import LdaModel  # noqa: E402


def read_uci(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        d = int(f.readline())
        w = int(f.readline())
        int(f.readline())
        docs = [[] for _ in range(d)]
        for line in f:
            if line.strip():
                i, j, c = map(int, line.split())
                docs[i - 1].append((j - 1, c))
    return docs, w


def find(directory, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(directory, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(directory, stem))


def split_alternate(doc):
    first, second, pos = [], [], 0
    for w, c in doc:
        evens = (pos + c + 1) // 2 - (pos + 1) // 2
        odds = c - evens
        if evens:
            first.append((w, evens))
        if odds:
            second.append((w, odds))
        pos += c
    return first, second


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--tau0", type=float, default=1024.0)
    ap.add_argument("--kappa", type=float, default=0.7)
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sampling", choices=["stream", "poisson"], default="stream",
                    help="stream: gensim's own chunking (every document once per pass, the "
                         "default); poisson: the Rust engine's sampling, as a control -- "
                         "ceil(passes / q) updates, each on a batch drawn with inclusion "
                         "probability q = batch_size / D, rho_t = (tau0 + t)^-kappa, scaled by "
                         "D / realised batch (gensim's blend)")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                    help="gensim's dtype (float32 is gensim's default)")
    args = ap.parse_args()

    train, v = read_uci(find(args.corpus, "docword.train.txt"))
    test, v2 = read_uci(find(args.corpus, "docword.test.txt"))
    assert v == v2
    k = args.topics
    t0_cpu, t0_wall = time.process_time(), time.perf_counter()
    settings = dict(
        num_topics=k, id2word={i: str(i) for i in range(v)},
        chunksize=args.batch_size, passes=args.passes, update_every=1,
        alpha=np.full(k, 1.0 / k), eta=1.0 / k, decay=args.kappa, offset=args.tau0,
        eval_every=None, iterations=50, gamma_threshold=0.001,
        random_state=args.seed, dtype=getattr(np, args.dtype),
    )
    if args.sampling == "stream":
        lda = LdaModel(corpus=train, **settings)
        docs = len(train) * args.passes
    else:
        settings["passes"] = 1
        lda = LdaModel(corpus=None, **settings)
        d = len(train)
        q = args.batch_size / d
        rng = np.random.default_rng(args.seed + 1000)
        docs = 0
        for t in range(int(np.ceil(args.passes / q))):
            idx = np.nonzero(rng.random(d) < q)[0]
            if len(idx) == 0:
                continue
            # gensim's rho uses num_updates / chunksize and blends with scale numdocs / len(batch):
            # set both so that this update is step t of a D-document corpus.
            lda.num_updates = t * len(idx)
            lda.state.numdocs = d - len(idx)
            lda.update([train[i] for i in idx], chunksize=len(idx), passes=1)
            docs += len(idx)
    cpu = time.process_time() - t0_cpu
    wall = time.perf_counter() - t0_wall

    words = sum(c for d in test for _, c in d)
    bound_gensim = lda.log_perplexity(test)  # total_docs = len(test)
    bound_hoffman = lda.log_perplexity(test, total_docs=len(train))

    lam = lda.state.get_lambda()
    beta = lam / lam.sum(axis=1, keepdims=True)
    ll, n = 0.0, 0
    for doc in test:
        first, second = split_alternate(doc)
        if not first or not second:
            continue
        gamma, _ = lda.inference([first])
        theta = gamma[0] / gamma[0].sum()
        ids = [w for w, _ in second]
        cts = np.array([c for _, c in second], dtype=float)
        ll += float(np.dot(cts, np.log(theta @ beta[:, ids])))
        n += int(cts.sum())
    print(json.dumps({
        "library": "gensim", "version": gensim.__version__, "numpy": np.__version__,
        "topics": k, "batch_size": args.batch_size, "tau0": args.tau0, "kappa": args.kappa,
        "passes": args.passes, "dtype": args.dtype, "sampling": args.sampling,
        "docs_processed": docs,
        "train_docs": len(train), "test_docs": len(test), "test_tokens": words,
        "train_cpu_seconds": cpu, "train_wall_seconds": wall,
        "docs_per_cpu_second": docs / cpu, "docs_per_second": docs / wall,
        "per_word_bound_gensim": bound_gensim,
        "perplexity_bound_gensim": float(np.exp(-bound_gensim)),
        "per_word_bound_hoffman": bound_hoffman,
        "perplexity_bound_hoffman": float(np.exp(-bound_hoffman)),
        "completion_perplexity": float(np.exp(-ll / n)),
    }))


if __name__ == "__main__":
    main()
