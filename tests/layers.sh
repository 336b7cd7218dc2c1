#!/usr/bin/env bash
# The floors of engine/ (core, lab, cli; Makefile): each compiles seeing only its own headers and
# those below, so a core file that includes a lab or cli header, or a lab file that includes a cli
# header, does not build. Checked on probe files compiled with the Makefile's own flags, and on the
# real build rules (make -n), so a Makefile that widens a floor's include path fails here.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
B=${BUILD:-build}
cuda=$(make -s print-CUDA_HOME)
for floor in core lab cli; do
  eval "inc_$floor=\"\$(make -s print-INC_$floor)\""
done
probe() { # FLOOR HEADER: 0 when a file of FLOOR that includes HEADER compiles
  local var="inc_$1"
  printf '#include "%s"\nint probe_%s;\n' "$2" "$1" >"$tmp/p.c"
  $CC -std=c11 -fsyntax-only -I"$cuda/include" ${!var} "$tmp/p.c" >"$tmp/err" 2>&1
}
# One header of each floor (every one of them exists: the probe's control).
for h in engine/core/pick.h engine/lab/report.h engine/cli/cli.h; do
  [ -f "$h" ] && pass "$h exists" || fail "$h exists"
done
probe core pick.h && pass "core sees core's headers" || fail "core sees core's headers" "$(cat "$tmp/err")"
probe lab pick.h && probe lab report.h && pass "lab sees core's and lab's headers" || fail "lab sees core's and lab's headers" "$(cat "$tmp/err")"
probe cli report.h && probe cli cli.h && pass "cli sees every floor's headers" || fail "cli sees every floor's headers" "$(cat "$tmp/err")"
probe core report.h && fail "a core file including a lab header fails to build" || pass "a core file including a lab header fails to build"
probe core cli.h && fail "a core file including a cli header fails to build" || pass "a core file including a cli header fails to build"
probe lab cli.h && fail "a lab file including a cli header fails to build" || pass "a lab file including a cli header fails to build"
# Every file is in one floor and nothing is left in engine/ itself.
loose=$(find engine -maxdepth 1 -type f -name '*.[ch]')
[ -z "$loose" ] && pass "no source outside the floors" || fail "no source outside the floors" "$loose"
# The build's own rules use those include paths (the real compile lines).
for floor in core lab; do
  f=$(ls engine/$floor/*.c | head -n 1)
  o=$B/obj/${f#engine/}; o=${o%.c}.o
  line=$(make -n -B -s B="$B" "$o" 2>/dev/null | grep -- "-c $f" | head -n 1)
  case $floor in
    core) bad='-Iengine/lab|-Iengine/cli' ;;
    lab) bad='-Iengine/cli' ;;
  esac
  if [ -n "$line" ] && ! grep -qE -- "$bad" <<<"$line" && grep -q -- "-Iengine/$floor" <<<"$line"; then
    pass "the build compiles $floor's files with $floor's include path"
  else
    fail "the build compiles $floor's files with $floor's include path" "$line"
  fi
done
# The library is the core floor alone: no object of lab or cli in libengine.a.
objs=$(make -s print-CORE_OBJ)
case "$objs" in *obj/lab/*|*obj/cli/*) fail "libengine is built of core's objects only" "$objs" ;; *) pass "libengine is built of core's objects only" ;; esac
# Each floor's sources call nothing of a floor above them: the objects' undefined symbols that a
# higher floor defines (a prototype written by hand instead of the header would pass the include check).
if command -v nm >/dev/null && [ -d "$B/obj/core" ] && [ -d "$B/obj/lab" ]; then
  defs() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF==3{print $3}' | sort -u; }
  undefs() { nm -u "$@" 2>/dev/null | awk '{print $NF}' | sort -u; }
  up_lab=$(comm -12 <(undefs "$B"/obj/core/*.o) <(defs "$B"/obj/lab/*.o "$B"/obj/cli/*.o))
  up_cli=$(comm -12 <(undefs "$B"/obj/lab/*.o) <(defs "$B"/obj/cli/*.o))
  [ -z "$up_lab" ] && pass "core's objects call nothing of lab or cli" || fail "core's objects call nothing of lab or cli" "$up_lab"
  [ -z "$up_cli" ] && pass "lab's objects call nothing of cli" || fail "lab's objects call nothing of cli" "$up_cli"
else
  skip "the floors' symbols" "no nm or no build/obj"
fi
# Core neither prints nor exits: no object of it names exit, stdout, stderr or the printing calls
# (a message goes into an err_t, a report to a callback or a FILE the caller gives).
if command -v nm >/dev/null && [ -d "$B/obj/core" ]; then
  bad=$(for o in "$B"/obj/core/*.o; do nm -u "$o" | awk -v f="${o##*/}" '$2 ~ /^(exit|_exit|printf|puts|putchar|perror|vprintf|stdout|stderr)$/ {print f": "$2}'; done)
  [ -z "$bad" ] && pass "core's objects name no exit, stdout, stderr or printf" || fail "core's objects name no exit, stdout, stderr or printf" "$bad"
else
  skip "core prints nothing" "no nm or no $B/obj/core"
fi
# Core never stops the process for lack of memory: it allocates with util.h's try_* family and
# hands the failure back (ENGINE_ERROR_OUT_OF_MEMORY from the library). No object of it names the
# aborting family (engine/lab/xalloc.c: x*, sb_init, read_file, utc_now, path_join, path_dirname),
# configlist.h's entries_resolve, or abort (exit is the check above).
aborting='xmalloc|xcalloc|xrealloc|xstrdup|xstrndup|xasprintf|xoom|util_set_oom|sb_init|read_file|utc_now|path_join|path_dirname|entries_resolve|entries_expand|abort'
if command -v nm >/dev/null && [ -d "$B/obj/core" ]; then
  bad=$(for o in "$B"/obj/core/*.o; do nm -u "$o" | awk -v f="${o##*/}" -v re="^($aborting)\$" '$2 ~ re {print f": "$2}'; done)
  [ -z "$bad" ] && pass "core's objects name none of the aborting allocators (x*, sb_init, read_file, abort)" || fail "core's objects name none of the aborting allocators (x*, sb_init, read_file, abort)" "$bad"
else
  skip "core never aborts for memory" "no nm or no $B/obj/core"
fi
# Core's writable globals are the ones tests/core_globals.txt lists with why each is not per-context
# (read-only after a once-init, set before threads, atomic, per thread): a new one fails here.
if command -v objdump >/dev/null && [ -d "$B/obj/core" ]; then
  found=$(for o in "$B"/obj/core/*.o; do objdump -t "$o" | awk -v f="${o##*/}" 'NF >= 5 && $(NF-2) ~ /^\.(bss|data|tbss|tdata)$/ && $NF != $(NF-2) {print f, $NF}'; done | sort -u)
  listed=$(grep -v '^#' tests/core_globals.txt | awk 'NF {print $1, $2}' | sort -u)
  extra=$(comm -23 <(echo "$found") <(echo "$listed"))
  gone=$(comm -13 <(echo "$found") <(echo "$listed"))
  [ -z "$extra" ] && pass "core's writable globals are each listed in tests/core_globals.txt" || fail "core's writable globals are each listed in tests/core_globals.txt" "not listed: $extra"
  [ -z "$gone" ] && pass "tests/core_globals.txt lists no global core no longer has" || fail "tests/core_globals.txt lists no global core no longer has" "gone: $gone"
else
  skip "core's globals" "no objdump or no $B/obj/core"
fi
# The library's SONAME carries engine.h's major version, and what links against it asks for that.
major=$(sed -n 's/^#define ENGINE_VERSION_MAJOR \([0-9]*\)/\1/p' include/engine.h)
if command -v readelf >/dev/null && [ -f "$B/libengine.so" ]; then
  so=$(readelf -d "$B/libengine.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  [ "$so" = "libengine.so.$major" ] && pass "libengine.so's SONAME is libengine.so.$major (engine.h's major)" || fail "libengine.so's SONAME is libengine.so.$major (engine.h's major)" "SONAME: $so"
  [ -f "$B/libengine.so.$major" ] && cmp -s "$B/libengine.so" "$B/libengine.so.$major" && pass "$B/libengine.so.$major is the library" || fail "$B/libengine.so.$major is the library"
  need=$(readelf -d "$B/gpu_lib" 2>/dev/null | grep -o 'libengine[^]]*')
  [ "$need" = "libengine.so.$major" ] && pass "a program linked against it needs libengine.so.$major" || fail "a program linked against it needs libengine.so.$major" "NEEDED: $need"
else
  skip "libengine's SONAME" "no readelf or no $B/libengine.so"
fi
# A source file past ~900 lines (what one reader holds) says why at its top: a line of its opening
# comment (first 20 lines) starting "Long:" ("* Long:", "# Long:"). Data files are not source.
long=$(git ls-files 2>/dev/null | grep -E '\.(c|h|cu|cuh|py|sh)$' | while read -r f; do
  [ -f "$f" ] && [ "$(wc -l <"$f")" -gt 900 ] && ! head -n 20 "$f" | grep -qE '^[ /*#]*Long:' && echo "$f ($(wc -l <"$f") lines)"
done)
[ -z "$long" ] && pass "every source file over 900 lines says why at its top (Long:)" || fail "every source file over 900 lines says why at its top (Long:)" "$long"
summary
