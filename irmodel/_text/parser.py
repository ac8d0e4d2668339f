"""The parser: onnx's syntax read as onnx reads it (onnx/defs/parser.cc), plus our
extension (``@{...}`` blocks, ``@Type{...}`` literals, ``@raw`` data, byte strings,
``nan(0x...)``, quoted names where onnx prints bare ones, ``.Op`` for an absent
domain).

Recursive descent over `Lexer` tokens, with a depth budget (`wirefmt.MAX_DEPTH`
message levels, what the wire format accepts) so that no text can exhaust the
interpreter's stack: any text ends in a message or a `ParseError`.
"""

from __future__ import annotations

from wirefmt import MAX_DEPTH
from wirefmt.schema import BOOL, BYTES, DOUBLE, FLOAT, MESSAGE, STRING

from .errors import ParseError
from .lexer import Lexer
from .names import ATTR_CODES, ELEMENT_TYPE, INT32_RANGE, LIST_TYPE, TYPE_CODES, TYPE_WORDS, TYPED_FIELD
from .numbers import INT64_MAX, INT64_MIN, UINT64_MAX, double_bits, float32_bits, read_float32
from .tensordata import CODE_RANGE, PARTS, RAW_CODES, pack_raw
from .values import (as_text, is_float_word, read_bytes, read_float_bits, read_int, read_name, read_string, read_uint64,
                     string_field_bytes)

_CLEAR = object()
_SINGLETON = frozenset((1, 2, 3, 4, 5, 11, 13))
_INT_RANGES = {k: (INT64_MIN, INT64_MAX) for k in (3, 18)}  # int64, sint64 filled below


class Parser:
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

    # -- plumbing ---------------------------------------------------------------------------
    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.lx.fail(f"nesting deeper than {MAX_DEPTH} levels")

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
        entries = []
        if lx.kind != "}":
            while True:
                entries.append(self.entry(spec))
                if not lx.accept(","):
                    break
        lx.expect("}", "',' or '}'")
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
            return f, _CLEAR, at
        name = lx.expect("ident", "a field name")
        f = spec.by_name.get(name)
        if f is None:
            raise lx.fail(f"{spec.name} has no field {name!r}", at)
        lx.expect(":")
        if f.repeated:
            lx.expect("[")
            values = []
            if lx.kind != "]":
                while True:
                    values.append(self.value(f))
                    if not lx.accept(","):
                        break
            lx.expect("]", "',' or ']'")
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
        from wirefmt.schema import INT32, SINT32, SFIXED32, UINT32, FIXED32, UINT64, FIXED64, ENUM  # noqa: PLC0415
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
            if value is _CLEAR:
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
    def model(self):
        lx = self.lx
        block, lit = self.prefix("ModelProto")
        if lit is not None:
            self.end()
            return lit
        m = self.c["ModelProto"]()
        if lx.accept("<"):
            while True:
                at = lx.start
                key = lx.expect("ident", "a keyword")
                lx.expect(":")
                if key == "ir_version":
                    m.ir_version = read_int(lx)
                elif key == "opset_import":
                    self.opsets(m.opset_import)
                elif key in ("producer_name", "producer_version", "domain", "doc_string"):
                    self._str_field(m, key, read_string(lx), at)
                elif key == "model_version":
                    m.model_version = read_int(lx)
                elif key == "metadata_props":
                    lx.expect("[")
                    if not lx.accept("]"):
                        while True:
                            m.metadata_props.add().CopyFrom(self.pair())
                            if not lx.accept(","):
                                break
                        lx.expect("]", "',' or ']'")
                else:
                    raise lx.fail(f"unknown keyword {key!r} in a model's header", at)
                if not lx.accept(","):
                    break
            lx.expect(">", "',' or '>'")
        self.graph_into(m.graph)
        while lx.kind != "end":
            self.function_into(m.functions.add())
        if block:
            self.apply(m, block)
        return m

    def opsets(self, target) -> None:
        lx = self.lx
        lx.expect("[")
        if lx.accept("]"):
            return
        while True:
            block, lit = self.prefix("OperatorSetIdProto")
            if lit is not None:
                target.add().CopyFrom(lit)
            else:
                o = target.add()
                at = lx.start
                self._str_field(o, "domain", read_string(lx, "a domain string"), at)
                lx.expect(":")
                o.version = read_int(lx)
                if block:
                    self.apply(o, block)
            if not lx.accept(","):
                break
        lx.expect("]", "',' or ']'")

    def pair(self):
        """``"key": "value"`` (or a literal)."""
        lx = self.lx
        block, lit = self.prefix("StringStringEntryProto")
        if lit is not None:
            return lit
        p = self.c["StringStringEntryProto"]()
        at = lx.start
        self._str_field(p, "key", read_string(lx), at)
        lx.expect(":")
        at = lx.start
        self._str_field(p, "value", read_string(lx), at)
        if block:
            self.apply(p, block)
        return p

    def function_into(self, fn) -> None:
        lx = self.lx
        self.enter()
        block, lit = self.prefix("FunctionProto")
        if lit is not None:
            fn.CopyFrom(lit)
            self.depth -= 1
            return
        if lx.accept("<"):
            while True:
                at = lx.start
                key = lx.expect("ident", "a keyword")
                lx.expect(":")
                if key == "opset_import":
                    self.opsets(fn.opset_import)
                elif key in ("doc_string", "domain", "overload"):
                    self._str_field(fn, key, read_string(lx), at)
                else:
                    raise lx.fail(f"unknown keyword {key!r} in a function's header", at)
                if not lx.accept(","):
                    break
            lx.expect(">", "',' or '>'")
        at = lx.start
        self._str_field(fn, "name", read_name(lx, what="a function name"), at)
        if lx.accept("<"):
            names = []
            while True:
                at = lx.start
                if lx.kind == "@":
                    fn.attribute_proto.add().CopyFrom(self.attribute())
                else:
                    nm = read_name(lx, what="an attribute name")
                    if lx.kind in (":", "="):
                        fn.attribute_proto.add().CopyFrom(self.attribute_rest(self.c["AttributeProto"](), nm, at))
                    else:
                        names.append(nm)
                if not lx.accept(","):
                    break
            lx.expect(">", "',' or '>'")
            self._add_str(fn, "attribute", names, at)
        self.function_io(fn, "input")
        lx.expect("arrow", "'=>'")
        self.function_io(fn, "output")
        if lx.accept("<"):
            if not lx.accept(">"):
                while True:
                    fn.value_info.add().CopyFrom(self.value_info())
                    if not lx.accept(","):
                        break
                lx.expect(">", "',' or '>'")
        self.nodes_into(fn.node)
        if block:
            self.apply(fn, block)
        self.depth -= 1

    def function_io(self, fn, field: str) -> None:
        lx = self.lx
        lx.expect("(")
        names = []
        at = lx.start
        if not lx.accept(")"):
            while True:
                vi = None
                if self.next_is_type():
                    vi = fn.value_info.add()
                    self.type_into(vi.type)
                at = lx.start
                nm = read_name(lx)
                names.append(nm)
                if vi is not None:
                    self._str_field(vi, "name", nm, at)
                if not lx.accept(","):
                    break
            lx.expect(")", "',' or ')'")
        self._add_str(fn, field, names, at)

    def next_is_type(self) -> bool:
        lx = self.lx
        if lx.kind == "ident":
            return lx.value in TYPE_CODES or lx.value in TYPE_WORDS
        if lx.kind == "@":
            after = lx.peek_after()
            return after == ("ident", "TypeProto") or after[0] == "{"  # a type's own block
        return False

    def graph_into(self, g) -> None:
        lx = self.lx
        self.enter()
        block, lit = self.prefix("GraphProto")
        if lit is not None:
            g.CopyFrom(lit)
            self.depth -= 1
            return
        at = lx.start
        self._str_field(g, "name", read_name(lx, what="a graph name"), at)
        if lx.accept("("):
            if not lx.accept(")"):
                while True:
                    vi = self.value_info()
                    if isinstance(vi, tuple):  # a tensor literal stands for an initializer
                        g.initializer.add().CopyFrom(vi[1])
                    else:
                        g.input.add().CopyFrom(vi)
                        if lx.accept("="):
                            t = g.initializer.add()
                            self._str_field(t, "name", vi.name, lx.start)
                            self.tensor_data(t, vi.type if vi.HasField("type") else None, True)
                    if not lx.accept(","):
                        break
                lx.expect(")", "',' or ')'")
        lx.expect("arrow", "'=>'")
        lx.expect("(")
        if not lx.accept(")"):
            while True:
                vi = self.value_info()
                if isinstance(vi, tuple):
                    raise lx.fail("a tensor cannot be a graph output")
                g.output.add().CopyFrom(vi)
                if not lx.accept(","):
                    break
            lx.expect(")", "',' or ')'")
        if lx.accept("<"):
            if not lx.accept(">"):
                while True:
                    self.init_or_info(g)
                    if not lx.accept(","):
                        break
                lx.expect(">", "',' or '>'")
        self.nodes_into(g.node)
        if block:
            self.apply(g, block)
        self.depth -= 1

    def init_or_info(self, g) -> None:
        """One entry of a graph's ``<...>``: ``type name = data`` (an initializer) or
        ``type name`` (a value info); an @{...} block before it applies to either."""
        lx = self.lx
        if lx.kind == "@":
            after = lx.peek_after()
            if after == ("ident", "TensorProto"):
                lx.advance()
                lx.advance()
                g.initializer.add().CopyFrom(self.literal("TensorProto"))
                return
            if after == ("ident", "ValueInfoProto"):
                lx.advance()
                lx.advance()
                g.value_info.add().CopyFrom(self.literal("ValueInfoProto"))
                return
        block = self.try_block("TensorProto")
        if block is None:
            block = self.try_block("ValueInfoProto")
        vi = self.value_info_body()
        if lx.accept("="):
            t = g.initializer.add()
            if vi.HasField("name"):
                self._str_field(t, "name", vi.name, lx.start)
            self.tensor_data(t, vi.type if vi.HasField("type") else None, True)
            if block:
                self.apply(t, self._rebind(block, "TensorProto"))
        else:
            if block:
                self.apply(vi, self._rebind(block, "ValueInfoProto"))
            g.value_info.add().CopyFrom(vi)

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

    def value_info(self):
        """``type name`` (the type optional), with its @{...} block, or a literal; a
        ``@TensorProto{...}`` literal gives ``("tensor", tensor)`` (an initializer)."""
        lx = self.lx
        if lx.kind == "@":
            after = lx.peek_after()
            if after == ("ident", "ValueInfoProto"):
                lx.advance()
                lx.advance()
                return self.literal("ValueInfoProto")
            if after == ("ident", "TensorProto"):
                lx.advance()
                lx.advance()
                return ("tensor", self.literal("TensorProto"))
        block = self.try_block("ValueInfoProto")
        vi = self.value_info_body()
        if block:
            self.apply(vi, block)
        return vi

    def value_info_body(self):
        lx = self.lx
        vi = self.c["ValueInfoProto"]()
        if self.next_is_type():
            self.type_into(vi.type)
        at = lx.start
        self._str_field(vi, "name", read_name(lx, what="a name"), at)
        return vi

    def nodes_into(self, nodes) -> None:
        lx = self.lx
        lx.expect("{")
        while not lx.accept("}"):
            if lx.kind == "end":
                raise lx.error("a node or '}'")
            self.node_into(nodes.add())

    # -- nodes and attributes ----------------------------------------------------------------------
    def node_into(self, n) -> None:
        lx = self.lx
        self.enter()
        block, lit = self.prefix("NodeProto")
        if lit is not None:
            n.CopyFrom(lit)
            self.depth -= 1
            return
        if lx.accept("["):
            at = lx.start
            self._str_field(n, "name", read_name(lx, optional=True), at)
            lx.expect("]")
        at = lx.start
        self._add_str(n, "output", self.id_list(), at)
        lx.expect("=", "'='")
        # [domain .] op_type : onnx reads identifiers joined by dots, the last the op.
        # A leading '.' before a single identifier is our spelling of an absent domain.
        leading_dot = lx.accept(".")
        at = lx.start
        parts = [read_name(lx, optional=True)]
        while lx.accept("."):
            parts.append(read_name(lx, what="an identifier after '.'"))
        op = parts.pop()
        if parts or not leading_dot:
            domain = ".".join(p for p in parts if p != "") if all(isinstance(p, str) for p in parts) else parts[0]
            self._str_field(n, "domain", domain, at)
        self._str_field(n, "op_type", op, at)
        if lx.accept(":"):
            at = lx.start
            self._str_field(n, "overload", read_name(lx, what="an overload name"), at)
        if lx.kind == "<":
            self.attributes_into(n.attribute)
        lx.expect("(", "'('")
        at = lx.start
        self._add_str(n, "input", self.id_list(), at)
        lx.expect(")", "',' or ')'")
        if not len(n.attribute) and lx.kind == "<":
            self.attributes_into(n.attribute)
        if block:
            self.apply(n, block)
        self.depth -= 1

    def id_list(self) -> list:
        """onnx's IdList: names, possibly empty (``""``, or nothing before a comma)."""
        lx = self.lx
        out = []
        first = True
        while True:
            kind = lx.kind
            if kind == "ident":
                out.append(lx.value)
                lx.advance()
            elif kind == "str" or kind == "bytes":
                out.append(read_string(lx))
            elif kind == ",":
                out.append("")
            else:
                if first:
                    return out
                break
            first = False
            if not lx.accept(","):
                break
        return out

    def attributes_into(self, attrs) -> None:
        lx = self.lx
        lx.expect("<")
        while True:
            attrs.add().CopyFrom(self.attribute())
            if not lx.accept(","):
                break
        lx.expect(">", "',' or '>'")

    def attribute(self):
        lx = self.lx
        block, lit = self.prefix("AttributeProto")
        if lit is not None:
            return lit
        at = lx.start
        if lx.kind == "ident":
            nm = lx.value
            lx.advance()
        elif lx.kind in ("str", "bytes"):
            nm = read_string(lx)
        else:
            raise lx.error("an attribute name")
        a = self.attribute_rest(self.c["AttributeProto"](), nm, at)
        if block:
            self.apply(a, block)
        return a

    def attribute_rest(self, a, nm, at):
        """``[: type] = value`` after an attribute's name."""
        lx = self.lx
        self.enter()
        self._str_field(a, "name", nm, at)
        if lx.accept(":"):
            at = lx.start
            tname = lx.expect("ident", "an attribute type")
            code = ATTR_CODES.get(tname)
            if code is None:
                raise lx.fail(f"unknown attribute type {tname!r}", at)
            a.type = code
        lx.expect("=", "'='")
        if lx.kind == "[":
            lx.advance()
            if lx.kind != "]":
                expected = ELEMENT_TYPE.get(a.type, a.type)
                while True:
                    v = self.c["AttributeProto"]()
                    self.single_value(v, expected)
                    self._append_element(a, v)
                    if not lx.accept(","):
                        break
            else:
                if a.type == 0:
                    raise lx.fail("an empty list needs a type: 'name: ints = []'")
                if a.type in _SINGLETON:
                    raise lx.fail("a single-value attribute type cannot hold a list")
            lx.expect("]", "',' or ']'")
        elif lx.kind == "@" and lx.peek_after()[0] == "[":
            lx.advance()
            lx.advance()
            expected = ELEMENT_TYPE.get(a.type, a.type)
            if expected not in (4, 5, 13):
                raise lx.fail("'@[' lists hold tensors, graphs or types")
            while True:
                v = self.c["AttributeProto"]()
                self.single_value(v, expected)
                self._append_element(a, v)
                if not lx.accept(","):
                    break
            lx.expect("]", "',' or ']'")
        else:
            self.single_value(a, a.type)
        self.depth -= 1
        return a

    def _append_element(self, a, v) -> None:
        t = v.type
        if v.HasField("ref_attr_name"):
            raise self.lx.fail("a reference cannot be an element of a list")
        if t == 2:
            a.ints.append(v.i)
        elif t == 1:
            a.floats.append(v.f)
        elif t == 3:
            a.strings.append(v.s)
        elif t == 4:
            a.tensors.add().CopyFrom(v.t)
        elif t == 5:
            a.graphs.add().CopyFrom(v.g)
        elif t == 13:
            a.type_protos.add().CopyFrom(v.tp)
        elif t == 11:
            a.sparse_tensors.add().CopyFrom(v.sparse_tensor)
        a.type = LIST_TYPE.get(t, t)

    def single_value(self, a, expected: int) -> None:
        """onnx's ParseSingleAttributeValue (plus our literals and blocks)."""
        lx = self.lx
        at = lx.start
        kind = lx.kind
        if kind == "@":
            after = lx.peek_after()
            if after[0] == "{":
                lx.advance()
                target = {4: "TensorProto", 5: "GraphProto", 13: "TypeProto", 11: "SparseTensorProto"}.get(expected)
                if target is None:
                    raise lx.fail("an @{...} block here needs the attribute's type ('name: tensor = ...')")
                block = self.block(target)
                self.single_value(a, expected)
                sub = {4: a.t, 5: a.g, 13: a.tp, 11: a.sparse_tensor}[expected]
                self.apply(sub, block)
                return
            if after[0] == "ident" and after[1] in ("TensorProto", "TypeProto", "SparseTensorProto", "GraphProto"):
                lx.advance()
                lx.advance()
                lit = self.literal(after[1])
                which = {"TensorProto": ("t", 4), "TypeProto": ("tp", 13), "SparseTensorProto": ("sparse_tensor", 11),
                         "GraphProto": ("g", 5)}[after[1]]
                getattr(a, which[0]).CopyFrom(lit)
                a.type = which[1]
            else:
                lx.advance()
                at2 = lx.start
                self._str_field(a, "ref_attr_name", read_name(lx, what="an attribute name after '@'"), at2)
        elif kind == "ident":
            word = lx.value
            if word in TYPE_CODES or word in TYPE_WORDS:
                tp = self.c["TypeProto"]()
                self.type_into(tp)
                if lx.kind in ("{", "=", "ident", "str", "bytes", "[", "@") and not (lx.kind == "[" and False):
                    if lx.kind == "@" and lx.peek_after() not in (("ident", "raw"), ("ident", "elided"), ("ident", "file")):
                        a.type = 13
                        a.tp.CopyFrom(tp)
                    else:
                        a.type = 4
                        self.tensor_after_type(a.t, tp)
                else:
                    a.type = 13
                    a.tp.CopyFrom(tp)
            elif is_float_word(word):
                a.type = 1
                a.f = read_float_bits(lx, False)
            else:
                a.type = 5
                self.graph_into(a.g)
        elif kind == "num":
            text = lx.value
            if expected == 1 or "." in text or "e" in text or "E" in text:
                a.type = 1
                a.f = read_float_bits(lx, False)
            else:
                a.type = 2
                a.i = read_int(lx)
        elif kind == "negword":
            a.type = 1
            a.f = read_float_bits(lx, False)
        elif kind == "str" or kind == "bytes":
            a.type = 3
            a.s = read_bytes(lx)
        elif kind == "{" and expected == 11:
            a.type = 11
            self.enter()
            self.apply(a.sparse_tensor, self.block("SparseTensorProto"))
            self.depth -= 1
        else:
            raise lx.error("an attribute value")
        if expected and a.type != expected:
            raise lx.fail(f"the value is of type {a.type} but the attribute is declared of type {expected}", at)

    # -- types ---------------------------------------------------------------------------------
    def type_into(self, t) -> None:
        lx = self.lx
        self.enter()
        block, lit = self.prefix("TypeProto")
        if lit is not None:
            t.CopyFrom(lit)
            self.depth -= 1
            return
        at = lx.start
        word = lx.expect("ident", "a type")
        code = TYPE_CODES.get(word)
        if code is not None:
            tt = t.tensor_type
            tt.elem_type = code
            self.shape_of(tt)
        elif word == "seq":
            lx.expect("(")
            self.type_into(t.sequence_type.elem_type)
            lx.expect(")")
        elif word == "optional":
            lx.expect("(")
            self.type_into(t.optional_type.elem_type)
            lx.expect(")")
        elif word == "map":
            lx.expect("(")
            at = lx.start
            key = TYPE_CODES.get(lx.expect("ident", "a map's key type"))
            if key is None:
                raise lx.fail("expected an element type as a map's key type", at)
            mt = t.map_type
            mt.key_type = key
            lx.expect(",")
            self.type_into(mt.value_type)
            lx.expect(")")
        elif word == "sparse_tensor":
            lx.expect("(")
            at = lx.start
            code = TYPE_CODES.get(lx.expect("ident", "an element type"))
            if code is None:
                raise lx.fail("expected an element type in sparse_tensor(...)", at)
            st = t.sparse_tensor_type
            st.elem_type = code
            self.shape_of(st)
            lx.expect(")")
        elif word == "opaque":
            lx.expect("(")
            ot = t.opaque_type
            if not lx.accept(")"):
                first = [lx.expect("ident", "a name")]
                while lx.accept("."):
                    first.append(lx.expect("ident", "a name"))
                if lx.accept(","):
                    ot.domain = ".".join(first)
                    ot.name = lx.expect("ident", "a name")
                else:
                    ot.name = ".".join(first)
                lx.expect(")")
            else:
                ot.SetInParent()
        else:
            raise lx.fail(f"unknown type {word!r}", at)
        if block:
            self.apply(t, block)
        self.depth -= 1

    def shape_of(self, tt) -> None:
        """``[dims]`` (known rank), ``[]`` (unknown rank) or nothing (a scalar)."""
        lx = self.lx
        if lx.accept("["):
            if lx.accept("]"):
                return
            shape = tt.shape
            shape.SetInParent()
            dims = shape.dim
            while True:
                block, lit = self.prefix("TensorShapeProto.Dimension")
                if lit is not None:
                    dims.add().CopyFrom(lit)
                else:
                    d = dims.add()
                    kind = lx.kind
                    at = lx.start
                    if kind == "?":
                        lx.advance()
                    elif kind in ("str", "bytes", "ident"):
                        self._str_field(d, "dim_param", read_name(lx), at)
                    else:
                        d.dim_value = read_int(lx)
                    if block:
                        self.apply(d, block)
                if not lx.accept(","):
                    break
            lx.expect("]", "',' or ']'")
        else:
            tt.shape.SetInParent()

    # -- tensors -----------------------------------------------------------------------------
    def attr_tensor_into(self, t) -> None:
        """A tensor value: ``type[dims] [name] [=] data`` (a bare ``=`` after the type:
        the name is absent), or an @{...} block before it, or a literal."""
        lx = self.lx
        block, lit = self.prefix("TensorProto")
        if lit is not None:
            t.CopyFrom(lit)
            return
        tp = self.c["TypeProto"]()
        self.type_into(tp)
        self.tensor_after_type(t, tp)
        if block:
            self.apply(t, block)

    def tensor_after_type(self, t, tp) -> None:
        lx = self.lx
        at = lx.start
        if lx.kind in ("ident", "str", "bytes"):
            self._str_field(t, "name", read_name(lx), at)
            lx.accept("=")
        elif not lx.accept("="):
            t.name = ""
        self.tensor_data(t, tp, False)

    def tensor_data(self, t, tp, initializer: bool) -> None:
        """Dims and type from ``tp`` (a tensor type with numeric dims), then the data."""
        lx = self.lx
        if tp is None or not tp.HasField("tensor_type"):
            raise lx.fail("a tensor needs a tensor type")
        tt = tp.tensor_type
        dtype = tt.elem_type
        t.data_type = dtype
        if not tt.HasField("shape"):
            raise lx.fail("a tensor needs a shape (write 'float' for a scalar, 'float[2,3]' otherwise)")
        dims = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value"):
                raise lx.fail("a tensor's dims must be numbers")
            dims.append(d.dim_value)
        t.dims.extend(dims)
        kind = lx.kind
        if kind == "{":
            self.typed_values(t, dtype)
        elif kind == "[":
            lx.advance()
            t.data_location = 1
            if lx.kind != "]":
                while True:
                    t.external_data.add().CopyFrom(self.pair())
                    if not lx.accept(","):
                        break
            lx.expect("]", "',' or ']'")
        elif kind == "@":
            after = lx.peek_after()
            if after == ("ident", "raw"):
                lx.advance()
                lx.advance()
                self.raw_values(t, dtype, dims)
            elif after == ("ident", "elided"):
                lx.advance()
                lx.advance()
                at = lx.start
                self.block("TensorProto") if False else self._skip_elided()
                if not self.accept_elided:
                    raise lx.fail("an elided tensor (printed without its values) cannot be read back; "
                                  "pass accept_elided=True to read it as a tensor without data", at)
            elif after == ("ident", "file"):
                lx.advance()
                lx.advance()
                self.file_data(t)

    def _skip_elided(self) -> None:
        lx = self.lx
        lx.expect("{")
        while lx.kind not in ("}", "end"):
            lx.advance()
        lx.expect("}")

    def file_data(self, t) -> None:
        lx = self.lx
        at = lx.start
        lx.expect("{")
        info = {}
        while True:
            key = lx.expect("ident", "location, offset or length")
            lx.expect(":")
            info[key] = read_string(lx) if key == "location" else read_int(lx, 0)
            if not lx.accept(","):
                break
        lx.expect("}", "',' or '}'")
        if self.load_file is None:
            raise lx.fail("the tensor's data is in a file; parse with a data directory to read it", at)
        if set(info) != {"location", "offset", "length"}:
            raise lx.fail("@file needs location, offset and length", at)
        try:
            t.raw_data = self.load_file(info["location"], info["offset"], info["length"])
        except (OSError, ValueError) as exc:
            raise lx.fail(f"cannot read the tensor's data: {exc}", at) from None

    def _fast_values(self, texts: list, code: str, at: int) -> list:
        """Values of a plain number list (see `Lexer.plain_list`), as `raw_values`
        reads them (float parts as bits), with the same range checks."""
        lx = self.lx
        try:
            if code == "f":
                return [float32_bits(read_float32(s)) for s in texts]
            if code == "d":
                out = [double_bits(float(s)) for s in texts]
                if any(abs(float(s)) == float("inf") for s in texts):
                    raise OverflowError
                return out
        except (OverflowError, ValueError):
            raise lx.fail("a value out of the element type's range", at) from None
        if any(len(s) > 40 for s in texts):
            raise lx.fail("a value out of the element type's range", at)
        lo, hi = CODE_RANGE[code]
        values = [int(s) for s in texts]
        if min(values) < lo or max(values) > hi:
            raise lx.fail(f"a value out of the element type's range [{lo}, {hi}]", at)
        return values

    def typed_values(self, t, dtype: int) -> None:
        lx = self.lx
        field = TYPED_FIELD.get(dtype)
        if field in ("int32_data", "int64_data", "float_data"):
            at = lx.start
            fast = lx.plain_list(field != "float_data")
            if fast is not None:
                if field == "float_data":
                    try:
                        vals = [read_float32(s) for s in fast]
                    except OverflowError:
                        raise lx.fail("a value out of float's range", at) from None
                else:
                    if any(len(s) > 40 for s in fast):
                        raise lx.fail("a value out of range", at)
                    vals = [int(s) for s in fast]
                    lo, hi = INT32_RANGE if field == "int32_data" else (INT64_MIN, INT64_MAX)
                    if min(vals) < lo or max(vals) > hi:
                        raise lx.fail(f"a value out of range [{lo}, {hi}]", at)
                getattr(t, field).extend(vals)
                return
        lx.expect("{")
        if lx.accept("}"):
            return
        if field is None:
            raise lx.fail(f"values of element type {dtype} cannot be written as a list")
        values = []
        append = values.append
        if field == "int32_data":
            lo, hi = INT32_RANGE
            while True:
                append(read_int(lx, lo, hi))
                if not lx.accept(","):
                    break
        elif field == "int64_data":
            while True:
                append(read_int(lx))
                if not lx.accept(","):
                    break
        elif field == "uint64_data":
            while True:
                append(read_uint64(lx))
                if not lx.accept(","):
                    break
        elif field == "float_data" or field == "double_data":
            double = field == "double_data"
            while True:
                append(read_float_bits(lx, double))
                if not lx.accept(","):
                    break
        else:
            while True:
                append(read_bytes(lx))
                if not lx.accept(","):
                    break
        lx.expect("}", "',' or '}'")
        getattr(t, field).extend(values)

    def raw_values(self, t, dtype: int, dims: list) -> None:
        lx = self.lx
        at = lx.start
        if lx.kind == "hex":
            digits = lx.value[2:]
            if len(digits) % 2:
                raise lx.fail("an odd number of hex digits")
            t.raw_data = bytes.fromhex(digits)
            lx.advance()
            return
        code = RAW_CODES.get(dtype)
        if code is None:
            raise lx.fail(f"raw values of element type {dtype} are written in hex ('@raw 0x...')", at)
        fast = lx.plain_list(code not in ("f", "d"))
        if fast is not None:
            t.raw_data = pack_raw(dtype, self._fast_values(fast, code, at))
            return
        lx.expect("{")
        values = []
        append = values.append
        if code == "f" or code == "d":
            double = code == "d"
            to_bits = double_bits if double else float32_bits
            while lx.kind != "}":
                v = read_float_bits(lx, double)
                append(v.bits if hasattr(v, "bits") else to_bits(v))
                if not lx.accept(","):
                    break
        else:
            lo, hi = CODE_RANGE[code]
            while lx.kind != "}":
                append(read_int(lx, lo, hi))
                if not lx.accept(","):
                    break
        lx.expect("}", "',' or '}'")
        t.raw_data = pack_raw(dtype, values)
