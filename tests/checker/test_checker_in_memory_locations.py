"""External data locations starting with ``#``: arrays kept in memory, not files.

onnx's ``model_container`` names its large arrays ``#...`` and its checker skips the file
rules (inside the directory, a regular file, one hard link) for a path that starts with
``#``, while still applying the lexical rules and the symbolic-link rule.  The path is the
model's directory joined with the normalised location, so a model checked by its path in
another directory is held to every rule, and a message (whatever directory it was loaded
from) is checked as if it lay in the current directory, as onnx checks messages.  Each
case is judged against onnx's checker.
"""

from __future__ import annotations

import os

import pytest

import irmodel
from irmodel import TensorProto, helper
from irmodel.checker.external import in_memory

FLOAT = TensorProto.FLOAT


def _model(location: str) -> irmodel.ModelProto:
    """y = x + w, with w stored externally at ``location``."""
    w = irmodel.TensorProto(name="w", data_type=FLOAT, dims=[3], data_location=TensorProto.EXTERNAL)
    w.external_data.add(key="location", value=location)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", FLOAT, [3])],
                              [helper.make_tensor_value_info("y", FLOAT, [3])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _codes(model_or_path) -> list[str]:
    try:
        irmodel.check_model(model_or_path)
    except irmodel.ValidationError as exc:
        return [p.code for p in exc.problems]
    return []


def _onnx_accepts(model_or_path) -> bool:
    import onnx

    data = model_or_path if isinstance(model_or_path, str) else irmodel.dumps(model_or_path)
    try:
        onnx.checker.check_model(data)
    except Exception:  # noqa: BLE001 - onnx's ValidationError
        return False
    return True


@pytest.mark.parametrize("location, expected", [
    ("#loc0", []),                 # model_container's name for an array in memory
    ("#", []),
    ("#sub/dir/w", []),            # no such directory: never looked at
    ("./#loc", []),                # normalised to '#loc' before the test, as onnx does
    ("sub/../#loc", []),
    ("a#loc", ["X706"]),           # '#' not first: a file name like any other
    ("#/../../w.bin", ["X703"]),   # the lexical rules still hold
    ("#a/../../w.bin", ["X703"]),
    ("/#loc", ["X702"]),
])
def test_in_memory_location_checked_in_memory(tmp_path, monkeypatch, location, expected):
    monkeypatch.chdir(tmp_path)
    model = _model(location)
    assert _codes(model) == expected
    assert _onnx_accepts(model) == (expected == [])


def test_symlink_named_like_an_in_memory_location_is_refused(tmp_path, monkeypatch):
    (tmp_path / "target.bin").write_bytes(b"\0" * 12)
    os.symlink(tmp_path / "target.bin", tmp_path / "#loc")
    monkeypatch.chdir(tmp_path)
    model = _model("#loc")
    assert _codes(model) == ["X704"]
    assert not _onnx_accepts(model)


def test_in_memory_location_of_a_model_file_in_a_directory_is_a_missing_file(tmp_path):
    """Checked by its path in a directory, the path is '<dir>/#loc', which does not start
    with '#'; loaded, the message is checked as onnx checks any message: as if in the
    current directory (though its other locations stay relative to its directory)."""
    path = str(tmp_path / "m.onnx")
    irmodel.save(_model("#loc"), path)
    assert _codes(path) == ["X706"]
    assert not _onnx_accepts(path)
    loaded = irmodel.load(path, load_external_data=False)
    assert _codes(loaded) == []
    assert _onnx_accepts(loaded)


def test_in_memory_location_of_a_model_file_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    irmodel.save(_model("#loc"), "m.onnx")
    assert _codes("m.onnx") == []
    assert _onnx_accepts("m.onnx")


@pytest.mark.parametrize("base_dir, location, expected", [
    ("", "#x", True), ("", "./#x", True), ("", "x#", False), ("d", "#x", False),
    ("#d", "x", True), ("", "#x/../y", False),
])
def test_in_memory_is_decided_on_the_joined_normalised_path(base_dir, location, expected):
    assert in_memory(base_dir, location) is expected
