#!/usr/bin/env bash
# Installs hapbench's build and test dependencies from Debian 12's packages (as root, or
# with sudo). Skips the network when everything is already there. When a package cannot be
# installed (no root, no sudo, no network), it says which ones and how, in one line, and
# exits 1 before anything is configured.
set -uo pipefail

packages=(
  build-essential cmake            # g++ 12, CMake 3.25
  libyaml-cpp-dev                  # proto.yaml, cases.yaml, hardware models
  nlohmann-json3-dev               # results files, worker protocol
  libcli11-dev                     # command line
  libfmt-dev                       # formatting of reports
  libdnnl-dev                      # oneDNN: the vendor baseline on the cpu target
  ocl-icd-opencl-dev               # Debian's oneDNN is built with an OpenCL GPU runtime: its CMake config requires OpenCL
  libopenblas-dev                  # fp64 goldens of the contraction operators (cblas_dgemm)
  libseccomp-dev                   # the candidate worker's system-call sandbox
  libgtest-dev                     # unit tests
  chromium                         # tests: renders the HTML report headless (PNG, console, DOM)
  fonts-dejavu-core                # the report's font, so its screenshots look the same everywhere
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

fail() {
  echo "hapbench: missing Debian packages: ${missing[*]} ($1); install them with: sudo apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
}

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo -n)
  else
    fail "not root and no password-less sudo"
  fi
fi
command -v apt-get >/dev/null || fail "apt-get not found: not a Debian system"

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "${sudo_cmd[@]}" apt-get update -qq >"$log" 2>&1; then
  tail -n 3 "$log" >&2
  fail "apt-get update failed"
fi
if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  fail "apt-get install failed"
fi
