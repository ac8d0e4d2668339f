"""Paths of the repository, for tests at any depth of tests/ (one home for them)."""

import os

#: The checkout's root.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The example model the README's main command inspects.
LENET = os.path.join(REPO, "examples", "lenet.onnx")
