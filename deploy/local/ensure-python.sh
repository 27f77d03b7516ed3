#!/usr/bin/env bash
# Prints the path of a CPython of the version asked for (`ensure-python.sh 3.13`), for the unit lane's venvs of
# the other supported Pythons (`make unit-pythons`); installs one when the machine has none, as ensure-tools.sh
# installs Java and Maven. Tried in order, the first that runs wins:
#   1. pythonX.Y on PATH (a pyenv shim counts only if it runs: it answers "command not found" for a version
#      that pyenv has installed but not selected);
#   2. pyenv's installed versions ($PYENV_ROOT, else ~/.pyenv), the newest X.Y.*;
#   3. one this script built before (4), in $PYTHONS_CACHE_DIR (~/.cache/control-plane/pythons);
#   4. Debian's package pythonX.Y, where the machine's release has it (Debian 13 has 3.13; Debian 12 has none);
#   5. built from Debian's source package of it (`apt-get source`, from the release that has it: PYTHON_SOURCE_SUITE,
#      trixie by default), with the build dependencies from the machine's release, into $PYTHONS_CACHE_DIR:
#      once per machine, some minutes on 2 cores. (uv's and pyenv's own installs fetch from GitHub and
#      python.org; a machine that reaches only the package registries gets none from them.)
# Exits 3, saying how to get one, when none works. Progress goes to stderr; stdout is the interpreter's path only.
set -euo pipefail
version=${1:?usage: ensure-python.sh X.Y}
cache=${PYTHONS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/control-plane/pythons}
suite=${PYTHON_SOURCE_SUITE:-trixie}

runs() {  # runs PATH: PATH is a CPython X.Y with venv (a shim or a broken install does not count)
    [ -x "$1" ] && "$1" -c "import sys, venv, ssl; sys.exit(sys.version_info[:2] != tuple(map(int, '$version'.split('.'))))" 2>/dev/null
}
found() { echo "$1"; exit 0; }

if p=$(command -v "python$version" 2>/dev/null) && runs "$p"; then found "$p"; fi
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
for p in $(ls -d "$pyenv_root/versions/$version".* 2>/dev/null | sort -t. -k3,3nr); do
    if runs "$p/bin/python$version"; then found "$p/bin/python$version"; fi
done
if runs "$cache/$version/bin/python$version"; then found "$cache/$version/bin/python$version"; fi

sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
apt_ok=0; command -v apt-get >/dev/null 2>&1 && apt_ok=1
if [ $apt_ok = 1 ]; then
    echo "ensure-python: no Python $version here; trying Debian's package python$version ..." >&2
    $sudo_cmd apt-get update -qq >&2 || true
    if apt-cache show "python$version-venv" >/dev/null 2>&1 \
        && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "python$version" "python$version-venv" >/dev/null \
        && runs "/usr/bin/python$version"; then
        found "/usr/bin/python$version"
    fi

    echo "ensure-python: building Python $version from Debian $suite's source package into $cache/$version (once) ..." >&2
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # A sources list of our own for `apt-get source`: the machine's apt configuration is left as it is.
    mkdir -p "$work/lists/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
        > "$work/sources.list"
    # (APT::Sandbox::User: the download is into this private, root-only directory)
    apt_src=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists"
             -o APT::Sandbox::User=root)
    deps=(build-essential pkg-config dpkg-dev libssl-dev zlib1g-dev libbz2-dev liblzma-dev libffi-dev libsqlite3-dev
          libreadline-dev libncurses-dev libgdbm-dev uuid-dev)
    if DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${deps[@]}" >/dev/null \
        && apt-get -qq "${apt_src[@]}" update >&2 \
        && (cd "$work" && apt-get -qq "${apt_src[@]}" source --download-only "python$version" >&2); then
        orig=$(ls "$work"/python"$version"_*.orig.tar.* | head -1)
        mkdir -p "$work/src" && tar -xf "$orig" -C "$work/src" --strip-components=1
        # Without --enable-optimizations (PGO runs the test suite: many more minutes), and without pip in the
        # interpreter's own prefix: each venv gets its pip from ensurepip's bundled wheel.
        if (cd "$work/src" && ./configure -q --prefix="$cache/$version" --with-ensurepip=no >&2 \
            && make -s -j"$(nproc)" >/dev/null 2>"$work/make.log" && make -s altinstall >/dev/null 2>>"$work/make.log"); then
            if runs "$cache/$version/bin/python$version"; then found "$cache/$version/bin/python$version"; fi
        fi
        tail -20 "$work/make.log" >&2 || true
    fi
fi

cat >&2 <<EOF
ensure-python: no Python $version found or installed. Looked for python$version on PATH, under $pyenv_root/versions,
in $cache/$version; tried Debian's package python$version and a build from Debian $suite's source package.
Get one with any of: \`pyenv install $version\` (needs python.org), \`uv python install $version\` (needs GitHub),
Debian 13's or Ubuntu's package python$version-venv, or put python$version on PATH; then run this again.
EOF
exit 3
