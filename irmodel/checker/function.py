"""Rules for model-local functions: identity, call graph, bodies, opset compatibility.

Functions are identified by (domain, name, overload), with "ai.onnx" the same domain as
"".  The call graph (a node of one function calling another, also from inside its nested
graphs) must have no cycle, and no chain of calls may be longer than `MAX_CALL_DEPTH`
functions.  Both are found without recursion: an iterative depth-first search and a
longest-path pass over the acyclic part, each linear in the number of calls.
"""

from __future__ import annotations

from wirefmt import DecodeError

from .access import decode_rest
from .context import MAX_CALL_DEPTH, MAX_FUNCTIONS, LexicalScopeContext
from .problems import short

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
_FUNCTION_READ = frozenset({"node"})


def function_id(domain, name, overload) -> tuple:
    return ("" if domain == "ai.onnx" else domain, name, overload)


def id_text(fid: tuple) -> str:
    domain, name, overload = fid
    text = f"{short(domain)}::{short(name)}"
    return f"{text}::{short(overload)}" if overload else text


def opset_map(report, imports, path: str) -> dict:
    """domain -> version of a list of OperatorSetIdProto; later entries win (as the
    reference's map assignment); versions outside int32 are reported (M106)."""
    out = {}
    for i in range(len(imports)):
        imp = imports[i]
        v = imp.version
        if v < INT32_MIN or v > INT32_MAX:
            report.add("M106", f"{path}[{i}].version", f"Opset import version {v} is out of supported range "
                                                       f"(domain {short(imp.domain)!r}; a 32-bit int is expected)")
            continue
        out[imp.domain] = v
    return out


class Functions:
    """Checks the ``functions`` of a model (`check_model_local_functions`)."""

    def __init__(self, walker, schemas) -> None:
        self.walker = walker
        self.schemas = schemas
        self.report = walker.report

    def check_all(self, model, ctx, parent_lex) -> None:
        report = self.report
        try:
            functions = model.functions
            count = len(functions)
        except DecodeError as exc:
            report.add("B001", "functions", f"cannot be decoded: {exc}")
            return
        if count > MAX_FUNCTIONS:
            report.add("F901", "functions", f"Model contains {count} local functions, exceeding the limit of "
                                            f"{MAX_FUNCTIONS}. The model may be malformed or malicious.")
            return
        bodies = []
        for i in range(count):
            try:
                f = functions[i]
                f.name  # noqa: B018 - scanned now, so a decode error is reported here
                bodies.append((i, f))
            except DecodeError as exc:
                report.add("B001", f"functions[{i}]", f"the function cannot be decoded: {exc}")
        model_opsets = dict(ctx.opset_imports)
        for i, f in bodies:
            for domain, version in opset_map(report, f.opset_import, f"functions[{i}].opset_import").items():
                model_opsets.setdefault(domain, version)
        self.call_graph(bodies)
        fctx = ctx.copy(opset_imports=model_opsets)
        for i, f in bodies:
            self.function(f, fctx, parent_lex, f"functions[{i}]", opset_path_reported=True)

    # -- the call graph ---------------------------------------------------------------------
    def call_graph(self, bodies) -> None:
        report = self.report
        index_of: dict = {}
        for i, f in bodies:
            fid = function_id(f.domain, f.name, f.overload)
            if fid in index_of:
                report.add("F902", f"functions[{i}]", f"Model contains multiple local functions with the same "
                                                      f"implementation id '{id_text(fid)}'. (also functions"
                                                      f"[{index_of[fid]}])")
                continue
            index_of[fid] = i
        by_index = dict(bodies)
        callees = {}
        for i in index_of.values():
            try:
                callees[i] = _callees(by_index[i], index_of)
            except DecodeError as exc:
                report.add("B001", f"functions[{i}]", f"the function cannot be decoded: {exc}")
                callees[i] = []
        order = _depth_first(callees, report, by_index)
        _longest_chain(order, callees, report, by_index)

    # -- one function ---------------------------------------------------------------------
    def function(self, f, ctx, parent_lex, path: str, opset_path_reported: bool = False) -> None:
        """``check_function``: ``ctx.opset_imports`` are the model's (merged) imports."""
        try:
            self._function(f, ctx, parent_lex, path, opset_path_reported)
        except DecodeError as exc:
            self.report.add("B001", path, f"the function cannot be decoded: {exc}")
        else:
            decode_rest(self.report, f, _FUNCTION_READ, path)

    def _function(self, f, ctx, parent_lex, path, opset_path_reported) -> None:
        report = self.report
        add = report.add
        fname = short(f.name)
        if not f.name:
            add("F905", f"{path}.name", "Field 'name' of 'function' is required to be non-empty.")
        if ctx.ir_version >= 8 and not f.HasField("domain"):
            add("F906", f"{path}.domain", "Field 'domain' of 'function' is required but missing.")
        model_opsets = ctx.opset_imports
        # M106 for the function's imports was reported when the model's map was merged.
        sink = _Discard() if opset_path_reported else report
        func_opsets = opset_map(sink, f.opset_import, f"{path}.opset_import")
        fctx = ctx.copy(opset_imports=func_opsets)
        lex = LexicalScopeContext(parent_lex)
        names = lex.names
        for i, name in enumerate(f.input):
            if name in names:
                add("F907", f"{path}.input[{i}]", f"Graph must be in single static assignment (SSA) form, "
                                                  f"however '{short(name)}' has been used multiple times.")
            names.add(name)
        for i, name in _repeats(f.output):
            add("F908", f"{path}.output[{i}]", f"function ({fname}) should not have duplicate outputs "
                                               f"specified. ('{short(name)}' is listed twice)")
        for i, name in _repeats(f.attribute):
            add("F909", f"{path}.attribute[{i}]", f"function ({fname}) should not have duplicate "
                                                  f"attributes specified. ('{short(name)}')")
        has = lex.this_or_ancestor_graph_has
        nodes = f.node
        for k in range(len(nodes)):
            npath = f"{path}.node[{k}]"
            try:
                node = nodes[k]
                node_inputs, node_outputs = node.input, node.output
            except DecodeError as exc:
                add("B001", npath, f"the node cannot be decoded: {exc}")
                continue
            for j, name in enumerate(node_inputs):
                if name and name not in names:
                    add("F910", f"{npath}.input[{j}]",
                        f"Nodes in a function must be topologically sorted, however input '{short(name)}' of "
                        f"node: Name: {short(node.name)} OpType: {short(node.op_type)} is neither output of "
                        "any previous nodes nor input of the function.", node)
            if not ctx.skip_opset_compatibility_check:
                self.opset_compatibility(node, func_opsets, model_opsets, npath)
            self.walker.node(node, fctx, lex, npath)
            for j, name in enumerate(node_outputs):
                if name:
                    if name in names or has(name):
                        add("F911", f"{npath}.output[{j}]",
                            f"Function must be in single static assignment (SSA) form, however "
                            f"'{short(name)}' has been used as output names multiple times.", node)
                    names.add(name)

    def opset_compatibility(self, node, func_opsets: dict, model_opsets: dict, path: str) -> None:
        domain = node.domain
        func_v = func_opsets.get(domain)
        if func_v is None:
            self.report.add("F912", f"{path}.domain", f"No Opset registered for domain {short(domain)} (the "
                                                      "function does not import it)", node)
            return
        model_v = model_opsets.get(domain)
        if model_v is None or model_v == func_v:
            return
        op = node.op_type
        from ..defs import is_contrib_domain  # noqa: PLC0415
        if is_contrib_domain(domain):
            return  # onnx has no schemas there: nothing to compare (onnxruntime's table is ours)
        s_model = self.schemas.schema(op, model_v, domain)
        s_func = self.schemas.schema(op, func_v, domain)
        if s_model is None and s_func is None:
            return
        if s_model is None or s_func is None or s_model.since_version != s_func.since_version:
            self.report.add(
                "F913", f"{path}.domain",
                f"Opset import for domain {short(domain)} in function op {short(op)}is not compatible with "
                f"the version imported by model. FunctionOp imports version {func_v} whereas model imports "
                f"version {model_v}", node)


class _Discard:
    """A report that drops what it is told (problems already reported elsewhere)."""

    def add(self, *args, **kwargs) -> None:
        pass


def _repeats(names) -> list:
    """(index, name) of each entry of ``names`` that an earlier entry already holds."""
    seen = set()
    found = []
    for i, name in enumerate(names):
        if name in seen:
            found.append((i, name))
        seen.add(name)
    return found


def _callees(f, index_of: dict) -> list:
    """Indices of the functions that ``f`` calls, from its nodes and their nested graphs."""
    found = []
    seen = set()
    pending = [f.node]
    while pending:
        nodes = pending.pop()
        for node in nodes:
            callee = index_of.get(function_id(node.domain, node.op_type, node.overload))
            if callee is not None and callee not in seen:
                seen.add(callee)
                found.append(callee)
            for attr in node.attribute:
                if attr.HasField("g"):
                    pending.append(attr.g.node)
                for g in attr.graphs:
                    pending.append(g.node)
    return found


def _depth_first(callees: dict, report, by_index: dict) -> list:
    """Report every call that closes a cycle (F903); return the functions in post-order."""
    state = dict.fromkeys(callees, 0)  # 0 unvisited, 1 on the current path, 2 done
    order = []
    for root in callees:
        if state[root]:
            continue
        path = [root]
        state[root] = 1
        stack = [(root, iter(callees[root]))]
        while stack:
            fi, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[fi] = 2
                order.append(fi)
                continue
            if state[nxt] == 1:
                cycle = path[path.index(nxt):] + [nxt]
                text = " -> ".join(_fid_text(by_index[k]) for k in cycle)
                report.add("F903", f"functions[{fi}]", f"Cycle detected in model-local function references: "
                                                       f"{text}. Model-local functions must not be recursive.")
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(callees[nxt])))
    return order


def _longest_chain(order: list, callees: dict, report, by_index: dict) -> None:
    """Report (F904) a function that starts a chain of calls longer than MAX_CALL_DEPTH.

    ``order`` is a post-order, so callees come before callers; calls that close a cycle
    (to a function not finished yet) are left out of the count.
    """
    length: dict = {}
    for fi in order:
        best = 0
        for c in callees[fi]:
            best = max(best, length.get(c, 0))
        length[fi] = best + 1
    deepest = max(length.values(), default=0)
    if deepest > MAX_CALL_DEPTH:
        fi = next(k for k in order[::-1] if length[k] == deepest)
        report.add("F904", f"functions[{fi}]", f"Function call chain depth exceeds limit ({MAX_CALL_DEPTH}). "
                                               f"The model may be malformed or malicious. (a chain of "
                                               f"{deepest} calls starts at {_fid_text(by_index[fi])})")


def _fid_text(f) -> str:
    return id_text(function_id(f.domain, f.name, f.overload))
