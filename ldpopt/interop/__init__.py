"""Reports written by other LDP clients, read into ldpopt partial aggregates.

One module per peer library's report format: :mod:`.pure_ldp` (pure-ldp 1.2.0: DE, UE, LH, FastLH,
HR), :mod:`.multi_freq_ldpy` (multi-freq-ldpy 0.2.5: GRR, UE, LH, SS), :mod:`.multi_freq_ldpy_multi` (its multi-attribute SPL, SMP,
RS+FD reports in the formats of :mod:`ldpopt.multi`'s protocols), :mod:`.opendp` (OpenDP 0.16
randomized response: categorical and packed bit vector), :mod:`.pure_ldp_hh` (pure-ldp 1.2.0's PEM
heavy-hitter reports, searched as its server does, into a :class:`ldpopt.heavy.HeavyHitters`). Each
frequency-oracle reader returns a :class:`ldpopt.aggregate.Partial`, so peer reports merge with any other shard and finalise into an
``Estimate``. The readers need none of the peer packages (XXH32 is reimplemented, vectorised, in
:mod:`._xxh32`); :mod:`.conformance` and :mod:`.audit_peers` drive the real packages (the ``peers``
extra) for the interop table and the privacy audits.
"""
