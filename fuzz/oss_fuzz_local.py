"""The OSS-Fuzz build and run of fuzz/, on this machine, without Docker.

    python fuzz/oss_fuzz_local.py WORKDIR [--seconds 3] [--no-run]

What the ``base-builder-python`` image does for a Python project, done here: ``$SRC``,
``$WORK`` and ``$OUT`` under WORKDIR, and on ``PATH`` a ``compile_python_fuzzer`` that does
what the image's does (PyInstaller ``--onefile`` into ``$OUT/<name>.pkg``, with the hooks
atheris registers, made non-executable, and an executable ``$OUT/<name>`` wrapper that
starts it, so that a fuzzer is recognised by its executable bit) and a ``python3`` that
is this interpreter.  Then ``fuzz/build.sh`` runs as the project's build script does in
the image (``IRMODEL_FUZZ_SKIP_INSTALL=1``: the checkout is not pip-installed into this
interpreter; PyInstaller reads it from the checkout instead).

Then each built fuzzer is started as the base-runner image's ``run_fuzzer`` starts it:
from ``$OUT``, with its ``.options`` turned into ``-key=value`` flags and its seed corpus
unzipped into a fresh directory, for ``--seconds`` (``-max_total_time``).  Each run's
result (exit code, libFuzzer's last ``cov``/``corp``/``exec/s``, runs, a crash file) is
printed as one JSON line per fuzzer (`libfuzzer.run_harness` reads the output); the exit code is non-zero if a build or run failed.

The sanitizer runtime the image preloads (``sanitizer_with_fuzzer.so``) is not on this
machine: the wrapper preloads it only where it exists, and atheris' own libFuzzer runs.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import libfuzzer  # noqa: E402

#: The image's ``compile_python_fuzzer``, as far as a local build needs it: the PyInstaller
#: command line and the wrapper are the image's; the introspector and coverage modes are not.
COMPILE_PYTHON_FUZZER = r"""#!/bin/bash -eu
fuzzer_path=$1
shift 1
fuzzer_basename=$(basename -s .py "$fuzzer_path")
fuzzer_package=${fuzzer_basename}.pkg
FUZZ_WORKPATH=$WORK/pyfuzzworkdir/$fuzzer_basename
rm -rf "$FUZZ_WORKPATH" && mkdir -p "$FUZZ_WORKPATH"
"$PYINSTALLER_PYTHON" -m PyInstaller --noconfirm --log-level WARN --distpath "$OUT" \
  --workpath="$FUZZ_WORKPATH" --specpath "$FUZZ_WORKPATH" --onefile --name "$fuzzer_package" "$@" "$fuzzer_path"
chmod -x "$OUT/$fuzzer_package"
cat > "$OUT/$fuzzer_basename" <<EOF
#!/bin/sh
# LLVMFuzzerTestOneInput for fuzzer detection.
this_dir=\$(dirname "\$0")
chmod +x "\$this_dir/$fuzzer_package"
if [ -f "\$this_dir/sanitizer_with_fuzzer.so" ]; then export LD_PRELOAD="\$this_dir/sanitizer_with_fuzzer.so"; fi
exec "\$this_dir/$fuzzer_package" "\$@"
EOF
chmod +x "$OUT/$fuzzer_basename"
"""


def environment(workdir: str) -> dict:
    """``$SRC``, ``$WORK``, ``$OUT`` and the image's tools on ``PATH``, made under ``workdir``."""
    env = dict(os.environ)
    for name in ("SRC", "WORK", "OUT"):
        env[name] = os.path.join(workdir, name.lower())
        os.makedirs(env[name], exist_ok=True)
    tools = os.path.join(workdir, "bin")
    os.makedirs(tools, exist_ok=True)
    script = os.path.join(tools, "compile_python_fuzzer")
    with open(script, "w", encoding="utf-8") as f:
        f.write(COMPILE_PYTHON_FUZZER)
    os.chmod(script, 0o755)
    python3 = os.path.join(tools, "python3")
    if not os.path.exists(python3):
        os.symlink(sys.executable, python3)
    env.update(PATH=tools + os.pathsep + env.get("PATH", ""), PYINSTALLER_PYTHON=sys.executable,
               IRMODEL_FUZZ_SKIP_INSTALL="1", SANITIZER="address", FUZZING_LANGUAGE="python")
    env.pop("IRMODEL_FUZZ_PLAIN", None)
    return env


def build(env: dict, log=sys.stderr) -> list:
    """Run fuzz/build.sh as the image runs a project's build script; returns the fuzzers built
    (the executables in ``$OUT``, as the runner finds them)."""
    subprocess.run(["bash", os.path.join(ROOT, "fuzz", "build.sh")], cwd=ROOT, env=env, check=True,
                   stdout=log, stderr=log)
    out = env["OUT"]
    # A wrapper makes its .pkg executable when it runs, as the image's does: not a fuzzer.
    return sorted(n for n in os.listdir(out) if not n.endswith(".pkg")
                  and os.path.isfile(os.path.join(out, n)) and os.stat(os.path.join(out, n)).st_mode & stat.S_IXUSR)


def options_flags(path: str) -> list:
    """A ``.options`` file's ``key = value`` lines as libFuzzer flags, as ``run_fuzzer`` reads them."""
    if not os.path.exists(path):
        return []
    flags = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "=" in line and not line.lstrip().startswith(("#", "[")):
                key, value = (s.strip() for s in line.split("=", 1))
                flags.append(f"-{key}={value}")
    return flags


def run_fuzzer(env: dict, fuzzer: str, seconds: float) -> libfuzzer.Run:
    """Start ``$OUT/fuzzer`` as ``run_fuzzer`` does (from ``$OUT``, its options as flags, its
    seed corpus unzipped into a fresh directory) for ``seconds``; what libFuzzer reported."""
    out = env["OUT"]
    corpus = os.path.join(env["WORK"], f"{fuzzer}_corpus")
    zipped = os.path.join(out, f"{fuzzer}_seed_corpus.zip")
    if os.path.exists(zipped):
        libfuzzer.unzip_seeds(zipped, corpus)
    else:
        os.makedirs(corpus, exist_ok=True)
    command = [os.path.join(out, fuzzer), *options_flags(os.path.join(out, f"{fuzzer}.options"))]
    return libfuzzer.run_harness(command, fuzzer, [corpus], seconds, env=env, cwd=out,
                                 artifact_dir=os.path.join(env["WORK"], f"{fuzzer}_artifacts"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdir")
    p.add_argument("--seconds", type=float, default=3.0, help="each fuzzer's run (default 3)")
    p.add_argument("--no-run", action="store_true", help="build only")
    args = p.parse_args(argv)
    env = environment(os.path.abspath(args.workdir))
    fuzzers = build(env)
    print(json.dumps({"built": fuzzers, "out": env["OUT"]}))
    failed = not fuzzers
    if not args.no_run:
        for fuzzer in fuzzers:
            run = run_fuzzer(env, fuzzer, args.seconds)
            last = run.last
            print(json.dumps({"fuzzer": fuzzer, "returncode": run.returncode, "runs": run.total_runs,
                              "cov": last and last.cov, "corpus": last and last.corpus,
                              "exec_per_s": last and last.exec_per_s, "artifacts": run.artifacts}))
            failed |= run.returncode != 0 or bool(run.artifacts)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
