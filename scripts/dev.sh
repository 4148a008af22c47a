#!/usr/bin/env bash
# Set up a virtual environment, then run TritonForge's main job on an example or its tests.
#
#   bash scripts/dev.sh demo [PROBLEM.py]   optimize an example (on the GPU if there is one,
#                                           in Triton's interpreter otherwise)
#   bash scripts/dev.sh test [PYTEST ARGS]  run the test suite (GPU tests skip without a GPU)
#
# Environment: TF_VENV (default .venv), TF_EXTRA (extra pip requirements, e.g. "triton==3.6.0
# numpy<2"), TF_TORCH (what to install when no torch is importable).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TF_VENV:-.venv}

pip_install() {
  # The local package mirror prints a warning per missing folder: keep only real news.
  "$VENV/bin/python" -m pip install -q "$@" 2>&1 | { grep -v "is ignored: it is neither" || true; }
  return "${PIPESTATUS[0]}"
}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    # Reuse a torch that is already installed (a user's CUDA build must never be replaced).
    if python3 -c "import torch" >/dev/null 2>&1; then
      python3 -m venv --system-site-packages "$VENV"
    else
      python3 -m venv "$VENV"
    fi
  fi
  local py="$VENV/bin/python"
  if ! "$py" -c "import torch" >/dev/null 2>&1; then
    if command -v nvidia-smi >/dev/null 2>&1; then
      pip_install "${TF_TORCH:-torch}"
    else
      # No GPU: any recent torch will do; 2.13.0's CPU build is at hand on our machines.
      pip_install "${TF_TORCH:-torch==2.13.0}"
    fi
  fi
  # shellcheck disable=SC2086
  pip_install -e ".[test]" ${TF_EXTRA:-}
  if ! "$py" -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; then
    # Triton 3.6's interpreter breaks on runtime loop bounds under numpy 2.
    "$py" - <<'PY' || pip_install "numpy<2"
import triton, numpy
old = tuple(int(x) for x in triton.__version__.split(".")[:2]) < (3, 7)
raise SystemExit(1 if old and int(numpy.__version__.split(".")[0]) >= 2 else 0)
PY
  fi
}

cmd=${1:-}
shift || true
case "$cmd" in
  demo)
    setup
    problem=${1:-examples/softmax.py}
    exec "$VENV/bin/tritonforge" optimize "$problem" --out "runs/$(basename "$problem" .py)-$(date +%Y%m%d-%H%M%S)"
    ;;
  test)
    setup
    exec "$VENV/bin/python" -m pytest -q "$@"
    ;;
  *)
    echo "usage: bash scripts/dev.sh demo [PROBLEM.py] | test [PYTEST ARGS]" >&2
    exit 2
    ;;
esac
