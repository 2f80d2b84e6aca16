#!/usr/bin/env bats
# doctor catches the GPU pitfalls users hit. It reads the Docker host's files
# in a container of the cluster image; on the sim host, the binds of the
# host's /, /dev, /sys and /run show its root/ (SIMULATION: device nodes, /sys
# and /etc as such hosts have them, made there by each test and removed after
# it). The driver's /proc/driver/nvidia is the sim host's. The daemon's
# configuration that a test bed daemon cannot have (the systemd cgroup driver, rootless) comes from a
# docker wrapper that edits `docker info`'s answer (SIMULATION, labelled in
# each test). Each pitfall is one warn or fail line with its fix, and a check
# of its own name in --json.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 1
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	sim_only "the host's pitfalls are made in the sim host's own files"
	ROOT=$SIM_HOST_DIR/root
	mkdir -p "$ROOT/sys/devices/soc0"
	export OPENSHELL_CLUSTER_IMAGE=$IMAGE
}

suite_teardown() {
	[[ ! -e $BATS_TEST_TMPDIR/nvidia0 ]] || mv "$BATS_TEST_TMPDIR/nvidia0" "$ROOT/dev/"
	[[ ! -e $BATS_TEST_TMPDIR/proc ]] || mv "$BATS_TEST_TMPDIR/proc" "$SIM_HOST_DIR/"
	rm -rf "${ROOT:?}/dev/dxg" "$ROOT/etc/nv_tegra_release" "$ROOT/sys/devices" "$ROOT/etc/cdi" "$ROOT"/dev/char/*
}

check() { # NAME: "STATUS EVIDENCE (FIX)" of that check in doctor --json, or nothing
	run --separate-stderr openshell doctor --json
	jq -r --arg n "$1" '.checks[] | select(.name == $n) | "\(.status) \(.evidence) (\(.fix // ""))"' <<<"$output"
}

# SIMULATION: a daemon whose `docker info` says what jq program $1 makes of it.
fake_info() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/docker" <<-EOS
		#!/bin/bash
		if [ "\$1" = info ] && [ "\$*" = "info --format {{json .}}" ]; then
			$(command -v docker) "\$@" | jq -c '$1'
			exit "\${PIPESTATUS[0]}"
		fi
		exec $(command -v docker) "\$@"
	EOS
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	export OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker
}

@test "doctor reads the Docker host in a throwaway container of the cluster image, and names the host" {
	local before
	before=$(docker ps -aq | wc -l)
	run check docker-host
	assert_output "pass Docker host $(docker info --format '{{.Name}}') (unix://$SIM_HOST_DIR/docker.sock): read in a container of $IMAGE ()"
	[ "$(docker ps -aq | wc -l)" -eq "$before" ]   # removed on exit
	# The driver and GPUs are the sim host's (its procfs), not this machine's, which has none.
	run check nvidia-driver
	assert_output "pass NVIDIA driver 550.54.15: 1 GPU (NVIDIA H100 80GB HBM3) ()"
	# The toolkit's hook is looked for on the host, whatever this machine's PATH holds.
	run check nvidia-container-runtime-hook
	assert_output "pass nvidia-container-runtime-hook: /usr/bin/nvidia-container-runtime-hook on the Docker host ()"
	mv "$ROOT/usr/bin/nvidia-container-runtime-hook" "$BATS_TEST_TMPDIR/"
	run check nvidia-container-runtime-hook
	mv "$BATS_TEST_TMPDIR/nvidia-container-runtime-hook" "$ROOT/usr/bin/"
	assert_output --partial "warn nvidia-container-runtime-hook: not on the Docker host"
	assert_output --partial "(install the NVIDIA Container Toolkit on the Docker host"
}

@test "without the cluster image, the host is not read: a skip that says how to get it" {
	OPENSHELL_CLUSTER_IMAGE=openshell-cluster:absent run --separate-stderr openshell doctor --json
	assert_success
	run jq -r '.checks[] | select(.name == "docker-host") | "\(.status) \(.evidence) (\(.fix))"' <<<"$output"
	assert_output --partial "skip Docker host "
	assert_output --partial "not read, cluster image openshell-cluster:absent not here yet"
	assert_output --partial "(build the image with 'openshell image build'"
	OPENSHELL_CLUSTER_IMAGE=openshell-cluster:absent run --separate-stderr openshell doctor --json
	run jq -r '[.checks[].name | select(IN("nvidia-driver", "nvidia-ctk", "wsl2"))] | length' <<<"$output"
	assert_output 0
}

@test "an ordinary host shows none of the pitfalls" {
	run check wsl2
	assert_output ''
	for n in tegra cdi-spec-stale systemd-cgroup-gpus rootless-docker; do
		run check "$n"
		assert_output ''
	done
}

@test "WSL2: /dev/dxg and no /dev/nvidiaN is a warning with what to expect" {
	touch "$ROOT/dev/dxg"
	run check wsl2
	assert_output ''   # with /dev/nvidia0 beside it, the GPUs are the driver's own
	mv "$ROOT/dev/nvidia0" "$BATS_TEST_TMPDIR/"
	run check wsl2
	mv "$BATS_TEST_TMPDIR/nvidia0" "$ROOT/dev/"
	assert_output --partial "warn WSL2: the GPUs come through /dev/dxg, with no /dev/nvidiaN, so the device plugin advertises them as one device"
	assert_output --partial "MIG, MPS sharing and --gpu-allocation dra are refused there"
	assert_output --partial "(use --gpu, not a count or a list; expect allocatable nvidia.com/gpu 1"
	run check nvidia-driver
	assert_output --partial "pass NVIDIA driver 550.54.15"   # the sim host's procfs: a module of its own
}

@test "WSL2's kernel has no NVIDIA module: the driver is the Windows host's, and doctor says where it is installed" {
	# SIMULATION: WSL2 as sim-host --wsl2 makes it, on this file's host:
	# /dev/dxg, no /dev/nvidiaN, no /proc/driver/nvidia.
	touch "$ROOT/dev/dxg"
	mv "$ROOT/dev/nvidia0" "$BATS_TEST_TMPDIR/"
	mv "$SIM_HOST_DIR/proc" "$BATS_TEST_TMPDIR/"
	run check nvidia-driver
	assert_output "skip NVIDIA driver: not in the WSL2 kernel (no /proc/driver/nvidia), which passes the Windows host's GPUs through /dev/dxg (install NVIDIA's driver for WSL on Windows (R495 or later); /usr/lib/wsl/lib/nvidia-smi in the distribution shows it)"
	run check wsl2
	assert_output --partial "warn WSL2: the GPUs come through /dev/dxg"
}

@test "Docker Desktop on WSL2, by its docker info alone: the warning names the setting that gives its engine the GPUs" {
	# SIMULATION: the daemon's kernel and name as Docker Desktop's engine reports them.
	fake_info '.KernelVersion = "6.6.87.2-microsoft-standard-WSL2" | .OperatingSystem = "Docker Desktop"'
	run check wsl2
	assert_output --partial "warn Docker Desktop on WSL2: the GPUs come through /dev/dxg"
	assert_output --partial "Settings > General > Use the WSL 2 based engine"
	fake_info '.KernelVersion = "6.1.0-27-amd64"'
	run check wsl2
	assert_output ""
}

@test "Jetson/Tegra: no NVML, said with what works" {
	echo "Tegra" >"$ROOT/sys/devices/soc0/family"
	run check tegra
	assert_output --partial "warn Jetson/Tegra: there is no NVML"
	assert_output --partial "deviceDiscoveryStrategy=tegra"
	rm "$ROOT/sys/devices/soc0/family"
	touch "$ROOT/etc/nv_tegra_release"
	run check tegra
	assert_output --partial "warn Jetson/Tegra"
}

@test "a CDI spec made for another driver than the loaded one is stale, with the command that remakes it" {
	# The sim host's driver (its /proc/driver/nvidia/version) is 550.54.15.
	mkdir -p "$ROOT/etc/cdi"
	cat >"$ROOT/etc/cdi/nvidia.yaml" <<-YAML
		cdiVersion: 0.5.0
		kind: nvidia.com/gpu
		containerEdits:
		  mounts:
		  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
		    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
	YAML
	run check cdi-spec-stale
	assert_output --partial 'warn CDI spec /etc/cdi/nvidia.yaml was made for driver 535.104.05, but driver 550.54.15 is loaded'
	assert_output --partial "(run 'nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml'"
	sed -i 's/535.104.05/550.54.15/g' "$ROOT/etc/cdi/nvidia.yaml"
	run check cdi-spec-stale
	assert_output ''
}

@test "the systemd cgroup driver without /dev/char links loses GPUs on a daemon reload (toolkit#48)" {
	# The sim host's /dev/nvidia0 is a character device 195:0, as the driver makes it.
	fake_info '.CgroupDriver = "systemd"'   # SIMULATION: the test bed's daemon uses cgroupfs
	run check systemd-cgroup-gpus
	assert_output --partial 'warn Docker uses the systemd cgroup driver and /dev/char/195:0 is missing'
	assert_output --partial '"Failed to initialize NVML: Unknown Error"'
	assert_output --partial "nvidia-ctk system create-dev-char-symlinks --create-all"
	ln -s ../nvidia0 "$ROOT/dev/char/195:0"
	run check systemd-cgroup-gpus
	assert_output ''
}

@test "rootless Docker fails doctor, naming the daemon to use" {
	fake_info '.SecurityOptions += ["name=rootless"]'   # SIMULATION: the test bed's daemon runs as root
	run --separate-stderr openshell doctor
	assert_failure 1
	assert_line --partial "fail  Docker runs rootless: the gateway's k3s needs a privileged container"
	assert_line --partial "(use the system's Docker daemon"
}

# bats test_tags=lane
@test "a daemon with neither the nvidia runtime nor CDI GPUs is a warning; CDI GPUs alone are fine" {
	run check docker-runtimes
	assert_output --partial "warn docker runtimes: "
	assert_output --partial "no nvidia runtime and no CDI GPUs"
	fake_info '.DiscoveredDevices = [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}]'   # SIMULATION: Docker >= 28.2
	run check docker-runtimes
	assert_output --partial "pass docker runtimes: "
	assert_output --partial "CDI names the GPUs"
}

# bats test_tags=lane
@test "doctor says which way gateway start --gpu would give the GPUs: CDI devices or --gpus" {
	if ! sim_real_host; then   # the sim host's dockerd 20.10 has no CDI; a real one may
		run check gpu-mode
		assert_output --partial "pass gateway start --gpu gives GPUs through Docker's --gpus (the daemon lists no NVIDIA CDI devices)"
	fi
	fake_info '.DiscoveredDevices = [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}, {"Source": "cdi", "ID": "nvidia.com/gpu=all"}]'   # SIMULATION: Docker >= 28.2
	run check gpu-mode
	assert_output --partial "pass gateway start --gpu gives GPUs as CDI devices (nvidia.com/gpu=0, ...); --gpu-mode legacy uses --gpus"
}
