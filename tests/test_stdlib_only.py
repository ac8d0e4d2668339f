"""`import irmodel` and decoding need nothing but the standard library."""

from __future__ import annotations

import os
import subprocess
import sys
import venv

from repo_paths import REPO  # noqa: E402

PROBE = r"""
import sys
import irmodel
assert "numpy" not in sys.modules, "import irmodel pulled in numpy"
m = irmodel.load(sys.argv[1])
d = irmodel.to_dict(m)
assert m.graph.node[0].op_type == "Conv", m.graph.node[0].op_type
assert len(irmodel.dumps(m)) == len(open(sys.argv[1], "rb").read())
third_party = sorted(n for n in sys.modules
                     if n.split(".")[0] in ("numpy", "onnx", "google", "ml_dtypes", "hypothesis"))
assert not third_party, third_party
import importlib.util
for name in ("numpy", "onnx", "google.protobuf"):
    try:
        found = importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        found = False
    assert not found, name + " is importable: the venv is not clean"
print("ok", len(d["graph"]["node"]))
"""


def test_import_and_decode_in_a_virtual_environment_without_third_party_packages(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False, clear=True).create(env_dir)
    python = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = REPO  # the source tree itself, nothing installed
    result = subprocess.run([str(python), "-c", PROBE, os.path.join(REPO, "examples", "lenet.onnx")],
                            capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok 13"


def test_import_irmodel_does_not_import_numpy():
    code = "import sys, irmodel, irmodel.cli; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
