#!/usr/bin/env bash
# The alert rules of docs/monitoring.md as an admin pastes them: promtool check rules finds them
# valid, and promtool test rules (alerts_test.yml) sees each alert fire on the case it is for and
# not on its neighbour below the line.
#
#   rules_test.sh RULES   (docs/poolfs-alerts.yml)
set -euo pipefail
# shellcheck source=tests/shell/testlib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../shell/testlib.sh"
rules=$1
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

command -v promtool >/dev/null ||
    fail "promtool is missing: install the Debian package prometheus (scripts/test does: TEST_PACKAGES in scripts/lib.sh)"
out=$(promtool check rules "$rules" 2>&1) || fail "promtool check rules: $out"
grep -q 'SUCCESS: 6 rules found' <<<"$out" || fail "promtool check rules: $out"
# alerts_test.yml names the rules file relative to itself, as ../../docs/poolfs-alerts.yml.
[[ $(readlink -f "$here/../../docs/poolfs-alerts.yml") == $(readlink -f "$rules") ]] ||
    fail "alerts_test.yml would test another rules file than $rules"
out=$(promtool test rules "$here/alerts_test.yml" 2>&1) || fail "promtool test rules: $out"
echo "$out"
