#!/usr/bin/env bash
# Example: a shell job whose scratch files live in a pool and go when the job ends.
#
#   job.sh POOL
#
# poolctl mkjob makes a folder job-<uuid> held for as long as this script runs (--pid $$);
# everything the job puts there goes once the script has exited and nobody uses it any more,
# also when the job is killed.
set -euo pipefail
poolctl=${POOLCTL:-poolctl}
pool=${1:?usage: job.sh POOL}

job=$("$poolctl" mkjob --pid $$ "$pool")
seq 1 100000 >"$job/numbers"
sort -rn "$job/numbers" >"$job/sorted"
echo "largest: $(head -n 1 "$job/sorted")"
echo "count: $(wc -l <"$job/sorted")"
"$poolctl" ls "$job"
