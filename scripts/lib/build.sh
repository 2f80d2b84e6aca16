# shellcheck shell=bash
# scripts/lib/build.sh - shared by scripts/check and scripts/demo: the
# Debian packages the project needs, and an out-of-tree build.
#
#   . scripts/lib/build.sh
#   install_packages [build]    apt-get what is missing (root; no-op when all there)
#   build_tree DIR [ARGS...]    autoreconf, configure in DIR with ARGS, make

# The toolchain, the libraries, bats, python3-jsonschema (the suites check
# openshell's --json against doc/openshell.schema.json), and the test bed (a
# real dockerd with containerd and runc, busybox-static for images, jq for the
# runtime shim and the suites, zstd for the airgap tarball, python3 with PyYAML
# and openssl that the k3s stand-in runs on, nsenter from util-linux, ss from
# iproute2; npm, when none is on PATH, and unzip fetch the real kubectl).
# `install_packages build` installs only what the build and the suites need
# on a real GPU host, which has its own Docker.
build_packages=(
	autoconf automake make gcc pkg-config
	libpipeline-dev libcjson-dev libyaml-dev
	bats bats-support bats-assert jq iproute2 python3-jsonschema
)
packages=(
	"${build_packages[@]}"
	docker.io containerd runc busybox-static zstd util-linux coreutils
	shellcheck valgrind unzip python3 python3-yaml openssl gnuplot-nox
)

install_packages() {
	local missing=() p want=("${packages[@]}")
	[ "${1:-}" = build ] && want=("${build_packages[@]}")
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ "${1:-}" = build ] || command -v npm >/dev/null || missing+=(npm)
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "installing ${missing[*]}" >&2
	if [ "$(id -u)" != 0 ]; then
		echo "need root to install packages: ${missing[*]}" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configure (again only when configure changed) and build in $1.
build_tree() {
	local dir=$1 top
	shift
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	# autoreconf only when its inputs changed: a fresh configure would make
	# every build directory configure again.
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
		[ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
		(cd "$top" && { autoreconf -fi >/dev/null 2>&1 || autoreconf -fi; }) || return 1
	fi
	mkdir -p "$dir"
	(
		cd "$dir" || exit 1
		if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
			"$top/configure" -q "$@" || exit 1
		fi
		make -j"$(nproc)" >/dev/null
	)
}
