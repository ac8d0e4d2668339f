"""``irmodel check PATH [--json]``: the command's logic, apart from argument parsing.

`run_check` returns the exit status and prints the result: nothing but a short line when
the model is valid, one line per problem (or a JSON list of problems) when it is not.
A file that is not an ONNX model at all (its bytes do not decode) is invalid too, as one
problem with code B001.  Errors of the file system are the caller's to report (status 2).
"""

from __future__ import annotations

import json
from typing import TextIO

from wirefmt import DecodeError
from wirefmt.safetext import json_ready, one_line, safe_text

from ..errors import Problem, ValidationError

EXIT_VALID, EXIT_INVALID = 0, 1


def problems_of(path: str) -> list[Problem]:
    """Every problem of the model file at ``path`` (empty when it is valid).

    Raises OSError when the file cannot be read.
    """
    from .model import check_model  # noqa: PLC0415

    try:
        check_model(path)
    except ValidationError as exc:
        return list(exc.problems)
    except DecodeError as exc:
        return [Problem("B001", "", "", "", f"not an ONNX model: the bytes do not decode: {exc}")]
    return []


def problem_lines(problems: list[Problem]) -> list[str]:
    """One line per problem: ``path: CODE message [node 'name', op_type 'Op']``, with the
    model's strings in it made safe to print (`wirefmt.safetext.one_line`)."""
    return [one_line(str(p)) for p in problems]


def problem_json(problems: list[Problem]) -> str:
    """A JSON list of ``{"code", "path", "node_name", "op_type", "message"}`` objects
    (ASCII, bytes-valued strings in `wirefmt.safetext`'s JSON form)."""
    return json.dumps(json_ready([p.to_dict() for p in problems]), indent=2, ensure_ascii=True)


def run_check(path: str, as_json: bool, out: TextIO) -> int:
    """Check ``path`` and write the result to ``out``; 0 valid, 1 invalid."""
    problems = problems_of(path)
    if as_json:
        out.write(problem_json(problems) + "\n")
    elif problems:
        for line in problem_lines(problems):
            out.write(line + "\n")
    else:
        out.write(f"{safe_text(path)}: valid\n")
    return EXIT_INVALID if problems else EXIT_VALID
