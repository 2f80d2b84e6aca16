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
#   sim_host_machine NAME [ARGS…]
#                            start one more sim host as a machine apart, named NAME (sim-host start
#                            --own-network --hostname NAME ARGS…): a network namespace, address and
#                            hostname of its own, linked to this machine (docs/testing.md); NAME is
#                            what the lookups below take, in this test or any later one of the file.
#   sim_host_of NAME FIELD   of machine NAME: dir, docker-host (unix://…), addr (its address),
#                            uplink (this machine's address on its link: where it reaches this one)
#   sim_docker NAME ARGS…    docker against machine NAME's daemon
#   sim_image_copy IMAGE NAME  copy IMAGE from the main host's daemon to machine NAME's (save | load)
#   sim_busybox_image TAG    make TAG a tiny local image with /bin/sh (busybox-static rootfs; the
#                            tarball is built once per bats run). Real host: with
#                            OPENSHELL_TEST_BASE_IMAGE set, tag that image instead (a real
#                            nvidia-smi needs glibc, which a static busybox rootfs lacks).
#   sim_real_host            true with OPENSHELL_TEST_REAL_HOST=1
#   sim_only REASON          skip the current test on a real host, saying why it only makes sense
#                            in the simulation
#   sim_gpu_uuids [NAME]     the host's GPU UUIDs (or machine NAME's), one a line, in index order
#   sim_gpu_count [NAME]     how many GPUs the host (or machine NAME) has

# bats sources this for every test, and a $(cd …) is two processes each
# time: the source tree make check names, where it does.
if [[ -n ${OPENSHELL_SRCDIR:-} ]]; then
	SIM_HOST_REPO=$OPENSHELL_SRCDIR
else
	SIM_HOST_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
fi
SIM_HOST_BIN=$SIM_HOST_REPO/tests/testbed/sim-host
# The real kubectl on the host (scripts/real-kubectl, which the cluster
# images need), found at load, before a test moves HOME: the suites' own
# looks at a simulated gateway's API go through it (gw_kubectl).
: "${HOST_KUBECTL:=${OPENSHELL_TEST_CACHE:-$HOME/.cache/openshell-test}/kubectl-v35/kubectl/kubectl}"

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

sim_host_machine() {
	local name=${1:?sim_host_machine NAME [ARGS…]} dir
	shift
	sim_only "a machine apart exists only as a sim host"
	dir=$(mktemp -d /tmp/osim.XXXXXX)
	printf '%s\n' "$dir" >>"${BATS_FILE_TMPDIR:?}/sim-extra-hosts"
	_sim_host_start_in "$dir" --own-network --hostname "$name" "$@" || return 1
	printf '%s %s\n' "$name" "$dir" >>"$BATS_FILE_TMPDIR/sim-machines"
}

sim_host_of() {
	local name=${1:?sim_host_of NAME FIELD} field=${2:?sim_host_of NAME FIELD} dir
	dir=$(awk -v n="$name" '$1 == n { print $2 }' "${BATS_FILE_TMPDIR:?}/sim-machines" 2>/dev/null)
	[[ -n $dir ]] || { echo "sim_host_of: no machine named $name in this file" >&2; return 1; }
	case $field in
	dir) echo "$dir" ;;
	docker-host) echo "unix://$dir/docker.sock" ;;
	addr) sed -n 's/^SIM_HOST_ADDR=//p' "$dir/net.env" ;;
	uplink) sed -n 's/^SIM_HOST_UPLINK=//p' "$dir/net.env" ;;
	*) echo "sim_host_of: FIELD is dir, docker-host, addr or uplink, not $field" >&2; return 1 ;;
	esac
}

sim_docker() {
	local dh
	dh=$(sim_host_of "${1:?sim_docker NAME ARGS…}" docker-host) || return 1
	shift
	DOCKER_HOST=$dh docker "$@"
}

sim_image_copy() {
	local image=${1:?sim_image_copy IMAGE NAME} dh
	dh=$(sim_host_of "${2:?sim_image_copy IMAGE NAME}" docker-host) || return 1
	docker save "$image" | DOCKER_HOST=$dh docker load >/dev/null
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
		rm -f "$BATS_FILE_TMPDIR/sim-extra-hosts" "$BATS_FILE_TMPDIR/sim-machines"
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
	local dir=${SIM_HOST_DIR:-}
	if [[ -n ${1:-} ]]; then
		dir=$(sim_host_of "$1" dir) || return 1
	elif sim_real_host; then
		nvidia-smi --query-gpu=uuid --format=csv,noheader
		return
	fi
	awk '$1 == "gpu" { print $3 }' "$dir/gpus"
}

sim_gpu_count() {
	sim_gpu_uuids "$@" | grep -c . || true
}

# flannel_ports_lock: hold, until this file's suite ends, the lock of this
# machine's flannel ports (8472/udp, 51820/udp). Every sim host without a
# network of its own publishes on this machine's addresses, so two suites
# that publish them (the test run starts files side by side) take turns.
# flannel_ports_unlock releases it: the daemons the suite started hold the
# fd too (inherited), and may outlive it.
flannel_ports_lock() {
	exec {FLANNEL_PORTS_LOCK}>"${TMPDIR:-/tmp}/openshell-test-flannel-ports.lock"
	flock "$FLANNEL_PORTS_LOCK"
	export FLANNEL_PORTS_LOCK
}

flannel_ports_unlock() {
	[[ -z ${FLANNEL_PORTS_LOCK:-} ]] || flock -u "$FLANNEL_PORTS_LOCK"
}
