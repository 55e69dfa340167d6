#!/usr/bin/env bash
# diskio against fio 3.x side by side in one racehorse run, on the same data: a 2 GiB image
# of random bytes behind a loop device with direct I/O (so neither tool reads the guest's
# page cache), read and written in place by both engines, alternating repetitions.
# Root only (losetup). Usage: bash scripts/bench-disk.sh [REPS]   (see BENCHMARKS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
work="$(mktemp -d /var/tmp/rh-bench-disk.XXXXXX)"
dev=""
cleanup() {
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
dd if=/dev/urandom of="$work/disk.img" bs=1M count=2048 status=none conv=fsync
dev="$(losetup -f --show --direct-io=on "$work/disk.img")"
echo "data: $work/disk.img on $dev (direct-io), reps $reps"
suite="$work/suite.toml"
{
  printf 'name = "diskio vs fio on %s"\nruntime = "10s"\nwarmup = "2s"\nreps = %s\n' "$dev" "$reps"
  for cfg in "randread|4k|io_uring|32" "randread|4k|psync|1" "read|1m|io_uring|8" "write|1m|io_uring|8"; do
    IFS='|' read -r phase bs engine depth <<<"$cfg"
    for tool in diskio fio; do
      printf '\n[[workload]]\nengine = "%s"\nphase = "%s"\nbs = "%s"\nsize = "1g"\ndirect = true\ntimed = true\n' \
        "$tool" "$phase" "$bs"
      printf 'ioengine = "%s"\niodepth = %s\ntarget = "%s"\ndestructive = true\n' "$engine" "$depth" "$dev"
    done
  done
} >"$suite"
cargo build --release --quiet
./target/release/racehorse run "$suite" --label "${LABEL:-disk-bench}" --quiet --dir "$work"
