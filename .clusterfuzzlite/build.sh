#!/bin/bash -eu
# ClusterFuzzLite: build every harness of fuzz/ (see fuzz/build.sh and fuzz/README.md).
cd "$SRC/irmodel"
exec fuzz/build.sh
