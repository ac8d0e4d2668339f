"""The operator-schema rules of a node (what the reference's ``OpSchema::Verify`` checks).

For a node whose domain is imported: the op has a schema at the imported version (in the
built-in domains, or everywhere with ``check_custom_domain``), the schema is not
deprecated, the numbers of inputs and outputs are in range, inputs and outputs the schema
marks single are not empty, attributes are declared, of the declared type and carry
their value, and required attributes are present.  onnxruntime's contrib schemas
(com.microsoft, unknown to onnx) are checked only with ``check_custom_domain``; without
it such nodes are skipped, as onnx skips every node of a domain it has no schemas for.  Each schema is compiled once into a
`_Rules` record of plain values, so a 75,000-node graph costs a dict lookup per node.
"""

from __future__ import annotations

from .context import BUILTIN_DOMAINS
from .problems import short

_SINGLE = 0  # OpSchema.FormalParameterOption.Single
_ATTR_TYPE_NAMES = ("UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
                    "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS",
                    "TYPE_PROTO", "TYPE_PROTOS")
# Attribute types whose value is a message that must be present (field, name in messages).
_VALUE_FIELD = {4: ("t", "t"), 11: ("sparse_tensor", "sparse_tensor"), 5: ("g", "g"),
                13: ("tp", "type_proto")}

# Two facts of the reference's schemas that the schema table does not carry yet (asked
# for in the defs contract): ops that accept attributes they do not declare, and ops
# whose number of outputs is restricted to a set.  Used only when the schema object has
# no such attribute of its own; the differential tests on the reference corpus
# (tests/checker/test_checker_diff.py) exercise both.
_UNCHECKED_ATTRIBUTES = {("", "LayerNormalization", 17)}
_ALLOWED_OUTPUT_COUNTS = {("", "BatchNormalization", v): c for v, c in
                          ((1, (1, 5)), (6, (1, 5)), (7, (1, 5)), (9, (1, 5)), (14, (1, 3)),
                           (15, (1, 3)))}


def attribute_type_name(code: int) -> str:
    return _ATTR_TYPE_NAMES[code] if 0 <= code < len(_ATTR_TYPE_NAMES) else str(code)


class _Rules:
    """What `verify_node` needs of one schema, as plain values."""

    __slots__ = ("prefix_tail", "deprecated", "min_in", "max_in", "min_out", "max_out",
                 "single_in", "single_out", "attr_types", "required", "unchecked", "allowed_out")

    def __init__(self, schema) -> None:
        key = (schema.domain, schema.name, schema.since_version)
        self.prefix_tail = f" with schema({schema.domain}::{schema.name}:{schema.since_version})"
        self.deprecated = schema.deprecated
        self.min_in, self.max_in = schema.min_input, schema.max_input
        self.min_out, self.max_out = schema.min_output, schema.max_output
        ins, outs = schema.inputs, schema.outputs
        self.single_in = tuple(p.option == _SINGLE for p in ins)
        self.single_out = tuple(p.option == _SINGLE for p in outs)
        self.attr_types = {name: a.type for name, a in schema.attributes.items()}
        self.required = tuple(name for name, a in schema.attributes.items() if a.required)
        unchecked = getattr(schema, "allows_unchecked_attributes", None)
        self.unchecked = key in _UNCHECKED_ATTRIBUTES if unchecked is None else bool(unchecked)
        allowed = getattr(schema, "allowed_output_counts", None)
        self.allowed_out = _ALLOWED_OUTPUT_COUNTS.get(key) if allowed is None else allowed


class SchemaRules:
    """Looks up and caches schemas; ``__call__`` is the ``verify_schema`` of `graph.Walker`."""

    __slots__ = ("_defs", "_cache", "_rules")

    def __init__(self) -> None:
        from .. import defs  # noqa: PLC0415 - the schema table loads on first check

        self._defs = defs
        self._cache: dict = {}
        self._rules: dict = {}

    def schema(self, op_type, version: int, domain):
        """The schema of ``op_type`` at opset ``version`` of ``domain``, or None."""
        found = self.lookup(op_type, version, domain)
        return None if found is None else found[0]

    def lookup(self, op_type, version: int, domain) -> tuple | None:
        """``(schema, rules)`` of ``op_type`` at opset ``version`` of ``domain``, or None."""
        key = (op_type, version, domain)
        try:
            return self._cache[key]
        except KeyError:
            pass
        found = None
        if isinstance(op_type, str) and isinstance(domain, str):
            try:
                schema = self._defs.get_schema(op_type, version, domain)
            except self._defs.SchemaError:
                schema = None
            if schema is not None:
                rkey = (schema.domain, schema.name, schema.since_version)
                rules = self._rules.get(rkey)
                if rules is None:
                    rules = self._rules[rkey] = _Rules(schema)
                found = (schema, rules)
        self._cache[key] = found
        return found

    def __call__(self, report, node, ctx, version: int, path: str, attrs=None) -> None:
        """The schema rules of ``node``; ``attrs`` is ``[(index, attribute)]`` of the first
        attribute of each name (all of the node's when None)."""
        op_type, domain = node.op_type, node.domain
        found = self.lookup(op_type, version, domain)
        if found is not None and not ctx.check_custom_domain and self._defs.is_contrib_domain(domain):
            return  # onnx has no schema here and skips the node: its verdict is kept
        if found is None:
            if domain in BUILTIN_DOMAINS or ctx.check_custom_domain:
                report.add("N405", f"{path}.op_type",
                           f"No Op registered for {short(op_type)} with domain_version of {version}"
                           f" (domain {short(domain)!r})", node)
            return
        rules = found[1]
        if rules.deprecated:
            report.add("N406", f"{path}.op_type",
                       f"Op registered for {short(op_type)} is deprecated in domain_version of {version}",
                       node)
            return
        if attrs is None:
            attrs = _first_of_each_name(node.attribute)
        verify_node(report, node, rules, path, ctx.ir_version, attrs)


def _first_of_each_name(attributes) -> list:
    seen = set()
    out = []
    for i, attr in enumerate(attributes):
        if attr.name not in seen:
            seen.add(attr.name)
            out.append((i, attr))
    return out


def verify_node(report, node, r: _Rules, path: str, ir_version: int, attrs: list) -> None:
    """The arity, empty-name and attribute rules of one node against its schema's rules."""
    add = report.add
    name = node.name
    inputs, outputs = node.input, node.output
    n_in, n_out = len(inputs), len(outputs)
    if n_in < r.min_in or n_in > r.max_in:
        add("N407", path, f"{_prefix(name, r)} has input size {n_in} not in range [min={r.min_in}, "
                          f"max={r.max_in}].", node)
    if n_out < r.min_out or n_out > r.max_out:
        add("N408", path, f"{_prefix(name, r)} has output size {n_out} not in range [min={r.min_out}, "
                          f"max={r.max_out}].", node)
    elif r.allowed_out is not None and n_out not in r.allowed_out:
        add("N408", path, f"{_prefix(name, r)} has output size {n_out} not in allowed output sizes. "
                          f"(allowed: {', '.join(map(str, r.allowed_out))})", node)
    if "" in inputs:
        _check_names(add, node, path, inputs, r.single_in, "input")
    if "" in outputs:
        _check_names(add, node, path, outputs, r.single_out, "output")

    attr_types = r.attr_types
    seen = set()
    for i, attr in attrs:
        aname = attr.name
        seen.add(aname)
        apath = f"{path}.attribute[{i}]"
        expected = attr_types.get(aname)
        if expected is None:
            if r.unchecked or (isinstance(aname, str) and aname.startswith("__")):
                continue
            add("N411", apath, f"Unrecognized attribute: {short(aname)} for operator {short(node.op_type)} "
                               f"(declared: {', '.join(attr_types) or 'none'})", node)
            continue
        actual = attr.type
        if actual != expected:
            if ir_version >= 2 and not attr.HasField("type"):
                continue  # the attribute's own rules report the missing type (A502)
            add("N412", apath, f"Mismatched attribute type in '{short(name)} : {short(aname)}'. Expected: "
                               f"'{attribute_type_name(expected)}', actual: "
                               f"'{attribute_type_name(actual)}'", node)
            continue
        if attr.ref_attr_name:
            continue
        value = _VALUE_FIELD.get(expected)
        if value is not None and not attr.HasField(value[0]):
            add("N413", apath, f"Attribute '{short(aname)}' is expected to have field '{value[1]}'", node)
    for req in r.required:
        if req not in seen:
            add("N414", path, f"Required attribute '{req}' is missing.", node)


def _prefix(node_name, r: _Rules) -> str:
    """The reference's "Node(name) with schema(domain::Op:version)"."""
    return "Node" + (f"({short(node_name)})" if node_name else "") + r.prefix_tail


def _check_names(add, node, path, names, single, what) -> None:
    # Names past the formal parameters of a schema without a variadic last parameter make
    # the count out of range, reported above.
    for idx in range(min(len(names), len(single))):
        if not names[idx] and single[idx]:
            code = "N409" if what == "input" else "N410"
            add(code, f"{path}.{what}[{idx}]", f"Node ({short(node.name)})'s {what} {idx} is marked single "
                                               "but has an empty string in the graph", node)
