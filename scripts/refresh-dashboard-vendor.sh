#!/usr/bin/env bash
# Refreshes the charting library the dashboard page embeds (uPlot, from the
# npm registry) and records its version, licence and checksums in
# dashboard/assets/vendor/VENDOR.md. Needs npm (Debian's `npm`) only when
# run; building and running fathom never needs Node.
#
#   scripts/refresh-dashboard-vendor.sh            # the version pinned below
#   scripts/refresh-dashboard-vendor.sh 1.6.33     # another version
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-1.6.32}"
dest=dashboard/assets/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null)
tgz="$tmp/uplot-$version.tgz"
[ -f "$tgz" ] || { echo "npm pack gave no $tgz" >&2; exit 1; }
integrity=$(cd "$tmp" && npm view "uplot@$version" dist.integrity)
licence=$(cd "$tmp" && npm view "uplot@$version" license)
tar -xzf "$tgz" -C "$tmp"

cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$dest/"
cp "$tmp/package/LICENSE" "$dest/uPlot.LICENSE"

sum() { sha256sum "$1" | cut -d' ' -f1; }
cat >"$dest/VENDOR.md" <<MD
# Vendored: uPlot

The dashboard page's charts. Refresh with \`scripts/refresh-dashboard-vendor.sh [VERSION]\`;
do not edit these files by hand.

| | |
|---|---|
| name | uplot (uPlot, by Leon Sorokin) |
| version | $version |
| licence | $licence (uPlot.LICENSE) |
| source | the npm registry: \`npm pack uplot@$version\` |
| tarball integrity | $integrity |
| tarball sha256 | $(sum "$tgz") |

| file | from the package | sha256 |
|---|---|---|
| uPlot.iife.min.js | dist/uPlot.iife.min.js | $(sum "$dest/uPlot.iife.min.js") |
| uPlot.min.css | dist/uPlot.min.css | $(sum "$dest/uPlot.min.css") |
| uPlot.LICENSE | LICENSE | $(sum "$dest/uPlot.LICENSE") |
MD
echo "uPlot $version vendored into $dest"
