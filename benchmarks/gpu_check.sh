#!/bin/sh
# The GPU check as one prepared command (docs/triton.md, "The GPU check").
#
#   sh benchmarks/gpu_check.sh wheels   # here, with network: kiln's dependencies the GPU
#                                       # image lacks (bytecode, cffi, pycparser) into .whl/
#   sh benchmarks/gpu_check.sh [ARGS]   # there, from the repository root, no network:
#                                       # installs .whl/ (if present) under /tmp/kiln_site,
#                                       # checks the imports, runs benchmarks/gpu_check.py
#                                       # --budget $BUDGET ARGS, then the CuPy tests
#
# OUT (default gpu_check_out): where gpu_check.json, gpu_check.md and the logs go.
# BUDGET (default 420): seconds for gpu_check.py; the tests after it get TEST_BUDGET (120).
# PYTHON (default python3: the GPU image's, with triton, CuPy and torch; Python 3.12).
# Exit status: gpu_check.py's (1 when a check failed or was not run), else the tests'.
set -u
cd "$(dirname "$0")/.." || exit 2
PY=${PYTHON:-python3}
OUT=${OUT:-gpu_check_out}
if [ "${1:-}" = wheels ]; then
    # (the GPU image has numpy, jinja2, pytest, hypothesis, triton, cupy and torch; .whl/
    # is in .gitignore: a copy of the tree to the GPU machine takes it where asked to carry it)
    exec "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl "bytecode>=0.16" "cffi>=1.17" pycparser
fi
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/kiln_site .whl/*.whl || exit 2
    PYTHONPATH=/tmp/kiln_site${PYTHONPATH:+:$PYTHONPATH}
fi
# the repository itself on the path (pip install -e would ask the network for the test extra)
PYTHONPATH=$(pwd)${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH PYTHONUNBUFFERED=1
"$PY" -c "import sys, numpy, bytecode, cffi, jinja2, pytest, triton, kiln; print(sys.version.split()[0], 'numpy', numpy.__version__, 'triton', triton.__version__)" \
    > "$OUT/imports.log" 2>&1
r=$?; cat "$OUT/imports.log"; [ "$r" = 0 ] || exit 2
{ "$PY" benchmarks/gpu_check.py --out "$OUT" --budget "${BUDGET:-420}" "$@"; echo "$?" > "$OUT/rc"; } 2>&1 \
    | tee "$OUT/gpu_check.log"
rc=$(cat "$OUT/rc" 2>/dev/null || echo 1)
case " $* " in
    *" --dry-run "*) exit "$rc" ;;     # (no GPU: the CuPy tests would skip)
esac
# the CuPy tests (-k cupy: the rows on real CuPy arrays; the stand-in's run in CI)
timeout "${TEST_BUDGET:-120}" "$PY" -m pytest tests/runtime/test_triton_cupy.py tests/ops/test_device_kernels.py \
    -k cupy -p no:cacheprovider -n 4 > "$OUT/tests.log" 2>&1
test_rc=$?
tail -30 "$OUT/tests.log"
[ "$rc" = 0 ] && exit "$test_rc"
exit "$rc"
