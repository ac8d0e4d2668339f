"""The checker's problem codes: one stable code per rule, with one sentence each.

A code never changes meaning once published; a retired rule keeps its number unused.
The letter says what the rule is about (M model, G graph, V value info, N node, A
attribute, T tensor, X external data location, S sparse tensor, F model-local function,
D data values of onnx-data.proto, B bytes that cannot be decoded); docs/checker-codes.md
is this table in prose and a test keeps the two equal.
"""

from __future__ import annotations

# code -> (short name, what the rule requires)
CODES: dict[str, tuple[str, str]] = {
    # -- the model -------------------------------------------------------------------------
    "M101": ("ir-version-missing", "ir_version is set and not 0."),
    "M102": ("ir-version-too-new", "ir_version is at most the IR version this checker knows."),
    "M103": ("metadata-key-duplicate", "metadata_props keys are unique."),
    "M104": ("opset-import-missing", "a model of IR version 3 or later imports at least one opset."),
    "M105": ("opset-import-forbidden", "a model of IR version before 3 imports no opset."),
    "M106": ("opset-version-out-of-range", "an opset import's version fits in a 32-bit int."),
    # -- graphs and scopes -------------------------------------------------------------------
    "G201": ("graph-name-empty", "every graph (main graph and subgraphs) has a non-empty name."),
    "G202": ("graph-input-duplicate", "a graph's input names are unique."),
    "G203": ("initializer-name-missing", "every initializer and sparse initializer has a non-empty name."),
    "G204": ("initializer-name-duplicate",
             "initializer and sparse initializer names are unique within a graph."),
    "G205": ("initializer-not-input",
             "before IR version 4, every initializer is also a graph input."),
    "G206": ("node-input-undefined",
             "a node input is a graph input, an initializer, an earlier node's output or a "
             "name visible from an enclosing graph (nodes are in topological order)."),
    "G207": ("value-assigned-twice",
             "a name is assigned once (single static assignment), including across nested scopes."),
    "G208": ("graph-output-not-produced",
             "a graph output is an input, initializer or node output of that same graph."),
    "G209": ("graph-nesting-too-deep",
             "graphs nest at most 100 levels deep (protobuf cannot decode deeper models)."),
    # -- value infos -------------------------------------------------------------------------
    "V301": ("value-info-name-empty", "a graph input or output has a non-empty name."),
    "V302": ("value-info-type-missing", "a main-graph input or output has a type."),
    "V303": ("value-info-type-incomplete",
             "a main-graph input or output type is complete: tensor and sparse tensor types "
             "have elem_type and shape, sequence and optional types an elem_type, map types a "
             "key_type and a value_type, opaque types a name."),
    "V304": ("value-info-type-unknown", "a main-graph input or output type sets one known kind of type."),
    # -- nodes ------------------------------------------------------------------------------
    "N401": ("op-type-empty", "a node has a non-empty op_type."),
    "N402": ("node-without-inputs-and-outputs", "a node has at least one input or one output."),
    "N403": ("domain-not-imported", "a node's domain is imported by the model (or function)."),
    "N404": ("attribute-duplicate", "a node's attribute names are unique."),
    "N405": ("op-unknown",
             "an op of a built-in domain (or any domain with check_custom_domain=True) has a "
             "schema at the imported opset version."),
    "N406": ("op-deprecated", "an op is not deprecated at the imported opset version."),
    "N407": ("input-count", "a node has as many inputs as its schema allows."),
    "N408": ("output-count", "a node has as many outputs as its schema allows."),
    "N409": ("required-input-empty", "an input the schema marks single (required) is not ''."),
    "N410": ("required-output-empty", "an output the schema marks single (required) is not ''."),
    "N411": ("attribute-unknown", "a node's attributes are declared by its schema."),
    "N412": ("attribute-type-mismatch", "an attribute's type is the type its schema declares."),
    "N413": ("attribute-value-missing",
             "a tensor, sparse tensor, graph or type attribute carries its value (t, "
             "sparse_tensor, g, tp) unless it refers to a function attribute."),
    "N414": ("attribute-required-missing", "every attribute the schema requires is present."),
    # -- attributes -------------------------------------------------------------------------
    "A501": ("attribute-name-empty", "an attribute has a non-empty name."),
    "A502": ("attribute-type-missing", "from IR version 2, an attribute sets its type."),
    "A503": ("attribute-type-field-mismatch", "an attribute's value field matches its type."),
    "A504": ("attribute-several-values", "an attribute sets at most one value field."),
    "A505": ("attribute-reference-with-value",
             "an attribute inside a nested graph that refers to a function attribute "
             "(ref_attr_name) carries no value of its own."),
    # -- tensors ----------------------------------------------------------------------------
    "T601": ("tensor-data-type-missing", "a tensor sets data_type."),
    "T602": ("tensor-data-type-undefined", "a tensor's data_type is not UNDEFINED."),
    "T603": ("tensor-data-type-unknown", "a tensor stored in typed fields has a known data_type."),
    "T604": ("tensor-dims-invalid",
             "a tensor's dims are not negative and their product (times the element size) "
             "fits in a signed 64-bit integer."),
    "T605": ("tensor-empty-with-data", "a tensor with zero elements holds no data."),
    "T606": ("tensor-value-fields",
             "a tensor with elements holds its data in exactly one value field."),
    "T607": ("tensor-string-in-raw-data", "STRING tensors are not stored in raw_data."),
    "T608": ("tensor-wrong-field", "a tensor's data is in the typed field of its data_type."),
    "T609": ("tensor-data-too-small",
             "a tensor holds at least as many values (bytes of raw_data, including packed 2- "
             "and 4-bit types) as its dims require."),
    "T610": ("tensor-external-with-data", "a tensor stored externally has no data field."),
    "T611": ("tensor-external-no-location", "a tensor stored externally has a location entry."),
    "T612": ("tensor-float6-padding",
             "the bits of a packed FLOAT6 tensor's raw_data past its last element are zero."),
    "T613": ("tensor-float6-high-bits",
             "a FLOAT6 tensor's int32_data values use only bits 0-5 (0 to 63)."),
    # -- external data locations ---------------------------------------------------------------
    "X701": ("location-empty", "an external data location is not empty."),
    "X702": ("location-absolute", "an external data location is a relative path."),
    "X703": ("location-parent", "an external data location contains no '..'."),
    "X704": ("location-symlink", "an external data file is not a symbolic link."),
    "X705": ("location-outside",
             "an external data file resolves (through any symbolic link) inside the model's directory."),
    "X706": ("location-not-a-file", "an external data file exists and is a regular file."),
    "X707": ("location-hard-links", "an external data file has one hard link only."),
    # -- sparse tensors -----------------------------------------------------------------------
    "S801": ("sparse-values-missing", "a sparse tensor has values."),
    "S802": ("sparse-values-rank", "a sparse tensor's values have rank 1 (their dims are [NNZ])."),
    "S803": ("sparse-dense-rank", "a sparse tensor's dense shape has rank 1 or more."),
    "S804": ("sparse-dims-not-positive", "a sparse tensor's dense dims are all positive."),
    "S805": ("sparse-indices-type", "a sparse tensor's indices are INT64."),
    "S806": ("sparse-indices-rank", "a sparse tensor's indices have rank 1 or 2."),
    "S807": ("sparse-indices-shape",
             "a sparse tensor's indices are [NNZ] (linear) or [NNZ, rank] (coordinates)."),
    "S808": ("sparse-index-out-of-range", "every sparse index lies inside the dense shape."),
    "S809": ("sparse-index-order", "sparse indices are strictly increasing (lexicographically)."),
    "S810": ("sparse-indices-missing", "a sparse tensor with values has indices."),
    "S811": ("sparse-indices-unreadable",
             "sparse indices can be read: stored inline (not externally), with exactly NNZ "
             "int64_data values or enough raw_data."),
    # -- model-local functions ---------------------------------------------------------------
    "F901": ("functions-too-many", "a model has at most 10,000 local functions."),
    "F902": ("function-duplicate", "local functions have unique (domain, name, overload)."),
    "F903": ("function-call-cycle", "local functions do not call themselves, directly or not."),
    "F904": ("function-call-too-deep", "chains of local function calls are at most 100 functions long."),
    "F905": ("function-name-empty", "a function has a non-empty name."),
    "F906": ("function-domain-missing", "from IR version 8, a function sets its domain."),
    "F907": ("function-input-duplicate", "a function's input names are unique."),
    "F908": ("function-output-duplicate", "a function's output names are unique."),
    "F909": ("function-attribute-duplicate", "a function's attribute names are unique."),
    "F910": ("function-node-input-undefined",
             "a function node's input is a function input or an earlier node's output."),
    "F911": ("function-value-assigned-twice", "a name is assigned once in a function."),
    "F912": ("function-opset-missing", "a function imports the domain of each of its nodes."),
    "F913": ("function-opset-incompatible",
             "where a function and the model import different versions of a domain, the "
             "function's ops have the same schema under both."),
    # -- onnx-data.proto values ----------------------------------------------------------------
    "D001": ("data-elem-type", "a sequence or optional sets a known elem_type."),
    "D002": ("map-key-type", "a map's key_type is set and is an integer or string type."),
    "D003": ("map-keys", "a map uses one keys field, and as many keys as values."),
    "D004": ("map-values-missing", "a map has values."),
    "D005": ("data-nesting-too-deep", "sequences, maps and optionals nest at most 100 levels deep."),
    # -- decoding -----------------------------------------------------------------------------
    "B001": ("undecodable", "every part of the model decodes (the part that does not is not checked)."),
}


def describe(code: str) -> str:
    """``"N405 op-unknown: an op of a built-in domain ..."``: one line for a code."""
    name, text = CODES[code]
    return f"{code} {name}: {text}"
