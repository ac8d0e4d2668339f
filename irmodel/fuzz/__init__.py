"""Fuzzing toolkit: wire and structure mutators, valid-model generator, strategies, runner, reducer.

Not imported by ``import irmodel``: it is loaded on first use (``import irmodel.fuzz.wire``).
`wire` and `spans` need only wirefmt and the standard library and work on any protobuf;
`onnx_schema` is the one module that knows where irmodel keeps the ONNX schema.
`structure` and `generate` work on irmodel's messages and operator schemas; `strategies`
is the one module that imports hypothesis.
"""
