#!/usr/bin/env bash
# Runs every ```sql example of USAGE.md's `profview export --format sqlite` section with the
# sqlite3 command line against a database exported from the sample traces, so that the examples
# cannot rot: each must run without error and return at least one row.
# Usage: sqlite_usage_queries.sh PROFVIEW USAGE_MD SAMPLE_TRACES_DIR WORK_DIR
set -euo pipefail
profview=$1 usage=$2 traces=$3 work=$4
command -v sqlite3 >/dev/null || { echo "sqlite_usage_queries: needs the sqlite3 command (apt-get install sqlite3)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
db="$work/samples.sqlite"
"$profview" export --format sqlite -o "$db" "$traces"/*.pb >/dev/null
# The ```sql blocks between the section's heading and the next "### " heading, one file each.
awk -v dir="$work" '
  /^### `profview export --format sqlite`/ { in_section = 1; next }
  /^### / { in_section = 0 }
  in_section && /^```sql$/ { n++; file = sprintf("%s/query%02d.sql", dir, n); in_block = 1; next }
  in_block && /^```$/ { in_block = 0; close(file); next }
  in_block { print > file }
' "$usage"
queries=("$work"/query*.sql)
[[ -e ${queries[0]} ]] || { echo "sqlite_usage_queries: no \`\`\`sql example found in $usage" >&2; exit 1; }
failed=0
for q in "${queries[@]}"; do
  if ! out=$(sqlite3 -bail -header -column "$db" < "$q" 2>&1); then
    echo "FAILED: $(head -1 "$q")"; echo "$out"; failed=1; continue
  fi
  rows=$(sqlite3 -bail "$db" < "$q" | wc -l)
  if ((rows == 0)); then
    echo "NO ROWS: $(head -1 "$q")"; failed=1; continue
  fi
  echo "ok ($rows rows): $(head -1 "$q")"
  # (Not `echo | head`: under pipefail, echo's SIGPIPE when head stops early failed the test
  # at random on long results.)
  head -5 <<<"$out"
done
echo "${#queries[@]} example queries"
exit $failed
