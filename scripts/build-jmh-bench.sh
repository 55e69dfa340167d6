#!/usr/bin/env bash
# Builds the tiny JMH benchmarks jar of tests/fixtures/jmh-bench (JMH 1.37 from Maven Central,
# with Maven) once and caches it: prints the jar's path. Rebuilt only when the fixture's files
# change. Offline first (`mvn -o`, for a filled ~/.m2), else online. Needs a JDK and maven
# (Debian: openjdk-17-jdk-headless maven); scripts/test.sh installs both and runs this before the
# tests, which use the jar (tests/jmh_cli.rs), as does scripts/bench-jmh.sh.
# Usage: bash scripts/build-jmh-bench.sh        (cache: ${RACEHORSE_JMH_CACHE:-~/.cache/racehorse/jmh-bench})
set -euo pipefail
src="$(cd "$(dirname "$0")/../tests/fixtures/jmh-bench" && pwd)"
cache="${RACEHORSE_JMH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/racehorse/jmh-bench}"
jar="$cache/benchmarks.jar"
stamp=$(cd "$src" && find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ -f "$jar" ] && [ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$jar"
  exit 0
fi
for tool in mvn javac; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "build-jmh-bench: '$tool' is not installed (Debian: apt-get install maven openjdk-17-jdk-headless)" >&2
    exit 2
  }
done
mkdir -p "$cache"
build="$cache/build"
rm -rf "$build"
mkdir -p "$build"
cp -r "$src/pom.xml" "$src/src" "$build/"
log="$cache/build.log"
if ! (cd "$build" && mvn -o -B -q package >"$log" 2>&1); then
  if ! (cd "$build" && mvn -B -q package >"$log" 2>&1); then
    echo "build-jmh-bench: maven could not build the jar (no network to Maven Central?); its log:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
fi
cp "$build/target/benchmarks.jar" "$jar.tmp"
mv "$jar.tmp" "$jar"
echo "$stamp" > "$cache/stamp"
rm -rf "$build"
echo "$jar"
