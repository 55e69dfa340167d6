#!/usr/bin/env bash
# Installs what the tests need (Debian/Ubuntu packages, Rust components) and runs every check:
# formatting, clippy with warnings as errors, and the whole test suite. Run as root (or with
# sudo available) on a fresh machine: `bash scripts/test.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
command -v dbench >/dev/null 2>&1 || need_pkgs+=(dbench)
# The HTML reports are checked in a real headless browser (tests/compare_cli.rs).
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
# The fio adapter runs the real fio; losetup (util-linux) makes loop devices for diskio.
command -v fio >/dev/null 2>&1 || need_pkgs+=(fio)
# The iperf3 adapter runs the real iperf3 (crates/engines/src/adapters/iperf3.rs).
command -v iperf3 >/dev/null 2>&1 || need_pkgs+=(iperf3)
command -v losetup >/dev/null 2>&1 || need_pkgs+=(util-linux)
# The volume-layout test builds a btrfs RAID 0 over two loop devices (tests/layout_cli.rs).
command -v mkfs.btrfs >/dev/null 2>&1 || need_pkgs+=(btrfs-progs)
# Volume variants build LVM and md RAID volumes where the kernel has device-mapper and md
# (tests/volume_cli.rs; where it has not, the test checks that the run says so).
command -v lvm >/dev/null 2>&1 || need_pkgs+=(lvm2)
command -v mdadm >/dev/null 2>&1 || need_pkgs+=(mdadm)
command -v mkfs.ext4 >/dev/null 2>&1 || need_pkgs+=(e2fsprogs)
# --profile samples with perf (tests/profile_cli.rs).
command -v perf >/dev/null 2>&1 || need_pkgs+=(linux-perf)
# The oltp and analytics engines run a throw-away PostgreSQL cluster and the sysbench adapter.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_pkgs+=(postgresql)
command -v sysbench >/dev/null 2>&1 || need_pkgs+=(sysbench)
# The java engine compiles its workload with javac and runs it in a JVM (crates/engines/src/java).
command -v javac >/dev/null 2>&1 || need_pkgs+=(openjdk-17-jdk-headless)
# The Debian package test (tests/deb_cli.rs) builds the .deb with scripts/build-deb.sh (dpkg-deb;
# dpkg-shlibdeps for Depends; strip), installs it, asks `man -w racehorse` and purges it.
command -v man >/dev/null 2>&1 || need_pkgs+=(man-db)
command -v dpkg-shlibdeps >/dev/null 2>&1 || need_pkgs+=(dpkg-dev)
command -v strip >/dev/null 2>&1 || need_pkgs+=(binutils)
# Cells in KVM guests (tests/kvm_cli.rs): QEMU and a Debian kernel for the guest image,
# which racehorse builds at run time from /boot and its own binary (nothing is downloaded).
command -v qemu-system-x86_64 >/dev/null 2>&1 || need_pkgs+=(qemu-system-x86)
ls /boot/vmlinuz-* >/dev/null 2>&1 || need_pkgs+=(linux-image-cloud-amd64)
# The jmh adapter runs a JMH benchmarks jar that maven builds from tests/fixtures/jmh-bench
# (JMH from Maven Central) with the headless JDK (tests/jmh_cli.rs, scripts/build-jmh-bench.sh).
command -v mvn >/dev/null 2>&1 || need_pkgs+=(maven)
# The fleet test (tests/fleet_cli.rs) drives namespace "hosts" with dist/ansible's playbook:
# ansible-core on the controller, an sshd per host, ip and unshare to make them.
command -v ansible-playbook >/dev/null 2>&1 || need_pkgs+=(ansible-core)
[ -x /usr/sbin/sshd ] || need_pkgs+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_pkgs+=(openssh-client)
command -v ip >/dev/null 2>&1 || need_pkgs+=(iproute2)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${need_pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The API docs build without a warning (broken or private links, unescaped brackets).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
# The JMH benchmarks jar the jmh adapter's tests run, built once and cached (needs Maven Central
# the first time; later runs reuse ~/.cache/racehorse/jmh-bench and ~/.m2).
bash scripts/build-jmh-bench.sh >/dev/null
# The integration tests drive the real binary: build it first (cargo test builds only test targets).
cargo build --workspace --bins --quiet
# Here the browser check and the tests that need fio and perf must run, not skip. A test that
# skips anyway (no KVM, no cgroup v1 …) appends its name and reason to the skip log
# (racehorse_testkit::skip!), which the closing line counts.
: > /tmp/racehorse-test-skips.log
RACEHORSE_SKIP_LOG=/tmp/racehorse-test-skips.log RACEHORSE_REQUIRE_BROWSER=1 RACEHORSE_REQUIRE_TOOLS=1 \
  cargo test --workspace 2>&1 | tee /tmp/racehorse-test.log
# Never leave a CPU offline, whatever the tests did.
if [ -n "$(cat /sys/devices/system/cpu/offline 2>/dev/null)" ]; then
  echo "FAIL: CPUs left offline: $(cat /sys/devices/system/cpu/offline)" >&2
  exit 1
fi
# Every fuzz target for a short while (nightly and cargo-fuzz; scripts/fuzz.sh installs
# cargo-fuzz from crates.io when missing). A crash fails the run; its input is in fuzz/artifacts.
bash scripts/fuzz.sh 15 2
# One plain closing line over every test binary; tests that skipped at run time count as
# skipped and are listed after it with their reasons.
bash scripts/test-count.sh /tmp/racehorse-test.log /tmp/racehorse-test-skips.log
