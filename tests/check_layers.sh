#!/usr/bin/env bash
# Proves that the one-way flow of docs/architecture.md holds in the includes:
#   proto/ <- libprof/ (capture)      proto/ <- analysis/{model <- metrics <- rules <- reports}
#   <- analysis/commands <- viewer-cli/ (profview)
# and that only libprof/cupti/ (and the tests of that adapter) includes CUPTI's headers.
# Usage: check_layers.sh REPO_ROOT. Prints every violation; exits 1 if there is one.
set -euo pipefail
cd "$1"
status=0
fail() { echo "layer violation: $*"; status=1; }

# includes FILE: the quoted include paths of a source file.
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

rank_of() {  # the layer rank of an analysis path; commands (the library's front) is the top
  case $1 in
    analysis/model/*) echo 0 ;; analysis/metrics/*) echo 1 ;; analysis/rules/*) echo 2 ;;
    analysis/reports/*) echo 3 ;; analysis/*) echo 4 ;; *) echo -1 ;;
  esac
}

while IFS= read -r file; do
  while IFS= read -r inc; do
    case $file in
      proto/*)
        [[ $inc == proto/* || $inc != */* ]] || fail "$file includes $inc (proto/ stands alone)" ;;
      libprof/*)
        [[ $inc == analysis/* || $inc == viewer-cli/* || $inc == collector/* ]] &&
          fail "$file includes $inc (capture must not depend on analysis or tools)" ;;
      analysis/*)
        [[ $inc == libprof/* || $inc == collector/* || $inc == viewer-cli/* ]] &&
          fail "$file includes $inc (the analysis depends only on proto/)"
        if [[ $inc == analysis/* ]] && (($(rank_of "$inc") > $(rank_of "$file"))); then
          fail "$file includes $inc (a lower layer includes a higher one)"
        fi ;;
      viewer-cli/*)
        [[ $inc == libprof/* || $inc == collector/* ]] && fail "$file includes $inc" ;;
    esac
  done < <(includes "$file")
  # bench/device/cupti_floor.cc measures CUPTI alone, without libprof: it is CUPTI's client too.
  if [[ $file != libprof/cupti/* && $file != tests/libprof/* && $file != bench/device/* ]] &&
     grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]cupti' "$file"; then
    fail "$file includes a CUPTI header (only libprof/cupti/ may)"
  fi
done < <(git ls-files -- '*.h' '*.cc' 2>/dev/null || find proto libprof analysis viewer-cli tests bench samples -name '*.h' -o -name '*.cc')
if ((status == 0)); then echo "OK: includes follow the layers"; fi
exit $status
