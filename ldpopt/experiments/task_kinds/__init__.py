"""The task kinds: one module per family of kinds, each registering its kinds with
:func:`ldpopt.experiments.registry.kind`; every module placed here is found by the registry."""
