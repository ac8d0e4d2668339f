#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build for irmodel's Python harnesses (fuzz/fuzz_*.py).
# Run by .clusterfuzzlite/build.sh (or an OSS-Fuzz project's build.sh) with $SRC and $OUT set,
# from the root of the checkout.  For each harness: the fuzzer (compile_python_fuzzer),
# <target>_seed_corpus.zip (built by fuzz/make_seed_corpus.py), <target>.dict and <target>.options.
# fuzz/oss_fuzz_local.py runs this script on a machine without the image
# (IRMODEL_FUZZ_SKIP_INSTALL=1: the checkout is read in place, not pip-installed).
#
# The harnesses are compiled $IRMODEL_FUZZ_JOBS at a time (default: one per core).  Each
# PyInstaller run is one single-threaded process that analyses and compresses the same
# ~150 MB of numpy, atheris and Python for every fuzzer: nothing is shared between the
# five runs, so running them side by side is what shortens the build.
cd "$(dirname "$0")/.."
if [ -z "${IRMODEL_FUZZ_SKIP_INSTALL:-}" ]; then
  pip3 install .
fi

compile_one() {
  local fuzzer=$1 name excludes
  name=$(basename "$fuzzer" .py)
  # The harnesses import every module of irmodel and wirefmt (fuzz/_harness.import_all) and
  # irmodel reads opschemas.json: collect them all.  --paths: _harness.py and the checkout.
  # PyInstaller follows imports inside functions too, so the toolkit's reference targets
  # would pull onnx, onnxruntime and hypothesis into every fuzzer: left out where unused
  # (only fuzz_ref_diff runs onnx and protobuf), which also keeps a build to about a minute.
  excludes="--exclude-module onnxruntime --exclude-module hypothesis --exclude-module pytest"
  excludes="$excludes --exclude-module irmodel.cli --exclude-module irmodel.fuzz.runner"
  excludes="$excludes --exclude-module irmodel.fuzz._worker --exclude-module irmodel.fuzz.strategies"
  if [ "$name" != fuzz_ref_diff ]; then
    excludes="$excludes --exclude-module onnx --exclude-module google.protobuf"
  fi
  # shellcheck disable=SC2086  # $excludes is a list of flags
  compile_python_fuzzer "$fuzzer" --paths "$PWD/fuzz" --paths "$PWD" \
    --collect-all irmodel --collect-all wirefmt $excludes
  cp fuzz/onnx.dict "$OUT/$name.dict"
  sed "s/^dict = onnx.dict/dict = $name.dict/" fuzz/fuzz.options > "$OUT/$name.options"
}
export -f compile_one

# xargs exits non-zero if any compile failed, which stops this script (bash -e).
printf '%s\n' fuzz/fuzz_*.py | xargs -P "${IRMODEL_FUZZ_JOBS:-$(nproc)}" -I{} bash -eu -c 'compile_one "$1"' _ {}
python3 fuzz/make_seed_corpus.py "$OUT"
