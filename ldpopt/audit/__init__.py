"""Empirical privacy audits: statistically valid lower bounds on the ε of the code that runs on a
user's device (:func:`audit_client`, every field over rounds; :func:`audit`, three events of one round).

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from .. import _deprecated
from .attacks import tokens
from .client import ClientAudit, audit_client
from .events import AuditResult, audit

__all__ = ["AuditResult", "ClientAudit", "audit", "audit_client", "tokens"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "ATTACKS": "ldpopt.audit.client",
    "EVENTS": "ldpopt.audit.events",
    "NaiveBayes": "ldpopt.audit.attacks",
    "best_threshold": "ldpopt.audit.attacks",
    "clopper_pearson": "ldpopt.audit.bounds",
    "epsilon_bound": "ldpopt.audit.bounds",
    "report_matrix": "ldpopt.audit.attacks",
    "ungroup": "ldpopt.audit.attacks",
})
