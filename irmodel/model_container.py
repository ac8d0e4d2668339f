"""onnx.model_container: a model whose large initializers stay numpy arrays until saved.

`ModelContainer` holds a ModelProto whose large tensors are marked external with a
location starting with ``#`` (a key, not a file: the checker skips such locations) and
the arrays themselves in ``large_initializers``; nothing over protobuf's 2 GiB limit is
ever serialized.  `ModelContainer.save` writes the arrays as external data files and
the model pointing at them; `ModelContainer.load` reads them back as arrays (mapped from
the files, through `irmodel.tensors.to_array`, so a 10 GB weight costs no copy).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Iterator

import numpy as np

from ._files.external_data import ExternalDataInfo, _get_all_tensors, uses_external_data
from .messages import GraphProto, ModelProto, TensorProto
from .tensors import to_array, tobytes_little_endian

__all__ = ["ModelContainer", "make_large_model", "make_large_tensor_proto"]

_IN_MEMORY = "#"  # the first character of a location that names an array in memory
_NAME_DROPS = ":/\\;,!"  # characters a per-tensor file name leaves out


def _point_at(tensor: TensorProto, location: str, offset: int | None = None, length: int | None = None) -> None:
    """Mark ``tensor`` external at ``location`` (it need not have raw_data, unlike
    `irmodel._files.external_write.set_external_data`: its data is an array elsewhere)."""
    tensor.ClearField("external_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            tensor.external_data.add(key=key, value=str(value))


def _subgraphs(graph: GraphProto) -> Iterator[GraphProto]:
    """Every graph held by a node attribute below ``graph``, depth first, as onnx lists them."""
    for node in graph.node:
        for attr in node.attribute:
            held = ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)
            for sub in held:
                yield sub
                yield from _subgraphs(sub)


def make_large_tensor_proto(location: str, tensor_name: str, tensor_type: int, shape: tuple[int, ...]) -> TensorProto:
    """A TensorProto named ``tensor_name`` whose data is the array stored under ``location``."""
    tensor = TensorProto(name=tensor_name)
    _point_at(tensor, location)
    tensor.data_type = tensor_type
    tensor.dims.extend(shape)
    return tensor


def _location_entry(tensor: TensorProto) -> Any:
    entry = None
    for e in tensor.external_data:
        if e.key == "location":
            entry = e
    if entry is None:
        raise RuntimeError(f"No location found for tensor name {tensor.name!r}.")
    return entry


class ModelContainer:
    """A ModelProto plus the large arrays its external tensors name (see the module doc)."""

    def __init__(self) -> None:
        self.model_proto_: ModelProto | None = None
        self.large_initializers: dict[str, np.ndarray] = {}

    def check_model(self) -> None:
        if self.model_proto is not None:
            from .checker import check_model  # noqa: PLC0415

            check_model(self.model_proto)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.large_initializers:
            raise ValueError(f"Unable to find large tensor {name!r} among {sorted(self.large_initializers)}.")
        return self.large_initializers[name]

    @property
    def model_proto(self) -> ModelProto:
        if self.model_proto_ is None:
            raise RuntimeError("ModelContainer is empty.")
        return self.model_proto_

    @model_proto.setter
    def model_proto(self, model_proto: ModelProto) -> None:
        self.model_proto_ = model_proto
        self.graphs_ = list(self.enumerate_graph_protos())

    def enumerate_graph_protos(self) -> Iterable[GraphProto]:
        """The main graph, then every subgraph below it."""
        yield self.model_proto.graph
        yield from _subgraphs(self.model_proto.graph)

    def is_in_memory_external_initializer(self, name: str) -> bool:
        """Whether ``name`` is the location of an array kept in memory (it starts with ``#``)."""
        return name.startswith(_IN_MEMORY)

    def set_large_initializers(self, large_initializers: dict[str, np.ndarray]) -> None:
        for key in large_initializers:
            if not self.is_in_memory_external_initializer(key):
                raise ValueError(f"The location {key!r} must start with '#' to be ignored by check model.")
        self.large_initializers = large_initializers

    def _external(self, model: ModelProto) -> Iterator[tuple[TensorProto, Any]]:
        """Each external tensor of ``model`` with its location entry; RuntimeError for a
        location that names no array of ``large_initializers``."""
        for tensor in _get_all_tensors(model):
            if not uses_external_data(tensor):
                continue
            entry = _location_entry(tensor)
            if entry.value not in self.large_initializers:
                raise RuntimeError(f"Unable to find large tensor named {tensor.name!r} with location "
                                   f"{entry.value!r} in {sorted(self.large_initializers)}.")
            yield tensor, entry

    def check_large_initializers(self) -> None:
        for _ in self._external(self.model_proto):
            pass

    def save(self, file_path: str, all_tensors_to_one_file: bool = False) -> ModelProto:
        """Write the model to ``file_path`` and its arrays beside it: one ``<file>.weight``
        file, or one ``<model name>-<key>.weight`` file per array.  Returns the model as
        saved (a copy pointing at the files; the container itself is unchanged).

        Each array's memory is written as it is (little-endian, as onnx's
        ``tobytes_little_endian`` gives it) without first being copied into ``bytes``, so
        saving a model whose weights fill most of memory needs no second copy of them.
        """
        folder = os.path.dirname(file_path)
        if not os.path.exists(folder):
            raise FileNotFoundError(f"Folder {folder!r} does not exist.")
        copy = ModelProto.FromString(self.model_proto.SerializeToString())
        prefix = os.path.splitext(os.path.basename(file_path))[0]
        shared = f"{os.path.basename(file_path)}.weight"
        used: dict[str, int] = {}
        files: dict[str, list[np.ndarray]] = {shared: []} if all_tensors_to_one_file else {}
        offset = 0
        for tensor, entry in list(self._external(copy)):  # every key checked before a file is written
            array = np.asarray(self.large_initializers[entry.value])
            if all_tensors_to_one_file:
                _point_at(tensor, shared, offset, array.nbytes)
                offset += array.nbytes
                files[shared].append(array)
            else:
                name = f"{_unique(f'{prefix}-{entry.value}' if prefix else entry.value, used)}.weight"
                _point_at(tensor, name)
                files[name] = [array]
        for name, arrays in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                for array in arrays:
                    _write_array(f, array)
        from .serialization import save_model  # noqa: PLC0415

        save_model(copy, file_path)
        return copy

    def load(self, file_path: str, load_large_initializers: bool = True) -> None:
        """Read a model saved by `save` (or any model with external data): its external
        tensors become arrays under keys ``#t<i>``."""
        from .serialization import load_model  # noqa: PLC0415

        self.model_proto_ = load_model(file_path, load_external_data=False)
        if load_large_initializers:
            self._load_large_initializers(file_path)

    def _load_large_initializers(self, file_path: str) -> None:
        if self.model_proto_ is None:
            raise RuntimeError("A model must be loaded before loading the weights.")
        base_dir = os.path.dirname(file_path)
        self.large_initializers = {}
        for i, tensor in enumerate(_get_all_tensors(self.model_proto_)):
            if not uses_external_data(tensor):
                continue
            ExternalDataInfo(tensor)  # validated before any file is opened
            key = f"#t{i}"
            self.large_initializers[key] = to_array(tensor, base_dir)
            _point_at(tensor, key)


def _write_array(f: Any, array: np.ndarray) -> None:
    """``array``'s bytes in little-endian order, from its own memory where it can."""
    order = array.dtype.byteorder
    if order == ">" or (order == "=" and sys.byteorder == "big") or array.dtype.hasobject:
        f.write(tobytes_little_endian(array))
        return
    f.write(np.ascontiguousarray(array).reshape(-1).view(np.uint8).data)


def _unique(name: str, used: dict[str, int]) -> str:
    """``name`` without the characters a file name leaves out, suffixed ``_N`` when taken."""
    for c in _NAME_DROPS:
        name = name.replace(c, "")
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 1
    return name


def make_large_model(graph: GraphProto, large_initializers: dict[str, np.ndarray] | None = None,
                     **kwargs: Any) -> ModelContainer:
    """A ModelContainer of ``helper.make_model(graph, **kwargs)`` with ``large_initializers``
    (keys starting with ``#``; the graph's external tensors name them as locations)."""
    from .helper import make_model  # noqa: PLC0415

    container = ModelContainer()
    container.model_proto = make_model(graph, **kwargs)
    if large_initializers:
        container.set_large_initializers(large_initializers)
        container.check_large_initializers()
    return container
