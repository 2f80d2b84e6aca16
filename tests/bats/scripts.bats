#!/usr/bin/env bats
# scripts/lib/build.sh's install_packages, which scripts/check and
# scripts/demo run as root: it uses the Docker engine the host has, whatever
# its source, and never apt-gets Debian's in its place. Run against fakes of
# dpkg-query, apt-get and the engine's commands, on a PATH of their own.

setup() {
	load helpers/common
	BIN=$BATS_TEST_TMPDIR/bin
	APT_LOG=$BATS_TEST_TMPDIR/apt-get.log
	mkdir -p "$BIN"
	# The tools install_packages runs besides the fakes.
	for tool in grep cut realpath cat; do
		ln -s "$(command -v "$tool")" "$BIN/$tool"
	done
	fake id 'echo 0'
	fake npm ':'
	fake apt-get "echo \"\$*\" >>'$APT_LOG'"
	# dpkg-query -W: every package installed but those in $NOT_INSTALLED;
	# -S FILE: the package of a file, $DOCKERD_OWNER for any.
	# shellcheck disable=SC2016 # expanded by the fake
	fake dpkg-query '
		case $1 in
		-S) [ -n "${DOCKERD_OWNER:-}" ] || { echo "dpkg-query: no path found matching pattern $2" >&2; exit 1; }
		    echo "$DOCKERD_OWNER: $2" ;;
		-W) pkg=${*: -1}
		    case " ${NOT_INSTALLED:-} " in *" $pkg "*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;; esac
		    printf "install ok installed" ;;
		esac'
}

fake() {
	printf '#!/bin/bash\n%s\n' "$2" >"$BIN/$1"
	chmod +x "$BIN/$1"
}

# install_packages [ARG] with only $BIN on PATH.
install_packages() {
	# shellcheck disable=SC2016 # expanded by that bash
	run --separate-stderr env PATH="$BIN" NOT_INSTALLED="${NOT_INSTALLED:-}" DOCKERD_OWNER="${DOCKERD_OWNER:-}" \
		"$BASH" -c '. "$1"; shift; install_packages "$@"' _ "$OPENSHELL_SRCDIR/scripts/lib/build.sh" "$@"
}

@test "Docker's own engine (docker-ce, containerd.io) is used as it is: no docker.io, containerd or runc from Debian" {
	for c in dockerd docker containerd runc; do fake "$c" ':'; done
	NOT_INSTALLED='docker.io containerd runc' DOCKERD_OWNER=docker-ce install_packages
	assert_success
	assert_equal "$stderr" ''
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}

@test "an engine of another source without containerd and runc: refused in one line saying why and what to do, nothing installed" {
	fake dockerd ':'
	fake docker ':'
	NOT_INSTALLED='docker.io containerd runc busybox-static' DOCKERD_OWNER=docker-ce install_packages
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == "install_packages: the test bed needs containerd runc, which this host's Docker engine (dockerd of docker-ce) lacks"* ]]
	[[ $stderr == *"would replace that engine: install them from the engine's own source (containerd.io for docker-ce"* ]]
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}

@test "no Docker engine at all: Debian's docker.io, containerd and runc, never removing anything" {
	NOT_INSTALLED='docker.io containerd runc' install_packages
	assert_success
	run grep -c '^install ' "$APT_LOG"
	assert_output 1
	run grep '^install ' "$APT_LOG"
	assert_output --regexp ' --no-remove '
	assert_output --regexp ' docker\.io containerd runc$'
}

@test "Debian's engine without runc: only runc, from Debian" {
	for c in dockerd docker containerd; do fake "$c" ':'; done
	NOT_INSTALLED=runc DOCKERD_OWNER=docker.io install_packages
	assert_success
	run grep '^install ' "$APT_LOG"
	assert_output --regexp ' runc$'
	refute_output --partial docker.io
}

@test "install_packages build (a real GPU host) asks nothing of the engine" {
	NOT_INSTALLED='docker.io containerd runc' DOCKERD_OWNER=docker-ce install_packages build
	assert_success
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}
