# shellcheck shell=bash
# bats helper: the Docker engine the end-to-end suites talk to.
#
# By default each suite gets its own private dockerd with a SIMULATED NVIDIA GPU host around it
# (tests/testbed/sim-host, see docs/testing.md). With OPENSHELL_TEST_REAL_HOST=1 nothing is started: the
# suites use the Docker engine of the environment (DOCKER_HOST, or Docker's default socket), which
# on a real GPU runner has the real NVIDIA driver and Container Toolkit.
#
#   load helpers/sim-host           (from a file in tests/bats)
#   setup_file()    { sim_host_start [sim-host start args…]; sim_busybox_image IMG; }
#   teardown_file() { sim_host_stop; }
#
# Functions:
#   sim_host_start [ARGS…]   start a sim host in a fresh short dir (mktemp -d /tmp/osim.XXXXXX),
#                            export SIM_HOST_DIR and DOCKER_HOST; fail (never skip) with the
#                            daemon's log if it cannot start. Real host: check Docker answers.
#   sim_host_stop            stop it and every extra host of this file; safe to call always.
#   sim_host_extra [ARGS…]   start one more sim host; sets SIM_HOST_EXTRA_DIR and
#                            SIM_HOST_EXTRA_DOCKER_HOST (the main host's env is untouched).
#   sim_host_stop_dir DIR    stop the sim host in DIR.
#   sim_busybox_image TAG    make TAG a tiny local image with /bin/sh (busybox-static rootfs; the
#                            tarball is built once per bats run). Real host: with
#                            OPENSHELL_TEST_BASE_IMAGE set, tag that image instead (a real
#                            nvidia-smi needs glibc, which a static busybox rootfs lacks).
#   sim_real_host            true with OPENSHELL_TEST_REAL_HOST=1
#   sim_only REASON          skip the current test on a real host, saying why it only makes sense
#                            in the simulation
#   sim_gpu_uuids            the host's GPU UUIDs, one a line, in index order
#   sim_gpu_count            how many GPUs the host has

SIM_HOST_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
SIM_HOST_BIN=$SIM_HOST_REPO/tests/testbed/sim-host

# A docker CLI that builds with BuildKit (tests/testbed/buildkit-docker).
sim_buildkit_docker() {
	"$SIM_HOST_REPO/tests/testbed/buildkit-docker"
}

sim_real_host() {
	[[ ${OPENSHELL_TEST_REAL_HOST:-0} == 1 ]]
}

sim_only() {
	if sim_real_host; then
		skip "simulation only (OPENSHELL_TEST_REAL_HOST=1): $*"
	fi
}

# $1: directory to start in; rest: sim-host start args. Prints the daemon log on failure.
_sim_host_start_in() {
	local dir=$1 out
	shift
	if ! out=$(SIM_HOST_DIR=$dir "$SIM_HOST_BIN" start "$@" 2>&1); then
		printf '%s\n' "$out" >&2
		if [[ -s $dir/dockerd.log ]]; then
			printf -- '--- %s/dockerd.log (last 60 lines) ---\n' "$dir" >&2
			tail -n 60 "$dir/dockerd.log" >&2
		fi
		SIM_HOST_DIR=$dir "$SIM_HOST_BIN" stop >/dev/null 2>&1 || true
		rm -rf "$dir"
		return 1
	fi
}

sim_host_start() {
	if sim_real_host; then
		if ! docker info >/dev/null 2>&1; then
			printf 'OPENSHELL_TEST_REAL_HOST=1 but Docker does not answer (DOCKER_HOST=%s)\n' \
				"${DOCKER_HOST:-default}" >&2
			return 1
		fi
		return 0
	fi
	local dir
	dir=$(mktemp -d /tmp/osim.XXXXXX)
	export SIM_HOST_DIR=$dir
	export DOCKER_HOST=unix://$dir/docker.sock
	_sim_host_start_in "$dir" "$@" || return 1
	# The host's toolkit hook on PATH, as on a real host (sim-host env).
	if [[ -d $dir/host-bin ]]; then
		export PATH=$dir/host-bin:$PATH
	fi
}

sim_host_extra() {
	local dir
	sim_only "a second Docker engine exists only as a sim host"
	dir=$(mktemp -d /tmp/osim.XXXXXX)
	printf '%s\n' "$dir" >>"${BATS_FILE_TMPDIR:?}/sim-extra-hosts"
	_sim_host_start_in "$dir" "$@" || return 1
	# shellcheck disable=SC2034 # read by the calling test
	SIM_HOST_EXTRA_DIR=$dir
	# shellcheck disable=SC2034
	SIM_HOST_EXTRA_DOCKER_HOST=unix://$dir/docker.sock
}

sim_host_stop_dir() {
	SIM_HOST_DIR=$1 "$SIM_HOST_BIN" stop
}

sim_host_stop() {
	local dir rc=0
	sim_real_host && return 0
	if [[ -f ${BATS_FILE_TMPDIR:-/nonexistent}/sim-extra-hosts ]]; then
		while read -r dir; do
			sim_host_stop_dir "$dir" >/dev/null 2>&1 || rc=1
		done <"$BATS_FILE_TMPDIR/sim-extra-hosts"
		rm -f "$BATS_FILE_TMPDIR/sim-extra-hosts"
	fi
	if [[ -n ${SIM_HOST_DIR:-} ]]; then
		sim_host_stop_dir "$SIM_HOST_DIR" >/dev/null 2>&1 || rc=1
	fi
	return "$rc"
}

# A rootfs tarball of Debian's busybox-static: /bin/busybox, its applets, and the directories a
# container and the (simulated) toolkit expect. Built once per bats run; temp + mv keeps parallel
# suites from seeing half a file.
_sim_busybox_tarball() {
	local tar=${BATS_RUN_TMPDIR:?}/sim-busybox-rootfs.tar root applet
	if [[ ! -s $tar ]]; then
		if ! command -v busybox >/dev/null || ldd "$(command -v busybox)" >/dev/null 2>&1; then
			echo "a static busybox is needed; install the Debian package busybox-static" >&2
			return 1
		fi
		root=$(mktemp -d "$BATS_RUN_TMPDIR/busybox-root.XXXXXX")
		mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,proc,sys,dev,root,var}
		chmod 1777 "$root/tmp"
		cp "$(command -v busybox)" "$root/bin/busybox"
		for applet in $(busybox --list); do
			[[ $applet == busybox || -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
		done
		printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
		printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
		tar -C "$root" --owner=0 --group=0 -cf "$tar.$$" . && mv -f "$tar.$$" "$tar"
		rm -rf "$root"
	fi
	printf '%s\n' "$tar"
}

sim_busybox_image() {
	local tag=${1:?sim_busybox_image TAG} tar
	if sim_real_host && [[ -n ${OPENSHELL_TEST_BASE_IMAGE:-} ]]; then
		docker tag "$OPENSHELL_TEST_BASE_IMAGE" "$tag"
		return
	fi
	docker image inspect "$tag" >/dev/null 2>&1 && return 0
	tar=$(_sim_busybox_tarball) || return 1
	docker import --change 'CMD ["/bin/sh"]' "$tar" "$tag" >/dev/null
}

sim_gpu_uuids() {
	if sim_real_host; then
		nvidia-smi --query-gpu=uuid --format=csv,noheader
	else
		awk '$1 == "gpu" { print $3 }' "$SIM_HOST_DIR/gpus"
	fi
}

sim_gpu_count() {
	sim_gpu_uuids | grep -c . || true
}
