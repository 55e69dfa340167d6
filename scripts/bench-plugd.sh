#!/bin/bash
# racehorse plugd and upstream cpuplugd side by side on one config for DURATION seconds
# (default 600): CPU ticks (utime+stime from /proc/PID/stat) and RSS of each daemon.
# The config keeps the CPU count fixed (CPU_MIN = all CPUs) so that both evaluate the seed's
# rules every second and neither changes the machine. Needs root (both take /run locks).
#
#   CPUPLUGD=/tmp/cpuplugd-build/cpuplugd bash scripts/bench-plugd.sh 600
#
# Building cpuplugd (s390-tools, builds and runs on x86-64 unmodified):
#   racehorse's search tool: fetch github:ibm-s390-linux/s390-tools  → G=<git dir>
#   mkdir -p /tmp/cpuplugd-build/src
#   git --git-dir=$G archive c66495888dc82070512655ab81ae2c9a13713e9f | tar -x -C /tmp/cpuplugd-build/src
#   make -C /tmp/cpuplugd-build/src/cpuplugd && cp /tmp/cpuplugd-build/src/cpuplugd/cpuplugd /tmp/cpuplugd-build/
set -eu
DUR=${1:-600}
RH=${RACEHORSE:-$(dirname "$0")/../target/release/racehorse}
UP=${CPUPLUGD:?set CPUPLUGD to the cpuplugd binary}
D=$(mktemp -d)
N=$(nproc --all)
cat > "$D/seed.conf" <<CONF
UPDATE="1"
CPU_MIN="$N"
CPU_MAX="0"
HOTPLUG="(loadavg > onumcpus + 0.75) & (idle < 10.0)"
HOTUNPLUG="(loadavg < onumcpus - 0.25) | (idle > 50)"
CONF
rm -f /run/cpuplugd.pid
"$RH" plugd -c "$D/seed.conf" -f --pid-file "$D/rh.pid" --lock-file "$D/rh.lock" --state-file "$D/rh.state" 2> "$D/rh.log" &
RP=$!
"$UP" -c "$D/seed.conf" -f > "$D/up.log" 2>&1 &
UPP=$!
trap 'kill -TERM $RP $UPP 2>/dev/null || true' EXIT
sleep 3
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
R0=$(ticks $RP); U0=$(ticks $UPP); T0=$(date +%s.%N)
sleep "$DUR"
R1=$(ticks $RP); U1=$(ticks $UPP); T1=$(date +%s.%N)
HZ=$(getconf CLK_TCK)
for row in "racehorse-plugd $RP $R0 $R1" "cpuplugd $UPP $U0 $U1"; do
    set -- $row
    awk -v name="$1" -v t="$(( $4 - $3 ))" -v hz="$HZ" -v w="$(echo "$T1 - $T0" | bc)" \
        -v rss="$(awk '/VmRSS/{print $2}' /proc/$2/status)" -v anon="$(awk '/RssAnon/{print $2}' /proc/$2/status)" \
        'BEGIN { printf "%-16s cpu %.3f s in %.0f s = %.4f%% of one CPU; RSS %d kB (anonymous %d kB)\n", name, t/hz, w, 100*t/hz/w, rss, anon }'
done
