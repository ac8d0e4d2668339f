"""The parser's grammar of types (``float[N,3]``, ``seq(...)``, ...) and of tensor
data: onnx's typed lists and external entries, and our ``@raw``, ``@elided`` and
``@file`` forms.  Large value lists are read in one regex match (`Lexer.plain_list`).
"""

from __future__ import annotations

from typing import Callable

from .names import INT32_RANGE, TYPE_CODES, TYPED_FIELD
from .numbers import INT64_MAX, INT64_MIN, double_bits, float32_bits, read_float32
from .parsercore import ParserCore
from .tensordata import CODE_RANGE, RAW_CODES, pack_raw
from .values import read_bytes, read_float_bits, read_int, read_name, read_string, read_uint64


class TensorSyntax(ParserCore):
    """Types, shapes and tensor data."""

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
            mt = t.map_type
            mt.key_type = self._element_type("a map's key type")
            lx.expect(",")
            self.type_into(mt.value_type)
            lx.expect(")")
        elif word == "sparse_tensor":
            lx.expect("(")
            st = t.sparse_tensor_type
            st.elem_type = self._element_type("the element type of sparse_tensor(...)")
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

    def _element_type(self, role: str) -> int:
        """An element type's name (``float``, ``int64``...) as its code; ``role`` says
        where it stands, for the error."""
        lx = self.lx
        at = lx.start
        code = TYPE_CODES.get(lx.expect("ident", role))
        if code is None:
            raise lx.fail(f"expected an element type as {role}", at)
        return code

    def shape_of(self, tt) -> None:
        """``[dims]`` (known rank), ``[]`` (unknown rank) or nothing (a scalar)."""
        lx = self.lx
        if lx.accept("["):
            if lx.accept("]"):
                return
            shape = tt.shape
            shape.SetInParent()
            self.items("]", lambda: self._dim(shape.dim), may_be_empty=False)
        else:
            tt.shape.SetInParent()

    def _dim(self, dims) -> None:
        """``?``, a dim_param or a dim_value (or a literal), with its @{...} block."""
        lx = self.lx
        block, lit = self.prefix("TensorShapeProto.Dimension")
        if lit is not None:
            dims.add().CopyFrom(lit)
            return
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
            self.items("]", lambda: t.external_data.add().CopyFrom(self.pair()))
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
        info: dict = {}

        def entry() -> None:
            key = lx.expect("ident", "location, offset or length")
            lx.expect(":")
            info[key] = read_string(lx) if key == "location" else read_int(lx, 0)

        self.items("}", entry, may_be_empty=False)
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
        read_one: Callable[[], object]
        if field == "int32_data":
            lo, hi = INT32_RANGE
            read_one = lambda: read_int(lx, lo, hi)  # noqa: E731
        elif field == "int64_data":
            read_one = lambda: read_int(lx)  # noqa: E731
        elif field == "uint64_data":
            read_one = lambda: read_uint64(lx)  # noqa: E731
        elif field == "float_data" or field == "double_data":
            double = field == "double_data"
            read_one = lambda: read_float_bits(lx, double)  # noqa: E731
        else:
            read_one = lambda: read_bytes(lx)  # noqa: E731
        values: list = []
        self.items("}", lambda: values.append(read_one()), may_be_empty=False)
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
        values: list = []
        read_one: Callable[[], int]
        if code == "f" or code == "d":
            double = code == "d"
            to_bits = double_bits if double else float32_bits

            def read_one() -> int:
                v = read_float_bits(lx, double)
                return v.bits if hasattr(v, "bits") else to_bits(v)
        else:
            lo, hi = CODE_RANGE[code]
            read_one = lambda: read_int(lx, lo, hi)  # noqa: E731
        self.items("}", lambda: values.append(read_one()))
        t.raw_data = pack_raw(dtype, values)
