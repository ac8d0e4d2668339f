"""The printer: onnx's text where onnx's parser rebuilds the message exactly, our
extension (`extras`, `tensordata`) for the rest.

Writes to a text file object as it goes (one node at a time), reading the message
through its lazy views, so a model's text never needs to exist whole in memory.
Layout (indentation, separators, where attributes go) follows onnx/defs/printer.cc.
"""

from __future__ import annotations

import hashlib

from wirefmt import MAX_DEPTH

from . import extras
from .names import ATTR_NAMES, DATA_FIELDS, TYPE_NAMES, TYPE_START, TYPED_FIELD
from .numbers import format_float32
from .patterns import DOTTED, IDENTIFIER
from .strings import name as id_text
from .strings import quote
from ..limits import element_count
from .tensordata import raw_values_text, typed_text

_is_identifier = IDENTIFIER.match
_is_dotted = DOTTED.match

# Fields each element's own syntax says; anything else present goes to an @{...} block.
_MODEL_SYNTAX = frozenset(("ir_version", "opset_import", "producer_name", "producer_version", "domain",
                           "model_version", "doc_string", "graph", "metadata_props", "functions"))
_GRAPH_SYNTAX = frozenset(("name", "input", "output", "initializer", "value_info", "node"))
_NODE_SYNTAX = frozenset(("input", "output", "name", "op_type", "domain", "overload", "attribute"))
_FUNCTION_SYNTAX = frozenset(("name", "input", "output", "attribute", "attribute_proto", "node", "opset_import",
                              "domain", "overload", "doc_string", "value_info"))
_VALUE_INFO_SYNTAX = frozenset(("name", "type"))
_TYPE_VALUES = ("tensor_type", "sequence_type", "map_type", "optional_type", "sparse_tensor_type", "opaque_type")
_ATTR_VALUE = {1: "f", 2: "i", 3: "s", 4: "t", 5: "g", 11: "sparse_tensor", 13: "tp", 6: "floats", 7: "ints",
               8: "strings", 9: "tensors", 10: "graphs", 12: "sparse_tensors", 14: "type_protos"}
_ALL_ATTR_VALUES = frozenset(_ATTR_VALUE.values())
_SINGULAR_KINDS = frozenset((1, 2, 3, 4, 5, 11, 13))
#: Bytes of raw data turned into hex and written at a time (2 MiB of text).
HEX_CHUNK = 1 << 20


class PrintError(ValueError):
    """A message the printer cannot walk (nested deeper than the wire format allows)."""


def _io_name(value) -> str:
    """A name where onnx's parser would read a type word as the start of a type."""
    return quote(value) if isinstance(value, str) and value in TYPE_START else id_text(value)


def _extra_names(msg, syntax: frozenset) -> list:
    return [f.name for f, _ in msg.ListFields() if f.name not in syntax]


class Printer:
    """Prints messages to ``write`` (a text file's ``write``).

    ``elide``: tensors with more elements than this are printed as ``@elided{...}``
    (type, shape, SHA1 of the bytes) instead of their values (None: never).
    ``external``: a callback ``(tensor) -> (location, offset, length) | None`` that
    writes a tensor's bytes to a data file the text will name (``@file``).
    """

    def __init__(self, write, elide: int | None = None, external=None):
        self.w = write
        self.elide = elide
        self.external = external
        self.depth = 0

    # -- depth ---------------------------------------------------------------------------
    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise PrintError(f"the message nests deeper than {MAX_DEPTH} levels")

    # -- model, function, graph --------------------------------------------------------------
    def model(self, m) -> None:
        w = self.w
        names = _extra_names(m, _MODEL_SYNTAX)
        clears = [] if m.HasField("graph") else ["graph"]
        w(extras.block(m, names, clears, self, 0))
        w("<\n")
        items = []
        if m.HasField("ir_version"):
            items.append(f"   ir_version: {m.ir_version}")
        items.append("   opset_import: " + self.opsets(m.opset_import, ", "))
        for key in ("producer_name", "producer_version", "domain"):
            if m.HasField(key):
                items.append(f"   {key}: " + quote(getattr(m, key)))
        if m.HasField("model_version"):
            items.append(f"   model_version: {m.model_version}")
        if m.HasField("doc_string"):
            items.append("   doc_string: " + quote(m.doc_string))
        if len(m.metadata_props):
            items.append("   metadata_props: [" + ", ".join(map(self.pair, m.metadata_props)) + "]")
        w(",\n".join(items))
        w("\n>\n")
        self.graph(m.graph, 3)
        for fn in m.functions:
            w("\n")
            self.function(fn)

    def opsets(self, opsets, sep: str) -> str:
        out = []
        for o in opsets:
            fields = [f.name for f, _ in o.ListFields()]
            if fields == ["domain", "version"] and not extras.unknown_bytes(o):
                out.append(f"{quote(o.domain)} : {o.version}")
            else:
                out.append(extras.typed_literal("OperatorSetIdProto", o, self, 0))
        return "[" + sep.join(out) + "]"

    def pair(self, p) -> str:
        """A StringStringEntryProto: ``"key": "value"`` (both fields present)."""
        if p.HasField("key") and p.HasField("value") and len(p.ListFields()) == 2 and not extras.unknown_bytes(p):
            return f"{quote(p.key)}: {quote(p.value)}"
        return extras.typed_literal("StringStringEntryProto", p, self, 0)

    def function(self, fn) -> None:
        w = self.w
        self._enter()
        w(extras.block(fn, _extra_names(fn, _FUNCTION_SYNTAX), [] if fn.HasField("name") else ["name"], self, 0))
        w("<\n")
        if fn.HasField("domain"):
            w("  domain: " + quote(fn.domain) + ",\n")
        if fn.HasField("overload") and (fn.overload or not _is_identifier(fn.overload)):
            w("  overload: " + quote(fn.overload) + ",\n")
        elif fn.HasField("overload"):
            w('  overload: "",\n')
        if fn.HasField("doc_string"):
            w("  doc_string: " + quote(fn.doc_string) + ",\n")
        w("  opset_import: " + self.opsets(fn.opset_import, ","))
        w("\n>\n")
        w(self.graph_name(fn, "name"))
        w(" ")
        attrs = [id_text(a) for a in fn.attribute]
        attrs.extend(self.attribute_text(a, 3) for a in fn.attribute_proto)
        if attrs:
            w("<" + ",".join(attrs) + ">")
        w("(" + ", ".join(map(_io_name, fn.input)) + ") => (" + ", ".join(map(_io_name, fn.output)) + ")")
        if len(fn.value_info):
            w(" <" + ", ".join(map(self.value_info, fn.value_info)) + ">")
        w("\n")
        self.nodes(fn.node, 3)
        self.depth -= 1

    def graph_name(self, msg, field: str) -> str:
        value = getattr(msg, field)
        return id_text(value)

    def graph(self, g, indent: int) -> None:
        """A graph: ``name (inputs) => (outputs) <initializers, value infos> {nodes}``."""
        w = self.w
        self._enter()
        names = _extra_names(g, _GRAPH_SYNTAX)
        clears = [] if g.HasField("name") else ["name"]
        w(extras.block(g, names, clears, self, indent))
        w(id_text(g.name) + " (" + ", ".join(map(self.value_info, g.input)) + ") => ("
          + ", ".join(map(self.value_info, g.output)) + ") ")
        inits, infos = g.initializer, g.value_info
        if len(inits) or len(infos):
            w("\n" + " " * indent + "<")
            sep = ""
            for t in inits:  # one at a time, each written as it is made (GBs of hex)
                w(sep)
                self.write_tensor(t, "init", indent)
                sep = ", "
            for v in infos:
                w(sep + self.value_info(v))
                sep = ", "
            w(">\n")
        self.nodes(g.node, indent)
        self.depth -= 1

    def nodes(self, nodes, indent: int) -> None:
        w = self.w
        w("{\n")
        for n in nodes:
            self.node(n, indent)
        if indent > 3:
            w(" " * (indent - 3))
        w("}")

    # -- nodes and attributes ----------------------------------------------------------------------
    def node(self, n, indent: int) -> None:
        w = self.w
        self._enter()
        fields = n.ListFields()
        extra = [f.name for f, _ in fields if f.name not in _NODE_SYNTAX]
        clears = []
        present = {f.name for f, _ in fields}
        if "op_type" not in present:
            clears.append("op_type")
        overload = n.overload
        if "overload" in present and not overload:
            extra.append("overload")
        head = " " * indent + extras.block(n, extra, clears, self, indent)
        if "name" in present:
            head += "[" + id_text(n.name) + "] "
        head += ", ".join(map(id_text, n.output)) + " = "
        if "domain" not in present:
            head += "."  # our spelling of an absent domain; onnx reads it as ""
        else:
            domain = n.domain
            if domain:
                head += (domain if isinstance(domain, str) and _is_dotted(domain) else quote(domain)) + "."
        op = n.op_type
        after_dot = head.endswith(".")
        head += op if (isinstance(op, str) and (_is_identifier(op) or (op == "" and not after_dot))) else quote(op)
        if overload:
            head += ":" + (overload if isinstance(overload, str) and _is_identifier(overload) else quote(overload))
        attrs = n.attribute
        after = False
        for a in attrs:
            if a.HasField("g") or len(a.graphs):
                after = True
                break
        inputs = " (" + ", ".join(map(id_text, n.input)) + ")"
        if not len(attrs):
            w(head + inputs + "\n")
        elif not after:
            w(head + " <" + ", ".join(self.attribute_text(a, indent) for a in attrs) + ">" + inputs + "\n")
        else:
            w(head + inputs + " <")
            sep = ""
            for a in attrs:
                w(sep)
                self.attribute(a, indent)
                sep = ", "
            w(">\n")
        self.depth -= 1

    def attribute_text(self, a, indent: int) -> str:
        if a.HasField("g") or len(a.graphs):
            from io import StringIO  # noqa: PLC0415

            buf = StringIO()
            sub = Printer(buf.write, self.elide, self.external)
            sub.depth = self.depth
            sub.attribute(a, indent)
            return buf.getvalue()
        return self._attribute(a, indent)

    def attribute(self, a, indent: int) -> None:
        """Write one attribute (a graph is written as it goes)."""
        if not (a.HasField("g") or len(a.graphs)):
            self.w(self._attribute(a, indent))
            return
        kind = a.type
        head = self._attribute_head(a, kind)
        if head is None:
            self.w(extras.typed_literal("AttributeProto", a, self, indent))
            return
        self._enter()
        w = self.w
        w(head)
        if kind == 5:
            self.graph(a.g, indent + 3)
        else:
            w("@[")
            sep = ""
            for g in a.graphs:
                w(sep)
                self.graph(g, indent + 3)
                sep = ", "
            w("]")
        self.depth -= 1

    def _attribute_head(self, a, kind: int) -> str | None:
        """``name: type = `` (with a leading @{...} block when needed), or None when the
        attribute needs a literal (undefined type, values in fields of another type,
        a reference with values)."""
        fields = a.ListFields()
        present = [f.name for f, _ in fields]
        tname = ATTR_NAMES.get(kind)
        if tname is None or "name" not in present or "type" not in present:
            return None
        value_field = _ATTR_VALUE[kind]
        ref = "ref_attr_name" in present
        for p in present:
            if p in _ALL_ATTR_VALUES and (ref or p != value_field):
                return None
        if not ref and kind in _SINGULAR_KINDS and value_field not in present:
            return None  # onnx's syntax always gives the value
        extra = ["doc_string"] if "doc_string" in present else []
        nm = a.name
        head = extras.block(a, extra, [], self, 0) + (nm if isinstance(nm, str) and _is_identifier(nm) else quote(nm))
        return f"{head}: {tname} = "

    def _attribute(self, a, indent: int) -> str:
        kind = a.type
        head = self._attribute_head(a, kind)
        if head is None:
            return extras.typed_literal("AttributeProto", a, self, indent)
        if a.HasField("ref_attr_name"):
            return head + "@" + id_text(a.ref_attr_name)
        if kind == 2:
            return head + str(a.i)
        if kind == 1:
            return head + format_float32(a.f)
        if kind == 3:
            return head + quote(a.s)
        if kind == 7:
            return head + "[" + ", ".join(map(str, a.ints)) + "]"
        if kind == 6:
            return head + "[" + ", ".join(map(format_float32, a.floats)) + "]"
        if kind == 8:
            return head + "[" + ", ".join(map(quote, a.strings)) + "]"
        if kind == 4:
            return head + self.tensor(a.t, "attr", indent)
        if kind == 13:
            return head + (self.type_text(a.tp) or "@TypeProto{}")
        if kind == 9:
            if not len(a.tensors):
                return head + "[]"
            return head + "@[" + ", ".join(self.tensor(t, "attr", indent) for t in a.tensors) + "]"
        if kind == 14:
            if not len(a.type_protos):
                return head + "[]"
            return head + "@[" + ", ".join(self.type_text(t) or "@TypeProto{}" for t in a.type_protos) + "]"
        if kind == 11:
            return head + self.message_text("SparseTensorProto", a.sparse_tensor, indent)
        if kind == 12:
            return head + "[" + ", ".join(self.message_text("SparseTensorProto", s, indent)
                                          for s in a.sparse_tensors) + "]"
        if kind == 10:  # an empty graphs list (a non-empty one is written by `attribute`)
            return head + "[]"
        return extras.typed_literal("AttributeProto", a, self, indent)

    # -- types and value infos ---------------------------------------------------------------
    def value_info(self, v) -> str:
        fields = v.ListFields()
        present = [f.name for f, _ in fields]
        extra = [p for p in present if p not in _VALUE_INFO_SYNTAX]
        clears = [] if "name" in present else ["name"]
        head = extras.block(v, extra, clears, self, 0)
        text_name = _io_name(v.name)
        if "type" in present:
            t = self.type_text(v.type)
            return f"{head}{t or '@TypeProto{}'} {text_name}"  # an empty TypeProto: say it
        return f"{head} {text_name}"

    def type_text(self, t) -> str:
        """A TypeProto in onnx's syntax, or ``@TypeProto{...}`` when it cannot say it."""
        self._enter()
        try:
            fields = t.ListFields()
            present = [f.name for f, _ in fields]
            values = [p for p in present if p in _TYPE_VALUES]
            if not values:
                return "" if not present else extras.typed_literal("TypeProto", t, self, 0)
            head = extras.block(t, ["denotation"] if "denotation" in present else [], [], self, 0)
            body = self._type_body(values[0], getattr(t, values[0]))
            if body is None:
                return extras.typed_literal("TypeProto", t, self, 0)
            return head + body
        finally:
            self.depth -= 1

    def _type_body(self, which: str, v) -> str | None:
        if extras.unknown_bytes(v):
            return None
        present = [f.name for f, _ in v.ListFields()]
        if which in ("tensor_type", "sparse_tensor_type"):
            if "elem_type" not in present or any(p not in ("elem_type", "shape") for p in present):
                return None
            tname = TYPE_NAMES.get(v.elem_type)
            if tname is None:
                return None
            if "shape" in present:
                shape = self._shape(v.shape)
                if shape is None:
                    return None
            else:
                shape = "[]"
            return tname + shape if which == "tensor_type" else f"sparse_tensor({tname}{shape})"
        if which in ("sequence_type", "optional_type"):
            if present != ["elem_type"]:
                return None
            inner = self.type_text(v.elem_type)
            if inner == "":
                return None
            return ("seq(" if which == "sequence_type" else "optional(") + inner + ")"
        if which == "map_type":
            if present != ["key_type", "value_type"]:
                return None
            key = TYPE_NAMES.get(v.key_type)
            inner = self.type_text(v.value_type)
            if key is None or inner == "":
                return None
            return f"map({key}, {inner})"
        if which == "opaque_type":
            dom, nm = v.domain, v.name
            if (dom and not (isinstance(dom, str) and _is_dotted(dom))) or (nm and not (isinstance(nm, str) and _is_identifier(nm))):
                return None
            # onnx reads "opaque()" as neither field set, and a name-only form as name set
            if ("domain" in present) != bool(dom) or ("name" in present) != bool(nm) or (dom and not nm):
                return None
            return "opaque(" + (dom + "," if dom else "") + (nm or "") + ")"
        return None

    def _shape(self, shape) -> str | None:
        fields = shape.ListFields()
        if any(f.name != "dim" for f, _ in fields) or extras.unknown_bytes(shape):
            return None
        dims = shape.dim
        if not len(dims):
            return ""
        parts = []
        for d in dims:
            df = d.ListFields()
            if extras.unknown_bytes(d):
                return None
            if not df:
                parts.append("?")
                continue
            names = [f.name for f, _ in df]
            head = ""
            if "denotation" in names:
                head = extras.block(d, ["denotation"], [], self, 0)
                names.remove("denotation")
            if names == ["dim_value"]:
                parts.append(head + str(d.dim_value))
            elif names == ["dim_param"]:
                parts.append(head + id_text(d.dim_param))
            elif not names:
                parts.append(head + "?")
            else:
                return None
        return "[" + ",".join(parts) + "]"

    # -- tensors --------------------------------------------------------------------------------
    def tensor(self, t, where: str, indent: int) -> str:
        """A tensor: ``type[dims] name = data`` (``where``: "init" for an initializer,
        "attr" for an attribute's value, where onnx writes no ``=``)."""
        text, raw = self._tensor(t, where, indent)
        return text if raw is None else text + raw.hex()

    def write_tensor(self, t, where: str, indent: int) -> None:
        """`tensor`, written to the output as it is made: the hex of a large ``raw_data``
        in pieces of `HEX_CHUNK` bytes, so that printing never holds a tensor's text (a
        GPT-2 embedding is 309 MB of hex) nor the bytes of one read from the file."""
        text, raw = self._tensor(t, where, indent)
        self.w(text)
        if raw is not None:
            for start in range(0, len(raw), HEX_CHUNK):
                self.w(raw[start:start + HEX_CHUNK].hex())

    def _tensor(self, t, where: str, indent: int) -> tuple:
        """`tensor`'s text, and the raw bytes (a memoryview) whose hex follows it, or None."""
        fields = t.ListFields()
        present = {f.name for f, _ in fields}
        dtype = t.data_type
        tname = TYPE_NAMES.get(dtype)
        if tname is None or "data_type" not in present:
            return extras.typed_literal("TensorProto", t, self, indent), None
        dims = list(t.dims)
        extra = [n for n in ("doc_string", "metadata_props", "segment") if n in present]
        clears = []
        location = t.data_location if "data_location" in present else None
        external = location == 1
        data_fields = [n for n in DATA_FIELDS if n in present]
        if external:
            extra.extend(data_fields)
        elif location is not None:
            extra.append("data_location")
        typed = TYPED_FIELD.get(dtype)
        data, raw = "", None
        if not external:
            own = "raw_data" if "raw_data" in present else typed
            for n in data_fields:
                if n != own:
                    extra.append(n)
            made = self._data(t, dtype, own, dims, "raw_data" in present)
            if isinstance(made, str):
                data = made
            else:
                data, raw = " @raw 0x", made
        if "external_data" in present and not external:
            extra.append("external_data")
        if where == "init":
            if "name" not in present:
                clears.append("name")
            nm = t.name
            name_text = " " + _io_name(nm) + " = "
        elif "name" not in present:
            name_text = " ="  # our spelling of an absent name; onnx reads it as ""
        elif t.name:
            name_text = " " + id_text(t.name)
        else:
            name_text = ""
        head = extras.block(t, extra, clears, self, indent)
        type_text = tname + ("[" + ",".join(map(str, dims)) + "]" if dims else "")
        if external:
            if where != "init" and not t.name:
                return extras.typed_literal("TensorProto", t, self, indent), None
            return head + type_text + name_text + "[" + ", ".join(map(self.pair, t.external_data)) + "]", None
        return head + type_text + name_text + data, raw

    def _data(self, t, dtype: int, field: str | None, dims: list, raw: bool) -> str | memoryview:
        """The data part, with onnx's leading space (none before a string list); raw bytes
        printed as hex come back as bytes (the caller writes them, in pieces or not)."""
        count = element_count(dims)
        if raw:
            data = t.raw_data
            if self.elide is not None and count is not None and count > self.elide:
                return " " + self._elided(dtype, dims, data)
            if self.external is not None:
                ref = self.external(t, data)
                if ref is not None:
                    return " " + ref
            text = raw_values_text(dtype, data, count)
            if text is not None:
                return " @raw" + text
            return memoryview(data).cast("B")  # printed as " @raw 0x" + its hex, by the caller
        if field is None:
            return " {}"
        text = typed_text(field, getattr(t, field))
        return text if field == "string_data" else " " + text

    def _elided(self, dtype: int, dims: list, data) -> str:
        digest = hashlib.sha1(data).hexdigest()
        return f'@elided{{sha1: "{digest}", bytes: {len(data)}}}'

    # -- generic values (extras) -----------------------------------------------------------
    def message_text(self, type_name: str, msg, indent: int) -> str:
        """A message held by a field of an @{...} block or a literal."""
        self._enter()
        try:
            if type_name == "TypeProto":
                text = self.type_text(msg)
                return text if text else "@TypeProto{}"
            if type_name == "TensorProto":
                return self.tensor(msg, "attr", indent)
            if type_name == "ValueInfoProto":
                return self.value_info(msg).lstrip(" ") if msg.HasField("type") else \
                    extras.typed_literal("ValueInfoProto", msg, self, indent)
            if type_name == "StringStringEntryProto":
                return self.pair(msg)
            if type_name == "GraphProto":
                from io import StringIO  # noqa: PLC0415

                buf = StringIO()
                sub = Printer(buf.write, self.elide, self.external)
                sub.depth = self.depth
                sub.graph(msg, indent + 3)
                return buf.getvalue()
            return extras.literal(msg, self, indent)
        finally:
            self.depth -= 1
