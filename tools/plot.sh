#!/usr/bin/env bash
# Plots (PNG, gnuplot) from a tune log or from a size sweep.
#
#   tools/plot.sh LOG.jsonl [--param NAME] [--out DIR]   # from `engine tune ... --log LOG.jsonl`
#       <stem>-rank.png   TFLOP/s of every point, best first, against its rank; cuBLAS as a line
#       <stem>-NAME.png   with --param NAME (a key of "configuration"): TFLOP/s against its value
#   tools/plot.sh --sizes SWEEP.csv [--out DIR]          # from `engine bench ... --sizes ... --format csv`
#       <stem>-sizes.png  TFLOP/s against problem size, one line per config and one for cuBLAS
#
# A tune log counts each key once: its stage-2 row, else its stage-1 row (tools/plot_data.py says
# exactly which); only status "ok" rows are drawn. <stem> is the input's name without its extension;
# DIR defaults to the input's directory. Prints the paths written.
# Exit codes: 0 ok; 2 bad input (usage, missing file, no plottable rows, unknown --param);
# 3 gnuplot missing. GNUPLOT=PATH picks the gnuplot binary.
set -u
here=$(cd "$(dirname "$0")" && pwd)

usage() {
  { echo usage:; sed -n "4,8p" "$0" | sed "s/^# \{0,1\}//"; } >&2
  exit 2
}
die() { echo "plot: $*" >&2; exit 2; }

mode=tune input='' param='' out=''
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) mode=sizes; [ $# -ge 2 ] || usage; input=$2; shift 2 ;;
    --param) [ $# -ge 2 ] || usage; param=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "$1: unknown option (see tools/plot.sh --help)" ;;
    *) [ -z "$input" ] || die "$1: only one input file"; input=$1; shift ;;
  esac
done
[ -n "$input" ] || usage
[ "$mode" = sizes ] && [ -n "$param" ] && die "--param applies to a tune log, not to --sizes"
[ -f "$input" ] || die "$input: no such file"
[ -n "$out" ] || out=$(dirname "$input")
mkdir -p "$out" || die "$out: cannot create directory"
gnuplot=${GNUPLOT:-gnuplot}
if ! command -v "$gnuplot" >/dev/null; then
  echo "plot: $gnuplot not found; install it: sudo apt-get install -y --no-install-recommends gnuplot-nox" >&2
  exit 3
fi
command -v python3 >/dev/null || die "python3 not found (it reads the input)"

stem=$(basename "$input"); stem=${stem%.*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$here/plot_data.py" "$mode" "$input" "$tmp" ${param:+"$param"} || exit 2

# Shared by every plot: the terminal (pngcairo when this gnuplot has it), no enhanced text, so the
# underscores in config names stay underscores, and a light grid.
cat >"$tmp/common.gp" <<'EOF'
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo noenhanced size 1000,600 font ",11"
} else {
  set terminal png noenhanced size 1000,600
}
set grid ytics lc rgb "#dddddd"
set key outside top center horizontal
set ylabel "TFLOP/s"
set yrange [0:*]
cublas = 0; has_cublas = 0
load "meta.gp"
cublas_label = sprintf("cuBLAS %.2f TFLOP/s", cublas)
EOF

# Each plot is drawn to plot.png in the scratch directory, then moved into place: no user path or
# name reaches gnuplot except through meta.gp, which quotes it.
draw() { # name gnuplot-commands
  printf 'set output "plot.png"\n%s\n' "$2" >"$tmp/draw.gp"
  (cd "$tmp" && "$gnuplot" common.gp draw.gp 2>"$tmp/gnuplot.err") ||
    { grep -v -e '^$' "$tmp/gnuplot.err" | sed 's/^/gnuplot: /' >&2; echo "plot: gnuplot failed on $1" >&2; exit 2; }
  grep -v -i -e fontconfig -e '^$' "$tmp/gnuplot.err" | sed 's/^/gnuplot: /' >&2
  mv "$tmp/plot.png" "$out/$1" || die "$out/$1: cannot write"
  echo "$out/$1"
}

if [ "$mode" = tune ]; then
  draw "$stem-rank.png" '
    set title title
    set xlabel "rank (best first)"
    set xrange [0:*]
    if (has_cublas) { set label 1 cublas_label at graph 0.99, first cublas right offset 0,0.8 }
    plot "rank.dat" using 1:2 with impulses lc rgb "#4477aa" notitle, \
         "" using 1:2 with points pt 7 ps 0.6 lc rgb "#4477aa" title "points (last stage, status ok)", \
         for [i=1:has_cublas] cublas with lines dt 2 lw 2 lc rgb "black" title "cuBLAS"'
  if [ -n "$param" ]; then
    # A tic at each value when there are few (or they are not numbers), gnuplot's own tics otherwise.
    draw "$stem-$param.png" '
      set title title
      set xlabel param
      set xrange [xlo:xhi]
      if (log2) { set logscale x 2 }
      if (has_cublas) { set label 1 cublas_label at graph 0.99, first cublas right offset 0,0.8 }
      if (categorical || few_values) {
        plot "param.dat" using 1:2:xtic(3) with points pt 7 ps 1.2 lc rgb "#4477aa" title "points (last stage, status ok)", \
             for [i=1:has_cublas] cublas with lines dt 2 lw 2 lc rgb "black" title "cuBLAS"
      } else {
        plot "param.dat" using 1:2 with points pt 7 ps 1.2 lc rgb "#4477aa" title "points (last stage, status ok)", \
             for [i=1:has_cublas] cublas with lines dt 2 lw 2 lc rgb "black" title "cuBLAS"
      }'
  fi
else
  draw "$stem-sizes.png" '
    set title title
    set xlabel "problem size (M = N = K, or MxNxK)"
    set key inside bottom right vertical
    if (log2) { set logscale x 2 }
    set offsets graph 0.03, graph 0.03, 0, 0
    plot for [i=1:n] sprintf("s%d.dat", i) using 1:2:xtic(3) with linespoints lw 2 pt 7 title names[i], \
         for [i=n+1:n+nref] sprintf("s%d.dat", i) using 1:2:xtic(3) with linespoints dt 2 lw 2 pt 6 lc rgb "black" title names[i]'
fi
