"""`ParseError`: the one error the text parser raises."""

from __future__ import annotations


class ParseError(ValueError):
    """Text that is not in the syntax (or not in its limits).

    onnx's ``onnx.parser.ParseError`` derives from ``Exception``; ours from
    ``ValueError`` (the error type of this layer), so ``except Exception`` and
    ``except ValueError`` both catch it.  The message starts as onnx's does
    (``[ParseError at position (line: L column: C)]`` and the line of context), then
    says what was expected and what was found.  ``line`` and ``column`` count from 1
    (columns in characters); ``offset`` is the index in the text.
    """

    def __init__(self, message: str, text: str = "", offset: int = 0):
        self.offset = offset
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.reason = message
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        context = text[start:] if end < 0 else text[start:end]
        if len(context) > 200:  # a tensor's values on one line: show the part near the error
            lo = max(0, offset - start - 100)
            context = context[lo:lo + 200]
        super().__init__(f"[ParseError at position (line: {self.line} column: {self.column})]\n"
                         f"Error context: {context}\n{message}")
