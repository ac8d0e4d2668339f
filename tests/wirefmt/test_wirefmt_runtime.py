"""The generic runtime's own pieces: scanner switch, scan generation, the writer's copier,
value checks, and the layering rules (no import cycles; wirefmt never imports irmodel)."""

from __future__ import annotations

import ast
import io
import os
import pathlib

import onnx
import pytest

import irmodel
import wirefmt
import wirefmt.scan
from wirefmt import scansource, use_generated_scanners
from wirefmt.writer import StreamWriter
from repo_paths import REPO

ROOT = pathlib.Path(REPO)


def test_generic_scan_decodes_without_generating_any_code(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a scanner was generated while the generic scan was selected")

    model = irmodel.load(ROOT / "examples" / "lenet.onnx")
    expected = irmodel.to_dict(model)
    monkeypatch.setattr("wirefmt.scan.build_scanner", refuse)
    use_generated_scanners(False)
    try:
        again = irmodel.loads(irmodel.dumps(irmodel.load(ROOT / "examples" / "lenet.onnx")))
        assert irmodel.to_dict(again) == expected
        assert irmodel.ModelProto._make_child is wirefmt.scan._generic_make_child
    finally:
        use_generated_scanners(True)
    assert irmodel.ModelProto._make_child is wirefmt.scan._first_make_child


def test_scan_generation_reports_the_locals_it_uses():
    cls = irmodel.NodeProto
    consts: dict = {}
    body, locals_ = scansource.scan_source(cls._spec, cls._registry, consts, lambda f: cls._classes[f.name],
                                           cls._scan_hints)
    # input and output (fields 1 and 2) are repeated strings kept in locals L1 and L2, the
    # attribute, metadata_props and device_configurations sequences (5, 9, 10) in R5, R9, R10.
    assert locals_ == {"L1", "L2", "R5", "R9", "R10"}
    assert all(name in body for name in locals_)


def test_enum_fields_refuse_bool_as_protobuf_does():
    with pytest.raises(TypeError):
        onnx.AttributeProto().type = True
    with pytest.raises(TypeError):
        irmodel.AttributeProto().type = True
    a = irmodel.AttributeProto()
    a.type = 2
    assert a.type == onnx.AttributeProto.INT


@pytest.mark.parametrize("copied", [0, 3, 10])
def test_copy_span_writes_what_the_copier_did_not(copied):
    data = bytes(range(40))
    out = io.BytesIO()
    calls = []

    def copier(mv, start, length):
        calls.append((start, length))
        out.write(bytes(mv[start:start + copied]))  # the copier writes at the file position
        return copied

    w = StreamWriter(out)
    w.write(b"<")
    w.copy_span(memoryview(data), 5, 10, copier)
    w.write(b">")
    w.flush()
    assert out.getvalue() == b"<" + data[5:15] + b">"
    assert w.written == 12 and calls == [(5, 10)]


def test_copy_span_without_a_copier_writes_the_view():
    out = io.BytesIO()
    w = StreamWriter(out)
    w.copy_span(memoryview(b"abcdef"), 1, 3)
    w.flush()
    assert out.getvalue() == b"bcd"


# -- layering ------------------------------------------------------------------------------

def _imports_of(tree: ast.AST) -> list:
    """Every import statement of a module, at any depth (inside functions too: a lazy import
    is still a dependency, and a cycle through one is still a cycle), except those under
    ``if TYPE_CHECKING:`` (annotations only, never run)."""
    found = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            stack.append(child)
    return found


def _module_imports() -> dict:
    """``{module: {imported modules of ours}}`` from every import of every package module."""
    graph: dict = {}
    for package in ("wirefmt", "irmodel"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            is_package = rel.name == "__init__"
            deps = set()
            for node in _imports_of(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = name.split(".") if is_package else name.split(".")[:-1]
                        base = base[:len(base) - (node.level - 1)]
                        target = ".".join(base + ([node.module] if node.module else []))
                    else:
                        target = node.module or ""
                    deps.add((target, tuple(a.name for a in node.names)))
                elif isinstance(node, ast.Import):
                    deps.update((a.name, ()) for a in node.names)
            graph[name] = deps
    # ``from package import a, b``: an edge to each of a, b that is a module, and to the
    # package itself only for the names that are not (its own attributes).
    resolved: dict = {}
    for m, deps in graph.items():
        edges = set()
        for target, names in deps:
            modules = [f"{target}.{n}" for n in names if f"{target}.{n}" in graph]
            edges.update(modules)
            if len(modules) < len(names) or not names:
                edges.add(target)
        resolved[m] = {d for d in edges if d in graph and d != m}
    return resolved


#: Import edges allowed to close a cycle, each with the reason it must stay.  Empty: every
#: module's imports, lazy ones included, point one way.
ALLOWED_CYCLE_EDGES: dict = {}


def test_wirefmt_never_imports_irmodel():
    for module, deps in _module_imports().items():
        if module.startswith("wirefmt"):
            assert not [d for d in deps if d.startswith("irmodel")], module


def test_no_import_cycles_between_modules():
    graph = _module_imports()
    edges = {m: {d for d in deps if (m, d) not in ALLOWED_CYCLE_EDGES} for m, deps in graph.items()}
    state: dict = {}

    def visit(m: str, stack: list) -> None:
        state[m] = "open"
        for d in sorted(edges[m]):
            if state.get(d) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d, stack + [d])
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])


def test_wirefmt_opens_no_files():
    for path in (ROOT / "wirefmt").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert "open" not in names and not {"open", "fstat", "mmap"} & attrs, path.name
    assert os.path.isdir(ROOT / "wirefmt") and wirefmt.__name__ == "wirefmt"
