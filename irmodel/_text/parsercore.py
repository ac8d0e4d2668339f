"""The parser's core: the token stream, the depth budget, string fields, and the
``@{...}`` blocks and ``@Type{...}`` literals (see `extras`) every element may carry.

`parser.Parser` adds the grammar of models, graphs and nodes; `parsertensors`
the grammar of types and tensor data.
"""

from __future__ import annotations

from wirefmt import MAX_DEPTH
from wirefmt.schema import BOOL, BYTES, DOUBLE, ENUM, FIXED32, FIXED64, FLOAT, INT32, MESSAGE, SFIXED32, SINT32, \
    STRING, UINT32, UINT64

from .errors import ParseError
from .lexer import Lexer
from .numbers import UINT64_MAX
from .values import as_text, read_bytes, read_float_bits, read_int, read_string, string_field_bytes

#: An entry of an @{...} block that clears its field.
CLEAR = object()


class ParserCore:
    """Parses one text.  ``accept_elided``: read ``@elided{...}`` tensors (as tensors
    without data) instead of refusing them; ``load_file``: ``(location, offset,
    length) -> bytes`` for ``@file{...}`` tensors (None: refuse them)."""

    def __init__(self, text: str, accept_elided: bool = False, load_file=None):
        from .. import messages  # noqa: PLC0415

        self.c = messages.CLASSES
        self.lx = Lexer(text)
        self.depth = 0
        self.accept_elided = accept_elided
        self.load_file = load_file

    # -- the grammar's entry points, defined by the subclasses (`parser`, `parsertensors`)
    def type_into(self, t) -> None:
        raise NotImplementedError

    def attr_tensor_into(self, t) -> None:
        raise NotImplementedError

    def graph_into(self, g) -> None:
        raise NotImplementedError

    def value_info(self):
        raise NotImplementedError

    def pair(self):
        raise NotImplementedError

    # -- plumbing ---------------------------------------------------------------------------
    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.lx.fail(f"nesting deeper than {MAX_DEPTH} levels")

    def items(self, close: str, read_one, *, may_be_empty: bool = True) -> None:
        """Calls ``read_one()`` for each comma-separated item up to ``close``, and
        consumes ``close``.  Every list of the syntax is read here, so that every list
        ends with the same error, naming both tokens that could come (``',' or ']'``).
        ``may_be_empty``: ``close`` may come at once (onnx refuses ``<>`` headers)."""
        lx = self.lx
        if may_be_empty and lx.accept(close):
            return
        while True:
            read_one()
            if not lx.accept(","):
                break
        lx.expect(close, f"',' or '{close}'")

    def end(self) -> None:
        if self.lx.kind != "end":
            raise self.lx.error("the end of the text")

    def _str_field(self, msg, field: str, value, at: int) -> None:
        value = as_text(self.lx, value, at)
        if isinstance(value, bytes):
            msg.MergeFromString(string_field_bytes(msg._spec.by_name[field].number, value))
        else:
            setattr(msg, field, value)

    def _add_str(self, msg, field: str, values: list, at: int) -> None:
        lst = getattr(msg, field)
        number = None
        for v in values:
            v = as_text(self.lx, v, at)
            if isinstance(v, bytes):
                number = number or msg._spec.by_name[field].number
                msg.MergeFromString(string_field_bytes(number, v))
            else:
                lst.append(v)

    # -- @{...} blocks and @Type{...} literals --------------------------------------------------
    def prefix(self, type_name: str):
        """An ``@{...}`` block before an element, or a whole ``@Type{...}`` literal.
        Returns (block entries or None, literal message or None)."""
        lx = self.lx
        if lx.kind != "@":
            return None, None
        after = lx.peek_after()
        if after[0] == "{":
            lx.advance()
            return self.block(type_name), None
        if after[0] == "ident" and after[1] == type_name:
            lx.advance()
            lx.advance()
            return None, self.literal(type_name)
        return None, None

    def try_block(self, type_name: str):
        """An @{...} block if it is one of ``type_name`` (else None, nothing consumed):
        before a value info, a block may be the value info's or its type's."""
        lx = self.lx
        if lx.kind != "@" or lx.peek_after()[0] != "{":
            return None
        saved = (lx.pos, lx.kind, lx.value, lx.start, self.depth)
        try:
            lx.advance()
            return self.block(type_name)
        except ParseError:
            lx.pos, lx.kind, lx.value, lx.start, self.depth = saved
            return None

    def block(self, type_name: str) -> list:
        """``{name: value, -name, ...}`` for a message of ``type_name``."""
        lx = self.lx
        spec = self.c[type_name]._spec
        lx.expect("{")
        entries: list = []
        self.items("}", lambda: entries.append(self.entry(spec)))
        return entries

    def entry(self, spec):
        lx = self.lx
        at = lx.start
        if lx.kind == "hex":  # fields the schema does not know, as wire bytes
            digits = lx.value[2:]
            if len(digits) % 2:
                raise lx.fail("an odd number of hex digits")
            lx.advance()
            return None, bytes.fromhex(digits), at
        if lx.kind == "negword":
            f = spec.by_name.get(lx.value[1:])
            if f is None:
                raise lx.fail(f"{spec.name} has no field {lx.value[1:]!r}")
            lx.advance()
            return f, CLEAR, at
        name = lx.expect("ident", "a field name")
        f = spec.by_name.get(name)
        if f is None:
            raise lx.fail(f"{spec.name} has no field {name!r}", at)
        lx.expect(":")
        if f.repeated:
            lx.expect("[")
            values: list = []
            self.items("]", lambda: values.append(self.value(f)))
            return f, values, at
        return f, self.value(f), at

    def value(self, f):
        """One value of field ``f``, by its kind."""
        lx = self.lx
        kind = f.kind
        if kind == MESSAGE:
            return self.message_value(f.type_name)
        if kind == STRING:
            return read_string(lx)
        if kind == BYTES:
            return read_bytes(lx)
        if kind == FLOAT:
            return read_float_bits(lx, False)
        if kind == DOUBLE:
            return read_float_bits(lx, True)
        if kind == BOOL:
            return bool(read_int(lx, 0, 1))
        if kind in (INT32, SINT32, SFIXED32, ENUM):
            return read_int(lx, -(1 << 31), (1 << 31) - 1)
        if kind in (UINT32, FIXED32):
            return read_int(lx, 0, (1 << 32) - 1)
        if kind in (UINT64, FIXED64):
            return read_int(lx, 0, UINT64_MAX)
        return read_int(lx)

    def message_value(self, type_name: str):
        lx = self.lx
        if type_name == "TypeProto":
            t = self.c["TypeProto"]()
            self.type_into(t)
            return t
        if type_name == "TensorProto":
            t = self.c["TensorProto"]()
            self.attr_tensor_into(t)
            return t
        if type_name == "GraphProto":
            g = self.c["GraphProto"]()
            self.graph_into(g)
            return g
        if type_name == "ValueInfoProto":
            return self.value_info()
        if type_name == "StringStringEntryProto":
            return self.pair()
        if lx.kind == "@":
            block, lit = self.prefix(type_name)
            if lit is None:
                raise lx.error(f"a {type_name}")
            return lit
        self.enter()
        msg = self.c[type_name]()
        self.apply(msg, self.block(type_name))
        self.depth -= 1
        return msg

    def literal(self, type_name: str):
        self.enter()
        msg = self.c[type_name]()
        self.apply(msg, self.block(type_name))
        self.depth -= 1
        return msg

    def apply(self, msg, entries) -> None:
        for f, value, at in entries:
            if f is None:
                try:
                    msg.MergeFromString(value)
                except ValueError as exc:
                    raise self.lx.fail(f"unknown fields that are not protobuf: {exc}", at) from None
                continue
            name = f.name
            if value is CLEAR:
                msg.ClearField(name)
            elif f.repeated:
                msg.ClearField(name)
                if f.kind == MESSAGE:
                    lst = getattr(msg, name)
                    for v in value:
                        lst.add().CopyFrom(v)
                elif f.kind == STRING:
                    self._add_str(msg, name, value, at)
                else:
                    getattr(msg, name).extend(value)
            elif f.kind == MESSAGE:
                getattr(msg, name).CopyFrom(value)
            elif f.kind == STRING:
                self._str_field(msg, name, value, at)
            else:
                setattr(msg, name, value)

    # -- model, function, graph -------------------------------------------------------------
    def _rebind(self, block: list, type_name: str) -> list:
        """A block read for one type, applied to another: its fields by name."""
        spec = self.c[type_name]._spec
        out = []
        for f, value, at in block:
            if f is None:
                out.append((f, value, at))
                continue
            g = spec.by_name.get(f.name)
            if g is None or g.kind != f.kind or g.repeated != f.repeated:
                raise self.lx.fail(f"{type_name} has no field {f.name!r}", at)
            out.append((g, value, at))
        return out

