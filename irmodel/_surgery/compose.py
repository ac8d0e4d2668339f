"""Composing two graphs or models (``onnx.compose``): `merge_graphs`, `merge_models`,
`check_overlapping_names`.

onnx's arguments and results, built from shared copies of the inputs' pieces (no weight is
copied), with these differences:

* ``rename="auto"`` (keyword-only, beyond onnx): names of the second graph that clash with
  the first's are renamed (``name`` becomes ``name__1``, or the next free name) instead of
  raising; the default, ``None``, raises as onnx does;
* `merge_models` writes each opset import once (onnx lists a domain imported by both
  models twice), takes the higher IR version of the two (onnx requires equal ones), and
  accepts two ai.onnx versions when the model of the lower one uses only operators that did
  not change up to the higher one, and otherwise converts that model with
  `irmodel.version_converter` when the package has it (until then it raises
  `SurgeryError` saying that the converter is needed).
"""

from __future__ import annotations

from wirefmt import shared_copy

from .errors import SurgeryError
from .naming import NameGenerator
from .prefix import add_prefix, add_prefix_graph, rename_values
from .scope import subgraphs
from .share import adopt_origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


def _check_graph(g: Any, what: str) -> None:
    from .. import GraphProto  # noqa: PLC0415
    if not isinstance(g, GraphProto):
        raise TypeError(f"{what} argument is not an ONNX graph")


def _edge_names(graph: Any, exclude: set | frozenset = frozenset()) -> list:
    return [name for n in graph.node for name in list(n.input) + list(n.output) if name and name not in exclude]


def check_overlapping_names(g1: Any, g2: Any, io_map: list | None = None) -> list:
    """``[(category, [names])]`` for names both graphs use: "edge", "value_info",
    "initializer", "sparse_initializer"; io_map's inputs of ``g2`` are not counted."""
    _check_graph(g1, "g1")
    _check_graph(g2, "g2")
    io_inputs = {pair[1] for pair in io_map or ()}
    result = []

    def overlap(a, b) -> list:
        return list(set(a) & set(b))

    found = overlap(_edge_names(g1), _edge_names(g2, io_inputs))
    if found:
        result.append(("edge", found))
    found = overlap([v.name for v in g1.value_info], [v.name for v in g2.value_info])
    if found:
        result.append(("value_info", found))
    found = overlap([t.name for t in g1.initializer], [t.name for t in g2.initializer])
    if found:
        result.append(("initializer", found))
    found = (overlap([s.values.name for s in g1.sparse_initializer], [s.values.name for s in g2.sparse_initializer])
             + overlap([s.indices.name for s in g1.sparse_initializer], [s.indices.name for s in g2.sparse_initializer]))
    if found:
        result.append(("sparse_initializer", found))
    return result


def _resolve_clashes(g1: Any, g2: Any, io_map: list) -> tuple:
    """Rename ``g2``'s names that clash with ``g1``'s (a copy of ``g2``), and io_map with them."""
    clashes = {name for _, names in check_overlapping_names(g1, g2, io_map) for name in names}
    if not clashes:
        return g2, io_map
    names = NameGenerator(g1)
    names.add_graph(g2)
    names.names.update(v.name for g in (g1, g2) for v in g.value_info)
    mapping = {old: names.create(old + "__1") for old in sorted(clashes)}
    g2 = shared_copy(g2)
    rename_values(g2, mapping)
    return g2, [(o, mapping.get(i, i)) for o, i in io_map]


def _prefixed(a: Any, b: Any, io_map: list, prefix1: str | None, prefix2: str | None,
              add: Callable) -> tuple:
    """``a`` and ``b`` (graphs or models) with their prefixes added by ``add``, and the
    ``io_map`` pairs naming the prefixed values."""
    io_map = [tuple(pair) for pair in io_map]
    if prefix1:
        a = add(a, prefix=prefix1)
    if prefix2:
        b = add(b, prefix=prefix2)
    if prefix1 or prefix2:
        io_map = [((prefix1 or "") + o, (prefix2 or "") + i) for o, i in io_map]
    return a, b, io_map


def merge_graphs(g1: Any, g2: Any, io_map: list, inputs: list | None = None, outputs: list | None = None,
                 prefix1: str | None = None, prefix2: str | None = None, name: str | None = None,
                 doc_string: str | None = None, *, rename: str | None = None) -> Any:
    """One graph of ``g1`` and ``g2``, ``g1``'s outputs named in ``io_map`` feeding ``g2``'s inputs."""
    from .. import GraphProto  # noqa: PLC0415
    _check_graph(g1, "g1")
    _check_graph(g2, "g2")
    if rename not in (None, "auto"):
        raise ValueError(f"rename must be None or 'auto', not {rename!r}")
    g1, g2, io_map = _prefixed(g1, g2, io_map, prefix1, prefix2, add_prefix_graph)
    outs1 = {o for o, _ in io_map}
    ins2 = {i for _, i in io_map}
    if inputs or outputs:
        g1, g2 = _restrict(g1, g2, inputs, outputs, outs1, ins2)
    g1_outputs = {o.name for o in g1.output}
    g2_inputs = {i.name for i in g2.input}
    for o, i in io_map:
        if o not in g1_outputs:
            raise SurgeryError(f"Output {o} is not present in g1")
        if i not in g2_inputs:
            raise SurgeryError(f"Input {i} is not present in g2")
    if rename == "auto":
        g2, io_map = _resolve_clashes(g1, g2, io_map)
        ins2 = {i for _, i in io_map}
    overlapping = check_overlapping_names(g1, g2, io_map)
    if overlapping:
        category, names = overlapping[0]
        raise SurgeryError("Cant merge two graphs with overlapping names. "
                           f"Found repeated {category} names: " + ", ".join(names) + "\n"
                           "Consider using ``onnx.compose.add_prefix`` to add a prefix to names in one "
                           "of the graphs, or rename='auto'.")
    reverse = {i: o for o, i in io_map}
    g = GraphProto()
    g.node.extend(shared_copy(n) for n in g1.node)
    start = len(g.node)
    g.node.extend(shared_copy(n) for n in g2.node)
    for node in list(g.node)[start:]:
        _connect(node, reverse)
    if inputs:
        wanted = set(inputs)
        g.input.extend(shared_copy(v) for v in list(g1.input) + list(g2.input) if v.name in wanted)
    else:
        g.input.extend(shared_copy(v) for v in g1.input)
        g.input.extend(shared_copy(v) for v in g2.input if v.name not in ins2)
    if outputs:
        wanted = set(outputs)
        g.output.extend(shared_copy(v) for v in list(g1.output) + list(g2.output) if v.name in wanted)
    else:
        g.output.extend(shared_copy(v) for v in g1.output if v.name not in outs1)
        g.output.extend(shared_copy(v) for v in g2.output)
    g.initializer.extend(shared_copy(t) for t in g1.initializer)
    g.initializer.extend(shared_copy(t) for t in g2.initializer if t.name not in ins2)
    g.sparse_initializer.extend(shared_copy(s) for s in g1.sparse_initializer)
    g.sparse_initializer.extend(shared_copy(s) for s in g2.sparse_initializer if s.values.name not in ins2)
    g.value_info.extend(shared_copy(v) for v in g1.value_info)
    g.value_info.extend(shared_copy(v) for v in g2.value_info if v.name not in ins2)
    have = {v.name for v in g.value_info}
    out_names = {o.name for o in g.output}
    g.value_info.extend(shared_copy(o) for o in g1.output
                        if o.name in outs1 and o.name not in have and o.name not in out_names)
    g.name = name if name is not None else f"{g1.name}_{g2.name}"
    if doc_string is None:
        doc_string = (f"Graph combining {g1.name} and {g2.name}\n" + g1.name + "\n\n" + g1.doc_string
                      + "\n\n" + g2.name + "\n\n" + g2.doc_string)
    g.doc_string = doc_string
    return g


def _connect(node: Any, reverse: dict) -> None:
    """Point ``node``'s inputs (and its sub-graphs' nodes' inputs) at ``g1``'s outputs, as onnx."""
    for sub in subgraphs(node):
        for inner in sub.node:
            _connect(inner, reverse)
    for i, name in enumerate(list(node.input)):
        if name in reverse:
            node.input[i] = reverse[name]


def _restrict(g1: Any, g2: Any, inputs, outputs, outs1: set, ins2: set) -> tuple:
    """The parts of the graphs that ``inputs``/``outputs`` keep (onnx's extraction)."""
    from .extract import Extractor  # noqa: PLC0415
    if not inputs:
        in1, in2 = [i.name for i in g1.input], [i.name for i in g2.input]
    else:
        keep = set(inputs)
        in1 = [i.name for i in g1.input if i.name in keep]
        in2 = [i.name for i in g2.input if i.name in keep or i.name in ins2]
    if not outputs:
        out1, out2 = [o.name for o in g1.output], [o.name for o in g2.output]
    else:
        keep = set(outputs)
        out1 = [o.name for o in g1.output if o.name in keep or o.name in outs1]
        out2 = [o.name for o in g2.output if o.name in keep]
    if len(in1) < len(g1.input) or len(out1) < len(g1.output):
        g1 = Extractor(_holder(g1)).extract_model(in1, out1).graph
    if len(in2) < len(g2.input) or len(out2) < len(g2.output):
        g2 = Extractor(_holder(g2)).extract_model(in2, out2).graph
    return g1, g2


def _holder(graph: Any) -> Any:
    """A model around a shared copy of ``graph``, for the extractor (onnx wraps it with
    ``helper.make_model``, which copies its weights)."""
    from .. import ModelProto  # noqa: PLC0415
    m = ModelProto()
    m.graph = shared_copy(graph)
    return m


def _merged_opsets(m1: Any, m2: Any) -> list:
    """One import per domain, in first-seen order; ai.onnx versions may differ when the
    lower one's model uses nothing that changed (else `SurgeryError`)."""
    from .. import OperatorSetIdProto  # noqa: PLC0415
    from .opsets import changed_operators  # noqa: PLC0415
    versions: dict = {}
    spelled: dict = {}
    for which, m in ((1, m1), (2, m2)):
        for o in m.opset_import:
            domain = "" if o.domain == "ai.onnx" else o.domain
            spelled.setdefault(domain, o.domain)
            versions.setdefault(domain, {}).setdefault(which, o.version)
    out = []
    for domain, by_model in versions.items():
        v1, v2 = by_model.get(1), by_model.get(2)
        version = v1 if v1 is not None else v2
        if v1 is not None and v2 is not None and v1 != v2:
            if domain != "":
                raise SurgeryError(f"Can't merge two models with different operator set ids for domain "
                                   f"{domain!r}: {v1} and {v2}")
            low, high = (m1, m2) if v1 < v2 else (m2, m1)
            changed = changed_operators(_all_nodes(low), min(v1, v2), max(v1, v2))
            if changed:
                raise SurgeryError(f"the models import ai.onnx opsets {v1} and {v2}; the operators "
                                   f"{', '.join(changed)} of the model of opset {min(v1, v2)} changed "
                                   f"since, and converting them needs the version converter (not "
                                   f"available to compose yet): convert that model to opset "
                                   f"{max(v1, v2)} first")
            version = max(v1, v2)
        out.append(OperatorSetIdProto(domain=spelled[domain], version=version))
    return out


def _same_onnx_opset(m1: Any, m2: Any) -> tuple:
    """``(m1, m2)``, the one of the lower ai.onnx opset converted to the higher one by
    `irmodel.version_converter` when its operators changed in between and the converter is
    there; otherwise as they are (`_merged_opsets` then decides)."""
    from .opsets import changed_operators, opset_map  # noqa: PLC0415
    v1, v2 = opset_map(m1.opset_import).get(""), opset_map(m2.opset_import).get("")
    if v1 is None or v2 is None or v1 == v2:
        return m1, m2
    low_first = v1 < v2
    low, high = (m1, v2) if low_first else (m2, v1)
    if not changed_operators(_all_nodes(low), min(v1, v2), high):
        return m1, m2
    try:
        from ..version_converter import convert_version  # noqa: PLC0415
    except ImportError:  # not built yet: _merged_opsets says what needs converting
        return m1, m2
    converted = convert_version(low, high)
    return (converted, m2) if low_first else (m1, converted)


def _own_directory_data(m2: Any, m1: Any) -> Any:
    """``m2``, or a copy whose external tensors are inline views of their data (mapped, not
    read) when its directory is not ``m1``'s: the merged model resolves external data
    against ``m1``'s directory only."""
    from .._files.external_data import external_tensors, load_external_data_for_model  # noqa: PLC0415
    from .._files.origin import origin_of  # noqa: PLC0415
    o1, o2 = origin_of(m1), origin_of(m2)
    if o2 is None or o2.base_dir is None or (o1 is not None and o1.base_dir == o2.base_dir):
        return m2
    if next(iter(external_tensors(m2)), None) is None:
        return m2
    copy = shared_copy(m2)
    adopt_origin(copy, m2)
    load_external_data_for_model(copy, o2.base_dir)
    return copy


def _all_nodes(model: Any):
    yield from model.graph.node
    for f in model.functions:
        yield from f.node


def merge_models(m1: Any, m2: Any, io_map: list, inputs: list | None = None, outputs: list | None = None,
                 prefix1: str | None = None, prefix2: str | None = None, name: str | None = None,
                 doc_string: str | None = None, producer_name: str | None = "onnx.compose.merge_models",
                 producer_version: str | None = "1.0", domain: str | None = "",
                 model_version: int | None = 1, *, rename: str | None = None) -> Any:
    """One model of ``m1`` and ``m2`` (`merge_graphs` on their graphs), checked."""
    from .. import ModelProto, check_model  # noqa: PLC0415
    if not isinstance(m1, ModelProto):
        raise TypeError("m1 argument is not an ONNX model")
    if not isinstance(m2, ModelProto):
        raise TypeError("m2 argument is not an ONNX model")
    m1, m2 = _same_onnx_opset(m1, m2)
    opsets = _merged_opsets(m1, m2)
    ir_version = max(m1.ir_version, m2.ir_version)
    m2 = _own_directory_data(m2, m1)
    m1, m2, io_map = _prefixed(m1, m2, io_map, prefix1, prefix2, add_prefix)
    graph = merge_graphs(m1.graph, m2.graph, io_map, inputs=inputs, outputs=outputs, name=name,
                         doc_string=doc_string, rename=rename)
    model = ModelProto()
    model.ir_version = ir_version
    model.graph = graph
    model.opset_import.extend(opsets)
    for field, value in (("producer_name", producer_name), ("producer_version", producer_version),
                         ("domain", domain), ("model_version", model_version)):
        if value is not None:
            setattr(model, field, value)
    props: dict = {}
    for entry in m1.metadata_props:
        props[entry.key] = entry.value
    for entry in m2.metadata_props:
        if entry.key in props and props[entry.key] != entry.value:
            raise SurgeryError("Can't merge models with different values for the same model metadata "
                               f"property. Found: property = {entry.key}, with values {props[entry.key]} "
                               f"and {entry.value}.")
        props.setdefault(entry.key, entry.value)
    for key, value in props.items():
        model.metadata_props.add(key=key, value=value)
    overlap = {f.name for f in m1.functions} & {f.name for f in m2.functions}
    if overlap:
        raise SurgeryError("Can't merge models with overlapping local function names. Found in both "
                           "graphs: " + ", ".join(sorted(overlap)))
    model.functions.extend(shared_copy(f) for f in list(m1.functions) + list(m2.functions))
    adopt_origin(model, m1)
    check_model(model)
    return model
