#!/usr/bin/env bash
# Installs hapbench's build and test dependencies from Debian 12's packages (as root, or
# with sudo). Skips the network when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake            # g++ 12, CMake 3.25
  libyaml-cpp-dev                  # proto.yaml, cases.yaml, hardware models
  nlohmann-json3-dev               # results files, worker protocol
  libcli11-dev                     # command line
  libfmt-dev                       # formatting of reports
  libdnnl-dev                      # oneDNN: the vendor baseline on the cpu target
  libseccomp-dev                   # the candidate worker's system-call sandbox
  libgtest-dev                     # unit tests
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
