"""What a check knows besides the message: IR version, opsets, options, names in scope.

`CheckerContext` and `LexicalScopeContext` have the names and attributes of
``onnx.checker.C.CheckerContext`` / ``C.LexicalScopeContext`` so that code written for
onnx's ``check_node(node, ctx, lexical_scope_ctx)`` carries over.
"""

from __future__ import annotations

from ..proto import IR_VERSION

#: At most this many model-local functions (the reference's limit against hostile models).
MAX_FUNCTIONS = 10_000
#: Longest chain of model-local function calls, counted in functions (as the reference).
MAX_CALL_DEPTH = 100

#: Domains whose ops must have a schema even without ``check_custom_domain`` (the
#: reference's list: "" and "ai.onnx" are the same domain; ai.onnx.training is in it, though
#: it has no operators, and ai.onnx.preview.training is not, though it has: an unknown op
#: there is accepted as any custom domain's).
BUILTIN_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.training"})

#: Experimental ops of the default domain: the reference checks their attributes but looks
#: for no schema (and prints a warning, which we do not).
EXPERIMENTAL_OPS = frozenset({
    "ATen", "Affine", "ConstantFill", "Crop", "DynamicSlice", "GRUUnit", "GivenTensorFill",
    "ImageScaler", "ParametricSoftplus", "Scale", "ScaledTanh",
})


class CheckerContext:
    """The settings a check runs under.

    ``ir_version`` (-1: unknown), ``opset_imports`` (domain -> version), ``is_main_graph``
    (False inside subgraphs: their inputs and outputs need no types), ``model_dir``
    (external data locations are relative to it; "" is the current directory, as the
    reference has it for a model given in memory), ``skip_opset_compatibility_check`` and
    ``check_custom_domain`` (see `check_model`).  ``reference_dir`` is the directory the
    reference resolves locations against when it differs from ``model_dir`` ("" for a
    message, which irmodel resolves against the directory it was loaded from): it decides
    only which locations name arrays in memory (`external.in_memory`).
    """

    __slots__ = ("ir_version", "opset_imports", "is_main_graph", "model_dir",
                 "skip_opset_compatibility_check", "check_custom_domain", "reference_dir")

    def __init__(self, ir_version: int = -1, opset_imports: dict | None = None, *,
                 is_main_graph: bool = True, model_dir: str = "",
                 skip_opset_compatibility_check: bool = False,
                 check_custom_domain: bool = False, reference_dir: str | None = None) -> None:
        self.ir_version = ir_version
        self.opset_imports = dict(opset_imports or {})
        self.is_main_graph = is_main_graph
        self.model_dir = model_dir
        self.skip_opset_compatibility_check = skip_opset_compatibility_check
        self.check_custom_domain = check_custom_domain
        self.reference_dir = reference_dir

    def copy(self, **changes) -> "CheckerContext":
        new = CheckerContext.__new__(CheckerContext)
        for name in self.__slots__:
            setattr(new, name, changes.get(name, getattr(self, name)))
        return new

    def __repr__(self) -> str:
        return (f"CheckerContext(ir_version={self.ir_version}, opset_imports={self.opset_imports}, "
                f"is_main_graph={self.is_main_graph}, model_dir={self.model_dir!r})")


def default_context() -> CheckerContext:
    """What ``onnx.checker.DEFAULT_CONTEXT`` is: this IR version, the newest ai.onnx opset."""
    from .. import defs  # noqa: PLC0415 - the schema table loads on first use

    return CheckerContext(IR_VERSION, {"": defs.onnx_opset_version()})


class LexicalScopeContext:
    """The names defined so far in a graph, with the scopes of its enclosing graphs.

    Lookups walk the chain of parents (at most one per nesting level, and nesting is
    bounded by the decoder's depth limit).
    """

    __slots__ = ("names", "parent")

    def __init__(self, parent: "LexicalScopeContext | None" = None) -> None:
        self.names: set = set()
        self.parent = parent

    def add(self, name) -> None:
        self.names.add(name)

    def this_graph_has(self, name) -> bool:
        return name in self.names

    def this_or_ancestor_graph_has(self, name) -> bool:
        scope: LexicalScopeContext | None = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False

    @property
    def output_names(self) -> set:
        """The names of this scope (onnx's public attribute of the same name)."""
        return self.names
