"""Make examples/emoji_oue_eps1_counts.csv: what an aggregator holds after collecting OUE reports.

The Emoji Sentiment Ranking usage counts (n = 156,941 users, d = 969 emoji; shipped with ldpopt)
are perturbed with OUE at ε = 1 through the real client randomiser and aggregated into support
counts. Run: .venv/bin/python examples/make_emoji_counts.py
"""

from pathlib import Path

import pandas as pd

from ldpopt import datasets, oracles

ds = datasets.load("emoji")
oue = oracles.get("oue", epsilon=1.0, d=ds.d)
est = oue.simulate(ds.counts, rng=2020, exact=True)
out = Path(__file__).with_name("emoji_oue_eps1_counts.csv")
pd.DataFrame({"value": ds.labels, "count": est.counts.astype("int64")}).to_csv(out, index=False)
print(f"wrote {out} (n = {est.n}, d = {est.d})")
