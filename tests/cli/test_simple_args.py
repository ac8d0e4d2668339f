"""The bare ``irmodel inspect PATH`` is read without the parser: read exactly as it would
read it, and without importing argparse or ``re`` (`irmodel.cli.simple_args`)."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from irmodel import cli
from import_probe import modules_after
from repo_paths import LENET

#: Arguments the parser treats in every way it can: options, abbreviations, the end of
#: options, a lone dash, paths, other commands.
TOKENS = ["inspect", "dump", "raw", "--json", "--js", "-h", "--help", "--version", "--", "-", "-x", "--path",
          "m.onnx", "", " ", "-1", "a b.onnx", "@args", "inspect.onnx", "--json=1"]


def _parsed(argv: list) -> dict | None:
    """The parser's reading of ``argv`` as a dict, or None if it refuses or exits."""
    try:
        return vars(cli.build_parser(argv).parse_args(argv))
    except (cli.UsageError, SystemExit):
        return None


def _check(argv: list) -> None:
    simple = cli.simple_args(argv)
    if simple is not None:  # what it reads, it reads as the parser does
        assert vars(simple) == _parsed(argv), argv


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=4))
def test_every_command_line_it_reads_the_parser_reads_the_same(argv):
    _check(argv)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_any_path_is_read_as_the_parser_reads_it(path):
    _check(["inspect", path])
    if not path.startswith("-"):
        assert cli.simple_args(["inspect", path]) is not None


def test_only_the_bare_form_is_read_without_the_parser():
    assert vars(cli.simple_args(["inspect", "m.onnx"])) == _parsed(["inspect", "m.onnx"])
    for argv in (["inspect", "--json", "m.onnx"], ["inspect", "m.onnx", "--json"], ["inspect", "-"], ["inspect"],
                 ["dump", "m.onnx"], ["--version"], [], ["inspect", "a", "b"]):
        assert cli.simple_args(argv) is None, argv


def test_the_bare_inspect_imports_neither_argparse_nor_re():
    loaded = modules_after("import sys\nfrom irmodel.cli import main\nsys.argv[1:] = ['inspect', sys.argv[1]]\n"
                           "assert main() == 0", LENET)
    assert "irmodel.cli.inspect" in loaded and not loaded & {"argparse", "re", "irmodel.cli.parser"}
    # any other form builds the parser
    loaded = modules_after("import sys\nfrom irmodel.cli import main\nassert main(['inspect', '--json', sys.argv[1]]) == 0",
                           LENET)
    assert "argparse" in loaded
