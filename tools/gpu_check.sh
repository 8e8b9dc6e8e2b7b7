#!/usr/bin/env bash
# The GPU check of issue 21 in one call, on a machine with an NVIDIA GPU and no network.
#
# Given jaxlib, jax-cuda13-pjrt, jax-cuda13-plugin and jax 0.10.2 installed in SITE (by
# /work/shared/gpu/unpack_wheels.sh; default /tmp/site), it runs from the repository root:
#   1. the GPU tests (tests/test_gpu.py) and the CUDA lowering tests with lamina;
#   2. benchmarks/gpu.py: lamina beside JAX 0.10.2 on the same jaxlib and GPU.
# lamina runs with PYTHONPATH=<a folder hiding jax>:SITE:<lamina's src folders>, so that
# the machine's own `jax` (and the one in SITE) cannot be imported; JAX runs with
# PYTHONPATH=SITE. numpy, scipy, ml_dtypes, opt_einsum and pytest must be importable by
# python3 (PYTHON overrides it). Output goes to stdout and to OUT_DIR (default $OUT when
# set, else /tmp/gpu_check): tests.txt, benchmark.txt.
#
# Usage: tools/gpu_check.sh [SITE] [--repeats N] [--no-bench]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
site=/tmp/site
repeats=1
bench=1
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats=$2; shift 2 ;;
    --no-bench) bench=0; shift ;;
    *) site=$1; shift ;;
  esac
done
python=${PYTHON:-python3}
out_dir=${OUT_DIR:-${OUT:-/tmp/gpu_check}}
mkdir -p "$out_dir"

if [ ! -d "$site/jaxlib" ]; then
  echo "gpu_check: no jaxlib in $site; unpack the wheels first (unpack_wheels.sh)" >&2
  exit 2
fi
missing=$("$python" - <<'EOF'
import importlib.util
print(" ".join(m for m in ("numpy", "scipy", "ml_dtypes", "opt_einsum", "pytest")
               if importlib.util.find_spec(m) is None))
EOF
)
if [ -n "$missing" ]; then
  echo "gpu_check: $python lacks: $missing (install or put their wheels in $site)" >&2
  exit 2
fi

# A folder whose `jax` package refuses to load: first on lamina's path.
hide=$(mktemp -d)
mkdir -p "$hide/jax"
echo 'raise ImportError("jax is hidden from lamina runs (tools/gpu_check.sh)")' >"$hide/jax/__init__.py"
src=$(ls -d "$root"/src "$root"/packages/*/src | paste -sd: -)
lamina_path="$hide:$site:$src"

# The interpreter the benchmark harness runs JAX with.
jax_python="$hide/jax-python"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$site" "$python" >"$jax_python"
chmod +x "$jax_python"

cd "$root" || exit 2
echo "== devices"
PYTHONPATH=$lamina_path "$python" -c 'import lamina; print("lamina:", lamina.devices())'
PYTHONPATH=$site "$python" -c 'import jax; print("jax", jax.__version__, jax.devices())'

echo "== tests"
PYTHONPATH=$lamina_path "$python" -m pytest -p no:cacheprovider --import-mode=importlib -q -rs \
  tests/test_gpu.py tests/test_lowering_platforms.py packages/lax/tests/test_gpu_lowering.py \
  2>&1 | tee "$out_dir/tests.txt"
status=${PIPESTATUS[0]}

if [ "$bench" = 1 ]; then
  echo "== benchmark (lamina beside JAX 0.10.2)"
  PYTHONPATH=$lamina_path "$python" benchmarks/gpu.py --jax-python "$jax_python" \
    --repeats "$repeats" 2>&1 | tee "$out_dir/benchmark.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
rm -rf "$hide"
exit "$status"
