#!/usr/bin/env bash
# Make the Debian bookworm base image the Dockerfile builds on, without a registry:
# debootstrap --variant=minbase into a temporary directory, then `docker import`.
#
#   scripts/make_base_image.sh [TAG]      # default TAG: ibgraphrag-base:bookworm
#
# Uses the host's Debian mirror (deb.debian.org unless IBGR_DEBIAN_MIRROR is set) with the
# bookworm, bookworm-updates and bookworm-security suites, so the image's packages match the
# host's. Idempotent: returns at once when TAG already exists (IBGR_REBUILD_BASE=1 remakes it).
# Needs root (debootstrap) and a running dockerd.
set -euo pipefail
TAG="${1:-ibgraphrag-base:bookworm}"
MIRROR="${IBGR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${IBGR_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
DOCKER="${DOCKER:-docker}"

if [[ "${IBGR_REBUILD_BASE:-0}" != 1 ]] && "$DOCKER" image inspect "$TAG" >/dev/null 2>&1; then
  echo "make_base_image: $TAG exists"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "make_base_image: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }

root="$(mktemp -d /tmp/ibgr-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
start=$(date +%s)
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || {
  tail -20 "$root.log" >&2; echo "make_base_image: debootstrap failed (log $root.log)" >&2; exit 1; }
rm -f "$root.log"
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY_MIRROR bookworm-security main
SOURCES
# Keep images small and apt quiet inside builds.
cat >"$root/etc/apt/apt.conf.d/90ibgr" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
APT
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
tar -C "$root" --numeric-owner -c . | "$DOCKER" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' - "$TAG" >/dev/null
echo "make_base_image: $TAG made in $(( $(date +%s) - start )) s ($("$DOCKER" image inspect -f '{{.Size}}' "$TAG") bytes)"
