"""The walk: every node of the model, its functions and its subgraphs, to the target opset.

The result is a copy of the caller's model (a new root over the same bytes, as
`irmodel.inference.api._fresh_copy` makes it: a loaded file's weights are never read nor
copied, and saving the result copies their spans file to file) in which only what changed is
re-made: a node is replaced only when a step changed it; the node list is re-made only
when a node became several; the opset imports get their new versions.  Problems are
collected over the whole model and raised together (`ConversionError`); no partial model
is returned.

A node is taken across each version step of its operator between the source opset and
the target (`NodeConverter.take`): the step's changes (`steps.STEPS`) are applied in the
direction of travel; a node whose operator does not exist at the target is replaced by its
function body (`decompose`), whose nodes are converted in turn; nodes that adapters add
(Constants for inputs that were attributes, a Slice after a Shape) are converted from the
version they were written for.  `fit.check_fit` has the last word on each node.
"""

from __future__ import annotations

from . import schemas
from .changes import StepInfo
from .errors import ConversionError, StepRefused, problem
from .fit import check_fit
from .scope import ModelFacts, Scope, subgraphs
from .work import NewNode, NodeWork

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How deep decompositions and added nodes may nest (a body's node expanded into a body...).
MAX_DEPTH = 16


class Report:
    """What a conversion did: the problems, and one line per changed node (for the CLI)."""

    def __init__(self) -> None:
        self.problems: list = []
        self.changes: list[str] = []


class NodeConverter:
    """Converts nodes of the domains in ``targets`` from ``versions`` to the targets."""

    def __init__(self, facts: ModelFacts, targets: dict[str, int], report: Report) -> None:
        self.facts = facts
        self.targets = targets
        self.report = report

    # -- graphs ---------------------------------------------------------------------------

    def graph(self, g, path: str, versions: dict[str, int], scope: Scope) -> None:
        """Convert ``g``'s nodes in place (``g`` belongs to the copy being made)."""
        nodes = g.node
        spliced: list | None = None  # the new node list, made when a node became several
        released: set[str] = set()  # inputs converted nodes no longer read (now attributes)
        for i in range(len(nodes)):
            node = nodes[i]
            npath = f"{path}.node[{i}]"
            for ai, gi, sub in subgraphs(node):
                where = f"{npath}.attribute[{ai}].{'g' if gi is None else f'graphs[{gi}]'}"
                self.graph(sub, where, versions, Scope(self.facts, sub, scope, scope.typed))
            result = self.node(node, npath, versions, scope)
            if result is not None:
                released.update(set(node.input) - {x for n in result for x in n.input})
            if result is None:
                if spliced is not None:
                    spliced.append(node)
                continue
            if len(result) == 1 and spliced is None:
                nodes[i] = result[0]
                continue
            if spliced is None:
                spliced = [nodes[j] for j in range(i)]
            spliced.extend(result)
        if spliced is not None:
            del nodes[:]
            nodes.extend(spliced)
        released.discard("")
        if released and not self.report.problems:
            _drop_dead_constants(g, released)

    # -- nodes ----------------------------------------------------------------------------

    def node(self, node, path: str, versions: dict[str, int], scope: Scope) -> list | None:
        """The nodes that replace ``node`` (None: unchanged); problems go to the report."""
        domain = schemas.domain_key(node.domain)
        dst = self.targets.get(domain)
        src = versions.get(domain)
        if dst is None or src is None or src == dst:
            return None
        w = NodeWork(node)
        try:
            out = self.take(w, domain, src, dst, scope, 0)
        except StepRefused as e:
            self.report.problems.append(problem(
                e.code, path, node, f"{node.op_type} from opset {src} to {dst}: {e.reason}"))
            return None
        if out is not None:
            ops = ", ".join(n.op_type for n in out)
            self.report.changes.append(f"{path}: {node.op_type} -> {ops}")
        return out

    def take(self, w: NodeWork, domain: str, src: int, dst: int, scope: Scope, depth: int) -> list | None:
        """Take ``w`` from opset ``src`` to ``dst``; the resulting nodes, or None if unchanged."""
        if depth > MAX_DEPTH:
            raise StepRefused("V001", "conversion nests too deep (a body expands into itself?)")
        from .steps import changes_of  # noqa: PLC0415

        op = w.op_type
        vs = schemas.versions(domain, op)
        cur = schemas.in_force(domain, op, src)
        if cur is None:
            raise StepRefused("V006", f"{op} has no schema in domain {domain or 'ai.onnx'!r} "
                                      f"at opset {src}")
        source = schemas.schema(domain, op, cur)
        _check_arity(w, source)
        if dst > src:
            for v in vs:
                if v <= cur or v > dst:
                    continue
                step = StepInfo(op, domain, schemas.schema(domain, op, cur), schemas.schema(domain, op, v))
                for change in changes_of(domain, op, v):
                    change.up(w, scope, step)
                if w.removed:  # replaced by the nodes a rewrite added
                    break
                if w.op_type != op:  # replaced by another operator (Upsample -> Resize)
                    return self._finish_replaced(w, domain, v, dst, scope, depth)
                if step.new.deprecated:
                    raise StepRefused("V001", f"{op} is deprecated from version {v} on")
                cur = v
        else:
            for v in reversed(vs):
                if v > cur or v <= dst:
                    continue
                i = vs.index(v)
                if i == 0:
                    # The operator's first version: an entry may name the older operator that
                    # computes the same (Resize-10 is Upsample-9); else the function body.
                    first = schemas.schema(domain, op, v)
                    for change in reversed(changes_of(domain, op, v)):
                        change.down(w, scope, StepInfo(op, domain, first, first))
                    if w.removed:
                        break
                    if w.op_type != op:
                        return self._finish_replaced(w, domain, v - 1, dst, scope, depth)
                    return self._decompose(w, domain, v, dst, scope, depth)
                prev = vs[i - 1]
                step = StepInfo(op, domain, schemas.schema(domain, op, prev), schemas.schema(domain, op, v))
                for change in reversed(changes_of(domain, op, v)):
                    change.down(w, scope, step)
                if w.removed:
                    break
                if w.op_type != op:  # replaced by an older operator (ScatterElements -> Scatter)
                    return self._finish_replaced(w, domain, prev, dst, scope, depth)
                cur = prev
        if w.removed:
            out: list = []
            for extra in w.before + w.after:
                out.extend(self._new_node(extra, domain, dst, scope, depth))
            return out
        target = schemas.schema(domain, op, cur)
        check_fit(w, scope, source, target)
        return self._assemble(w, domain, dst, scope, depth)

    def _finish_replaced(self, w: NodeWork, domain: str, at: int, dst: int, scope: Scope,
                         depth: int) -> list:
        """``w`` now names another operator, valid at opset ``at``: take it on to ``dst``."""
        w2 = NodeWork(w.to_node())
        w2.before, w2.after = w.before, w.after
        out = self.take(w2, domain, at, dst, scope, depth + 1)
        if out is None:
            out = self._assemble(w2, domain, dst, scope, depth, force=True)
        return out if out is not None else [w2.to_node()]

    def _assemble(self, w: NodeWork, domain: str, dst: int, scope: Scope, depth: int,
                  force: bool = False) -> list | None:
        if not (w.changed or force or w.before or w.after):
            return None
        out: list = []
        for extra in w.before:
            out.extend(self._new_node(extra, domain, dst, scope, depth))
        out.append(w.to_node() if (w.changed or force) else w.original)
        for extra in w.after:
            out.extend(self._new_node(extra, domain, dst, scope, depth))
        return out

    def _new_node(self, extra: NewNode, domain: str, dst: int, scope: Scope, depth: int) -> list:
        """A node an adapter wrote for opset ``extra.version``, converted to ``dst``."""
        scope.add_known(extra.node)
        ndomain = schemas.domain_key(extra.node.domain)
        if scope.typed:
            self.facts.infer_added(extra.node, ndomain, extra.version, scope)
        for _, _, g in subgraphs(extra.node):
            self.graph(g, "(added)", {ndomain: extra.version}, Scope(self.facts, g, scope, scope.typed))
        sub = NodeWork(extra.node)
        if ndomain != domain or extra.version == dst:
            return [extra.node]
        out = self.take(sub, domain, extra.version, dst, scope, depth + 1)
        if out is None:
            return [extra.node]
        for n in out:
            scope.add_known(n)
        return out

    def _decompose(self, w: NodeWork, domain: str, first: int, dst: int, scope: Scope, depth: int) -> list:
        from .decompose import expand  # noqa: PLC0415

        body, opset = expand(w, domain, first, dst, scope)
        out: list = []
        for extra in w.before:
            out.extend(self._new_node(extra, domain, dst, scope, depth))
        for n in body:
            out.extend(self._new_node(NewNode(n, opset), domain, dst, scope, depth))
        return out


_ATTR_TYPES = {1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS", 7: "INTS",
               8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR", 12: "SPARSE_TENSORS",
               13: "TYPE_PROTO", 14: "TYPE_PROTOS"}


def _check_arity(w: NodeWork, schema) -> None:
    """The node must be a node of its own version: the inputs and outputs it requires,
    its attributes of the declared types (no step can make sense of one that is not)."""
    for name, a in w.attrs.items():
        declared = schema.attributes.get(name)
        if declared is not None and a.type != declared.type:
            raise StepRefused("V003", f"attribute {name!r} is {_ATTR_TYPES.get(a.type, a.type)}, "
                                      f"{schema.name}-{schema.since_version} declares it "
                                      f"{_ATTR_TYPES.get(declared.type, declared.type)}")
    for kind, names, params, least in (("input", w.inputs, schema.inputs, schema.min_input),
                                       ("output", w.outputs, schema.outputs, schema.min_output)):
        if len(names) < least or len(names) > (schema.max_input if kind == "input" else schema.max_output):
            raise StepRefused("V005", f"{schema.name}-{schema.since_version} takes {least} or more "
                                      f"{kind}s, the node has {len(names)}")
        for i, p in enumerate(params):
            if p.option == 0 and i < least and not (names[i] if i < len(names) else ""):
                raise StepRefused("V005", f"required {kind} {i} ({p.name!r}) of "
                                          f"{schema.name}-{schema.since_version} is missing")


def _uses(g, into: set[str]) -> None:
    """Every name read in ``g`` and its subgraphs (outer names included)."""
    for n in g.node:
        into.update(n.input)
        for _, _, sub in subgraphs(n):
            _uses(sub, into)
            into.update(vi.name for vi in sub.output)


def _drop_dead_constants(g, released: set[str]) -> None:
    """Remove Constant nodes and initializers whose value became an attribute and that
    nothing else reads (onnx's converter removes them too)."""
    used: set[str] = set()
    _uses(g, used)
    if hasattr(g, "initializer"):  # a graph: its outputs are ValueInfoProtos
        used.update(vi.name for vi in g.output)
    else:  # a function: its outputs are names
        used.update(g.output)
    dead = released - used
    if not dead:
        return
    removed: set[str] = set()
    nodes = g.node
    for i in reversed(range(len(nodes))):
        n = nodes[i]
        if (n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1
                and n.output[0] in dead):
            removed.add(n.output[0])
            del nodes[i]
    if hasattr(g, "initializer"):
        removed.update(t.name for t in g.initializer if t.name in dead)
        # an initializer that was also declared an input (IR < 4) goes with its declaration
        for field in (g.initializer, g.input, g.value_info):
            for i in reversed(range(len(field))):
                if field[i].name in removed:
                    del field[i]


# -- the model ----------------------------------------------------------------------------------

def default_opset(opset_import) -> tuple[int, Any] | None:
    """(version, entry) of the default domain's import ("" or "ai.onnx"), or None."""
    for entry in opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version, entry
    return None


def _versions(opset_import) -> dict[str, int]:
    out: dict[str, int] = {}
    for entry in opset_import:
        out.setdefault(schemas.domain_key(entry.domain), entry.version)
    return out


def convert_model(model, targets: dict[str, int], report: Report | None = None):
    """A copy of ``model`` with the domains of ``targets`` converted; raises ConversionError."""
    from .. import defs  # noqa: PLC0415

    report = report if report is not None else Report()
    for domain, version in targets.items():
        lo_hi = defs.domain_version_range(domain)
        if lo_hi is None or not lo_hi[0] <= version <= lo_hi[1]:
            raise ConversionError([problem("V008", "", None,
                                           f"invalid target version {version} for domain "
                                           f"{domain or 'ai.onnx'!r} (must be between "
                                           f"{lo_hi[0] if lo_hi else '?'} and {lo_hi[1] if lo_hi else '?'})")])
    if "" in targets and default_opset(model.opset_import) is None:
        raise ConversionError([problem("V008", "opset_import", None,
                                       "the model has no default-domain (\"\" or \"ai.onnx\") opset import")])
    # Not copy.copy: that serializes the whole model (GPT-2: 634 MB of anonymous memory).
    from ..inference.api import _fresh_copy  # noqa: PLC0415

    out = _fresh_copy(model)
    facts = ModelFacts(model)
    conv = NodeConverter(facts, targets, report)
    if out.HasField("graph"):
        conv.graph(out.graph, "graph", _versions(model.opset_import), Scope(facts, out.graph))
    for fi, f in enumerate(out.functions):
        fversions = _versions(f.opset_import)
        # A function without its own import of a domain uses the model's.
        for domain, version in _versions(model.opset_import).items():
            fversions.setdefault(domain, version)
        conv.graph(f, f"functions[{fi}]", fversions, Scope(facts, f, typed=False))
    if report.problems:
        raise ConversionError(report.problems)
    for entries in [out.opset_import] + [f.opset_import for f in out.functions]:
        for entry in entries:
            domain = schemas.domain_key(entry.domain)
            if domain in targets and entry.version != targets[domain]:
                entry.version = targets[domain]
    _complete_output_types(out)
    return out


def _incomplete(vi) -> bool:
    """Does a main-graph output leave out what the checker requires of it (a type; a
    tensor's element type and shape)?"""
    if not vi.HasField("type"):
        return True
    tp = vi.type
    if tp.WhichOneof("value") != "tensor_type":
        return False
    return not (tp.tensor_type.HasField("elem_type") and tp.tensor_type.HasField("shape"))


def _complete_output_types(model) -> None:
    """Give the main graph's outputs the type and shape that inference finds where they
    declare none, as onnx's converter does (it infers the model's shapes first and writes
    each graph output's inferred type back): onnx's tests check the converted model,
    which holds a main-graph output to an element type and a shape.  What an output
    declares is kept; inference runs only when an output is incomplete, and where it
    fails or finds nothing the output stays as it was (the model was incomplete before)."""
    if not model.HasField("graph") or not any(_incomplete(vi) for vi in model.graph.output):
        return
    from ..inference import infer_shapes  # noqa: PLC0415

    try:
        inferred = {vi.name: vi for vi in infer_shapes(model).graph.output}
    except Exception:  # noqa: BLE001 - a help, never a requirement (the input need not be complete)
        return
    for vi in model.graph.output:
        found = inferred.get(vi.name)
        if not _incomplete(vi) or found is None or not found.HasField("type"):
            continue
        if not vi.HasField("type"):
            vi.type = found.type
            continue
        have, got = vi.type.tensor_type, found.type.tensor_type
        if found.type.WhichOneof("value") != "tensor_type":
            continue
        if not have.HasField("elem_type") and got.HasField("elem_type"):
            have.elem_type = got.elem_type
        if not have.HasField("shape") and got.HasField("shape"):
            have.shape = got.shape
