#!/usr/bin/env bash
# Installs what the local stack needs and the machine may lack: Python 3.11, a Java 17+ runtime and
# Maven (Debian packages). Does nothing when they are there already.
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)  # tests compile tests/java/ against the real jars
command -v mvn >/dev/null 2>&1 || need+=(maven)
if ! command -v python3.11 >/dev/null 2>&1; then need+=(python3.11 python3.11-venv); fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} ..." >&2
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
if [ "${java_major:-0}" -lt 17 ]; then
  echo "Kafka 4.x needs Java 17 or newer; found ${java_major:-none}" >&2
  exit 1
fi
