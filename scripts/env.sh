# Sourced by the scripts: point tch's build at the libtorch inside .venv's torch.
XQZ_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LIBTORCH_USE_PYTORCH=1
# No LIBTORCH_BYPASS_VERSION_CHECK: torch-sys skips its version check when the variable
# is set at all, even to 0, and the check is what catches a .venv torch other than 2.13.
export PATH="$XQZ_ROOT/.venv/bin:$PATH"
export VIRTUAL_ENV="$XQZ_ROOT/.venv"
export XQZ_PYTHON="$XQZ_ROOT/.venv/bin/python"
