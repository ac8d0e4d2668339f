"""The schema classes: immutable views of one record of the operator table.

The integer codes are onnx's (`onnx.defs.OpSchema.FormalParameterOption` and friends);
the IntEnums below name them and compare equal to the plain ints the fields hold.
Protobuf values (attribute defaults, function bodies) are kept as their serialized
bytes and parsed on each access, so every caller gets its own message to edit, as
with onnx.
"""

from __future__ import annotations

from binascii import a2b_base64  # base64.b64decode's decoder, without importing base64
from enum import IntEnum
from types import MappingProxyType

TYPE_CHECKING = False  # `typing` is not imported at run time (docs/ARCHITECTURE.md, start-up)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping


class FormalParameterOption(IntEnum):
    Single = 0
    Optional = 1
    Variadic = 2


class DifferentiationCategory(IntEnum):
    Unknown = 0
    Differentiable = 1
    NonDifferentiable = 2


class SupportType(IntEnum):
    COMMON = 0
    EXPERIMENTAL = 1


class NodeDeterminism(IntEnum):
    Unknown = 0
    NonDeterministic = 1
    Deterministic = 2


# onnx's "no upper bound" for max_input/max_output (std::numeric_limits<int>::max()).
_INFINITE = 2**31 - 1


def _parse(data: bytes, type_name: str):
    # Imported here, not at the top: irmodel.defs is a subpackage of irmodel, and a
    # top-level import would tie the two import orders together.
    from ..io import loads  # noqa: PLC0415
    return loads(data, type_name)


class _Frozen:
    """Attributes are set once by ``_set`` in the constructor; assignment afterwards fails."""

    __slots__ = ()

    def _set(self, **values) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable (cannot delete {name!r})")


class FormalParameter(_Frozen):
    """One input or output of an operator (``onnx.defs.OpSchema.FormalParameter``)."""

    __slots__ = ("name", "type_str", "option", "is_homogeneous", "min_arity",
                 "differentiation_category")
    name: str
    type_str: str
    option: int
    is_homogeneous: bool
    min_arity: int
    differentiation_category: int

    def __init__(self, name: str, type_str: str, option: int, is_homogeneous: bool,
                 min_arity: int, differentiation_category: int) -> None:
        self._set(name=name, type_str=type_str, option=option, is_homogeneous=is_homogeneous,
                  min_arity=min_arity, differentiation_category=differentiation_category)

    def __repr__(self) -> str:
        return (f"FormalParameter(name={self.name!r}, type_str={self.type_str!r}, "
                f"option={FormalParameterOption(self.option).name})")


class TypeConstraintParam(_Frozen):
    """A type parameter (``T``) and the type strings it may stand for."""

    __slots__ = ("type_param_str", "allowed_type_strs")
    type_param_str: str
    allowed_type_strs: tuple[str, ...]

    def __init__(self, type_param_str: str, allowed_type_strs: Iterable[str]) -> None:
        self._set(type_param_str=type_param_str, allowed_type_strs=tuple(allowed_type_strs))

    def __repr__(self) -> str:
        return f"TypeConstraintParam({self.type_param_str!r}, {list(self.allowed_type_strs)!r})"


class Attribute(_Frozen):
    """An attribute an operator declares: its type, whether required, its default value."""

    __slots__ = ("name", "type", "required", "_default")
    _default: bytes
    name: str
    type: int
    required: bool

    def __init__(self, name: str, type: int, required: bool, default: bytes = b"") -> None:  # noqa: A002
        self._set(name=name, type=type, required=required, _default=bytes(default))

    @property
    def default_value(self) -> Any:
        """A new ``irmodel.AttributeProto`` holding the default; empty (type UNDEFINED) if none."""
        return _parse(self._default, "AttributeProto")

    def __repr__(self) -> str:
        return f"Attribute(name={self.name!r}, type={self.type}, required={self.required})"


class OpSchema(_Frozen):
    """One version of one operator, as ``onnx.defs.OpSchema`` describes it (no doc strings)."""

    __slots__ = ("name", "domain", "since_version", "deprecated", "support_level",
                 "node_determinism", "inputs", "outputs", "min_input", "max_input", "min_output",
                 "max_output", "type_constraints", "attributes",
                 "has_type_and_shape_inference_function", "has_data_propagation_function",
                 "function_opset_versions", "context_dependent_function_opset_versions",
                 "_function_bodies", "_constraints_by_name")
    name: str
    domain: str
    since_version: int
    deprecated: bool
    support_level: int
    node_determinism: int
    inputs: tuple[FormalParameter, ...]
    outputs: tuple[FormalParameter, ...]
    min_input: int
    max_input: int
    min_output: int
    max_output: int
    type_constraints: tuple[TypeConstraintParam, ...]
    attributes: Mapping[str, Attribute]
    has_type_and_shape_inference_function: bool
    has_data_propagation_function: bool
    function_opset_versions: tuple[int, ...]
    context_dependent_function_opset_versions: tuple[int, ...]
    _function_bodies: tuple[bytes, ...]
    _constraints_by_name: dict[str, TypeConstraintParam]

    FormalParameterOption = FormalParameterOption
    DifferentiationCategory = DifferentiationCategory
    SupportType = SupportType
    NodeDeterminism = NodeDeterminism

    @classmethod
    def from_record(cls, record: dict) -> OpSchema:
        """A schema from one record of the generated table (tools/gen_opschemas.py's keys)."""
        self = cls.__new__(cls)
        constraints = tuple(TypeConstraintParam(c["type_param_str"], c["allowed_type_strs"])
                            for c in record["type_constraints"])
        attributes = {a["name"]: Attribute(a["name"], a["type"], a["required"],
                                           a2b_base64(a["default_value"]))
                      for a in record["attributes"]}
        functions = record["functions"]
        self._set(
            name=record["name"], domain=record["domain"], since_version=record["since_version"],
            deprecated=record["deprecated"], support_level=record["support_level"],
            node_determinism=record["node_determinism"],
            inputs=tuple(FormalParameter(**p) for p in record["inputs"]),
            outputs=tuple(FormalParameter(**p) for p in record["outputs"]),
            min_input=record["min_input"], max_input=record["max_input"],
            min_output=record["min_output"], max_output=record["max_output"],
            type_constraints=constraints,
            attributes=MappingProxyType(attributes),
            has_type_and_shape_inference_function=record["has_type_and_shape_inference_function"],
            has_data_propagation_function=record["has_data_propagation_function"],
            function_opset_versions=tuple(f["opset_version"] for f in functions),
            context_dependent_function_opset_versions=tuple(
                record["context_dependent_function_opset_versions"]),
            _function_bodies=tuple(a2b_base64(f["body"]) for f in functions),
            _constraints_by_name={c.type_param_str: c for c in constraints},
        )
        return self

    # -- functions ---------------------------------------------------------------------------

    @property
    def has_function(self) -> bool:
        """True when the schema has a static function body (for some opset version)."""
        return bool(self.function_opset_versions)

    @property
    def has_context_dependent_function(self) -> bool:
        """True when onnx builds a body by code from the node; only the versions are stored."""
        return bool(self.context_dependent_function_opset_versions)

    @property
    def all_function_opset_versions(self) -> tuple[int, ...]:
        """Static and context-dependent function versions together, sorted (as onnx)."""
        return tuple(sorted(set(self.function_opset_versions)
                            | set(self.context_dependent_function_opset_versions)))

    @property
    def function_body(self) -> Any:
        """The newest static body as a new ``irmodel.FunctionProto``, None if there is none.

        As onnx's ``function_body``: the body registered for the highest opset version,
        which is not always the one for ``since_version`` (Softplus-1's body is for
        opset 18); `get_function_with_opset_version` picks by version.
        """
        if not self._function_bodies:
            return None
        return _parse(self._function_bodies[-1], "FunctionProto")

    def get_function_with_opset_version(self, opset_version: int) -> Any:
        """The static body for a model importing ``opset_version`` of this domain, or None.

        The body registered for the highest version <= ``opset_version`` (onnx does not
        check here that the ops it calls are unchanged up to ``opset_version``).
        """
        chosen = None
        for i, version in enumerate(self.function_opset_versions):
            if version <= opset_version:
                chosen = i
        if chosen is None:
            return None
        return _parse(self._function_bodies[chosen], "FunctionProto")

    # -- helpers -------------------------------------------------------------------------------

    @property
    def non_deterministic(self) -> bool:
        return self.node_determinism != NodeDeterminism.Deterministic

    @staticmethod
    def is_infinite(value: int) -> bool:
        """True for the ``max_input``/``max_output`` that means "no upper bound"."""
        return value == _INFINITE

    def type_constraint(self, type_param_str: str) -> TypeConstraintParam | None:
        """The constraint named ``type_param_str`` ("T"), or None when the name is not one."""
        return self._constraints_by_name.get(type_param_str)

    def __repr__(self) -> str:
        return f"OpSchema(name={self.name!r}, domain={self.domain!r}, since_version={self.since_version})"
