#!/bin/bash
# step_time.sh LOG CMD...: runs CMD, then appends "SECONDS s  CMD" to LOG and
# exits with CMD's status.  make test times its steps with it, so that a CI
# run near its time limit says where the minutes go.
log=$1
shift
t0=$(date +%s)
"$@"
rc=$?
echo "$(($(date +%s) - t0)) s  $*" >>"$log"
exit $rc
