"""irmodel's error types, one per layer above the codec."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every process a few ms
    from typing import Iterable, NamedTuple

from wirefmt.errors import DecodeError, EncodeError  # re-exported: the codec layer's errors
from wirefmt.records import named_tuple

if TYPE_CHECKING:
    class _ProblemFields(NamedTuple):
        code: str
        path: str
        node_name: str
        op_type: str
        message: str
else:
    _ProblemFields = named_tuple("Problem", ("code", "path", "node_name", "op_type", "message"), __name__)


class Problem(_ProblemFields):
    """One thing wrong with a model, as the checker reports it.

    ``code`` is stable (the table is in `irmodel.checker.codes` and docs/checker-codes.md),
    ``path`` says where (``graph.node[12].attribute[0]``), ``node_name``/``op_type`` name
    the innermost node concerned (empty when none), and ``message`` says what was expected
    and what was found; it starts with the reference checker's wording for the same rule.
    """

    __slots__ = ()

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        code = f"{self.code} " if self.code else ""
        node = ""
        if self.op_type or self.node_name:
            node = f" [node {self.node_name!r}, op_type {self.op_type!r}]"
        return f"{where}{code}{self.message}{node}"

    def to_dict(self) -> dict:
        """The problem as plain JSON data (what ``irmodel check --json`` prints)."""
        return self._asdict()


class ValidationError(ValueError):
    """A model that decodes but breaks the ONNX rules; ``problems`` lists every one found.

    ``str()`` starts with the first problem's message (which begins with the reference
    checker's wording, so a search for onnx's message finds it), then lists every problem
    one per line when there are several.  ``ValidationError("text")`` is one problem with
    no code and no path.
    """

    def __init__(self, problems: str | Iterable[Problem | str]) -> None:
        if isinstance(problems, str):
            problems = [Problem("", "", "", "", problems)]
        self.problems = [p if isinstance(p, Problem) else Problem("", "", "", "", str(p))
                         for p in problems]
        # args[0] is the first problem's message; the full text is made when asked for
        # (a model broken everywhere can have 100,000 problems).
        super().__init__(self.problems[0].message if self.problems else "invalid model")

    def __str__(self) -> str:
        return _describe(self.problems)

    def __reduce__(self):
        return (type(self), (self.problems,))


def _describe(problems: list) -> str:
    if not problems:
        return "invalid model"
    first = problems[0]
    if len(problems) == 1 and not first.code and not first.path:
        return first.message
    lines = [first.message, "", f"{len(problems)} problem{'s' if len(problems) > 1 else ''}:"]
    lines.extend(f"  {p}" for p in problems)
    return "\n".join(lines)


class ExternalDataError(ValidationError):
    """External data that is unsafe or inconsistent; names the tensor and the location.

    A ValidationError (so a ValueError), as onnx raises ``onnx.checker.ValidationError``
    for the same problems: code that catches onnx's error catches this one."""


# A file under a loaded model changed (an OSError: the file system's doing, not the
# model's); defined with the file context it is about.
from ._files.origin import SourceChangedError  # noqa: E402

__all__ = ["DecodeError", "EncodeError", "ValidationError", "ExternalDataError", "Problem",
           "SourceChangedError"]
