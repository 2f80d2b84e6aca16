# shellcheck shell=bash
# scripts/lib/build.sh - shared by scripts/check and scripts/demo: the
# Debian packages the project needs, and an out-of-tree build.
#
#   . scripts/lib/build.sh
#   install_packages [build]    apt-get what is missing (root; no-op when all there)
#   build_tree DIR [ARGS...]    autoreconf, configure in DIR with ARGS, make

# The toolchain, the libraries, bats, Debian's python3 with python3-jsonschema
# and PyYAML (the suites check openshell's --json against
# doc/openshell.schema.json and read the GPU lane's workflow), and the test bed
# (busybox-static for images, jq for the runtime shim and the suites, zstd
# for the airgap tarball, python3 with PyYAML and openssl that the k3s
# stand-in runs on, nsenter from util-linux, ss from iproute2, iptables for
# the sim hosts' links (tests/testbed/host/sim-netns, with ethtool) and, with iproute2's ip
# and bridge, for the stand-in's pod network, OpenSSH for
# the remote lane (tests/testbed/sim-sshd); npm, when none is on PATH, and
# unzip fetch the real kubectl). The test bed's Docker engine is apart
# (engine_commands). `install_packages build` installs only what the build
# and the suites need on a real GPU host, which has its own Docker.
build_packages=(
	autoconf automake make gcc pkg-config
	libpipeline-dev libcjson-dev libyaml-dev
	bats bats-support bats-assert jq iproute2 python3 python3-jsonschema python3-yaml
)
packages=(
	"${build_packages[@]}"
	busybox-static zstd util-linux coreutils iptables ethtool
	shellcheck valgrind unzip openssl gnuplot-nox openssh-server openssh-client
)

# What tests/testbed/sim-host runs: a real dockerd, with containerd and runc,
# and the docker CLI. Any engine serves, Debian's docker.io or Docker's
# docker-ce with containerd.io, so they are looked for as commands; Debian's
# engine is installed only where there is none, since its packages conflict
# with Docker's (apt would remove them, and with them the user's Docker).
engine_commands=(dockerd docker containerd runc)
engine_packages=(docker.io containerd runc)

# engine_packages_needed: print the Debian packages the test bed's engine
# still needs (nothing when every command is there), or say in one line why
# they cannot be installed and fail.
engine_packages_needed() {
	local c lacking=() owner=''
	for c in "${engine_commands[@]}"; do
		command -v "$c" >/dev/null || lacking+=("$c")
	done
	[ ${#lacking[@]} -eq 0 ] && return 0
	# dpkg names the package of a file by its real path (/sbin is /usr/sbin).
	command -v dockerd >/dev/null &&
		owner=$(dpkg-query -S "$(realpath "$(command -v dockerd)")" 2>/dev/null | cut -d: -f1)
	if ! command -v dockerd >/dev/null || [ "$owner" = docker.io ]; then
		echo "${engine_packages[*]}"
		return 0
	fi
	echo "install_packages: the test bed needs ${lacking[*]}, which this host's Docker engine (dockerd of ${owner:-no Debian package}) lacks, and Debian's docker.io, containerd and runc would replace that engine: install them from the engine's own source (containerd.io for docker-ce, docker-ce-cli for docker), then run again" >&2
	return 1
}

install_packages() {
	local missing=() p want=("${packages[@]}") engine
	[ "${1:-}" = build ] && want=("${build_packages[@]}")
	if [ "${1:-}" != build ]; then
		engine=$(engine_packages_needed) || return 1
		# shellcheck disable=SC2206 # package names: split on spaces
		want+=($engine)
	fi
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
	# --no-remove: installing what is missing never takes away what the
	# host has (a conflicting package makes apt stop instead).
	apt-get install -y -qq --no-install-recommends --no-remove "${missing[@]}" >/dev/null || {
		echo "install_packages: apt-get did not install ${missing[*]} (see its message above); nothing was removed" >&2
		return 1
	}
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
