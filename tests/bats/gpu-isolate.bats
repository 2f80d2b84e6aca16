#!/usr/bin/env bats
# deploy/docker/gpu-isolate.sh, run directly (under busybox sh, as in the
# stand-in image) against a temporary tree laid out as the NVIDIA driver
# lays out /proc/driver/nvidia and /dev, each run in a mount namespace of its
# own (unshare -m), so that its mounts never reach this machine's.

bats_require_minimum_version 1.5.0
load helpers/assert

SCRIPT=$BATS_TEST_DIRNAME/../../deploy/docker/gpu-isolate.sh

U0=GPU-00000000-aaaa-0000-0000-000000000000
U1=GPU-11111111-aaaa-0000-0000-000000000000
U2=GPU-22222222-aaaa-0000-0000-000000000000

# The driver's procfs for three GPUs, by bus order, whose device minors are
# 2, 0 and 1 (the probe order, not the index); GPU 1 has MIG instances with
# the capabilities 3 to 6.
setup() {
	root=$BATS_TEST_TMPDIR
	proc=$root/proc/driver/nvidia
	dev=$root/dev
	mkdir -p "$proc/gpus" "$dev/nvidia-caps"
	printf 'RmLogonRC: 1\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n' >"$proc/params"
	gpu 0000:18:00.0 "$U0" 2
	gpu 0000:2a:00.0 "$U1" 0
	gpu 0000:3c:00.0 "$U2" 1
	cap "$proc/capabilities/gpu0/mig/gi1" 3
	cap "$proc/capabilities/gpu0/mig/gi1/ci0" 4
	cap "$proc/capabilities/gpu0/mig/gi2" 5
	cap "$proc/capabilities/gpu0/mig/gi2/ci0" 6
	cap "$proc/capabilities/mig/config" 1
	touch "$dev/nvidiactl" "$dev/nvidia0" "$dev/nvidia1" "$dev/nvidia2"
	for c in 1 2 3 4 5 6; do touch "$dev/nvidia-caps/nvidia-cap$c"; done
	export OPENSHELL_PROC_DRIVER_DIR=$proc OPENSHELL_DEV_DIR=$dev OPENSHELL_RUN_DIR=$root/run
	unset OPENSHELL_GPU_UUIDS OPENSHELL_GPU_CAPS
}

gpu() { # BUS UUID MINOR
	mkdir -p "$proc/gpus/$1"
	printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 150\nGPU UUID: \t %s\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' \
		"$2" "$1" "$3" >"$proc/gpus/$1/information"
}

cap() { # DIR MINOR
	mkdir -p "$1"
	printf 'DeviceFileMinor: %s\nDeviceFileMode: 292\nDeviceFileModify: 1\n' "$2" >"$1/access"
}

# isolate [SHELL LINES TO RUN BEFORE IT] -- [AFTER]: the script in a mount namespace of its own,
# with the lines around it (mounts it should undo, reads of what it bound).
isolate() {
	local before=${1:-} after=${2:-}
	run --separate-stderr unshare -m --propagation private sh -c "$before
		busybox sh '$SCRIPT' || exit \$?
		$after"
}

@test "a selection keeps its GPUs' nodes by device minor and removes the others', MIG capabilities too" {
	OPENSHELL_GPU_UUIDS=$U0,$U2 isolate
	assert_success
	# GPU 0 is /dev/nvidia2 and GPU 2 /dev/nvidia1: the index is not the minor.
	assert [ -e "$dev/nvidia2" ]
	assert [ -e "$dev/nvidia1" ]
	assert [ ! -e "$dev/nvidia0" ]
	assert [ -e "$dev/nvidiactl" ]
	# GPU 1 (minor 0) took its MIG instances' capabilities along; mig/config is no GPU's.
	for c in 3 4 5 6; do assert [ ! -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
	assert [ -e "$dev/nvidia-caps/nvidia-cap1" ]
	assert_output --partial "GPUs of this gateway: /dev/nvidia2 /dev/nvidia1; removed the host's others: /dev/nvidia0 /dev/nvidia-caps/nvidia-cap"
}

@test "a kept MIG GPU keeps its capabilities" {
	OPENSHELL_GPU_UUIDS=$U1 isolate
	assert_success
	assert [ -e "$dev/nvidia0" ]
	assert [ ! -e "$dev/nvidia1" ]
	assert [ ! -e "$dev/nvidia2" ]
	for c in 3 4 5 6; do assert [ -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
}

@test "MIG devices given one by one (the hook's tmpfs holds their access files): the GPU's other instances' capabilities go" {
	# The legacy hook's view of --gpus MIG-… of GPU 1 (minor 0): its GPU
	# directory and, bound by mount_procfs_mig, the access files of GPU
	# instance 1 and its compute instance (capabilities 3 and 4) only.
	OPENSHELL_GPU_UUIDS=$U1 isolate "mkdir -p '$root/hook' && cp -a '$proc/.' '$root/hook/' &&
		mount -t tmpfs tmpfs '$proc' && mkdir -p '$proc/gpus/0000:2a:00.0' '$proc/capabilities/gpu0/mig/gi1/ci0' &&
		printf 'ModifyDeviceFiles: 0\n' >'$proc/params' &&
		cp '$root/hook/gpus/0000:2a:00.0/information' '$proc/gpus/0000:2a:00.0/' &&
		cp '$root/hook/capabilities/gpu0/mig/gi1/access' '$proc/capabilities/gpu0/mig/gi1/' &&
		cp '$root/hook/capabilities/gpu0/mig/gi1/ci0/access' '$proc/capabilities/gpu0/mig/gi1/ci0/'"
	assert_success
	assert [ -e "$dev/nvidia0" ]
	for c in 3 4; do assert [ -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
	for c in 5 6; do assert [ ! -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
	assert [ -e "$dev/nvidia-caps/nvidia-cap1" ]
	assert_output --partial "removed the host's others: /dev/nvidia2 /dev/nvidia-caps/nvidia-cap5 /dev/nvidia-caps/nvidia-cap6 /dev/nvidia1"
}

@test "MIG devices given one by one through CDI (no tmpfs): the capabilities start found, OPENSHELL_GPU_CAPS, are kept" {
	# What an unprivileged container given the same CDI devices got: GPU
	# instance 2 of GPU 1 (minor 0) and its compute instance. Capability 9
	# is no GPU's: it decides nothing. The CDI hook's bind over params alone
	# is no tmpfs of the hook's: the driver's whole list is not "given".
	OPENSHELL_GPU_UUIDS=$U1 OPENSHELL_GPU_CAPS=5,6,9 isolate "printf 'ModifyDeviceFiles: 0\n' >'$root/params0' &&
		mount --bind '$root/params0' '$proc/params'"
	assert_success
	for c in 5 6; do assert [ -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
	for c in 3 4; do assert [ ! -e "$dev/nvidia-caps/nvidia-cap$c" ]; done
	assert [ -e "$dev/nvidia-caps/nvidia-cap1" ]
	assert_output --partial "removed the host's others: /dev/nvidia2 /dev/nvidia-caps/nvidia-cap3 /dev/nvidia-caps/nvidia-cap4 /dev/nvidia1"
	# None the driver lists: an error, not a gateway with every instance.
	touch "$dev/nvidia-caps/nvidia-cap3" "$dev/nvidia-caps/nvidia-cap4"
	OPENSHELL_GPU_UUIDS=$U1 OPENSHELL_GPU_CAPS=9 isolate
	assert_failure 1
	[[ $stderr == *"none of the MIG capabilities 9 is one the driver lists"* ]]
}

@test "ModifyDeviceFiles 1: a copy saying 0 is bound over params, so the driver makes no node again" {
	OPENSHELL_GPU_UUIDS=$U0 isolate "" "grep '^ModifyDeviceFiles' '$proc/params'"
	assert_success
	assert_line "ModifyDeviceFiles: 0"
	assert_line "openshell-entrypoint: the driver makes no GPU device nodes in this container (ModifyDeviceFiles: 0)"
	# Outside that mount namespace the driver's file is untouched.
	grep -qx 'ModifyDeviceFiles: 1' "$proc/params"
}

@test "ModifyDeviceFiles 0 already (the toolkit's hook did it): params is left as it is" {
	printf 'RmLogonRC: 1\nModifyDeviceFiles: 0\n' >"$proc/params"
	OPENSHELL_GPU_UUIDS=$U0 isolate "" "grep -c ' $proc/params ' /proc/self/mountinfo || true"
	assert_success
	assert_line 0
	refute_output --partial "makes no GPU device nodes"
	assert [ ! -e "$root/run/nvidia-params" ]
}

@test "libnvidia-container's tmpfs over /proc/driver/nvidia is undone first: the driver's own list decides" {
	# The legacy hook's view: only GPU 0's directory, params already 0.
	OPENSHELL_GPU_UUIDS=$U0 isolate "cp '$proc/gpus/0000:18:00.0/information' '$root/info0' &&
		mount -t tmpfs tmpfs '$proc' && mkdir -p '$proc/gpus/0000:18:00.0' &&
		printf 'ModifyDeviceFiles: 0\n' >'$proc/params' && cp '$root/info0' '$proc/gpus/0000:18:00.0/information'" \
		"grep '^ModifyDeviceFiles' '$proc/params'"
	assert_success
	# Both other GPUs were found (in the driver's list under the tmpfs) and removed.
	assert [ ! -e "$dev/nvidia0" ]
	assert [ ! -e "$dev/nvidia1" ]
	assert [ -e "$dev/nvidia2" ]
	assert_line "ModifyDeviceFiles: 0"
}

@test "a device node bound into the container is unmounted, then removed" {
	OPENSHELL_GPU_UUIDS=$U0 isolate "touch '$root/host-node' && mount --bind '$root/host-node' '$dev/nvidia0' &&
		mount --bind '$root/host-node' '$dev/nvidia0'" "grep -c ' $dev/nvidia0 ' /proc/self/mountinfo || true"
	assert_success
	assert_line 0
	assert [ ! -e "$dev/nvidia0" ]
}

@test "a selected GPU the driver does not list stops the start, naming it" {
	OPENSHELL_GPU_UUIDS=$U0,GPU-99999999-aaaa-0000-0000-000000000000 isolate
	assert_failure 1
	[[ $stderr == *"the NVIDIA driver lists no GPU GPU-99999999-aaaa-0000-0000-000000000000 in $proc/gpus"* ]]
	[[ $stderr == *"--recreate --gpus"* ]]
}

@test "no /proc/driver/nvidia/gpus: an error, not a gateway on every GPU" {
	rm -rf "$proc/gpus"
	OPENSHELL_GPU_UUIDS=$U0 isolate
	assert_failure 1
	[[ $stderr == *"$proc/gpus does not exist: the NVIDIA driver's procfs is not visible"* ]]
	assert [ -e "$dev/nvidia0" ]
}

@test "none: a gateway without GPUs keeps none; on a host without the driver nothing happens" {
	OPENSHELL_GPU_UUIDS=none isolate
	assert_success
	for n in 0 1 2; do assert [ ! -e "$dev/nvidia$n" ]; done
	assert_output --partial "GPUs of this gateway: none; removed the host's others:"
	rm -rf "$proc"
	touch "$dev/nvidia0"
	OPENSHELL_GPU_UUIDS=none isolate
	assert_success
	assert_output ""
	assert [ -e "$dev/nvidia0" ]
}

@test "without a selection (all GPUs) nothing changes" {
	isolate
	assert_success
	assert_output ""
	for n in 0 1 2; do assert [ -e "$dev/nvidia$n" ]; done
}

@test "the script is POSIX sh and shellcheck-clean" {
	run shellcheck -s sh "$SCRIPT"
	assert_success
}
