#!/usr/bin/env bash
# Builds (or restores from cache) a disposable Debian 12 root for the SCAP
# end-to-end tests: debootstrap minbase bookworm with openssh-server,
# bookworm's openscap-scanner 1.3.7 and linux-base (without it SSG marks every
# ssh and aide rule notapplicable), plus trixie's arch-independent ssg-debian
# and ssg-base 0.1.76 (bookworm's 0.1.65 has no Debian 12 datastream). apt's
# lists and the .debs of sudo, auditd and libpam-pwquality are kept in the
# root's apt cache so SSG's package_* fixes work offline.
#
#   scripts/debian-target.sh tarball        print the cache path; build it if absent
#   scripts/debian-target.sh ssg-debs DIR   download trixie's ssg .debs into DIR
#
# The tarball (zstd, ~90 MB; built in about 90 s, unpacked in 2-3 s) lives outside the repository, in
# $NIGHTSHIFT_CACHE (default /var/cache/nightshift); it is never committed.
# Needs root, debootstrap and zstd; reaches only Debian's archive (the mirror
# in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list).
set -euo pipefail

CACHE_DIR="${NIGHTSHIFT_CACHE:-/var/cache/nightshift}"
SSG_VERSION=0.1.76-1
# The cache key changes whenever what goes into the root changes.
TARBALL="$CACHE_DIR/debian12-ssg-${SSG_VERSION}-v4.tar.zst"

log() { echo "debian-target: $*" >&2; }

mirror() {
	local f m
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		[ -r "$f" ] || continue
		if [[ "$f" == *.sources ]]; then
			m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
		else
			m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/ && $i !~ /security/) { print $i; exit } }' "$f")
		fi
		if [ -n "${m:-}" ]; then
			echo "$m"
			return
		fi
	done
	echo http://deb.debian.org/debian
}

# ssg_debs DIR: trixie's ssg-debian and ssg-base, fetched with apt through a
# private list directory so the machine's own apt state is untouched.
ssg_debs() {
	local dir="$1" work
	mkdir -p "$dir"
	if [ -s "$dir/ssg-debian_${SSG_VERSION}_all.deb" ] && [ -s "$dir/ssg-base_${SSG_VERSION}_all.deb" ]; then
		return
	fi
	work=$(mktemp -d)
	mkdir -p "$work/lists/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) trixie main" >"$work/sources.list"
	local opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$work/lists" -o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root)
	log "downloading ssg-debian and ssg-base $SSG_VERSION from trixie"
	apt-get "${opts[@]}" update -qq >&2
	(cd "$dir" && apt-get "${opts[@]}" download "ssg-debian=$SSG_VERSION" "ssg-base=$SSG_VERSION" >&2)
	rm -rf "$work"
}

build() {
	# root is global: the EXIT trap uses it after build returns.
	command -v debootstrap >/dev/null || {
		log "installing debootstrap"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap zstd >/dev/null
	}
	mkdir -p "$CACHE_DIR"
	root=$(mktemp -d "$CACHE_DIR/build.XXXXXX")
	trap 'rm -rf "$root" "$TARBALL.tmp"' EXIT
	log "debootstrap bookworm into $root (about a minute)"
	debootstrap --variant=minbase --include=openssh-server,openscap-scanner,linux-base,ca-certificates \
		bookworm "$root/rootfs" "$(mirror)" >"$root/debootstrap.log" 2>&1 || {
		tail -30 "$root/debootstrap.log" >&2
		exit 1
	}
	ssg_debs "$root/debs"
	cp "$root"/debs/*.deb "$root/rootfs/tmp/"
	chroot "$root/rootfs" sh -c 'dpkg -i /tmp/ssg-base_*.deb /tmp/ssg-debian_*.deb >/dev/null && rm -f /tmp/*.deb'
	test -s "$root/rootfs/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"
	# No host keys baked into the cache: each start generates its own.
	rm -f "$root"/rootfs/etc/ssh/ssh_host_*
	# Services never start in the chroot (there is no init): package
	# scripts that try get "action forbidden".
	printf '#!/bin/sh\nexit 101\n' >"$root/rootfs/usr/sbin/policy-rc.d"
	chmod 755 "$root/rootfs/usr/sbin/policy-rc.d"
	# The package lists and the .debs of the packages SSG's package_*
	# fixes install (sudo, auditd, libpam-pwquality: accounts_password_pam_*
	# need pam_pwquality) stay in the root, so those fixes (apt-get install
	# -y sudo) work from apt's cache without the network.
	# debootstrap's own .debs, the translations and apt's binary caches
	# (rebuilt on use) stay out: they would double the tarball.
	cp /etc/resolv.conf "$root/rootfs/etc/resolv.conf"
	echo 'Acquire::Languages "none";' >"$root/rootfs/etc/apt/apt.conf.d/99nightshift-no-translations"
	chroot "$root/rootfs" apt-get clean
	rm -f "$root"/rootfs/var/lib/apt/lists/*Translation*
	chroot "$root/rootfs" apt-get update -q >&2
	chroot "$root/rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --download-only sudo auditd libpam-pwquality >&2
	rm -f "$root"/rootfs/var/cache/apt/*.bin
	: >"$root/rootfs/etc/resolv.conf"
	log "packing $TARBALL"
	tar --numeric-owner --xattrs -C "$root/rootfs" -cf - . | zstd -q -T0 -6 -o "$TARBALL.tmp"
	mv "$TARBALL.tmp" "$TARBALL"
	rm -rf "$root"
	trap - EXIT
}

case "${1:-}" in
tarball)
	if [ "$(id -u)" -ne 0 ]; then
		log "must run as root"
		exit 1
	fi
	if [ ! -s "$TARBALL" ]; then
		# Test packages run in parallel: one builds, the others wait for it.
		mkdir -p "$CACHE_DIR"
		exec 9>"$CACHE_DIR/build.lock"
		flock 9
		[ -s "$TARBALL" ] || build
		exec 9>&-
	fi
	echo "$TARBALL"
	;;
ssg-debs)
	ssg_debs "${2:?usage: $0 ssg-debs DIR}"
	;;
*)
	echo "usage: $0 tarball | ssg-debs DIR" >&2
	exit 2
	;;
esac
