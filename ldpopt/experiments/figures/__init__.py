"""The figures drawn from saved results: one module per family of task kinds, the shared style
(``style``) and the dispatcher that reads ``experiments/figures.toml`` (``draw``)."""
