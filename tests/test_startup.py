"""Start-up: what ``import irmodel`` and each command import, the lazy names, the schema
classes that replaced dataclasses, and the cache of compiled scan code (no timing here)."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import irmodel
import wirefmt
from irmodel._files import codecache
from wirefmt import scangen, scansource
from wirefmt.schema import ENUM, INT64, STRING, EnumSpec, FieldSpec, MessageSpec, Registry

from repo_paths import REPO as ROOT  # noqa: E402
LENET = os.path.join(ROOT, "examples", "lenet.onnx")


def _run(code: str, env: dict | None = None) -> str:
    full_env = {**os.environ, **(env or {})}
    # -S: no site, so no editable-install finder importing re, collections and more before
    # the code runs (irmodel is found in the checkout, the working directory).
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=full_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _modules(code: str, env: dict | None = None) -> set:
    probe = code + "\nimport sys\n_seen = sorted(sys.modules)\nimport json\nprint(json.dumps(_seen))"
    return set(json.loads(_run(probe, env).splitlines()[-1]))


def _modules_after(code: str, env: dict | None = None) -> set:
    """The modules ``code`` imports beyond what the bare interpreter (and its site, which
    for an editable install imports a finder with pathlib, re and more) has already."""
    return _modules(code, env) - _modules("pass", env)


# -- what is imported -------------------------------------------------------------------

LAZY_MODULES = {"irmodel.helper", "irmodel._files.external_data", "irmodel._files.external_write", "irmodel._files.atomic",
                "irmodel._files.filecopy", "irmodel.tensors", "irmodel._report.summary", "irmodel._report.dump", "irmodel.cli",
                "wirefmt.encoder", "wirefmt.writer", "wirefmt.jsonform", "wirefmt.raw"}
HEAVY_STDLIB = {"typing", "dataclasses", "inspect", "ast", "numpy", "onnx", "google", "weakref",
                "collections", "argparse", "json", "hashlib", "re"}


def test_import_irmodel_imports_nothing_but_the_package():
    # Every public name is imported on first use (irmodel.__getattr__): the message
    # classes, the schema tables, the codec and the scan-code cache included.
    loaded = _modules_after("import irmodel")
    # (`_version` is one assignment: the version's one home, readable without the facade.)
    assert {m for m in loaded if m.split(".")[0] in ("irmodel", "wirefmt")} == {"irmodel", "irmodel._version"}
    assert not loaded & HEAVY_STDLIB and not {"mmap", "struct", "errno"} & loaded


def test_the_first_load_imports_only_what_opening_a_model_needs():
    loaded = _modules_after("import irmodel\nirmodel.load")
    assert not loaded & LAZY_MODULES
    assert not loaded & HEAVY_STDLIB
    assert {"irmodel.io", "irmodel.messages", "wirefmt.message", "wirefmt.scan"} <= loaded


def test_the_lazy_table_names_exactly_the_message_classes():
    from irmodel.messages import CLASSES

    assert set(irmodel._MESSAGE_NAMES) == {n for n in CLASSES if "." not in n}
    for name in irmodel._MESSAGE_NAMES:
        assert getattr(irmodel, name) is CLASSES[name]
    for name in ("errors", "io", "messages", "proto"):
        assert getattr(irmodel, name) is sys.modules[f"irmodel.{name}"]
    for name in ("codecache", "origin"):  # attributes of old, modules of the file layer now
        assert getattr(irmodel, name) is sys.modules[f"irmodel._files.{name}"]
    assert irmodel.ParseError is wirefmt.ParseError and irmodel.IR_VERSION == irmodel.proto.IR_VERSION


def test_the_inspect_summary_imports_no_more_of_the_standard_library():
    loaded = _modules_after(f"import irmodel\nfrom irmodel._report.summary import summarize\n"
                            f"summarize(irmodel.load({LENET!r}))")
    assert not loaded & HEAVY_STDLIB
    assert not loaded & (LAZY_MODULES - {"irmodel._report.summary"})
    # A shared library and the text module: a summary reads no float and writes no text.
    assert not loaded & {"struct", "_struct", "wirefmt.safetext"}


def test_a_warm_cache_imports_no_source_writer(tmp_path):
    # The scan code's source is written only on a cache miss: once a process has kept it,
    # the next one reading the same types never imports `wirefmt.scansource`.
    read = (f"import irmodel\nm = irmodel.load({LENET!r})\n"
            "[(n.op_type, [a.name for a in n.attribute]) for n in m.graph.node]")
    env = {codecache.ENV: str(tmp_path)}
    assert "wirefmt.scansource" in _modules_after(read, env)  # cold: every scanner written
    assert "wirefmt.scansource" not in _modules_after(read, env)


def test_loading_and_reading_a_model_needs_no_more():
    loaded = _modules_after(f"import irmodel\nm = irmodel.load({LENET!r})\n"
                            "[(n.op_type, [a.name for a in n.attribute]) for n in m.graph.node]")
    assert not loaded & (LAZY_MODULES | HEAVY_STDLIB)


@pytest.mark.parametrize("argv, absent", [
    (["inspect", "--json", LENET], {"irmodel.cli.dump", "irmodel.cli.raw", "irmodel.cli.convert", "irmodel._report.dump",
                                    "irmodel.helper", "irmodel._files.external_write", "wirefmt.encoder", "typing",
                                    "shutil"}),
    (["inspect", LENET], {"irmodel._report.dump", "wirefmt.raw", "json", "typing"}),  # the text needs none
    (["raw", LENET], {"irmodel.cli.inspect", "irmodel.cli.dump", "irmodel.cli.convert", "irmodel._report.summary"}),
    (["dump", LENET], {"irmodel.cli.inspect", "irmodel.cli.raw", "irmodel.cli.convert"}),
    (["check", LENET], {"irmodel.cli.inspect", "irmodel.cli.infer", "irmodel.cli.convert", "irmodel._report.summary"}),
    (["infer", LENET], {"irmodel.cli.inspect", "irmodel.cli.check", "irmodel.cli.convert"}),
])
def test_a_command_imports_only_its_own_module(argv, absent):
    loaded = _modules_after("import contextlib, io\nfrom irmodel.cli import main\n"
                            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({argv!r}) == 0")
    assert f"irmodel.cli.{argv[0]}" in loaded
    assert not loaded & absent


@pytest.mark.parametrize("columns", ["", "0", "x", "50", "200"])
def test_the_help_width_is_the_one_argparse_finds_itself(monkeypatch, columns):
    import argparse
    import shutil

    from irmodel.cli import parser

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(parser, "_WIDTH", [])
    assert parser._help_width() == argparse.HelpFormatter("irmodel")._width == shutil.get_terminal_size().columns - 2


def test_help_still_lists_every_command(capsys):
    from irmodel.cli import COMMANDS, main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_lazy_names_are_the_same_objects_as_their_modules():
    import importlib

    for name, module in irmodel._LAZY_NAMES.items():
        value = getattr(irmodel, name)
        target = importlib.import_module(f"irmodel.{module}")
        assert value is (target if module.rpartition(".")[2] == name else getattr(target, name)), name
    assert set(irmodel.__all__) <= set(dir(irmodel))
    for name in irmodel.__all__:
        assert getattr(irmodel, name) is not None, name
    ns: dict = {}
    exec("from irmodel import *", ns)  # noqa: S102
    assert set(irmodel.__all__) <= set(ns)
    with pytest.raises(AttributeError):
        irmodel.no_such_name  # noqa: B018


def test_wirefmt_lazy_names_resolve_to_their_definitions():
    from wirefmt import encoder, jsonform, reader, writer

    assert set(wirefmt.__all__) <= set(dir(wirefmt))
    for name in wirefmt.__all__:
        assert getattr(wirefmt, name) is not None, name
    assert wirefmt.dumps_message is encoder.dumps_message and wirefmt.to_dict is jsonform.to_dict
    assert wirefmt.Field is reader.Field and wirefmt.StreamWriter is writer.StreamWriter
    assert str(wirefmt.SpanCopier).startswith("typing.Callable")
    with pytest.raises(AttributeError):
        wirefmt.no_such_name  # noqa: B018


# -- the classes that replaced dataclasses and NamedTuples --------------------------------

def test_field_spec_behaves_as_the_frozen_dataclass_it_replaces():
    f = FieldSpec(3, "dims", INT64, repeated=True)
    assert f == FieldSpec(3, "dims", INT64, True) and hash(f) == hash(FieldSpec(3, "dims", INT64, True))
    assert f != FieldSpec(3, "dims", INT64) and f != (3, "dims")
    assert repr(f) == ("FieldSpec(number=3, name='dims', kind=3, repeated=True, type_name=None, packed=None, "
                       "oneof=None, default=None, json_name=None, explicit_presence=None)")
    with pytest.raises(AttributeError):
        f.name = "other"
    with pytest.raises(AttributeError):
        del f.name
    with pytest.raises(TypeError):
        FieldSpec(1, "a")  # kind is required
    assert pickle.loads(pickle.dumps(f)) == f and copy.deepcopy(f) == f
    assert FieldSpec(1, "raw_data_x", STRING).camel_name == "rawDataX"
    # Built through a twin class with plain stores (`FieldSpec.__init__`): none of it shows.
    assert type(f) is FieldSpec and type(copy.copy(f)) is FieldSpec and type(pickle.loads(pickle.dumps(f))) is FieldSpec
    with pytest.raises(AttributeError):
        f.__class__ = type("Other", (FieldSpec,), {"__slots__": ()})

    class Tagged(FieldSpec):  # a subclass keeps its class, its own slots and the fields
        __slots__ = ("tag",)

    t = Tagged(3, "dims", INT64, True)
    assert type(t) is Tagged and t._values() == f._values()
    with pytest.raises(AttributeError):
        t.number = 4


def test_enum_and_message_specs_keep_their_contract():
    e = EnumSpec("E", {"A": 0, "B": 1, "ALIAS": 1})
    assert e.names == {0: "A", 1: "B"} and e == EnumSpec("E", {"A": 0, "B": 1, "ALIAS": 1})
    assert repr(e) == "EnumSpec(name='E', values={'A': 0, 'B': 1, 'ALIAS': 1}, closed=True)"
    with pytest.raises(TypeError):
        hash(e)  # its values are a dict, as with the dataclass
    m = MessageSpec("M", (FieldSpec(2, "b", STRING), FieldSpec(1, "a", INT64, oneof="o")))
    assert [f.number for f in m.fields] == [1, 2] and m.oneofs == {"o": ["a"]}
    assert m == MessageSpec("M", [FieldSpec(1, "a", INT64, oneof="o"), FieldSpec(2, "b", STRING)])
    assert repr(m).startswith("MessageSpec(name='M', fields=(FieldSpec(number=1")
    with pytest.raises(TypeError):
        hash(m)
    with pytest.raises(ValueError):
        MessageSpec("D", (FieldSpec(1, "a", INT64), FieldSpec(1, "b", INT64)))


def test_field_is_a_named_tuple():
    f = wirefmt.Field(1, 2, None, 3, 7, 1)
    assert f == (1, 2, None, 3, 7, 1) and f.number == 1 and f.end == 7 and f.tag_start == 1
    assert f._replace(end=9) == (1, 2, None, 3, 9, 1) and f._asdict()["wire_type"] == 2
    assert repr(f) == "Field(number=1, wire_type=2, value=None, start=3, end=7, tag_start=1)"
    assert pickle.loads(pickle.dumps(f)) == f


# -- the cache of compiled scan code ------------------------------------------------------

_READ = (f"import irmodel\nm = irmodel.load({LENET!r})\n"
         "ops = [(n.op_type, [a.name for a in n.attribute]) for n in m.graph.node]\n"
         "from irmodel._files.codecache import DEFAULT as c\n"
         "import json; print(json.dumps([c.hits, c.misses, c.saved, c.directory, ops]))")


def _read_with_cache(directory) -> list:
    return json.loads(_run(_READ, {codecache.ENV: str(directory)}).splitlines()[-1])


def test_the_second_process_loads_the_code_the_first_one_compiled(tmp_path):
    hits, misses, saved, where, ops = _read_with_cache(tmp_path)
    assert hits == 0 and misses == saved > 0
    assert where.startswith(str(tmp_path)) and f"scan-{irmodel.__version__}-" in where
    assert len(os.listdir(where)) == saved
    hits2, misses2, saved2, _, ops2 = _read_with_cache(tmp_path)
    assert (hits2, misses2, saved2) == (saved, 0, 0) and ops2 == ops


def test_a_stored_entry_is_used_only_for_exactly_its_source(tmp_path):
    _, _, saved, where, ops = _read_with_cache(tmp_path)
    node_file = next(os.path.join(where, f) for f in os.listdir(where)
                     if f.startswith("irmodel.NodeProto.make_child."))
    data = open(node_file, "rb").read()
    header = scangen._HEADER
    assert data.startswith(header)
    import marshal

    stamp, code = marshal.loads(data[len(header):])
    # the same code under a different stamp (as after a schema or generator change)
    open(node_file, "wb").write(header + marshal.dumps((stamp + "\n# changed\n", code)))
    hits, misses, saved2, _, ops2 = _read_with_cache(tmp_path)
    assert saved2 == 1 and ops2 == ops  # recompiled and stored again
    # another Python's entry (another magic number): refused before unmarshalling
    open(node_file, "wb").write(header.replace(b"scan code 2", b"scan code 0") + data[len(header):])
    assert _read_with_cache(tmp_path)[2] == 1
    # garbage after a good header, and an empty file
    for junk in (header + b"\xff\x00garbage", b""):
        open(node_file, "wb").write(junk)
        hits, misses, saved3, _, ops3 = _read_with_cache(tmp_path)
        assert saved3 == 1 and ops3 == ops


def test_the_schema_decides_what_is_reused_in_process():
    class DictCache:
        def __init__(self):
            self.data: dict = {}

        def load(self, key):
            return self.data.get(key)

        def save(self, key, data):
            self.data[key] = data

    cache = DictCache()

    def classes(fields):
        reg = Registry([MessageSpec("T", tuple(fields))], [EnumSpec("K", {"A": 0, "B": 1})])
        return wirefmt.build_classes(reg, module="cachetest", code_cache=cache)["T"]

    v1 = classes([FieldSpec(1, "a", INT64)])
    data = b"\x08\x05\x12\x02hi\x18\x01"
    assert v1.FromString(data).a == 5
    [key1] = cache.data
    assert key1.startswith("cachetest.T.scan.")
    stored = cache.data[key1]
    v2 = classes([FieldSpec(1, "a", INT64), FieldSpec(2, "b", STRING), FieldSpec(3, "k", ENUM, type_name="K")])
    m = v2.FromString(data)
    assert (m.a, m.b, m.k) == (5, "hi", 1)  # not the old code: it knew no field b
    assert len(cache.data) == 2 and cache.data[key1] == stored  # both versions kept
    # an entry under the new key holding the old source is refused (the source is compared)
    key2 = next(k for k in cache.data if k != key1)
    cache.data[key2] = stored
    v2b = classes([FieldSpec(1, "a", INT64), FieldSpec(2, "b", STRING), FieldSpec(3, "k", ENUM, type_name="K")])
    assert v2b.FromString(data).b == "hi" and cache.data[key2] != stored
    v3 = classes([FieldSpec(1, "a", INT64), FieldSpec(2, "b", STRING), FieldSpec(3, "k", ENUM, type_name="K")])
    before = dict(cache.data)
    assert v3.FromString(data).b == "hi" and cache.data == before  # same schema: reused


def test_an_unwritable_or_untrusted_cache_is_no_cache(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    hits, misses, saved, where, ops = _read_with_cache(blocker / "cache")
    assert (hits, saved) == (0, 0) and misses > 0 and ops
    shared = tmp_path / "shared"
    shared.mkdir()
    _, _, saved, where, _ = _read_with_cache(shared)
    assert saved > 0
    os.chmod(where, 0o777)  # writable by others: code from it would run here
    hits, misses, saved, _, ops2 = _read_with_cache(shared)
    assert (hits, saved) == (0, 0) and ops2 == ops
    assert _read_with_cache("")[3] is None  # IRMODEL_CACHE_DIR="" switches it off


def test_an_entry_is_read_whole_and_the_directory_trusted_once_a_process(tmp_path, monkeypatch):
    cache = codecache.FileCodeCache(str(tmp_path))
    assert cache.load("absent") is None and cache.misses == 1
    big = bytes(range(256)) * 1000 + b"tail"  # over one read's size (64 KiB), not a multiple of it
    for key, data in (("big", big), ("exact", b"x" * codecache._READ), ("empty", b""), ("small", b"abc")):
        cache.save(key, data)
    checks = []
    trusted = cache._trusted
    monkeypatch.setattr(cache, "_trusted", lambda d: checks.append(d) or trusted(d))
    assert [cache.load(k) for k in ("big", "exact", "empty", "small")] == [big, b"x" * codecache._READ, b"", b"abc"]
    assert checks == [cache.directory]  # once for four entries
    # Another cache over the same directory asks again, and refuses it once others may write to it.
    os.chmod(cache.directory, 0o777)
    other = codecache.FileCodeCache(str(tmp_path))
    assert other.load("small") is None and other.misses == 1 and other.hits == 0


def test_the_default_directory_is_the_users_cache_never_the_package(monkeypatch, tmp_path):
    monkeypatch.delenv(codecache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert codecache.default_directory() == os.path.join(str(tmp_path), "irmodel")
        monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
        monkeypatch.setenv("HOME", str(tmp_path))
        assert codecache.default_directory() == os.path.join(str(tmp_path), ".cache", "irmodel")
    d = codecache.default_directory()
    assert d is None or not d.startswith(os.path.dirname(irmodel.__file__))


def test_scan_code_is_compiled_when_the_class_has_no_cache():
    class Refuse:
        def load(self, key):
            raise OSError("no")

        def save(self, key, data):
            raise OSError("no")

    code = scangen._compile(lambda: "x = 1\n", "stamp", "<t>", "k", Refuse())
    ns: dict = {}
    exec(code, ns)  # noqa: S102
    assert ns["x"] == 1


def test_a_loaded_models_descriptor_is_closed_when_the_model_goes():
    # Origin closes its duplicate of the mapped file's descriptor in __del__ (not through
    # weakref.finalize, whose module `import irmodel` no longer imports).
    import gc

    m = irmodel.load(LENET)
    fd = m.__dict__["_origin"].source_fd
    assert os.fstat(fd).st_size == os.path.getsize(LENET)
    del m
    gc.collect()
    with pytest.raises(OSError):
        os.fstat(fd)


def test_no_complaint_at_exit_when_module_globals_are_gone():
    out = subprocess.run([sys.executable, "-c", f"import irmodel, sys\nm = irmodel.load({LENET!r})\n"
                          "sys.modules['irmodel._files.origin'].__dict__['os'] = None"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stderr == ""


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=12) | st.text(alphabet="ab_.:/-\\ \x1b\u00e9\u0663\u2163\u00b2\ufffd", max_size=8))
def test_a_plain_name_is_what_the_regular_expression_called_one(name):
    import re

    from wirefmt.safetext import name_text

    plain = re.fullmatch(r"[\w.:/\-]+", name) is not None and name.isprintable()
    assert (name_text(name) == name) == plain  # a plain name unquoted, anything else quoted


def _dict_cache():
    class DictCache:
        def __init__(self):
            self.data: dict = {}
            self.loads = 0

        def load(self, key):
            self.loads += 1
            return self.data.get(key)

        def save(self, key, data):
            self.data[key] = data

    return DictCache()


def _onnx_classes(cache, module="stamptest"):
    from irmodel.messages import REGISTRY, SCAN_HINTS

    return wirefmt.build_classes(REGISTRY, module=module, code_cache=cache, scan_hints=SCAN_HINTS)


def test_a_warm_cache_gives_the_code_a_cold_one_compiles_without_generating_source(monkeypatch):
    from irmodel.messages import REGISTRY

    cache = _dict_cache()
    cold = {k: _build(cls, REGISTRY, which) for k, cls, which in _every_scanner(_onnx_classes(cache))}
    assert cache.data and len(cache.data) == len(cold)
    monkeypatch.setattr(scansource, "source", lambda *a: pytest.fail("source generated on a warm cache"))
    warm = {k: _build(cls, REGISTRY, which) for k, cls, which in _every_scanner(_onnx_classes(cache))}
    assert warm == cold  # code objects compare by their bytecode, constants and names


def test_a_changed_generator_or_schema_misses(monkeypatch):
    from irmodel.messages import REGISTRY

    cache = _dict_cache()
    cls = _onnx_classes(cache)["NodeProto"]
    _build(cls, REGISTRY, "make_child")
    [(key, stored)] = cache.data.items()
    # the generator's files changed (another size or modification time): a new entry
    monkeypatch.setattr(scangen, "_generator_stamp", scangen.generator_stamp() + "x")
    _build(cls, REGISTRY, "make_child")
    assert len(cache.data) == 2 and cache.data[key] == stored
    monkeypatch.undo()
    # a field of the type changed, under the same key: the stored stamp decides
    spec, hints = cls._spec, cls._scan_hints
    changed = MessageSpec(spec.name, tuple(f if f.name != "op_type" else FieldSpec(f.number, "op_kind", f.kind)
                                           for f in spec.fields))
    assert scangen._stamp(changed, REGISTRY, "make_child", hints) != scangen._stamp(spec, REGISTRY, "make_child", hints)
    assert len(scangen._stamp(changed, REGISTRY, "make_child", hints)) == len(scangen._stamp(spec, REGISTRY, "make_child", hints))
    monkeypatch.setattr(cls, "_spec", changed)
    before = cache.data[key]
    m = _build(cls, REGISTRY, "make_child")
    assert cache.data[key] != before and "'op_kind'" in repr(m.co_consts)


def test_the_constants_cover_every_name_the_generated_code_uses():
    from irmodel.messages import REGISTRY

    for _, cls, _which in _every_scanner(_onnx_classes(None)):
        generated: dict = {}
        scansource.scan_source(cls._spec, REGISTRY, generated, lambda f, c=cls: c._classes[f.name], cls._scan_hints)
        given = scangen.scan_consts(cls._spec, REGISTRY, lambda f, c=cls: c._classes[f.name])
        assert generated.items() <= given.items(), cls._spec.name


def _every_scanner(classes):
    for name, cls in sorted(classes.items()):
        for which in ("make_child", "scan"):
            yield (name, which), cls, which


def _build(cls, registry, which):
    from wirefmt import scan as scan_module

    return scangen.build_scanner(cls, registry, scan_module._SCANNER_HELPERS, which).__code__


def test_the_program_freezes_what_its_imports_made_a_call_from_a_library_does_not(capsys):
    import gc

    from irmodel.cli import main

    code = (f"import gc, sys\nfrom irmodel.cli import main\nsys.argv = ['irmodel', 'inspect', {LENET!r}]\n"
            "before = gc.get_freeze_count()\nstatus = main()\nprint(before, gc.get_freeze_count() > 0, status)")
    assert _run(code).splitlines()[-1] == "0 True 0"
    before = gc.get_freeze_count()
    assert main(["inspect", LENET]) == 0 and "Conv" in capsys.readouterr().out
    assert gc.get_freeze_count() == before  # nothing of the caller's is kept for ever
