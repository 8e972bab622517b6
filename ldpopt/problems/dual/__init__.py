"""The dual method on compiled rows: the floor between the items (objectives/, constraints/) and the
check (check/), so both the certificate and the structured solver (``solvers.structured``) read it.

:mod:`.structure` compiles a problem's constraints into one :class:`~.structure.Structure` (the
simplex, bounds and linear rows A f ⋈ b, and the tree or chain they form); :mod:`.dual` is Newton on
the Lagrange multipliers of those rows with per-value argmins in closed form; :mod:`.simplex` the
closed forms' expected-O(d) pivot search on the simplex alone; :mod:`.grouped` Newton on the simplex
multiplier over the distinct counts; :mod:`.row_groups` the same over rows that share their count,
bounds and column; :mod:`.blocks` disjoint subset sums block by block; :mod:`.chain` one Monotone
chain by generalised PAV; :mod:`.tree` a range tree; :mod:`.multipliers` the multipliers named as
``Solution.duals``. Nothing here imports check/ or solvers/.
"""
