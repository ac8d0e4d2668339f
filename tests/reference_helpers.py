"""What the reference (onnx, protobuf) makes of a message, for differential tests in any
directory of tests/ (a module of its own: a test importing ``conftest`` gets whichever
conftest.py Python found first).
"""

from __future__ import annotations

import os


def reference_message(type_name: str):
    import onnx

    return getattr(onnx, type_name.split(".")[0])()


def reference_dict(type_name: str, data: bytes) -> dict:
    from google.protobuf import json_format

    ref = reference_message(type_name)
    ref.ParseFromString(data)
    return json_format.MessageToDict(ref, preserving_proto_field_name=True)


def gemm_model_file(directory, rows: int) -> str:
    """``directory/m.onnx``, saved by the reference: a Gemm whose weight ``w`` is ``rows`` x
    1000 float32 (``rows=600``: 2.4 MB), large enough for a save to copy it as a span."""
    import numpy as np
    import onnx
    from onnx import helper as oh, numpy_helper

    big = numpy_helper.from_array(np.arange(rows * 1000, dtype=np.float32).reshape(rows, 1000), "w")
    small = numpy_helper.from_array(np.ones(3, dtype=np.float32), "b")
    node = oh.make_node("Gemm", ["x", "w", "b"], ["y"])
    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, rows])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1000])], [big, small])
    path = os.path.join(str(directory), "m.onnx")
    onnx.save_model(oh.make_model(graph, producer_name="p"), path)
    return path


def reference_edit(path: str, producer_name: str = "edited") -> bytes:
    """What the reference serializes for the model at ``path`` with ``producer_name`` set."""
    import onnx

    ref = onnx.load(path)
    ref.producer_name = producer_name
    return ref.SerializeToString()
