#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build for irmodel's Python harnesses (fuzz/fuzz_*.py).
# Run by .clusterfuzzlite/build.sh (or an OSS-Fuzz project's build.sh) with $SRC and $OUT set,
# from the root of the checkout.  For each harness: the fuzzer (compile_python_fuzzer),
# <target>_seed_corpus.zip (built by fuzz/make_seed_corpus.py), <target>.dict and <target>.options.
cd "$(dirname "$0")/.."
pip3 install .
for fuzzer in fuzz/fuzz_*.py; do
  name=$(basename "$fuzzer" .py)
  # irmodel imports its subpackages on first use and reads opschemas.json: collect it all
  compile_python_fuzzer "$fuzzer" --collect-all irmodel --collect-all wirefmt
  cp fuzz/onnx.dict "$OUT/$name.dict"
  sed "s/^dict = onnx.dict/dict = $name.dict/" fuzz/fuzz.options > "$OUT/$name.options"
done
python3 fuzz/make_seed_corpus.py "$OUT"
