"""Rules for graphs, nodes, attributes and value infos, walked scope by scope.

A graph's names form a lexical scope: its inputs, initializers and node outputs, in
order, plus every name visible in the graphs that enclose it.  A node may use only names
already defined (topological order) and may define a name only once in all the scopes
it sees (single static assignment).  Nested graphs (If, Loop, Scan bodies) are checked
where their node is, with the names defined so far.  Recursion follows the nesting of
graphs, which the decoder bounds (`G209` guards models built in memory).
"""

from __future__ import annotations

from itertools import islice, repeat

from wirefmt import MAX_DEPTH, DecodeError

from .access import VALUE_FIELD_TYPES as _VALUE_FIELD_TYPES, decode_rest, present_value_fields
from .context import EXPERIMENTAL_OPS, LexicalScopeContext
from .._wireview.fastpath import declined, items as fast_items, items_read
from .._wireview.infoscan import value_info_type
from .._wireview.nodes import names_of, node_pattern, skeleton
from .._wireview.tensorscan import dims_well_formed, tensor_kind
from .fastnodes import MAX_KINDS as _MAX_KINDS, FastState as _FastState
from .problems import Reporter, short
from .tensor import check_sparse_tensor, check_tensor

# The fields whose checks read them whole, per message type; `decode_rest` decodes the
# others (a model is valid only if all of it parses).
_NOTHING_READ: frozenset[str] = frozenset()
_GRAPH_READ = frozenset({"node", "initializer", "sparse_initializer", "input", "output"})
_NODE_READ = frozenset({"attribute"})
_ATTRIBUTE_READ = frozenset({"t", "g", "tensors", "graphs", "sparse_tensor", "sparse_tensors"})

# Graphs of at least `irmodel._wireview.fastpath.FAST_FROM` nodes or initializers take the
# fast path (`fastnodes`: nodes read from their bytes, verdicts cached by kind).

class Walker:
    """Checks graphs, nodes and attributes, reporting to ``report``.

    ``verify_schema(report, node, ctx, version, path, attrs)`` applies the operator-schema rules
    (`schema_rules`); it is a parameter so that this module does not load the schemas.
    """

    __slots__ = ("report", "verify_schema")

    def __init__(self, report, verify_schema) -> None:
        self.report = report
        self.verify_schema = verify_schema

    # -- value infos --------------------------------------------------------------------------
    def value_info(self, vi, ctx, path: str) -> None:
        add = self.report.add
        name = vi.name
        if not name:
            add("V301", path, "Field 'name' of 'value_info' is required to be non-empty.")
        if not ctx.is_main_graph:
            return  # subgraph inputs and outputs may leave their types to inference
        if not vi.HasField("type"):
            add("V302", path, f"Field 'type' of 'value_info' is required but missing. (value {short(name)!r} "
                              "of the main graph has no type)")
            return
        tp = vi.type
        case = tp.WhichOneof("value")
        need: tuple = ()
        if case == "tensor_type" or case == "sparse_tensor_type":
            need = ("elem_type", "shape")
        elif case == "sequence_type" or case == "optional_type":
            need = ("elem_type",)
        elif case == "map_type":
            need = ("key_type", "value_type")
        elif case == "opaque_type":
            if not tp.opaque_type.name:
                add("V303", f"{path}.type.opaque_type",
                    f"Field 'name' of 'type' is required to be non-empty. (opaque type of {short(name)!r})")
            return
        else:
            add("V304", f"{path}.type", f"Unrecognized type value case (value_info name: {short(name)}): 0 "
                                        "(the type sets none of tensor_type, sequence_type, map_type, "
                                        "optional_type, sparse_tensor_type, opaque_type)")
            return
        inner = getattr(tp, case)
        for field in need:
            if not inner.HasField(field):
                add("V303", f"{path}.type.{case}",
                    f"Field '{field}' of 'type' is required but missing. ({case} of {short(name)!r} "
                    f"has no {field})")

    # -- graphs ------------------------------------------------------------------------------
    def graph(self, g, ctx, parent_lex, path: str, depth: int = 0, node=None) -> None:
        """``check_graph``: ``parent_lex`` holds the names of the enclosing scopes."""
        report = self.report
        add = report.add
        if depth > MAX_DEPTH:
            add("G209", path, f"graphs nest more than {MAX_DEPTH} levels deep; the graph at this "
                              "depth is not checked", node)
            return
        if not g.name:
            add("G201", f"{path}.name", "Field 'name' of 'graph' is required to be non-empty.", node)
        inputs = self._value_infos(g, "input", path, node)
        outputs = self._value_infos(g, "output", path, node)
        for i, _, vi in inputs:
            if vi is not None:
                self._guarded_value_info(vi, ctx, f"{path}.input[{i}]", node)
        for i, _, vi in outputs:
            if vi is not None:
                self._guarded_value_info(vi, ctx, f"{path}.output[{i}]", node)

        lex = LexicalScopeContext(parent_lex)
        names = lex.names
        for i, name, _ in inputs:
            if name in names:
                add("G202", f"{path}.input[{i}]",
                    f"Graph must be in single static assignment (SSA) form, however '{short(name)}' has "
                    "been used as graph input names multiple times.", node)
            names.add(name)

        seen: set = set()
        old_ir = ctx.ir_version <= 3
        for i, init in self._initializers(g, ctx, names, seen, path, node):
            ipath = f"{path}.initializer[{i}]"
            name = init.name
            if not name:
                add("G203", ipath, "Tensor initializers must have a non-empty name" if init.HasField("name")
                    else "Field 'name' of 'init' is required but missing.", node)
            elif name in seen:
                add("G204", ipath, f"{short(name)} initializer name is not unique", node)
            seen.add(name)
            check_tensor(report, init, ctx, ipath, node)
            if old_ir:
                if name and name not in names:
                    add("G205", ipath, f"{short(name)} in initializer but not in graph input (IR version "
                                       f"{ctx.ir_version} needs every initializer to be a graph input)", node)
            elif name:
                names.add(name)
        for i, sp in self._items(g, "sparse_initializer", path, node):
            spath = f"{path}.sparse_initializer[{i}]"
            try:
                values = sp.values
                name = values.name
                has_name = values.HasField("name")
            except DecodeError as exc:
                add("B001", spath, f"the sparse initializer cannot be decoded: {exc}", node)
                continue
            if not name:
                add("G203", spath, "Sparse tensor initializers must have a non-empty name" if has_name
                    else "Field 'name' of 'values' is required but missing.", node)
            elif name in seen:
                add("G204", spath, f"{short(name)} sparse initializer name is not unique across "
                                   "initializers and sparse_initializers", node)
            seen.add(name)
            check_sparse_tensor(report, sp, ctx, spath, node)
            if name:
                names.add(name)

        self._nodes(g, ctx, lex, path, depth)
        decode_rest(report, g, _GRAPH_READ, path, node)

        for i, name, _ in outputs:
            if name not in names:
                add("G208", f"{path}.output[{i}]",
                    f"Graph output '{short(name)}' is not an output of any node in graph.", node)

    def _nodes(self, g, ctx, lex, path: str, depth: int) -> None:
        add = self.report.add
        try:
            nodes = g.node
            count = len(nodes)
        except DecodeError as exc:
            add("B001", f"{path}.node", f"cannot be decoded: {exc}")
            return
        found = fast_items(g, "node", count)
        if found is not None:
            self._fast_nodes(nodes, found[0], found[1], ctx, lex, path, depth)
            return
        one = self._one_node
        for i, node in _each(nodes, count, self.report, f"{path}.node"):
            one(node, ctx, lex, f"{path}.node[{i}]", depth)

    def _one_node(self, node, ctx, lex, npath: str, depth: int) -> None:
        """The full path of one node in its graph: names in scope, its rules, its outputs."""
        try:
            self.scope_inputs(node, node.input, lex, npath)
            self._node(node, ctx, lex, npath, depth)
            self.scope_outputs(node, node.output, lex, npath)
        except DecodeError as exc:
            self.report.add("B001", npath, f"the node cannot be decoded: {exc}")

    def scope_inputs(self, node, inputs, lex, npath: str) -> None:
        """Topological order: each non-empty input name is defined already (G206).
        ``node`` gives the name and op_type the messages quote (a NodeProto or a record)."""
        names = lex.names
        has = lex.this_or_ancestor_graph_has
        for j, name in enumerate(inputs):
            if name and name not in names and not has(name):
                self.report.add("G206", f"{npath}.input[{j}]",
                                f"Nodes in a graph must be topologically sorted, however input '{short(name)}' "
                                f"of node: name: {short(node.name)} OpType: {short(node.op_type)} is not output "
                                "of any previous nodes.", node)

    def scope_outputs(self, node, outputs, lex, npath: str) -> None:
        """Single static assignment: each non-empty output name is new (G207); then defined."""
        names = lex.names
        has = lex.this_or_ancestor_graph_has
        for j, name in enumerate(outputs):
            if name:
                if name in names or has(name):
                    self.report.add("G207", f"{npath}.output[{j}]",
                                    f"Graph must be in single static assignment (SSA) form, however "
                                    f"'{short(name)}' has been used as output names multiple times.", node)
                names.add(name)

    def _fast_nodes(self, nodes, src, spans: list, ctx, lex, path: str, depth: int) -> None:
        """The nodes of a graph read from their bytes (`fastnodes`), the full path only for
        the first node of each kind and for whatever is unusual; the same problems."""
        state = _FastState(self, nodes, src, spans, ctx, lex, path, depth)
        names = state.names
        defined = names.issuperset
        parent_has = state.parent_has
        get = state.verdicts.get
        full_path = state.full_path
        matches = map(node_pattern().fullmatch, repeat(src), islice(spans, 0, None, 2), islice(spans, 1, None, 2))
        # The kind key's input and output parts: how many names when none is empty, else
        # their `skeleton` (an int and a bytes never compare equal).  One or two names are
        # split inline: most nodes have one output and one or two inputs.
        for k, m in enumerate(matches):
            if m is not None:
                ins, outs, kind = m.group(1, 2, 3)
                in_names: tuple | list | None
                try:
                    n = len(ins)
                    if not n:
                        in_names = ()
                    else:
                        a = ins[1] + 2
                        if a == n:
                            in_names = (ins[2:].decode(),)
                        elif a + 2 + ins[a + 1] == n:
                            in_names = (ins[2:a].decode(), ins[a + 2:].decode())
                        else:
                            in_names = names_of(ins)
                    in_shape = len(in_names) if "" not in in_names else skeleton(in_names)
                    if outs and outs[1] + 2 == len(outs):
                        out_name = outs[2:].decode()
                        out_names = None
                        out_shape = 1 if out_name else b"i\x00"
                    else:
                        out_names = names_of(outs)
                        out_shape = len(out_names) if "" not in out_names else skeleton(out_names)
                except UnicodeDecodeError:
                    in_names = None
                if in_names is not None:
                    key = (kind, in_shape, out_shape)
                    ok = get(key)
                    if ok is None:
                        ok = state.verdict(k, key, m)
                    if ok and (defined(in_names) or _inputs_defined(in_names, names, parent_has)):
                        if out_names is None:
                            if not out_name:
                                continue
                            if out_name not in names and (parent_has is None or not parent_has(out_name)):
                                names.add(out_name)
                                continue
                        elif _outputs_new(out_names, names, parent_has):
                            names.update(filter(None, out_names))
                            continue
                declined("node", k, "a kind with problems or attributes the fast path does not read (a graph, "
                                    "a typed or external tensor), or a name not UTF-8 or breaking a scope rule")
            else:
                declined("node", k, "not read by the node pattern")
            full_path(k)

    def _initializers(self, g, ctx, names: set, seen: set, path: str, node):
        """``(index, TensorProto)`` of the initializers the caller checks in full; those
        of a kind (`irmodel._wireview.tensorscan.tensor_kind`) whose first one had no problem are taken here:
        their names are added to ``seen`` and ``names`` as the full path would."""
        found = fast_items(g, "initializer") if ctx.ir_version > 3 else None
        if found is None:
            yield from self._items(g, "initializer", path, node)
            return
        src, spans = found
        inits = g.initializer
        verdicts: dict = {}
        for i in range(len(spans) >> 1):
            read = tensor_kind(src, spans[2 * i], spans[2 * i + 1])
            if read is not None:
                name, key = read
                if name not in seen:
                    ok = verdicts.get(key)
                    if ok is None and not dims_well_formed(key):
                        ok = False
                    elif ok is None:
                        scratch = Reporter()
                        try:
                            check_tensor(scratch, inits[i], ctx, f"{path}.initializer[{i}]", node)
                            ok = not scratch.problems
                        except DecodeError:
                            ok = False
                        if len(verdicts) < _MAX_KINDS:
                            verdicts[key] = ok
                    if ok:
                        seen.add(name)
                        names.add(name)
                        continue
            item = self._item(inits, i, "initializer", path, node)
            if item is not None:
                yield i, item

    def _value_infos(self, g, field: str, path: str, node) -> list:
        """``[(index, name, ValueInfoProto or None)]`` of ``g``'s inputs or outputs.  A plain
        tensor value with a name, an element type and a shape passes every value-info rule
        and has nothing left to decode: it is read from its bytes (`infoscan.value_info_type`:
        100,000 graph outputs, or one value of 100,000 dims, made as messages cost seconds)
        and given without a message (None: nothing to check).  The others are made, as
        `_items` makes them (undecodable ones reported and left out), for the rules."""
        # No item threshold: one value may carry 100,000 dims, and no pattern is loaded.
        found = items_read(g, field, value_info_type)
        if found is None:
            return [(i, vi.name, vi) for i, vi in self._items(g, field, path, node)]
        seq = getattr(g, field)
        out = []
        for k, read in enumerate(found):
            if read is not None and read[0] and read[1] is not None and read[2] is not None:
                out.append((k, read[0], None))
                continue
            vi = self._item(seq, k, field, path, node)
            if vi is not None:
                out.append((k, vi.name, vi))
        return out

    def _items(self, msg, field: str, path: str, node) -> list:
        """``[(index, item)]`` of a repeated message field; items that do not decode are
        reported (B001) and left out."""
        try:
            seq = getattr(msg, field)
            n = len(seq)
        except DecodeError as exc:
            self.report.add("B001", f"{path}.{field}", f"cannot be decoded: {exc}", node)
            return []
        out = []
        for i in range(n):
            item = self._item(seq, i, field, path, node)
            if item is not None:
                out.append((i, item))
        return out

    def _item(self, seq, i: int, field: str, path: str, node):
        """Item ``i`` of a repeated message field, or None when it does not decode (reported,
        B001).  Values and initializers have their name read now, so that a decode error
        is reported here."""
        try:
            item = seq[i]
            if field in ("input", "output", "initializer"):
                item.name  # noqa: B018 - scanned now, so a decode error is reported here
            return item
        except DecodeError as exc:
            self.report.add("B001", f"{path}.{field}[{i}]", f"cannot be decoded: {exc}", node)
            return None

    def _guarded_value_info(self, vi, ctx, path: str, node) -> None:
        try:
            self.value_info(vi, ctx, path)
        except DecodeError as exc:
            self.report.add("B001", path, f"the value info cannot be decoded: {exc}", node)
        else:
            decode_rest(self.report, vi, _NOTHING_READ, path, node)

    # -- nodes --------------------------------------------------------------------------------
    def node(self, node, ctx, lex, path: str, depth: int = 0) -> None:
        """``check_node``: the node's own rules, its attributes, then its schema's rules."""
        try:
            self._node(node, ctx, lex, path, depth)
        except DecodeError as exc:
            self.report.add("B001", path, f"the node cannot be decoded: {exc}", node)

    def _node(self, node, ctx, lex, path: str, depth: int) -> None:
        add = self.report.add
        op_type = node.op_type
        if not op_type:
            add("N401", f"{path}.op_type", "Field 'op_type' of 'node' is required to be non-empty.", node)
        if not node.input and not node.output:
            add("N402", path, f"NodeProto (name: {short(node.name)}, type: {short(op_type)}) has zero input "
                              "and zero output.", node)
        domain = node.domain
        imports = ctx.opset_imports
        version = imports.get(domain)
        if version is None and domain == "":
            version = imports.get("ai.onnx")
        if version is None:
            add("N403", f"{path}.domain", f"No opset import for domain '{short(domain)}' (the imported "
                                          f"domains are {_domains(imports)})", node)

        attributes = node.attribute
        attrs = []  # (index, attribute) of the first attribute of each name
        if attributes:
            seen = set()
            check_attribute = self._attribute
            for i, attr in enumerate(attributes):
                apath = f"{path}.attribute[{i}]"
                name = attr.name
                if name in seen:
                    add("N404", apath, f"Attribute '{short(name)}' appeared multiple times.", node)
                else:
                    seen.add(name)
                    attrs.append((i, attr))
                check_attribute(attr, ctx, lex, apath, node, depth)

        decode_rest(self.report, node, _NODE_READ, path, node)
        if version is None or ((domain == "" or domain == "ai.onnx") and op_type in EXPERIMENTAL_OPS):
            return
        self.verify_schema(self.report, node, ctx, version, path, attrs)

    # -- attributes ---------------------------------------------------------------------------
    def attribute(self, attr, ctx, lex, path: str, node=None, depth: int = 0) -> None:
        """``check_attribute``: well-formed on its own (the schema rules are the node's)."""
        try:
            self._attribute(attr, ctx, lex, path, node, depth)
        except DecodeError as exc:
            self.report.add("B001", path, f"the attribute cannot be decoded: {exc}", node)

    def _attribute(self, attr, ctx, lex, path: str, node, depth: int) -> None:
        report = self.report
        add = report.add
        name = attr.name
        if not name:
            add("A501", f"{path}.name", "Field 'name' of 'attr' is required to be non-empty.", node)
        has_type = attr.HasField("type")
        if ctx.ir_version >= 2 and not has_type:
            add("A502", f"{path}.type", f"Field 'type' of 'attr' is required but missing. (attribute "
                                        f"{short(name)!r})", node)
        attr_type = attr.type
        used = present_value_fields(attr)
        mismatch = has_type and any(_VALUE_FIELD_TYPES[f] != attr_type for f in used)
        if mismatch:
            add("A503", path, f"type field and data field mismatch in attribute {short(name)}. (type "
                              f"{_attribute_type_name(attr_type)}, value in {', '.join(used)})", node)
        if len(used) > 1:
            add("A504", path, f"Attribute (name: {short(name)}) should not contain more than one value "
                              f"field. (found {', '.join(used)})", node)
        if not ctx.is_main_graph and attr.HasField("ref_attr_name") and used:
            add("A505", path, f"Attribute (name: {short(name)}) should refer to attribute in parent node. "
                              f"(it refers to {short(attr.ref_attr_name)!r} and also sets "
                              f"{', '.join(used)})", node)
        decode_rest(report, attr, _ATTRIBUTE_READ, path, node)
        if not used:
            return
        if "t" in used:
            check_tensor(report, attr.t, ctx, f"{path}.t", node)
        if "sparse_tensor" in used:
            check_sparse_tensor(report, attr.sparse_tensor, ctx, f"{path}.sparse_tensor", node)
        sub_ctx = None
        if "g" in used:
            sub_ctx = ctx.copy(is_main_graph=False)
            self._subgraph(attr, "g", sub_ctx, lex, f"{path}.g", depth, node)
        if "tensors" in used:
            for i, t in enumerate(attr.tensors):
                check_tensor(report, t, ctx, f"{path}.tensors[{i}]", node)
        if "sparse_tensors" in used:
            for i, t in enumerate(attr.sparse_tensors):
                check_sparse_tensor(report, t, ctx, f"{path}.sparse_tensors[{i}]", node)
        if "graphs" in used:
            sub_ctx = sub_ctx or ctx.copy(is_main_graph=False)
            graphs = attr.graphs
            for i in range(len(graphs)):
                self._subgraph(graphs, i, sub_ctx, lex, f"{path}.graphs[{i}]", depth, node)

    def _subgraph(self, owner, key, ctx, lex, path: str, depth: int, node) -> None:
        try:
            g = owner[key] if isinstance(key, int) else getattr(owner, key)
            g.name  # noqa: B018 - scanned now, so a decode error is reported here
        except DecodeError as exc:
            self.report.add("B001", path, f"the graph cannot be decoded: {exc}", node)
            return
        self.graph(g, ctx, lex, path, depth + 1, node)


def _each(seq, count: int, report, path: str):
    """``(index, item)`` of a repeated message field, by its fast iterator; an item that
    does not decode is reported (B001) and skipped, and the rest is read by index."""
    i = 0
    try:
        for item in seq:
            yield i, item
            i += 1
        return
    except DecodeError as exc:
        report.add("B001", f"{path}[{i}]", f"cannot be decoded: {exc}")
    for k in range(i + 1, count):
        try:
            item = seq[k]
        except DecodeError as exc:
            report.add("B001", f"{path}[{k}]", f"cannot be decoded: {exc}")
            continue
        yield k, item


def _inputs_defined(in_names, names: set, parent_has) -> bool:
    """Every input name but the empty ones is defined here or in an enclosing scope."""
    for name in in_names:
        if name and name not in names and (parent_has is None or not parent_has(name)):
            return False
    return True


def _outputs_new(out_names: list, names: set, parent_has) -> bool:
    """No output name of a node is defined already, none repeated among them."""
    given = [name for name in out_names if name]
    if len(set(given)) != len(given) or not names.isdisjoint(given):
        return False
    return parent_has is None or not any(map(parent_has, given))


def _domains(imports: dict) -> str:
    if not imports:
        return "none"
    return ", ".join(repr(short(d)) for d in sorted(imports, key=str)[:20])


def _attribute_type_name(code: int) -> str:
    from ..messages import AttributeProto  # noqa: PLC0415

    try:
        return AttributeProto.AttributeType.Name(code)
    except ValueError:
        return str(code)
