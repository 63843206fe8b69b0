#!/usr/bin/env bash
# scripts/commit_subjects, run by scripts/lint, can fail: in a throwaway repository, a subject of 73
# characters after the base fails it and one of 72 (also in multibyte characters) passes; no
# commit after the base passes; a base the clone lacks, and a folder that is no git checkout, are
# skipped with a message, not failed.
#   test_commit_subjects.sh SOURCEDIR
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 SOURCEDIR" >&2; exit 2; }
src=$1
# shellcheck source=tests/shell/testlib.sh
. "$src/tests/shell/testlib.sh"
check=$src/scripts/commit_subjects
tmp=$(mktemp -d /tmp/commit-subjects-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

repo=$tmp/repo
git init -q "$repo"
commit() {
    git -C "$repo" -c user.name=t -c user.email=t@example.org commit -q --allow-empty -m "$1"
}
# expect STATUS TEXT ARGS...: commit_subjects ARGS exits STATUS and prints TEXT.
expect() {
    local want=$1 text=$2 out rc=0
    shift 2
    out=$("$check" "$@" 2>&1) || rc=$?
    [[ $rc -eq $want ]] || fail "commit_subjects $*: exit $rc, expected $want: $out"
    [[ $out == *"$text"* ]] || fail "commit_subjects $*: no '$text' in: $out"
    echo "ok: exit $rc: $out" | head -n 1
}

commit "the base: $(printf 'x%.0s' {1..100})"
base=$(git -C "$repo" rev-parse --short HEAD)
expect 0 "0 commits since $base" --base "$base" "$repo"
commit "$(printf 'a%.0s' {1..72})"
expect 0 "every subject at most 72" --base "$base" "$repo"
commit "$(printf 'é%.0s' {1..72})"
expect 0 "every subject at most 72" --base "$base" "$repo"
commit "$(printf 'b%.0s' {1..73})"
expect 1 "subject of 73 characters" --base "$base" "$repo"
expect 0 "every subject at most 80" --base "$base" --max 80 "$repo"
expect 0 "skipped: 0123456789abc is not in this clone" --base 0123456789abc "$repo"
mkdir "$tmp/plain"
expect 0 "skipped: $tmp/plain is not a git checkout" "$tmp/plain"
echo "PASS"
