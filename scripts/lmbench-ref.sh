#!/usr/bin/env bash
# lmbench-ref.sh — reference numbers from the real lmbench3 for BENCHMARKS.md.
#
# Runs a fixed set of lmbench3 micro-benchmarks once each, on this machine,
# so that racehorse's `micro` engine can be compared side by side with the
# original tools. It is a reference for BENCHMARKS.md only; nothing in the
# project depends on it.
#
# lmbench3 is NOT part of this repository and this script neither fetches
# nor builds it: lmbench3 is built from its source separately, in a temporary
# folder outside the repo (e.g. /tmp/lmbench-src), and this script only runs
# the resulting binaries. Point LMBENCH_BIN at the directory holding them.
#
# Usage:
#   scripts/lmbench-ref.sh > lmbench-ref.txt
#   LMBENCH_BIN=/tmp/lmbench-src/bin/x86_64-linux-gnu SIZES="16k 4m" \
#       LAT_MB=64 PIN= scripts/lmbench-ref.sh
#
# Environment:
#   LMBENCH_BIN  directory with the lmbench binaries
#                (default: first /tmp/lmbench-src/bin/*/ holding lat_syscall)
#   SIZES        sizes for bw_mem / bw_file_rd / bw_mmap_rd, lmbench syntax
#                (plain bytes, k or m suffix; default "16k 256k 4m 256m")
#   LAT_MB       array size in MB for lat_mem_rd (default 256). Slow: on the
#                2-vCPU dev VM, 256 took ~3 min for stride 64 and ~14 min
#                for the random (-t) walk; LAT_MB=64 is far quicker.
#   PIN          CPU list for `taskset -c` around every tool (default 1;
#                set it empty, PIN=, to run unpinned)
#   TMPDIR       where the scratch directory goes (default /tmp)
#   TOOL_TIMEOUT seconds before one tool invocation is killed (default 1800);
#                a killed lat_mem_rd still reports the points it finished.
#   ENOUGH, TIMING_O, LOOP_O
#                lmbench timing calibration; when unset they are measured
#                once with lmbench's own `enough`, `timing_o`, `loop_o`
#                (what lmbench's config-run does) and exported to every tool.
#
# Output (stdout): one line per result, `name<TAB>value<TAB>unit`.
#   latencies in us (lmbench "microseconds"), bandwidths in MB/s (MB = 10^6
#   bytes, as lmbench), lat_mem_rd in ns per load. Progress, calibration and
#   warnings go to stderr. A result the tool did not print is left out
#   (with a warning) and the exit status is 1. Known case: lat_sig prot
#   reports (fault cost - catch cost) and prints nothing when that is <= 0,
#   which happens now and then on a noisy machine.
#   Run it on an otherwise idle machine: anything else running (even on the
#   other CPU) visibly moves the small-size bandwidth and select numbers.
#
# Method: lmbench's defaults — every tool takes the median of 11 repetitions
# (TRIES), except lat_mem_rd, which reports the minimum. The invocations
# mirror lmbench's scripts/lmbench (with -P 1). Note bw_mem's copy ops
# (cp, fcp, bcopy) touch 2 x SIZE bytes (source + destination), and lmbench
# itself runs those at half the sizes of the other ops; here every op gets
# the same SIZE.
#
# Side effects: writes /tmp/hello (lat_proc exec/shell hard-code that path,
# lmbench's own script copies it there too) and a scratch directory with a
# data file of max(SIZES, 4m) bytes; lat_select tcp listens on TCP port
# 31233 for the duration of that test (stock lmbench binds it on all
# interfaces, not just loopback). All of it is removed on exit.

set -euo pipefail

SIZES=${SIZES:-"16k 256k 4m 256m"}
LAT_MB=${LAT_MB:-256}
PIN=${PIN-1}
TOOL_TIMEOUT=${TOOL_TIMEOUT:-1800}

die() { echo "lmbench-ref: $*" >&2; exit 2; }
log() { echo "lmbench-ref: [${SECONDS}s] $*" >&2; }

if [[ -z "${LMBENCH_BIN:-}" ]]; then
    for d in /tmp/lmbench-src/bin/*/; do
        if [[ -x "$d/lat_syscall" ]]; then LMBENCH_BIN=${d%/}; break; fi
    done
fi
[[ -n "${LMBENCH_BIN:-}" && -x "$LMBENCH_BIN/lat_syscall" ]] ||
    die "no lmbench binaries found; set LMBENCH_BIN to the built bin/<os>/ directory"
for t in lat_syscall lat_select lat_sig lat_proc lat_pipe lat_ctx lat_mmap \
         bw_mem bw_file_rd bw_mmap_rd lat_mem_rd hello enough timing_o loop_o; do
    [[ -x "$LMBENCH_BIN/$t" ]] || die "missing $LMBENCH_BIN/$t"
done
command -v timeout >/dev/null || die "timeout(1) not found"
if [[ -n "$PIN" ]]; then
    command -v taskset >/dev/null || die "taskset not found (install util-linux) or set PIN="
    PINCMD=(taskset -c "$PIN")
else
    PINCMD=()
fi

# lmbench size syntax -> bytes (k = 1024, m = 1024^2, as lmbench's bytes()).
to_bytes() {
    local s=$1 n
    case $s in
        *[kK]) n=$(( ${s%[kK]} * 1024 )) ;;
        *[mM]) n=$(( ${s%[mM]} * 1024 * 1024 )) ;;
        *[!0-9]*|'') die "bad size '$s' (use bytes, k or m)" ;;
        *) n=$s ;;
    esac
    echo "$n"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/lmbench-ref.XXXXXX")
HELLO_CREATED=0
cleanup() {
    rm -rf -- "$WORK"
    if [[ $HELLO_CREATED == 1 ]]; then rm -f /tmp/hello; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

STAT_FILE=$WORK/stat
DATA_FILE=$WORK/data
: >"$STAT_FILE"

max_bytes=$(to_bytes 4m)
for s in $SIZES; do
    b=$(to_bytes "$s")
    if (( b > max_bytes )); then max_bytes=$b; fi
done
log "data file $DATA_FILE: $max_bytes bytes"
head -c "$max_bytes" /dev/zero >"$DATA_FILE"
cat "$DATA_FILE" >/dev/null   # make sure it is in the page cache

cp "$LMBENCH_BIN/hello" /tmp/hello
HELLO_CREATED=1

export LMBENCH_SCHED=DEFAULT   # no lmbench-side placement; taskset does it
if [[ -z "${ENOUGH:-}" ]]; then ENOUGH=$("${PINCMD[@]}" "$LMBENCH_BIN/enough"); fi
export ENOUGH
if [[ -z "${TIMING_O:-}" ]]; then TIMING_O=$("${PINCMD[@]}" "$LMBENCH_BIN/timing_o"); fi
export TIMING_O
if [[ -z "${LOOP_O:-}" ]]; then LOOP_O=$("${PINCMD[@]}" "$LMBENCH_BIN/loop_o"); fi
export LOOP_O
log "bin=$LMBENCH_BIN pin=${PIN:-none} ENOUGH=$ENOUGH TIMING_O=$TIMING_O LOOP_O=$LOOP_O"

FAILED=0

# run TOOL ARGS... : prints the tool's stderr (where lmbench reports) and
# discards its stdout (lat_proc's children say "Hello world" there).
run() {
    local tool=$1; shift
    log "run: $tool $*"
    ( cd "$WORK" && timeout "$TOOL_TIMEOUT" "${PINCMD[@]}" "$LMBENCH_BIN/$tool" "$@" 2>&1 >/dev/null ) || {
        log "  $tool $* exited with status $?"
        return 0
    }
}

emit() {   # name value unit
    if [[ -z "$2" ]]; then
        log "  no result for $1"
        FAILED=1
        return 0
    fi
    printf '%s\t%s\t%s\n' "$1" "$2" "$3"
}

# "Label: 1.2345 microseconds" -> 1.2345
micro_val() { awk '/ microseconds$/ { v = $(NF-1) } END { if (v != "") print v }'; }
# last "x y" line with two numbers -> y (bw_* "MB MB/s", lat_mmap "MB us")
second_val() { awk 'NF == 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ { v = $2 } END { if (v != "") print v }'; }

# --- system calls -----------------------------------------------------------
emit null       "$(run lat_syscall -P 1 null | micro_val)" us
emit read       "$(run lat_syscall -P 1 read | micro_val)" us
emit write      "$(run lat_syscall -P 1 write | micro_val)" us
emit stat       "$(run lat_syscall -P 1 stat "$STAT_FILE" | micro_val)" us
emit fstat      "$(run lat_syscall -P 1 fstat "$STAT_FILE" | micro_val)" us
emit open_close "$(run lat_syscall -P 1 open "$STAT_FILE" | micro_val)" us

# --- select -----------------------------------------------------------------
for n in 10 100 250 500; do
    emit "select_file_$n" "$(run lat_select -n "$n" -P 1 file | micro_val)" us
done
# lat_select tcp forks its own accept server (port 31233) and kills it.
for n in 10 100 250 500; do
    emit "select_tcp_$n" "$(run lat_select -n "$n" -P 1 tcp | micro_val)" us
done

# --- signals ----------------------------------------------------------------
emit sig_install "$(run lat_sig -P 1 install | micro_val)" us
emit sig_catch   "$(run lat_sig -P 1 catch | micro_val)" us
emit prot_fault  "$(run lat_sig -P 1 prot "$DATA_FILE" | micro_val)" us

# --- processes --------------------------------------------------------------
emit fork      "$(run lat_proc -P 1 fork | micro_val)" us
emit fork_exec "$(run lat_proc -P 1 exec | micro_val)" us
emit fork_sh   "$(run lat_proc -P 1 shell | micro_val)" us

# --- pipe, context switch ---------------------------------------------------
emit pipe "$(run lat_pipe -P 1 | micro_val)" us
# lat_ctx prints '"size=0k ovr=X' then "2 <us>" (nothing if <= 0).
emit ctx_2p_0k "$(run lat_ctx -P 1 -s 0 2 | awk '$1 == "2" && NF == 2 { v = $2 } END { if (v != "") print v }')" us

# --- mmap -------------------------------------------------------------------
emit mmap_4m "$(run lat_mmap -P 1 4m "$DATA_FILE" | second_val)" us

# --- memory bandwidth -------------------------------------------------------
for size in $SIZES; do
    for op in rd wr rdwr cp frd fwr fcp bzero bcopy; do
        emit "bw_${op}_${size}" "$(run bw_mem -P 1 "$size" "$op" | second_val)" MB/s
    done
done

# --- file / mmap read bandwidth (cached file) -------------------------------
for size in $SIZES; do
    cat "$DATA_FILE" >/dev/null
    emit "file_rd_$size"      "$(run bw_file_rd -P 1 "$size" io_only "$DATA_FILE" | second_val)" MB/s
    emit "file_rd_o2c_$size"  "$(run bw_file_rd -P 1 "$size" open2close "$DATA_FILE" | second_val)" MB/s
    emit "mmap_rd_$size"      "$(run bw_mmap_rd -P 1 "$size" mmap_only "$DATA_FILE" | second_val)" MB/s
    emit "mmap_rd_o2c_$size"  "$(run bw_mmap_rd -P 1 "$size" open2close "$DATA_FILE" | second_val)" MB/s
done

# --- memory latency (pointer chase) -----------------------------------------
# lat_mem_rd prints '"stride=N' then "<MiB> <ns>" per array size (min of 11).
# Sizes are multiples of 512 bytes; name them in KiB (0.5k for 512 bytes).
mem_points() {   # prefix
    local prefix=$1 out
    out=$(awk -v p="$prefix" '
        NF == 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ {
            b = int($1 * 1048576 / 512 + 0.5) * 512
            k = b / 1024
            name = (k == int(k)) ? sprintf("%s_%dk", p, k) : sprintf("%s_%.1fk", p, k)
            printf "%s\t%s\tns\n", name, $2
        }')
    if [[ -z "$out" ]]; then
        log "  no result for ${prefix}_*"
        FAILED=1
    else
        printf '%s\n' "$out"
    fi
}
# (captured first, so that mem_points runs in this shell and can set FAILED)
mem_out=$(run lat_mem_rd -P 1 "$LAT_MB" 64)
mem_points chase_64 <<<"$mem_out"
mem_out=$(run lat_mem_rd -t -P 1 "$LAT_MB" 16)
mem_points chase_rand <<<"$mem_out"

exit "$FAILED"
