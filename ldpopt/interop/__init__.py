"""Reports written by other LDP clients, read into ldpopt partial aggregates.

One module per peer library's report format: :mod:`.pure_ldp` (pure-ldp 1.2.0: DE, UE, LH, FastLH,
HR), :mod:`.multi_freq_ldpy` (multi-freq-ldpy 0.2.5: GRR, UE, LH, SS), :mod:`.opendp` (OpenDP 0.16
randomized response: categorical and packed bit vector). Each reader returns a
:class:`ldpopt.aggregate.Partial`, so peer reports merge with any other shard and finalise into an
``Estimate``. The readers need none of the peer packages (XXH32 is reimplemented, vectorised, in
:mod:`._xxh32`); :mod:`.conformance` and :mod:`.audit_peers` drive the real packages (the ``peers``
extra) for the interop table and the privacy audits.
"""
