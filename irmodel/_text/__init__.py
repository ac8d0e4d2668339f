"""The ONNX textual syntax: onnx's printer and parser, lossless.

onnx's syntax (onnx/defs/printer.cc and parser.cc) loses parts of a model: fields it
has no form for (doc strings, metadata, sparse initializers, training info, ...),
the encoding of tensor data (``raw_data`` comes back as typed fields) and the
difference between an absent field and one holding its default.  This package prints
onnx's text, character for character, wherever onnx's parser rebuilds the message
exactly, and a small extension of the syntax (``docs/text-syntax.md``) for the rest,
so that ``parse_model(to_text(m))`` serializes to ``m``'s bytes.

Modules, by job: `patterns` (every regular expression), `lexer` (tokens and
positions), `errors` (`ParseError`), `numbers` (onnx's number spellings, exact
float32 reading), `strings` (quoting), `names` (the keyword tables), `tensordata`
(tensor values, raw bytes, elision), `extras` (the ``@{...}`` blocks for fields onnx
has no form for), `printer` and `parser`.
"""
