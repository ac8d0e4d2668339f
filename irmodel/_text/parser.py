"""The parser: onnx's syntax read as onnx reads it (onnx/defs/parser.cc), plus our
extension (``@{...}`` blocks, ``@Type{...}`` literals, ``@raw`` data, byte strings,
``nan(0x...)``, quoted names where onnx prints bare ones, ``.Op`` for an absent
domain).

Recursive descent over `Lexer` tokens, with a depth budget (`wirefmt.MAX_DEPTH`
message levels, what the wire format accepts) so that no text can exhaust the
interpreter's stack: any text ends in a message or a `ParseError`.  This module has
the grammar of models, functions, graphs, nodes and attributes; `parsertensors` that
of types and tensor data; `parsercore` the plumbing and the @-blocks.
"""

from __future__ import annotations

from .names import ATTR_CODES, ELEMENT_TYPE, LIST_TYPE, TYPE_CODES, TYPE_WORDS
from .parsertensors import TensorSyntax
from .values import is_float_word, read_bytes, read_float_bits, read_int, read_name, read_string

_SINGLETON = frozenset((1, 2, 3, 4, 5, 11, 13))


class Parser(TensorSyntax):
    """The whole syntax (see the module docstring)."""

    def model(self):
        lx = self.lx
        block, lit = self.prefix("ModelProto")
        if lit is not None:
            self.end()
            return lit
        m = self.c["ModelProto"]()
        if lx.accept("<"):
            self.items(">", lambda: self._model_header_entry(m), may_be_empty=False)
        self.graph_into(m.graph)
        while lx.kind != "end":
            self.function_into(m.functions.add())
        if block:
            self.apply(m, block)
        return m

    def _model_header_entry(self, m) -> None:
        lx = self.lx
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
            self.items("]", lambda: m.metadata_props.add().CopyFrom(self.pair()))
        else:
            raise lx.fail(f"unknown keyword {key!r} in a model's header", at)

    def opsets(self, target) -> None:
        self.lx.expect("[")
        self.items("]", lambda: self._opset(target))

    def _opset(self, target) -> None:
        lx = self.lx
        block, lit = self.prefix("OperatorSetIdProto")
        if lit is not None:
            target.add().CopyFrom(lit)
            return
        o = target.add()
        at = lx.start
        self._str_field(o, "domain", read_string(lx, "a domain string"), at)
        lx.expect(":")
        o.version = read_int(lx)
        if block:
            self.apply(o, block)

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
            self.items(">", lambda: self._function_header_entry(fn), may_be_empty=False)
        at = lx.start
        self._str_field(fn, "name", read_name(lx, what="a function name"), at)
        if lx.accept("<"):
            names: list = []
            starts: list = []
            self.items(">", lambda: self._function_attribute(fn, names, starts), may_be_empty=False)
            self._add_str(fn, "attribute", names, starts[-1])
        self.function_io(fn, "input")
        lx.expect("arrow", "'=>'")
        self.function_io(fn, "output")
        if lx.accept("<"):
            self.items(">", lambda: fn.value_info.add().CopyFrom(self.value_info()))
        self.nodes_into(fn.node)
        if block:
            self.apply(fn, block)
        self.depth -= 1

    def _function_header_entry(self, fn) -> None:
        lx = self.lx
        at = lx.start
        key = lx.expect("ident", "a keyword")
        lx.expect(":")
        if key == "opset_import":
            self.opsets(fn.opset_import)
        elif key in ("doc_string", "domain", "overload"):
            self._str_field(fn, key, read_string(lx), at)
        else:
            raise lx.fail(f"unknown keyword {key!r} in a function's header", at)

    def _function_attribute(self, fn, names: list, starts: list) -> None:
        """One entry of a function's attribute list: a bare name, or an attribute with
        a default (``name: type = value``, or a literal)."""
        lx = self.lx
        at = lx.start
        starts.append(at)
        if lx.kind == "@":
            fn.attribute_proto.add().CopyFrom(self.attribute())
            return
        nm = read_name(lx, what="an attribute name")
        if lx.kind in (":", "="):
            fn.attribute_proto.add().CopyFrom(self.attribute_rest(self.c["AttributeProto"](), nm, at))
        else:
            names.append(nm)

    def function_io(self, fn, field: str) -> None:
        lx = self.lx
        lx.expect("(")
        names: list = []
        starts = [lx.start]
        self.items(")", lambda: self._function_io_entry(fn, names, starts))
        self._add_str(fn, field, names, starts[-1])

    def _function_io_entry(self, fn, names: list, starts: list) -> None:
        lx = self.lx
        vi = None
        if self.next_is_type():
            vi = fn.value_info.add()
            self.type_into(vi.type)
        at = lx.start
        starts.append(at)
        nm = read_name(lx)
        names.append(nm)
        if vi is not None:
            self._str_field(vi, "name", nm, at)

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
            self.items(")", lambda: self._graph_input(g))
        lx.expect("arrow", "'=>'")
        lx.expect("(")
        self.items(")", lambda: self._graph_output(g))
        if lx.accept("<"):
            self.items(">", lambda: self.init_or_info(g))
        self.nodes_into(g.node)
        if block:
            self.apply(g, block)
        self.depth -= 1

    def _graph_input(self, g) -> None:
        """``type name`` or ``type name = data`` (an input with its initializer)."""
        lx = self.lx
        vi = self.value_info()
        if isinstance(vi, tuple):  # a tensor literal stands for an initializer
            g.initializer.add().CopyFrom(vi[1])
            return
        g.input.add().CopyFrom(vi)
        if lx.accept("="):
            t = g.initializer.add()
            self._str_field(t, "name", vi.name, lx.start)
            self.tensor_data(t, vi.type if vi.HasField("type") else None, True)

    def _graph_output(self, g) -> None:
        vi = self.value_info()
        if isinstance(vi, tuple):
            raise self.lx.fail("a tensor cannot be a graph output")
        g.output.add().CopyFrom(vi)

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
            # Built apart and then appended (adopted, not copied): each field set marks only
            # the node changed, not the node, its graph and the model above it.
            n = self.c["NodeProto"]()
            self.node_into(n)
            nodes.append(n)

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
            domain = ".".join(str(p) for p in parts if p != "") if all(isinstance(p, str) for p in parts) else parts[0]
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
        out: list = []
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
        self.lx.expect("<")
        # `attribute` makes a new message (a literal too): adopted, not copied.
        self.items(">", lambda: attrs.append(self.attribute()), may_be_empty=False)

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
            if lx.kind == "]":
                if a.type == 0:
                    raise lx.fail("an empty list needs a type: 'name: ints = []'")
                if a.type in _SINGLETON:
                    raise lx.fail("a single-value attribute type cannot hold a list")
            expected = ELEMENT_TYPE.get(a.type, a.type)
            self.items("]", lambda: self._list_element(a, expected))
        elif lx.kind == "@" and lx.peek_after()[0] == "[":
            lx.advance()
            lx.advance()
            expected = ELEMENT_TYPE.get(a.type, a.type)
            if expected not in (4, 5, 13):
                raise lx.fail("'@[' lists hold tensors, graphs or types")
            self.items("]", lambda: self._list_element(a, expected), may_be_empty=False)
        else:
            self.single_value(a, a.type)
        self.depth -= 1
        return a

    def _list_element(self, a, expected: int) -> None:
        v = self.c["AttributeProto"]()
        self.single_value(v, expected)
        self._append_element(a, v)

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
