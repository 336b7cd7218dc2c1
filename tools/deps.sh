#!/usr/bin/env bash
# Probe every build dependency, one line each. Missing Debian packages are installed when running as
# root; otherwise the exact command is printed and the build stops. The CUDA toolkit cannot come from
# apt here, so for it we only say where we looked.
#   usage: tools/deps.sh CUDA_HOME [--with-tests | --with-fuzz | --with-slurm]
#   (tests also need cmocka, gnuplot and GNU parallel, and use cuobjdump; make test-slurm needs Slurm
#   and MUNGE)
set -u
cuda_home=${1:-/usr/local/cuda}
want_tests=${2:-}
missing=()
ok() { printf '  \xe2\x9c\x93 %-10s %s\n' "$1" "$2"; }
no() { printf '  \xe2\x9c\x97 %-10s %s\n' "$1" "$2"; }

for h in cuda.h nvrtc.h cublas_v2.h; do
  if [ ! -f "$cuda_home/include/$h" ]; then
    no cuda "$cuda_home/include/$h not found: install the CUDA toolkit (12.x or 13.x) or set CUDA_HOME"
    exit 1
  fi
done
libdir=$cuda_home/lib64
[ -d "$libdir" ] || libdir=$cuda_home/lib
for l in libnvrtc.so libcublas.so; do
  if [ ! -e "$libdir/$l" ]; then
    no cuda "$libdir/$l not found: install the CUDA toolkit's NVRTC and cuBLAS libraries"
    exit 1
  fi
done
cuda_ver=$("$cuda_home/bin/nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
ok cuda "$cuda_home (${cuda_ver:-?})"

probe() { # name header package
  if [ -f "/usr/include/$2" ]; then ok "$1" "/usr/include/$2"; else missing+=("$3"); fi
}
need() { # package: add it to the missing ones once
  [[ " ${missing[*]} " == *" $1 "* ]] || missing+=("$1")
}
probe_cmd() { # name command package [--version text that must appear]
  local path
  path=$(command -v "$2") || { need "$3"; return; }
  if [ -n "${4:-}" ] && ! "$2" --version 2>/dev/null | grep -q "$4"; then
    no "$1" "$path is not $4 (moreutils ships another parallel)"; need "$3"; return
  fi
  ok "$1" "$path"
}
probe jansson jansson.h libjansson-dev
if [ "$want_tests" = --with-tests ]; then
  probe cmocka cmocka.h libcmocka-dev
  probe_cmd gnuplot gnuplot gnuplot-nox       # tools/plot.sh
  probe_cmd parallel parallel parallel 'GNU parallel'  # the shard test in tests/scripts.sh
  # cuobjdump (and nvdisasm, which its -sass runs): tests/tc32.sh reads the tensor-core kernels' SASS
  # with them. A toolkit assembled from PyPI's wheels (as here and on CI) has neither; the wheels
  # nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm of the toolkit's major version carry them (a few MB;
  # tools/cuobjdump.sh finds them there). Not a stop where they cannot be had: those checks are then
  # counted as skipped, with the reason.
  major=${cuda_ver%%.*}
  pipcmd=(python3 -m pip install --quiet "nvidia-cuda-cuobjdump==$major.*" "nvidia-cuda-nvdisasm==$major.*")
  if p=$(bash "$(dirname "$0")/cuobjdump.sh" "$cuda_home"); then
    ok cuobjdump "$p"
  elif [ "$(id -u)" = 0 ] && [ -n "$cuda_ver" ] && "${pipcmd[@]}" >/dev/null 2>&1 &&
    p=$(bash "$(dirname "$0")/cuobjdump.sh" "$cuda_home"); then
    ok cuobjdump "$p (installed: ${pipcmd[*]})"
  else
    no cuobjdump "not found (tc32's SASS checks will be skipped); run as root: ${pipcmd[*]}, or install the CUDA toolkit's cuobjdump"
  fi
fi
if [ "$want_tests" = --with-fuzz ]; then # make fuzz: clang and its libFuzzer runtime
  probe_cmd clang clang clang
  rt=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)
  if [ -f "$rt" ]; then ok libfuzzer "$rt"; else missing+=(libclang-rt-dev); fi
fi
if [ "$want_tests" = --with-slurm ]; then # make test-slurm: a controller, a node daemon and MUNGE on localhost
  for c in slurmctld slurmd sbatch squeue scontrol; do probe_cmd "$c" "$c" slurm-wlm; done
  probe_cmd munged munged munge
  probe_cmd munge munge munge
fi

[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "  installing: ${missing[*]}"
  if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
         { apt-get update >/dev/null 2>&1 &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }; }; then
    no deps "could not install ${missing[*]}; run: $cmd"
    exit 1
  fi
  for p in "${missing[@]}"; do ok "$p" installed; done
  exit 0
fi
no deps "missing ${missing[*]}; run as root: sudo $cmd"
exit 1
