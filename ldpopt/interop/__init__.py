"""Reports written by other LDP clients, read into ldpopt partial aggregates.

Notes: docs/notes/reliability.md, "ldpopt.interop"."""
