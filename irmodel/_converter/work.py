"""One node while the converter takes it through version steps, and what an adapter may ask.

`NodeWork` holds the node's op, inputs, outputs and attributes as plain, editable values;
the original NodeProto is never changed (the caller's model is not touched) and the node is
re-made only when a step changed it (`NodeWork.changed`), so an unconverted node keeps its
original bytes.  Adapters that need a new node (a Constant for an attribute that became an
input, a Slice after Shape) add it with `NodeWork.add_before` / `add_after`, written for
the opset of the step that makes them; the driver converts those nodes to the target too.

`Scope` is what an adapter may ask of the graph around the node: constant values (from
initializers and Constant nodes, read only when an adapter asks), element types and shapes
(from shape inference, run once, only if a step needs them) and fresh names.
"""

from __future__ import annotations

from .errors import StepRefused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class NewNode:
    """A node an adapter adds, written for ``version`` of its ``domain``."""

    __slots__ = ("node", "version")

    def __init__(self, node, version: int) -> None:
        self.node = node
        self.version = version


class NodeWork:
    """A node being converted: editable op, inputs, outputs and attributes (by name)."""

    def __init__(self, node) -> None:
        self.original = node
        self.op_type: str = node.op_type
        self.domain: str = node.domain
        self.inputs: list[str] = list(node.input)
        self.outputs: list[str] = list(node.output)
        self.attrs: dict[str, Any] = {a.name: a for a in node.attribute}
        self.before: list[NewNode] = []
        self.after: list[NewNode] = []
        #: Set when the node is replaced by other nodes (a function body): they are the result.
        self.replacement: list[NewNode] | None = None
        self.changed = False
        #: Set when the node's job is done otherwise (a Constant that became an initializer).
        self.removed = False

    # -- attributes -------------------------------------------------------------------

    def has(self, name: str) -> bool:
        return name in self.attrs

    def value(self, name: str, default: Any = None) -> Any:
        """The attribute's value (as onnx.helper.get_attribute_value gives it), or ``default``."""
        a = self.attrs.get(name)
        if a is None:
            return default
        if a.ref_attr_name:
            raise StepRefused("V003", f"attribute {name!r} refers to the function's attribute "
                                      f"{a.ref_attr_name!r}; its value is not known here")
        from .. import helper  # noqa: PLC0415

        v = helper.get_attribute_value(a)
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else v

    def set(self, name: str, value: Any, attr_type: int | None = None) -> None:
        from .. import helper  # noqa: PLC0415

        self.attrs[name] = helper.make_attribute(name, value, attr_type=attr_type)
        self.changed = True

    def drop(self, name: str) -> None:
        if name in self.attrs:
            del self.attrs[name]
            self.changed = True

    def rename_attr(self, old: str, new: str) -> None:
        a = self.attrs.pop(old, None)
        if a is not None:
            from .. import AttributeProto  # noqa: PLC0415

            b = AttributeProto()
            b.CopyFrom(a)
            b.name = new
            self.attrs[new] = b
            self.changed = True

    # -- inputs and outputs ------------------------------------------------------------

    def input(self, i: int) -> str:
        """The name of input ``i``, "" when absent."""
        return self.inputs[i] if i < len(self.inputs) else ""

    def set_input(self, i: int, name: str) -> None:
        while len(self.inputs) <= i:
            self.inputs.append("")
        self.inputs[i] = name
        self._trim(self.inputs)
        self.changed = True

    def drop_input(self, i: int) -> None:
        """Remove input ``i`` (later inputs move up one place)."""
        if i < len(self.inputs):
            del self.inputs[i]
            self._trim(self.inputs)
            self.changed = True

    def output(self, i: int) -> str:
        return self.outputs[i] if i < len(self.outputs) else ""

    @staticmethod
    def _trim(names: list[str]) -> None:
        while names and not names[-1]:
            names.pop()

    def set_op(self, op_type: str) -> None:
        self.op_type = op_type
        self.changed = True

    # -- the result ---------------------------------------------------------------------

    def to_node(self):
        """The converted NodeProto: the original's name, domain, doc string, overload and
        metadata, with this op, inputs, outputs and attributes."""
        from .. import NodeProto  # noqa: PLC0415

        src = self.original
        n = NodeProto()
        n.input.extend(self.inputs)
        n.output.extend(self.outputs)
        if src.name:
            n.name = src.name
        n.op_type = self.op_type
        if self.domain:
            n.domain = self.domain
        n.attribute.extend(self.attrs.values())
        if src.doc_string:
            n.doc_string = src.doc_string
        if src.overload:
            n.overload = src.overload
        if len(src.metadata_props):
            n.metadata_props.extend(src.metadata_props)
        if len(src.device_configurations):
            n.device_configurations.extend(src.device_configurations)
        return n
