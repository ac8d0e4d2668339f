"""The schema classes: immutable views of one record of the operator table.

The integer codes are onnx's (`onnx.defs.OpSchema.FormalParameterOption` and friends);
the IntEnums below name them and compare equal to the plain ints the fields hold.
Protobuf values (attribute defaults, function bodies) are kept as their serialized
bytes and parsed on each access, so every caller gets its own message to edit, as
with onnx.
"""

from __future__ import annotations

import operator
from binascii import a2b_base64  # base64.b64decode's decoder, without importing base64
from builtins import type as builtins_type  # `type` is a parameter name below, as in onnx
from enum import IntEnum
from types import MappingProxyType

from .typestrings import normalize_type_str

TYPE_CHECKING = False  # `typing` is not imported at run time (docs/ARCHITECTURE.md, start-up)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping


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


class AttrType(IntEnum):
    """``AttributeProto.AttributeType``: the type an operator declares for an attribute."""

    FLOAT = 1
    INT = 2
    STRING = 3
    TENSOR = 4
    GRAPH = 5
    FLOATS = 6
    INTS = 7
    STRINGS = 8
    TENSORS = 9
    GRAPHS = 10
    SPARSE_TENSOR = 11
    SPARSE_TENSORS = 12
    TYPE_PROTO = 13
    TYPE_PROTOS = 14


class FormalParameter(_Frozen):
    """One input or output of an operator (``onnx.defs.OpSchema.FormalParameter``).

    ``types`` is the set of types the parameter allows, in the reference's normalised
    spelling: empty for a parameter made alone, filled when it is part of a schema (from
    its type constraint, or its own ``type_str`` when that is a type).
    """

    __slots__ = ("name", "type_str", "description", "option", "is_homogeneous", "min_arity",
                 "differentiation_category", "_declared", "_types")
    name: str
    type_str: str
    description: str
    option: int
    is_homogeneous: bool
    min_arity: int
    differentiation_category: int
    _declared: tuple[str, ...] | None
    _types: frozenset | None

    def __init__(self, name: str, type_str: str, description: str = "", *,
                 param_option: int = FormalParameterOption.Single, is_homogeneous: bool = True,
                 min_arity: int = 1,
                 differentiation_category: int = DifferentiationCategory.Unknown) -> None:
        _require(name, str, "name")
        _require(type_str, str, "type_str")
        _require(description, str, "description")
        self._set(name=name, type_str=type_str, description=description,
                  option=_member(FormalParameterOption, param_option, "param_option"),
                  is_homogeneous=bool(is_homogeneous), min_arity=_c_int(min_arity, "min_arity"),
                  differentiation_category=_member(DifferentiationCategory, differentiation_category,
                                                   "differentiation_category"),
                  _declared=None, _types=frozenset())

    @classmethod
    def _in_schema(cls, name: str, type_str: str, option: int, is_homogeneous: bool, min_arity: int,
                   differentiation_category: int, declared: tuple[str, ...],
                   description: str = "") -> FormalParameter:
        """A parameter of a schema: ``declared`` is what it allows as the schema spells it."""
        self = cls.__new__(cls)
        self._set(name=name, type_str=type_str, description=description, option=option,
                  is_homogeneous=is_homogeneous, min_arity=min_arity,
                  differentiation_category=differentiation_category, _declared=declared, _types=None)
        return self

    @property
    def type_set(self) -> frozenset:
        """`types` as a frozenset, normalised once (what ``check_type`` compares with)."""
        types = self._types
        if types is None:
            types = frozenset(normalize_type_str(t) for t in self._declared or ())
            object.__setattr__(self, "_types", types)
        return types

    @property
    def types(self) -> set:
        return set(self.type_set)

    def __repr__(self) -> str:
        return (f"OpSchema.FormalParameter(name={self.name!r}, type_str={self.type_str!r}, "
                f"description={self.description!r}, param_option={_enum_repr(FormalParameterOption, self.option)}, "
                f"is_homogeneous={self.is_homogeneous!r}, min_arity={self.min_arity!r}, "
                f"differentiation_category={_enum_repr(DifferentiationCategory, self.differentiation_category)})")


class TypeConstraintParam(_Frozen):
    """A type parameter (``T``) and the type strings it may stand for."""

    __slots__ = ("type_param_str", "_allowed", "description")
    type_param_str: str
    _allowed: tuple[str, ...]
    description: str

    def __init__(self, type_param_str: str, allowed_type_strs: Iterable[str], description: str = "") -> None:
        _require(type_param_str, str, "type_param_str")
        _require(description, str, "description")
        if isinstance(allowed_type_strs, str):
            raise TypeError("allowed_type_strs must be a sequence of type strings, not one str")
        allowed = tuple(allowed_type_strs)
        for t in allowed:
            _require(t, str, "an allowed type string")
        self._set(type_param_str=type_param_str, _allowed=allowed, description=description)

    @property
    def allowed_type_strs(self) -> list[str]:
        """The allowed types as the schema spells them (a new list, as onnx gives)."""
        return list(self._allowed)

    def __repr__(self) -> str:
        return (f"OpSchema.TypeConstraintParam(type_param_str={self.type_param_str!r}, "
                f"allowed_type_strs={list(self._allowed)!r}, description={self.description!r})")


class Attribute(_Frozen):
    """An attribute an operator declares: its type, whether required, its default value.

    Made as onnx's: ``Attribute(name, type, description="", *, required=True)``, or
    ``Attribute(name, default_value, description="")`` with an AttributeProto (ours or
    the reference's) holding the default, which makes it optional.
    """

    __slots__ = ("name", "type", "required", "_default", "description")
    _default: bytes
    name: str
    type: int
    required: bool
    description: str

    def __init__(self, name: str, type: Any, description: str = "", *, required: bool = True) -> None:  # noqa: A002
        _require(name, str, "name")
        _require(description, str, "description")
        default = b""
        if isinstance(type, int):
            code = _member(AttrType, type, "type")
        else:
            serialize = getattr(type, "SerializeToString", None)
            if serialize is None:
                raise TypeError("Attribute takes an AttrType or a default value (an AttributeProto), "
                                f"not {builtins_type(type).__name__}")
            default = bytes(serialize())
            code = AttrType(_parse(default, "AttributeProto").type)
            required = False
        self._set(name=name, type=code, required=bool(required), _default=default, description=description)

    @classmethod
    def _in_schema(cls, name: str, type: int, required: bool, default: bytes) -> Attribute:  # noqa: A002
        self = cls.__new__(cls)
        self._set(name=name, type=type, required=required, _default=bytes(default), description="")
        return self

    @property
    def default_value(self) -> Any:
        """A new ``irmodel.AttributeProto`` holding the default; empty (type UNDEFINED) if none."""
        return _parse(self._default, "AttributeProto")

    @property
    def _default_value(self) -> bytes:
        """The default as serialized bytes (onnx's name)."""
        return self._default

    def __repr__(self) -> str:
        return (f"OpSchema.Attribute(name={self.name!r}, type={_enum_repr(AttrType, self.type)}, "
                f"description={self.description!r}, default_value={self.default_value!r}, "
                f"required={self.required!r})")


def _require(value, kind, what: str) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{what} must be a {kind.__name__}, not {builtins_type(value).__name__}")


def _c_int(value, what: str) -> int:
    """``value`` as onnx's bindings take a C int: TypeError for another type or a value
    out of range."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {builtins_type(value).__name__}") from None
    if not -2**31 <= value < 2**31:
        raise TypeError(f"{what} {value} does not fit a C int, which onnx takes")
    return value


def _member(enum, value, what: str):
    try:
        return enum(value)
    except ValueError:
        raise TypeError(f"{what} must be an {enum.__name__}, not {value!r}") from None


def _enum_repr(enum, value) -> str:
    try:
        return f"{enum.__name__}.{enum(value).name}"
    except ValueError:
        return repr(value)


# Names of the parameter classes for annotations inside `OpSchema`, whose class attributes
# of the same names (onnx's ``OpSchema.FormalParameter``, ...) would hide them there.
_Param = FormalParameter
_Constraint = TypeConstraintParam
_Attr = Attribute


class OpSchema(_Frozen):
    """One version of one operator, as ``onnx.defs.OpSchema`` describes it (no doc strings)."""

    __slots__ = ("name", "domain", "since_version", "deprecated", "support_level",
                 "node_determinism", "inputs", "outputs", "min_input", "max_input", "min_output",
                 "max_output", "type_constraints", "attributes",
                 "has_type_and_shape_inference_function", "has_data_propagation_function",
                 "function_opset_versions", "context_dependent_function_opset_versions",
                 "_function_bodies", "_constraints_by_name", "_doc", "file", "line", "_inference")
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
    _constraints_by_name: dict[str, _Constraint]
    _doc: str | None | bool
    file: str
    line: int
    _inference: Callable[[Any], None] | None

    FormalParameterOption = FormalParameterOption
    DifferentiationCategory = DifferentiationCategory
    SupportType = SupportType
    NodeDeterminism = NodeDeterminism
    AttrType = AttrType
    FormalParameter = FormalParameter
    TypeConstraintParam = TypeConstraintParam
    Attribute = Attribute

    def __init__(self, name: str, domain: str, since_version: int, doc: str = "", *,
                 inputs: Iterable[_Param] = (), outputs: Iterable[_Param] = (),
                 type_constraints: Iterable[_Constraint | tuple[str, Iterable[str], str]] = (),
                 attributes: Iterable[_Attr] = (),
                 node_determinism: int = NodeDeterminism.Deterministic) -> None:
        """A schema made by a program, as ``onnx.defs.OpSchema(...)`` (then `register_schema`).

        Checked as onnx checks it on construction: the names and version have their
        types (TypeError), only the last input or output may be variadic and every
        parameter's ``type_str`` names a type constraint or is a type string (ValueError).
        """
        _require(name, str, "name")
        _require(domain, str, "domain")
        since_version = _c_int(since_version, "since_version")
        _require(doc, str, "doc")
        constraints: list[_Constraint] = []
        for given in type_constraints:
            constraints.append(given if isinstance(given, TypeConstraintParam) else TypeConstraintParam(*given))
        by_name = {c.type_param_str: c for c in constraints}
        ins = _finalize_params(name, inputs, by_name, "input")
        outs = _finalize_params(name, outputs, by_name, "output")
        attrs = {}
        for a in attributes:
            if not isinstance(a, Attribute):
                raise TypeError(f"attributes must be OpSchema.Attribute, not {builtins_type(a).__name__}")
            attrs[a.name] = a
        attrs = dict(sorted(attrs.items()))  # by name, as onnx keeps them
        min_in, max_in = _arity(ins)
        min_out, max_out = _arity(outs)
        self._set(
            name=name, domain=domain, since_version=since_version, deprecated=False,
            support_level=SupportType.COMMON, node_determinism=NodeDeterminism(node_determinism),
            inputs=ins, outputs=outs, min_input=min_in, max_input=max_in, min_output=min_out,
            max_output=max_out, type_constraints=tuple(constraints),
            attributes=MappingProxyType(attrs), has_type_and_shape_inference_function=False,
            has_data_propagation_function=False, function_opset_versions=(),
            context_dependent_function_opset_versions=(), _function_bodies=(),
            _constraints_by_name=by_name, _doc=doc or None, file="unknown", line=0, _inference=None)

    @property
    def doc(self) -> str | None:
        """The operator's documentation (None when there is none); a generated schema's is
        read from opschema_docs.json on first use (`irmodel.defs.docs`)."""
        doc = self._doc
        if doc is False:  # a generated schema's, not read yet
            from .docs import schema_doc  # noqa: PLC0415
            doc = schema_doc(self.domain, self.name, self.since_version)
            object.__setattr__(self, "_doc", doc)
        return doc  # type: ignore[return-value]

    # -- a Python inference function (onnx's, for schemas a program registers) ------------------

    def set_type_and_shape_inference_function(self, func: Callable[[Any], None]) -> OpSchema:
        """Infer this operator's outputs with ``func(ctx)``, ctx an
        `irmodel.shape_inference.InferenceContext`; returns the schema, as onnx.

        Takes effect through `register_schema`, which registers a copy (as onnx does): a
        function set after registering changes this object only.
        """
        if not callable(func):
            raise TypeError(f"the inference function must be callable, not {builtins_type(func).__name__}")
        object.__setattr__(self, "_inference", func)
        object.__setattr__(self, "has_type_and_shape_inference_function", True)
        return self

    def get_type_and_shape_inference_function(self) -> Callable[[Any], None] | None:
        """The Python function set by `set_type_and_shape_inference_function`, or None
        (the built-in operators' functions are irmodel.inference's, not callable here)."""
        return self._inference

    def _copy(self) -> OpSchema:
        """A shallow copy (its parts are immutable): what `register_schema` keeps."""
        new = OpSchema.__new__(OpSchema)
        for name in OpSchema.__slots__:
            object.__setattr__(new, name, getattr(self, name))
        return new

    @classmethod
    def from_record(cls, record: dict) -> OpSchema:
        """A schema from one record of the generated table (tools/gen_opschemas.py's keys)."""
        self = cls.__new__(cls)
        constraints = tuple(TypeConstraintParam(c["type_param_str"], c["allowed_type_strs"])
                            for c in record["type_constraints"])
        attributes = {a["name"]: Attribute._in_schema(a["name"], a["type"], a["required"],
                                                      a2b_base64(a["default_value"]))
                      for a in record["attributes"]}
        by_name = {c.type_param_str: c for c in constraints}

        def param(p: dict) -> FormalParameter:
            c = by_name.get(p["type_str"])
            return FormalParameter._in_schema(p["name"], p["type_str"], p["option"], p["is_homogeneous"],
                                              p["min_arity"], p["differentiation_category"],
                                              (p["type_str"],) if c is None else c._allowed)

        functions = record["functions"]
        self._set(
            name=record["name"], domain=record["domain"], since_version=record["since_version"],
            deprecated=record["deprecated"], support_level=record["support_level"],
            node_determinism=record["node_determinism"],
            inputs=tuple(param(p) for p in record["inputs"]),
            outputs=tuple(param(p) for p in record["outputs"]),
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
            _constraints_by_name=by_name, _doc=False, file="", line=0, _inference=None,
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

    def get_context_dependent_function(self, node_proto: bytes, input_types: Iterable[bytes]) -> bytes:
        """The body onnx builds for a node (serialized NodeProto) with these input types
        (serialized TypeProtos), serialized; b"" when none is built (as onnx).  The newest
        of `context_dependent_function_opset_versions`; see `irmodel.defs.bodies`."""
        versions = self.context_dependent_function_opset_versions
        if not versions:
            return b""
        return self.get_context_dependent_function_with_opset_version(max(versions), node_proto, input_types)

    def get_context_dependent_function_with_opset_version(self, opset_version: int, node_proto: bytes,
                                                          input_types: Iterable[bytes]) -> bytes:
        """As `get_context_dependent_function`, for a model importing ``opset_version``: the
        body is built only at a version listed in `context_dependent_function_opset_versions`."""
        from irmodel import dumps  # noqa: PLC0415
        from .bodies import build_function_body  # noqa: PLC0415
        node = _parse(bytes(node_proto), "NodeProto")
        types = [_parse(bytes(t), "TypeProto") for t in input_types]
        body = build_function_body(self, node, types, operator.index(opset_version))
        return b"" if body is None else dumps(body)

    # -- helpers -------------------------------------------------------------------------------

    @property
    def non_deterministic(self) -> bool:
        return self.node_determinism != NodeDeterminism.Deterministic

    @staticmethod
    def is_infinite(value: int) -> bool:
        """True for the ``max_input``/``max_output`` that means "no upper bound"."""
        return value == _INFINITE

    def type_constraint(self, type_param_str: str) -> _Constraint | None:
        """The constraint named ``type_param_str`` ("T"), or None when the name is not one."""
        return self._constraints_by_name.get(type_param_str)

    def __repr__(self) -> str:
        return (f"OpSchema(\n    name={self.name!r},\n    domain={self.domain!r},\n"
                f"    since_version={self.since_version!r},\n    doc={self.doc!r},\n"
                f"    type_constraints={list(self.type_constraints)!r},\n    inputs={list(self.inputs)!r},\n"
                f"    outputs={list(self.outputs)!r},\n    attributes={dict(self.attributes)!r}\n)")


def _finalize_params(op: str, params: Iterable[FormalParameter], constraints: dict,
                     what: str) -> tuple[FormalParameter, ...]:
    """The schema's own copies of ``params``, each knowing the types it allows (onnx's
    ``Finalize``: a ``type_str`` that names no constraint must be a type string)."""
    out = []
    params = list(params)
    for i, p in enumerate(params):
        if not isinstance(p, FormalParameter):
            raise TypeError(f"{what}s must be OpSchema.FormalParameter, not {builtins_type(p).__name__}")
        if p.option == FormalParameterOption.Variadic and i != len(params) - 1:
            raise ValueError(f"ONNX Schema {op}: only the last {what} may be variadic ({p.name!r} is not last)")
        c = constraints.get(p.type_str)
        declared = (p.type_str,) if c is None else c._allowed
        made = FormalParameter._in_schema(p.name, p.type_str, p.option, p.is_homogeneous, p.min_arity,
                                          p.differentiation_category, declared, p.description)
        made.type_set  # noqa: B018 - normalised now, so that a bad type string fails here, as in onnx
        out.append(made)
    return tuple(out)


def _arity(params: tuple[FormalParameter, ...]) -> tuple[int, int]:
    """``(min, max)`` count of actual parameters, as onnx's ``Finalize`` counts them."""
    low = high = 0
    for p in params:
        if p.option == FormalParameterOption.Single:
            high += 1
            low = high
        elif p.option == FormalParameterOption.Optional:
            high += 1
        else:
            low = high + p.min_arity
            high = _INFINITE
    return low, high
