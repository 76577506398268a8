# Sourced by the scripts: point tch's build at the libtorch inside .venv's torch.
XQZ_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LIBTORCH_USE_PYTORCH=1
export LIBTORCH_BYPASS_VERSION_CHECK=${LIBTORCH_BYPASS_VERSION_CHECK:-0}
export PATH="$XQZ_ROOT/.venv/bin:$PATH"
export VIRTUAL_ENV="$XQZ_ROOT/.venv"
export XQZ_PYTHON="$XQZ_ROOT/.venv/bin/python"
