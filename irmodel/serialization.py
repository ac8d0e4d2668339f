"""onnx.serialization's registry of formats, and onnx's ``load_*``/``save_*`` functions on it.

A format is an object with ``supported_format`` (its name), ``file_extensions`` (with
the dot) and ``serialize_proto(proto) -> bytes`` / ``deserialize_proto(data, proto) ->
proto``, as onnx's ``ProtoSerializer`` protocol says; `registry` maps names and file
extensions to them.  Registered here: ``protobuf`` (the wire format; a path is mapped, not
read, by `irmodel.io.load`), ``json`` (protobuf's JSON form, `wirefmt.jsonform`) and
``textproto`` (protobuf's text format, `wirefmt.textform`).  ``onnxtxt`` (the ONNX
textual syntax) is registered when `irmodel.printer` and `irmodel.parser` exist; until
then asking for it raises onnx's "Unsupported format" ValueError.

The module imports nothing beyond `irmodel.io` (so ``irmodel.load`` stays as cheap as it
was): each format imports its codec when first used.
"""

from __future__ import annotations

import os

from .io import load as _load_file, loads as _loads
from .messages import ModelProto, TensorProto

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Collection, Protocol

    class ProtoSerializer(Protocol):
        """What a format provides (onnx.serialization.ProtoSerializer)."""

        supported_format: str
        file_extensions: Collection[str]

        def serialize_proto(self, proto: Any) -> Any: ...

        def deserialize_proto(self, serialized: Any, proto: Any) -> Any: ...
else:
    class ProtoSerializer:
        """Base of a format (onnx.serialization.ProtoSerializer): ``supported_format``,
        ``file_extensions``, ``serialize_proto`` and ``deserialize_proto``."""

        supported_format: str
        file_extensions: frozenset = frozenset()

        def serialize_proto(self, proto):
            raise NotImplementedError

        def deserialize_proto(self, serialized, proto):
            raise NotImplementedError

__all__ = ["registry"]

_ENCODING = "utf-8"
_DEFAULT_FORMAT = "protobuf"


class _Registry:
    """Formats by name and by file extension (the last registration of a name wins)."""

    def __init__(self) -> None:
        self._serializers: dict = {}
        self._extension_to_format: dict = {}

    def register(self, serializer: ProtoSerializer) -> None:
        self._serializers[serializer.supported_format] = serializer
        self._extension_to_format.update(dict.fromkeys(serializer.file_extensions, serializer.supported_format))

    def get(self, fmt: str) -> ProtoSerializer:
        """The serializer of ``fmt``; ValueError (onnx's message) for an unknown one."""
        try:
            return self._serializers[fmt]
        except KeyError:
            raise ValueError(f"Unsupported format: '{fmt}'. Supported formats are: "
                             f"{self._serializers.keys()}") from None

    def get_format_from_file_extension(self, file_extension: str) -> str | None:
        return self._extension_to_format.get(file_extension)


def _text(serialized, what: str = "serialized") -> str:
    if isinstance(serialized, bytes):
        return serialized.decode(_ENCODING)
    if isinstance(serialized, str):
        return serialized
    raise TypeError(f"Parameter '{what}' must be bytes or str, but got type: {type(serialized)}")


class _ProtobufSerializer(ProtoSerializer):
    """The protobuf wire format: bytes identical to protobuf's ``SerializeToString``."""

    supported_format = "protobuf"
    file_extensions = frozenset({".onnx", ".pb"})

    def serialize_proto(self, proto: Any) -> bytes:
        if callable(getattr(proto, "SerializeToString", None)):
            return proto.SerializeToString()
        raise TypeError(f"No SerializeToString method is detected.\ntype is {type(proto)}")

    def deserialize_proto(self, serialized: bytes, proto: Any) -> Any:
        if not isinstance(serialized, bytes):
            raise TypeError(f"Parameter 'serialized' must be bytes, but got type: {type(serialized)}")
        proto.ParseFromString(serialized)
        return proto


class _TextProtoSerializer(ProtoSerializer):
    """protobuf's text format (``text_format.MessageToString`` / ``Parse``)."""

    supported_format = "textproto"
    file_extensions = frozenset({".txtpb", ".textproto", ".prototxt", ".pbtxt"})

    def serialize_proto(self, proto: Any) -> bytes:
        from wirefmt.textform import to_text  # noqa: PLC0415

        return to_text(proto).encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        from wirefmt.textform import merge_text  # noqa: PLC0415

        proto.Clear()
        merge_text(_text(serialized), proto)
        return proto


class _JsonSerializer(ProtoSerializer):
    """protobuf's JSON form, as ``json_format.MessageToJson(proto, preserving_proto_field_name=True)``."""

    supported_format = "json"
    file_extensions = frozenset({".json", ".onnxjson"})

    def serialize_proto(self, proto: Any) -> bytes:
        import json  # noqa: PLC0415

        from wirefmt import to_dict  # noqa: PLC0415

        return json.dumps(to_dict(proto, True), indent=2).encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        import json  # noqa: PLC0415

        from wirefmt import from_dict  # noqa: PLC0415

        text = _text(serialized)
        try:
            data = json.loads(text)
        except ValueError as exc:
            from wirefmt import ParseError  # noqa: PLC0415

            raise ParseError(f"Failed to load JSON: {exc}") from None
        proto.CopyFrom(from_dict(data, type(proto)))
        return proto


class _TextualSerializer(ProtoSerializer):
    """The ONNX textual syntax, through `irmodel.printer` and `irmodel.parser`."""

    supported_format = "onnxtxt"
    file_extensions = frozenset({".onnxtxt", ".onnxtext"})

    def serialize_proto(self, proto: Any) -> bytes:
        from . import printer  # noqa: PLC0415

        return printer.to_text(proto).encode(_ENCODING)

    def deserialize_proto(self, serialized: bytes | str, proto: Any) -> Any:
        from . import parser  # noqa: PLC0415

        text = _text(serialized)
        for kind in ("ModelProto", "GraphProto", "FunctionProto", "NodeProto"):
            if type(proto).__name__ == kind:
                return getattr(parser, "parse_" + kind[:-5].lower())(text)
        raise ValueError(f"Unsupported proto type: {type(proto)}")


def _text_syntax_available() -> bool:
    """Whether irmodel has the printer and parser that the ``onnxtxt`` format needs (looked
    up on disk, not imported: they are imported when the format is first used)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return all(os.path.exists(os.path.join(here, m + ".py")) or os.path.isdir(os.path.join(here, m))
               for m in ("printer", "parser"))


registry = _Registry()
registry.register(_ProtobufSerializer())
registry.register(_TextProtoSerializer())
registry.register(_JsonSerializer())
if _text_syntax_available():
    registry.register(_TextualSerializer())


# -- onnx's load_* and save_* (exported by the irmodel package) ---------------------------

def _file_path(f: Any) -> str | None:
    if isinstance(f, (str, os.PathLike)):
        return os.path.abspath(f)
    name = getattr(f, "name", None)
    return os.path.abspath(name) if isinstance(name, str) else None


def _format_of(fmt: str | None, f: Any = None) -> str:
    """onnx's rule: the format given, else the one of ``f``'s extension, else protobuf."""
    if fmt is None and f is not None:
        path = _file_path(f)
        if path is not None:
            fmt = registry.get_format_from_file_extension(os.path.splitext(path)[1])
    return fmt or _DEFAULT_FORMAT


def _read_bytes(f: Any) -> bytes:
    if hasattr(f, "read") and callable(f.read):
        return f.read()
    with open(f, "rb") as fh:
        return fh.read()


def _write_bytes(data: bytes, f: Any) -> None:
    if hasattr(f, "write") and callable(f.write):
        f.write(data)
        return
    from ._files.atomic import atomic_write  # noqa: PLC0415

    atomic_write(f, lambda fh: fh.write(data))


def _is_default_protobuf(fmt: str) -> bool:
    """Whether ``fmt`` is our own wire format, which `irmodel.io` reads lazily over a mmap."""
    return fmt == _DEFAULT_FORMAT and type(registry.get(fmt)) is _ProtobufSerializer


def load_model(f: IO[bytes] | str | os.PathLike, format: str | None = None, load_external_data: bool = True,  # noqa: A002
               *, type_name: str = "ModelProto", mmap: bool = True) -> Any:
    """A ModelProto from a path or binary file (``onnx.load_model``).

    In the protobuf format a path is mapped, not read, and external data is resolved
    lazily (`irmodel.io.load`, whose keyword-only ``type_name`` and ``mmap`` pass
    through).  Another format is read whole and decoded by its registered serializer;
    then ``load_external_data`` loads the tensors' data files as onnx does.
    """
    fmt = _format_of(format, f)
    if _is_default_protobuf(fmt):
        return _load_file(f, load_external_data, type_name, mmap=mmap)  # type: ignore[arg-type]
    from .io import message_class  # noqa: PLC0415

    model = registry.get(fmt).deserialize_proto(_read_bytes(f), message_class(type_name)())
    path = _file_path(f)
    if load_external_data and path is not None and type_name == "ModelProto":
        from ._files.external_data import load_external_data_for_model  # noqa: PLC0415

        load_external_data_for_model(model, os.path.dirname(path))
    return model


def load_tensor(f: IO[bytes] | str | os.PathLike, format: str | None = None) -> Any:  # noqa: A002
    """A TensorProto from a path or binary file (``onnx.load_tensor``)."""
    fmt = _format_of(format, f)
    if _is_default_protobuf(fmt):
        return _load_file(f, True, "TensorProto")  # type: ignore[arg-type]
    return registry.get(fmt).deserialize_proto(_read_bytes(f), TensorProto())


def load_model_from_string(s: bytes | str, format: str = _DEFAULT_FORMAT) -> Any:  # noqa: A002
    """A ModelProto from serialized bytes (``onnx.load_model_from_string``)."""
    if _is_default_protobuf(format) and isinstance(s, bytes):
        return _loads(s, "ModelProto")
    return registry.get(format).deserialize_proto(s, ModelProto())


def load_tensor_from_string(s: bytes, format: str = _DEFAULT_FORMAT) -> Any:  # noqa: A002
    """A TensorProto from serialized bytes (``onnx.load_tensor_from_string``)."""
    if _is_default_protobuf(format) and isinstance(s, bytes):
        return _loads(s, "TensorProto")
    return registry.get(format).deserialize_proto(s, TensorProto())


def save_model(proto: Any, f: IO[bytes] | str | os.PathLike, format: str | None = None, *,  # noqa: A002
               save_as_external_data: bool = False, all_tensors_to_one_file: bool = True,
               location: str | None = None, size_threshold: int = 1024, convert_attribute: bool = False,
               checksum: bool = False) -> None:
    """Write a ModelProto (or its serialized bytes) to a path or binary file (``onnx.save_model``).

    In the protobuf format this is `irmodel.save` (a path replaced atomically, unchanged
    parts copied from the loaded file; ``checksum`` as there).  In another format the
    model's external data is moved and written first, as onnx does, then the text.
    """
    if isinstance(proto, bytes):
        proto = _loads(proto, "ModelProto")
    fmt = _format_of(format, f)
    if _is_default_protobuf(fmt):
        _save_protobuf(proto, f, save_as_external_data, all_tensors_to_one_file, location, size_threshold,
                       convert_attribute, checksum)
        return
    if save_as_external_data:
        from ._files.external_write import convert_model_to_external_data  # noqa: PLC0415

        convert_model_to_external_data(proto, all_tensors_to_one_file, location, size_threshold, convert_attribute)
    path = _file_path(f)
    if path is not None:
        from ._files.external_write import write_external_data_tensors  # noqa: PLC0415

        proto = write_external_data_tensors(proto, os.path.dirname(path))
    _write_bytes(registry.get(fmt).serialize_proto(proto), f)


def _save_protobuf(model: Any, f: Any, save_as_external_data: bool, all_tensors_to_one_file: bool,
                   location: str | None, size_threshold: int, convert_attribute: bool, checksum: bool) -> None:
    """The protobuf format's save: untouched parts of a loaded model are copied from its
    original bytes, and a path is replaced atomically: an error or a crash leaves the
    previous file or the complete new one, never a partial file (`irmodel.io` says
    exactly what is guaranteed, and which ``OSError`` each failure raises).  With
    ``save_as_external_data`` the tensors go to data files as ExternalData.md describes
    (`irmodel._files.external_write.save_with_external_data`); ``checksum=True`` (external data
    only) then adds a ``checksum`` entry with the SHA1 of each external tensor's bytes,
    which ``to_array(..., verify_checksum=True)`` checks.  The default writes none, as
    onnx (which has no such option) does.
    """
    if save_as_external_data:
        from ._files.external_write import save_with_external_data  # noqa: PLC0415

        save_with_external_data(model, f, all_tensors_to_one_file=all_tensors_to_one_file, location=location,
                                size_threshold=size_threshold, convert_attribute=convert_attribute,
                                checksum=checksum)
        return
    if checksum:
        raise ValueError("checksum=True needs save_as_external_data=True: checksums are "
                         "written for the tensors moved to data files")
    # Only a model has data files of its own; any other message is written as it is.
    if isinstance(f, (str, os.PathLike)) and getattr(model, "_type_name", "ModelProto") == "ModelProto":
        tensors = _external_tensors(model)  # one walk serves both questions below
        if any(t.HasField("raw_data") for t in tensors):
            # Tensors marked external that still hold ``raw_data`` (after
            # `convert_model_to_external_data` or ``set_external_data``): onnx's
            # ``save_model`` writes their data files; the data files and the model are
            # written in one atomic step, as any external-data save.
            from ._files.external_write import save_with_external_data  # noqa: PLC0415

            save_with_external_data(model, f, size_threshold=_CONVERT_NOTHING)
            return
        _carry_external_data(model, os.path.abspath(os.fspath(f)), tensors)
    from .io import save_message  # noqa: PLC0415

    save_message(model, f)


def _external_tensors(model: Any) -> list:
    """The tensors of ``model`` marked external, in the reference's order; the nodes that
    cannot hold one are skipped by their bytes (`irmodel._wireview.holders`)."""
    from ._files.external_data import external_tensors  # noqa: PLC0415
    from ._wireview.holders import tensor_holders  # noqa: PLC0415

    return list(external_tensors(model, tensor_holders))


#: A size no tensor reaches: `save_with_external_data` then converts no further tensor
#: and only writes the data of those already marked external (and the model).
_CONVERT_NOTHING = 1 << 62


def _carry_external_data(model: Any, path: str, tensors: list) -> None:
    """Copy the data files of a loaded model's external tensors (``tensors``, all of them)
    next to ``path`` when it is in another directory, so that the saved model's
    locations hold there too.

    onnx's ``load_model`` reads external data into the tensors, so its ``save_model``
    writes a complete model anywhere; irmodel keeps that data in its files until it is
    read, and copies the files (whole, byte for byte: every location, offset and
    checksum stays true).  A model loaded with ``load_external_data=False`` is saved as
    it is, its locations left to the caller, as onnx leaves them.
    """
    if not tensors:
        return
    from ._files.origin import origin_of  # noqa: PLC0415

    origin = origin_of(model)
    if origin is None or not origin.load_external or not origin.base_dir:
        return
    target = os.path.dirname(os.path.abspath(path))
    if os.path.realpath(target) == os.path.realpath(origin.base_dir):
        return
    from ._files.external_write import copy_external_data  # noqa: PLC0415

    copy_external_data(model, origin.base_dir, target, model_path=os.path.abspath(path), tensors=tensors)


def save_tensor(proto: Any, f: IO[bytes] | str | os.PathLike, format: str | None = None) -> None:  # noqa: A002
    """Write a TensorProto to a path or binary file (``onnx.save_tensor``)."""
    _write_bytes(registry.get(_format_of(format, f)).serialize_proto(proto), f)


# onnx's shorter names for the same functions.
load = load_model
load_from_string = load_model_from_string
save = save_model
