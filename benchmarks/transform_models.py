"""Models and cuts for the transformation benchmarks, made from the export shapes of `exports.py`.

* `functionize`: the same model with each block (the nodes of one scope, such as
  ``/transformer/h.3/``) replaced by a call of one model-local function, as exporters
  that keep modules as functions write it (torch's dynamo exporter): the function's
  body is the first block's nodes, its inputs what the block reads from outside (the
  residual, the mask, the block's weights), in the order of first use, which is the same
  in every block, so one function serves them all.  What `inline_local_functions` undoes.
* `head`: a small model taking a decoder's logits (Softmax, TopK), to merge after it.
* `cut`: the inputs and outputs that cut one scope out of a model (for `extract_model`):
  inputs are the values its nodes read from outside, outputs the values they make that
  something outside uses.
"""

from __future__ import annotations

from irmodel import TensorProto, helper


def _scope_nodes(graph, scope: str) -> list:
    return [n for n in graph.node if n.name.startswith(scope)]


def _uses(graph) -> dict:
    """How many times each value is read (by a node or as a graph output)."""
    uses: dict = {}
    for n in graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    for o in graph.output:
        uses[o.name] = uses.get(o.name, 0) + 1
    return uses


def _interface(nodes: list, uses: dict, skip: frozenset = frozenset()) -> tuple:
    """What ``nodes`` read from outside (in the order of first use; ``skip``: names left
    out) and what they make that something outside reads."""
    made = {o for n in nodes for o in n.output if o}
    inside: dict = {}
    for n in nodes:
        for i in n.input:
            inside[i] = inside.get(i, 0) + 1
    inputs = list(dict.fromkeys(i for n in nodes for i in n.input if i and i not in made and i not in skip))
    outputs = [o for n in nodes for o in n.output if o and uses.get(o, 0) > inside.get(o, 0)]
    return inputs, outputs


def cut(model, scope: str) -> dict:
    """``{"inputs": [...], "outputs": [...], "nodes": n}`` cutting ``scope``'s nodes out."""
    g = model.graph
    inside = _scope_nodes(g, scope)
    inputs, outputs = _interface(inside, _uses(g), frozenset(t.name for t in g.initializer))
    return {"inputs": inputs, "outputs": outputs, "nodes": len(inside)}


def functionize(model, scopes: list, name: str = "Block", domain: str = "pkg.blocks"):
    """A copy of ``model`` whose ``scopes`` are calls of one local function (see the module)."""
    import irmodel

    m = irmodel.loads(irmodel.dumps(model), "ModelProto")
    g = m.graph
    by_scope: dict = {s: [] for s in scopes}
    for n in g.node:  # one pass: a scope is a prefix ending in "/", so at most one matches
        head = n.name[:n.name.find("/", len(scopes[0]) - 2) + 1] if n.name else ""
        if head in by_scope:
            by_scope[head].append(n)
    blocks = [by_scope[s] for s in scopes]
    uses = _uses(g)
    first_in, first_out = _interface(blocks[0], uses)
    formal_in = [f"in_{k}" for k in range(len(first_in))]
    formal_out = [f"out_{k}" for k in range(len(first_out))]
    rename = dict(zip(first_in, formal_in)) | dict(zip(first_out, formal_out))
    body = []
    for n in blocks[0]:
        c = irmodel.loads(irmodel.dumps(n), "NodeProto")
        c.input[:] = [rename.get(i, i) for i in c.input]
        c.output[:] = [rename.get(o, o) for o in c.output]
        body.append(c)
    opsets = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
    fn = helper.make_function(domain, name, formal_in, formal_out, body, opsets)
    calls = {}
    drop = set()
    for k, (scope, nodes) in enumerate(zip(scopes, blocks)):
        ins, outs = _interface(nodes, uses)
        if len(ins) != len(first_in) or len(outs) != len(first_out):
            raise ValueError(f"{scope}: not shaped like {scopes[0]}")
        calls[id(nodes[0])] = helper.make_node(name, ins, outs, name=scope.rstrip("/"), domain=domain)
        drop.update(id(n) for n in nodes)
    kept = []
    for n in g.node:
        if id(n) in calls:
            kept.append(calls[id(n)])
        elif id(n) not in drop:
            kept.append(n)
    del g.node[:]
    g.node.extend(kept)
    m.functions.append(fn)
    m.opset_import.append(helper.make_opsetid(domain, 1))
    return m


def head(vocab: int, k: int = 5, opset: int = 14):
    """``probs = Softmax(logits)``, ``TopK(probs, k)``: a decoder's sampling head."""
    g = helper.make_graph(
        [helper.make_node("Softmax", ["logits"], ["probs"], name="/Softmax", axis=-1),
         helper.make_node("Constant", [], ["/Constant_output_0"], name="/Constant",
                          value=helper.make_tensor("", TensorProto.INT64, [1], [k])),
         helper.make_node("TopK", ["probs", "/Constant_output_0"], ["top_p", "top_ids"], name="/TopK", axis=-1)],
        "head",
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab])],
        [helper.make_tensor_value_info("top_p", TensorProto.FLOAT, ["batch_size", "sequence_length", k]),
         helper.make_tensor_value_info("top_ids", TensorProto.INT64, ["batch_size", "sequence_length", k])])
    return helper.make_model(g, ir_version=8, producer_name="pytorch", producer_version="2.1.0",
                             opset_imports=[helper.make_opsetid("", opset)])
