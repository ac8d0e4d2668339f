"""The scan source writer (`wirefmt.scansource`): its `Emitter`, and the properties of the
code it writes that the walk's speed depends on (docs/ARCHITECTURE.md, "Speed of the
generated scan")."""

from __future__ import annotations

import dis
import sys

import pytest

from irmodel.messages import CLASSES, REGISTRY
from wirefmt import scangen
from wirefmt.scan import _SCANNER_HELPERS
from wirefmt.scansource import Emitter


def test_the_emitter_indents_what_is_written_inside_a_block():
    out = Emitter()
    with out.block("def f(x):"):
        with out.block("if x:"):
            out.line("return 1")
        out.line("return 2")
    out.line("y = f(0)")
    assert out.source() == "def f(x):\n    if x:\n        return 1\n    return 2\ny = f(0)\n"
    ns: dict = {}
    exec(out.source(), ns)  # noqa: S102 - the source above
    assert ns["y"] == 2


def test_an_emitter_can_start_inside_a_function_and_a_block_closes_on_error():
    out = Emitter(depth=1)
    with pytest.raises(KeyError):
        with out.block("while True:"):
            raise KeyError
    out.line("pass")
    assert out.source() == "    while True:\n    pass\n"


def _unspecialised(name: str, which: str) -> list:
    """The comparisons of the generated code whose jump needs an EXTENDED_ARG, by their
    operand: CPython 3.11 does not specialise those (COMPARE_OP_INT_JUMP)."""
    code = scangen.build_scanner(CLASSES[name], REGISTRY, _SCANNER_HELPERS, which).__code__
    ins = list(dis.get_instructions(code))
    return [ins[i - 1].argval for i, x in enumerate(ins) if x.opname == "COMPARE_OP"
            and ins[i + 1].opname == "EXTENDED_ARG"]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the bytecode of CPython 3.11, as tuned")
@pytest.mark.parametrize("which", ["make_child", "scan"])
def test_the_walks_hot_comparisons_are_specialised(which):
    # A node's and an attribute's tag tests and end test: every one but the node's
    # `tag == 42` (attribute), whose branch the eager bound's test makes longer than 255
    # code units (measured: +0.3% of the walk's instructions, left so; see the eager_span scan hint).
    assert _unspecialised("AttributeProto", which) == []
    assert _unspecialised("NodeProto", which) == [42]


def test_the_source_writer_imports_nothing_but_wirefmt():
    # Imported by the first process after a change of the generator (a cold code cache):
    # `contextlib`, say, would bring `collections` and `functools` into that process.
    import pathlib
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    code = ("import sys; before = set(sys.modules); import wirefmt.scansource; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=root, timeout=60)
    assert proc.returncode == 0, proc.stderr
    added = proc.stdout.split()
    assert "wirefmt.scansource" in added
    assert [m for m in added if m != "__future__" and m.split(".")[0] != "wirefmt"] == []
