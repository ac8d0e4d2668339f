"""The kinds of change an operator version step makes, each with its way up and down.

A step of the changelog (`steps.STEPS`) is a list of these: `AttrAdded("ceil_mode", old=0)`
reads "ceil_mode was added; before, the operator behaved as if it were 0".  Each change
knows how to take a node across the step upwards (older version to newer) and downwards,
or says why it cannot (`StepRefused`).  What is not a change of this kind is code in
`adapters` (`Code`).  Steps that change only the types an operator accepts need no entry:
the driver checks every converted node's types against the target schema.
"""

from __future__ import annotations

from .errors import StepRefused
from .work import NewNode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from .scope import Scope
    from .work import NodeWork

#: ``old=ANY``: the attribute's value did not matter before (it is dropped going down).
ANY = object()
#: ``old=ONES``: before, the operator behaved as if the attribute were all ones (dilations).
ONES = object()
#: ``old=ABSENT``: before, the operator had no such thing: the node must not set it.
ABSENT = object()

INT64, FLOAT = 7, 1


class StepInfo:
    """The step a change is applied in: operator, domain and the schemas on both sides."""

    __slots__ = ("op", "domain", "old", "new")

    def __init__(self, op: str, domain: str, old, new) -> None:
        self.op, self.domain, self.old, self.new = op, domain, old, new

    @property
    def version(self) -> int:
        return self.new.since_version

    @property
    def old_version(self) -> int:
        return self.old.since_version


class Change:
    """One change of a step; subclasses say how a node crosses it."""

    note = ""

    def up(self, w: NodeWork, s: Scope, step: StepInfo) -> None:
        return None

    def down(self, w: NodeWork, s: Scope, step: StepInfo) -> None:
        return None

    def describe(self) -> str:
        """One line for the step list (docs/version-converter-steps.md)."""
        return self.note or type(self).__name__


def _old_text(old) -> str:
    return {id(ANY): "any value", id(ONES): "all ones", id(ABSENT): "absent"}.get(id(old)) or repr(old)


def _same(value, old) -> bool:
    if old is ANY:
        return True
    if old is ONES:
        return all(v == 1 for v in value)
    if isinstance(old, float) or isinstance(value, float):
        return abs(float(value) - float(old)) <= 1e-6 * max(1.0, abs(float(old)))
    if isinstance(old, (list, tuple)):
        return list(value) == list(old)
    return value == old


def _text(v) -> str:
    return repr(v) if not isinstance(v, list) else "[" + ", ".join(map(str, v)) + "]"


def _schema_default(schema, name: str):
    a = schema.attributes.get(name)
    if a is None or a.default_value is None or not a.default_value.name:
        return None
    from .. import helper  # noqa: PLC0415

    v = helper.get_attribute_value(a.default_value)
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


class AttrAdded(Change):
    """Attribute ``name`` added; before, the operator behaved as if it were ``old``.

    Up: nothing, unless the new default is not ``old`` (then ``old`` is set).  Down: the
    node's value (or the new default) must be ``old``; the attribute is dropped.
    """

    def __init__(self, name: str, old: Any = ABSENT, note: str = "") -> None:
        self.name, self.old, self.note = name, old, note

    def describe(self) -> str:
        return (f"attribute `{self.name}` added (before: as if {_old_text(self.old)})"
                + (f"; {self.note}" if self.note else ""))

    def up(self, w, s, step) -> None:
        if w.has(self.name) or self.old in (ANY, ABSENT, ONES):
            return
        default = _schema_default(step.new, self.name)
        if default is None or not _same(default, self.old):
            w.set(self.name, self.old)

    def down(self, w, s, step) -> None:
        value = w.value(self.name)
        if value is None:
            return
        if self.old is ABSENT or not _same(value, self.old):
            want = "absent" if self.old is ABSENT else ("all ones" if self.old is ONES else _text(self.old))
            raise StepRefused("V003", f"attribute {self.name}={_text(value)} has no equivalent before "
                                      f"version {step.version} (must be {want})")
        w.drop(self.name)


class AttrRemoved(Change):
    """Attribute ``name`` removed; the new version behaves as if it were ``neutral``.

    Up: the node's value must be ``neutral`` (ANY: whatever it is); it is dropped.
    Down: set to ``down_value`` when given (the older version requires it).
    """

    def __init__(self, name: str, neutral: Any = ANY, down_value: Any = None, note: str = "") -> None:
        self.name, self.neutral, self.down_value, self.note = name, neutral, down_value, note

    def describe(self) -> str:
        down = f"; set to {self.down_value!r} going down" if self.down_value is not None else ""
        return f"attribute `{self.name}` removed (must be {_old_text(self.neutral)} going up){down}"

    def up(self, w, s, step) -> None:
        value = w.value(self.name)
        if value is None:
            return
        if not _same(value, self.neutral):
            raise StepRefused("V003", f"attribute {self.name}={_text(value)} has no equivalent from "
                                      f"version {step.version} on (only {_text(self.neutral)})")
        w.drop(self.name)

    def down(self, w, s, step) -> None:
        if self.down_value is not None and not w.has(self.name):
            w.set(self.name, self.down_value)


class AttrRenamed(Change):
    """Attribute ``old`` is called ``new`` from this version on."""

    def __init__(self, old: str, new: str, note: str = "") -> None:
        self.old_name, self.new_name, self.note = old, new, note

    def describe(self) -> str:
        return f"attribute `{self.old_name}` renamed `{self.new_name}`"

    def up(self, w, s, step) -> None:
        w.rename_attr(self.old_name, self.new_name)

    def down(self, w, s, step) -> None:
        w.rename_attr(self.new_name, self.old_name)


class AttrValuesAdded(Change):
    """Attribute ``name`` accepts ``values`` from this version on; down they are refused."""

    def __init__(self, name: str, values: tuple, note: str = "") -> None:
        self.name, self.values, self.note = name, values, note

    def describe(self) -> str:
        return f"attribute `{self.name}` accepts {', '.join(map(repr, self.values))}"

    def down(self, w, s, step) -> None:
        value = w.value(self.name, _schema_default(step.new, self.name))
        if value in self.values:
            raise StepRefused("V003", f"attribute {self.name}={value!r} is new in version {step.version}")


class NegativeAxes(Change):
    """Attribute ``name`` (an axis or a list of axes) may be negative from this version on.

    Down: negative values are made non-negative with the rank of input ``of``.
    """

    def __init__(self, name: str, of: int = 0, default: Any = None, note: str = "") -> None:
        self.name, self.of, self.default, self.note = name, of, default, note

    def describe(self) -> str:
        return f"`{self.name}` may be negative"

    def down(self, w, s, step) -> None:
        value = w.value(self.name, self.default)
        if value is None:
            return
        values = value if isinstance(value, list) else [value]
        if all(v >= 0 for v in values):
            return
        r = s.need_rank(w.input(self.of), f"{self.name}={_text(value)} must be made non-negative "
                                          f"for versions before {step.version}")
        fixed = [v + r if v < 0 else v for v in values]
        w.set(self.name, fixed if isinstance(value, list) else fixed[0])


class InputAdded(Change):
    """Optional input ``index`` (``name``) added; down it must be absent."""

    def __init__(self, index: int, name: str, note: str = "") -> None:
        self.index, self.name, self.note = index, name, note

    def describe(self) -> str:
        return f"optional input `{self.name}` added"

    def down(self, w, s, step) -> None:
        if w.input(self.index):
            raise StepRefused("V005", f"input {self.name!r} does not exist before version {step.version}")


class OutputAdded(Change):
    """Optional output ``index`` (``name``) added; down it must be unused."""

    def __init__(self, index: int, name: str, note: str = "") -> None:
        self.index, self.name, self.note = index, name, note

    def describe(self) -> str:
        return f"optional output `{self.name}` added"

    def down(self, w, s, step) -> None:
        if w.output(self.index):
            raise StepRefused("V005", f"output {self.name!r} does not exist before version {step.version}")


def add_constant(w: NodeWork, s: Scope, values, elem_type: int, base: str, version: int,
                 scalar: bool = False) -> str:
    """A constant holding ``values`` for ``w`` (a Constant node added before it, or an
    initializer of the graph); returns its name.  ``values`` may be a numpy array (any
    shape; ``elem_type`` is then its own)."""
    from .. import helper  # noqa: PLC0415

    name = s.fresh(base)
    if hasattr(values, "dtype"):
        from ..tensors import from_array  # noqa: PLC0415

        tensor = from_array(values, name)
        elem_type = tensor.data_type
    else:
        if scalar:
            values = [values]
        elif isinstance(values, (list, tuple)):
            values = list(values)
        else:
            values = [values]  # a single attribute value becomes a 1-element tensor (TopK's k)
        dims = [] if scalar else [len(values)]
        tensor = helper.make_tensor(name, elem_type, dims, values)
    # A Constant node, as onnx's converter adds; an initializer where the Constant operator
    # in force cannot hold the type (Constant-1 is float-only, up to opset 8).
    if version >= 9 or elem_type in (1, 10, 11) or not s.add_initializer(tensor):
        w.before.append(NewNode(helper.make_node("Constant", [], [name], value=tensor), version))
    return name


class AttrToInput(Change):
    """Attribute ``name`` became input ``index`` (a 1-D tensor of ``elem``; ``scalar`` for 0-D).

    Up: the attribute's value becomes a Constant node feeding the input (``absent``, when
    given, is what an absent attribute meant).  Down: the input must be a constant (an
    initializer or a Constant node); its value becomes the attribute (``absent``: the value
    an absent input meant, when the old attribute's default differs).  ``elem=None``: the
    element type of input ``like`` (Pad's value, Clip's bounds); ``single``: the attribute is
    one int (TopK's k).
    """

    def __init__(self, name: str, index: int, elem: int | None = INT64, scalar: bool = False,
                 absent: Any = None, like: int = 0, as_float: bool = False, single: bool = False,
                 note: str = "") -> None:
        self.name, self.index, self.elem, self.scalar, self.single = name, index, elem, scalar, single
        self.absent, self.like, self.as_float, self.note = absent, like, as_float, note

    def describe(self) -> str:
        return f"attribute `{self.name}` became input {self.index}"

    def up(self, w, s, step) -> None:
        value = w.value(self.name)
        if value is None:
            value = self.absent
        w.drop(self.name)
        if value is None:
            return
        elem = self.elem
        if elem is None:
            elem = s.elem_type(w.input(self.like))
            if elem is None:
                raise StepRefused("V007", f"the element type of {w.input(self.like)!r} is not known, "
                                          f"and attribute {self.name} becomes an input of that type")
        base = (w.original.name or w.op_type) + "_" + self.name
        w.set_input(self.index, add_constant(w, s, value, elem, base, step.version, self.scalar))

    def down(self, w, s, step) -> None:
        name = w.input(self.index)
        if not name:
            if self.absent is not None:
                w.set(self.name, self.absent)
            return
        flat = s.constant_floats(name) if (self.as_float or self.scalar) else s.constant_ints(name)
        if flat is None:
            what = ("a graph input (its initializer is a default the caller may override)"
                    if s.overridable(name) else "not a constant")
            raise StepRefused("V002", f"input {self.name!r} ({name!r}) is {what}, and "
                                      f"versions before {step.version} take it as an attribute")
        if self.scalar or self.as_float:
            if len(flat) != 1 and self.scalar:
                raise StepRefused("V003", f"input {self.name!r} has {len(flat)} values, the attribute one")
            if self.scalar:
                w.set(self.name, float(flat[0]) if self.as_float else flat[0])
            else:
                w.set(self.name, [float(x) for x in flat])
        elif self.single:
            if len(flat) != 1:
                raise StepRefused("V003", f"input {self.name!r} has {len(flat)} values, the attribute one")
            w.set(self.name, int(flat[0]))
        else:
            w.set(self.name, [int(x) for x in flat])
        w.inputs[self.index] = ""
        w._trim(w.inputs)
        w.changed = True


class Code(Change):
    """A change a table cannot say: functions written in `adapters` (None: nothing to do)."""

    def __init__(self, up: Callable | None, down: Callable | None, note: str = "") -> None:
        self._up, self._down, self.note = up, down, note

    def describe(self) -> str:
        code = ", ".join(f"{d} `{f.__name__}`" for d, f in (("up", self._up), ("down", self._down))
                         if f is not None)
        return f"{self.note} (code: {code})" if code else self.note

    def up(self, w, s, step) -> None:
        if self._up is not None:
            self._up(w, s, step)

    def down(self, w, s, step) -> None:
        if self._down is not None:
            self._down(w, s, step)


class Refused(Change):
    """A step not taken in one direction (``up``/``down`` False): the reason is reported."""

    def __init__(self, reason: str, up: bool = True, down: bool = True) -> None:
        self.reason, self._up, self._down = reason, up, down
        self.note = reason

    def describe(self) -> str:
        return f"not converted: {self.reason}"

    def up(self, w, s, step) -> None:
        if self._up:
            raise StepRefused("V003", self.reason)

    def down(self, w, s, step) -> None:
        if self._down:
            raise StepRefused("V003", self.reason)
