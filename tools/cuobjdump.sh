#!/usr/bin/env bash
# Where a cuobjdump that can print SASS is, for the tests that read it (tests/tc32.sh): its path on
# stdout, or exit 1. -sass runs nvdisasm, found beside cuobjdump or on PATH, so both must be there.
# Looked for on PATH, in CUDA_HOME/bin (a toolkit installed whole), then in PyPI's wheels
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (site-packages/nvidia/cuNN/bin, where a toolkit
# assembled from wheels, as on CI, keeps them; tools/deps.sh --with-tests installs them there).
#   usage: tools/cuobjdump.sh [CUDA_HOME]
cuda_home=${1:-${CUDA_HOME:-/usr/local/cuda}}
usable() { [ -x "$1" ] && { [ -x "$(dirname "$1")/nvdisasm" ] || command -v nvdisasm >/dev/null; }; }
for c in "$(command -v cuobjdump)" "$cuda_home/bin/cuobjdump" $(python3 - 2>/dev/null <<'PY'
import glob, importlib.util, os
spec = importlib.util.find_spec("nvidia")
for loc in (spec.submodule_search_locations if spec else []):
    print(*sorted(glob.glob(os.path.join(loc, "*", "bin", "cuobjdump")), reverse=True))
PY
); do
  if [ -n "$c" ] && usable "$c"; then echo "$c"; exit 0; fi
done
exit 1
