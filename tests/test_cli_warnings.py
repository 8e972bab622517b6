"""A Python warning raised while an ``ldpopt`` command runs is one line on stderr, ``ldpopt COMMAND:
warning: MESSAGE``, without the source path and line Python's format adds (the real command's
case: tests/test_aggregate_identity.py, shards without identity)."""

from __future__ import annotations

import argparse
import warnings

import ldpopt.cli as cli


def test_warnings_are_one_line_without_source_paths_and_the_printer_is_restored(capsys, monkeypatch):
    def command(args):
        warnings.warn("first part\n  of a message", UserWarning)
        warnings.warn("values overflowed", RuntimeWarning)
        return 0

    parser = argparse.ArgumentParser()
    parser.set_defaults(func=command, command="demo")
    monkeypatch.setattr(cli, "build_parser", lambda name: parser)
    before = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert cli.main([]) == 0
    assert warnings.showwarning is before
    err = capsys.readouterr().err
    assert err.splitlines() == ["ldpopt demo: warning: first part of a message",
                                "ldpopt demo: warning: RuntimeWarning: values overflowed"]
