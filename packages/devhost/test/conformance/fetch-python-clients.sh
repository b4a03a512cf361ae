#!/usr/bin/env bash
# Fetches azure-servicebus as Debian trixie ships it (python3-azure 20250603: azure-servicebus 7.14 on its
# own pure-Python AMQP stack, _pyamqp) for servicebus-python.test.ts, which runs its suite once with the
# system's client (bookworm's 7.8.2 on uamqp) and once with this one. The two stacks differ in what they
# accept from the broker: 7.14 reads each performative's fields by position and applies no AMQP defaults.
#
# Without root and without touching the system's apt configuration: a private sources list, state and
# cache (apt-get update/download with -o Dir::...), and dpkg-deb to unpack. Only the few modules the
# client needs are kept (python3-azure unpacks to over 500 MB, the whole Azure SDK). The result is one
# PYTHONPATH directory: <dir>/trixie/usr/lib/python3/dist-packages, for /usr/bin/python3.
#
# Usage: fetch-python-clients.sh [dir]   (default: $PYTHON_CLIENTS_DIR, else <repo>/.python-clients)
# Does nothing when the directory already holds the client.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../../../.." && pwd)
root=${1:-${PYTHON_CLIENTS_DIR:-$repo/.python-clients}}
dest=$root/trixie
site=$dest/usr/lib/python3/dist-packages
marker=$dest/.complete

if [ -f "$marker" ]; then
  echo "trixie's azure-servicebus is already in $dest ($(cat "$marker"))"
  exit 0
fi

# The packages: the client, and the pure-Python modules it needs newer than bookworm's
# (azure-core 1.35 imports typing_extensions.Buffer, new in 4.6; bookworm has 4.4) or may not find at all.
packages=(python3-azure python3-typing-extensions python3-isodate)

# The Debian mirror this machine's apt already uses (it may be a local one), else deb.debian.org.
mirror=$(grep -hsv '^[[:space:]]*#' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources |
  grep -oE '(https?://[^ ]+/debian)/?( |$)' | head -1 | tr -d ' ' || true)
mirror=${mirror%/}
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=$keyring] $mirror trixie main" >"$work/sources.list"
apt_options=(
  -o "Dir::State=$work/state"
  -o "Dir::State::status=/dev/null"
  -o "Dir::Cache=$work/cache"
  -o "Dir::Etc::SourceList=$work/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  # Only the package lists: not the AppStream metadata and translations the system's apt.conf.d may add.
  -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
  -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
  -o "Acquire::Languages=none"
  # As root, apt would download as _apt, which cannot write to a private directory.
  -o "APT::Sandbox::User=$(id -un)"
)
echo "fetching ${packages[*]} from $mirror trixie"
apt-get "${apt_options[@]}" -qq update
(cd "$work/debs" && apt-get "${apt_options[@]}" -qq download "${packages[@]}")

rm -rf "$dest"
mkdir -p "$dest"
for deb in "$work"/debs/*.deb; do
  case "$(basename "$deb")" in
    python3-azure_*)
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dest" --wildcards \
        './usr/lib/python3/dist-packages/azure/core/*' \
        './usr/lib/python3/dist-packages/azure/servicebus/*' \
        './usr/lib/python3/dist-packages/azure_core-*' \
        './usr/lib/python3/dist-packages/azure_servicebus-*'
      ;;
    *) dpkg-deb -x "$deb" "$dest" ;;
  esac
done
# trixie's azure is a namespace package, bookworm's python3-azure a regular one (with an __init__.py),
# which Python would prefer to a namespace portion earlier on the path: 7.8.2 would be imported. This
# __init__.py makes the unpacked azure win and still finds the system's other azure.* packages.
printf '__path__ = __import__("pkgutil").extend_path(__path__, __name__)\n' >"$site/azure/__init__.py"

versions=$(PYTHONPATH=$site /usr/bin/python3 -c \
  "import azure.servicebus, azure.servicebus._pyamqp, azure.core; print('azure-servicebus', azure.servicebus.__version__, 'azure-core', azure.core.__version__)")
echo "$versions ($(cd "$work/debs" && echo *.deb))" >"$marker"
echo "$versions in $site, for $(/usr/bin/python3 --version)"
