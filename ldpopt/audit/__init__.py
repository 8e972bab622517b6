"""Empirical privacy audits: statistically valid lower bounds on the ε of the code that runs on a
user's device (:func:`audit_client`, every field over rounds; :func:`audit`, three events of one round).

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from .attacks import NaiveBayes, best_threshold, report_matrix, tokens, ungroup
from .bounds import clopper_pearson, epsilon_bound
from .client import ATTACKS, ClientAudit, audit_client
from .events import EVENTS, AuditResult, audit

__all__ = ["ATTACKS", "EVENTS", "AuditResult", "ClientAudit", "NaiveBayes", "audit", "audit_client",
           "best_threshold", "clopper_pearson", "epsilon_bound", "report_matrix", "tokens", "ungroup"]
