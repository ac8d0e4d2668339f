"""A pytest plugin (``-p onnx_suite_outcomes``) that writes every test's outcome as JSON.

The runner reads the file named by ``ONNX_SUITE_OUTCOMES``: ``{"outcomes": {node id:
outcome}, "messages": {node id: the failure's last line}}`` with outcome ``passed``, ``failed``, ``skipped`` or ``error`` (a setup or teardown
failure, or a file that could not be collected: then the id is the file's own).  Exact
node ids from pytest itself, rather than parsed from its printed summary.
"""

from __future__ import annotations

import json
import os

_outcomes: dict[str, str] = {}
_messages: dict[str, str] = {}


def _message(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def pytest_collectreport(report) -> None:
    if report.failed:
        _outcomes[report.nodeid] = "error"
        _messages[report.nodeid] = _message(report)


def pytest_runtest_logreport(report) -> None:
    if report.when == "call":
        _outcomes[report.nodeid] = report.outcome
    elif report.failed:  # setup or teardown
        _outcomes[report.nodeid] = "error"
    if report.failed:
        _messages[report.nodeid] = _message(report)
    elif report.skipped and report.nodeid not in _outcomes:  # skipped in setup
        _outcomes[report.nodeid] = "skipped"


def pytest_sessionfinish(session) -> None:
    with open(os.environ["ONNX_SUITE_OUTCOMES"], "w", encoding="utf-8") as f:
        json.dump({"outcomes": _outcomes, "messages": _messages}, f, indent=0, sort_keys=True)
