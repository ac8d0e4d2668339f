"""The package as users get it: the wheel, installed (not editable) into a bare virtual
environment, used from outside the checkout.

An editable install reads the checkout, so a file left out of the package data (the
com.microsoft schema table was, once) passes every other test and fails every user.
Here the wheel is built from the checkout, installed with no dependencies into a new
venv without numpy or the reference, and then, from a directory that is not the
checkout: every module is imported, and ``inspect``, ``check`` and ``infer`` run on a
model with com.microsoft nodes (which needs ``defs/contrib_microsoft.json``).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from repo_paths import REPO

pytestmark = pytest.mark.slow

#: Modules that need an optional dependency at import, with the one they need; a bare
#: install must fail on exactly that dependency and on nothing else.
NEEDS_OPTIONAL = {"irmodel.tensors": "numpy", "irmodel._dtypes.packing": "numpy",
                  "irmodel.numpy_helper": "numpy", "irmodel.model_container": "numpy",
                  "irmodel.fuzz.strategies": "hypothesis"}

IMPORT_ALL = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    import irmodel, wirefmt
    if irmodel.__file__.startswith(sys.argv[1]):
        raise SystemExit("imported from the checkout: " + irmodel.__file__)
    results = {}
    for package in (irmodel, wirefmt):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(info.name)
                results[info.name] = None
            except ModuleNotFoundError as exc:
                results[info.name] = "missing:" + str(exc.name)
            except Exception as exc:  # reported, and the test fails on it
                results[info.name] = repr(exc)
    print(json.dumps(results))
""")

MAKE_MODEL = textwrap.dedent("""
    import sys
    from irmodel import helper as h, save
    MS = "com.microsoft"
    nodes = [
        h.make_node("FastGelu", ["x"], ["g"], domain=MS),
        h.make_node("SkipLayerNormalization", ["g", "skip", "gamma"], ["y"], domain=MS, epsilon=1e-5),
    ]
    inputs = [h.make_tensor_value_info("x", 1, ["batch", "seq", 8]),
              h.make_tensor_value_info("skip", 1, ["batch", "seq", 8]),
              h.make_tensor_value_info("gamma", 1, [8])]
    graph = h.make_graph(nodes, "contrib", inputs, [h.make_tensor_value_info("y", 1, ["batch", "seq", 8])])
    model = h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    save(model, sys.argv[1])
""")


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory) -> str:
    """The python of a new venv holding only the wheel built from the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    # Built from a copy: pip builds in the source tree (build/, *.egg-info), which must
    # stay the checkout a developer left.
    source = work / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis", ".mypy_cache"))
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                    "-w", str(dist), str(source)], check=True, cwd=str(work))
    wheels = glob.glob(str(dist / "irmodel-*.whl"))
    assert len(wheels) == 1, wheels
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", wheels[0]],
                   check=True, cwd=str(work))
    return python


def _run(python: str, cwd: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["IRMODEL_CACHE_DIR"] = ""  # nothing from the checkout's processes
    return subprocess.run([python, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_every_module_imports_from_the_installed_wheel(bare_venv, tmp_path):
    done = _run(bare_venv, str(tmp_path), "-c", IMPORT_ALL, REPO)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert "irmodel.defs.bodies" in results and "irmodel.inference.symbolic.rules" in results
    failures = {m: r for m, r in results.items() if r is not None and NEEDS_OPTIONAL.get(m) != r.removeprefix("missing:")}
    assert failures == {}
    for module, dependency in NEEDS_OPTIONAL.items():
        assert results[module] == f"missing:{dependency}", module


def test_package_data_is_in_the_wheel(bare_venv, tmp_path):
    probe = ("import os, irmodel.defs as d; folder = os.path.dirname(d.__file__); "
             "print(sorted(f for f in os.listdir(folder) if f.endswith('.json')))")
    done = _run(bare_venv, str(tmp_path), "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(REPO, "irmodel", "defs", "*.json"))))


def test_commands_on_a_contrib_model_from_the_installed_wheel(bare_venv, tmp_path):
    model = str(tmp_path / "contrib.onnx")
    made = _run(bare_venv, str(tmp_path), "-c", MAKE_MODEL, model)
    assert made.returncode == 0, made.stderr
    cli = os.path.join(os.path.dirname(bare_venv), "irmodel")
    inspect = subprocess.run([cli, "inspect", model], capture_output=True, text=True, cwd=str(tmp_path))
    assert inspect.returncode == 0, inspect.stderr
    assert "SkipLayerNormalization" in inspect.stdout
    check = subprocess.run([cli, "check", model], capture_output=True, text=True, cwd=str(tmp_path))
    assert check.returncode == 0, check.stderr
    infer = subprocess.run([cli, "infer", "--json", model], capture_output=True, text=True, cwd=str(tmp_path))
    assert infer.returncode == 0, infer.stderr
    # FastGelu's output, declared nowhere, gets its input's type: the contrib rules ran.
    values = {v["name"]: v for v in json.loads(infer.stdout)}
    assert values["g"]["role"] == "value" and values["g"]["shape"] == ["batch", "seq", 8]
    schema = _run(bare_venv, str(tmp_path), "-c",
                  "from irmodel import defs; print(defs.get_schema('Attention', domain='com.microsoft').name)")
    assert schema.returncode == 0, schema.stderr
    assert schema.stdout.strip() == "Attention"
