#!/bin/sh
# Generates ONNX's backend node tests with Debian's python3-onnx into OUTDIR (about 920 cases, a few
# seconds), then checks ridge's inferred output shapes against them with CHECKER.
# Usage: onnx_conformance.sh CHECKER OUTDIR
set -eu
checker=$1
outdir=$2
rm -rf "$outdir"
mkdir -p "$outdir"
# Debian's numpy 1.24 dropped aliases the generators still use; restore them first.
/usr/bin/python3 -c "import sys, numpy as np; np.float=float; np.int=int; np.bool=bool; np.object=object; \
sys.argv=['x','generate-data','-o','$outdir']; from onnx.backend.test.cmd_tools import main; main()" >/dev/null
exec "$checker" "$outdir/node"
