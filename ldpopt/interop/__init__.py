"""Reports written by other LDP clients, read into ldpopt partial aggregates.

Notes: RELIABILITY.md, "ldpopt.interop"."""
