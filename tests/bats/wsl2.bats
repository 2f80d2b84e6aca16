#!/usr/bin/env bats
# A GPU gateway on a Docker host under WSL2 (sim-host --wsl2: the daemon's
# docker info names Microsoft's WSL2 kernel, the host's GPUs come through
# /dev/dxg with no /dev/nvidiaN and no /proc/driver/nvidia; SIMULATION,
# see docs/k3s-standin.md). Its containers get the GPUs as the toolkit
# gives them there; what one /dev/dxg cannot serve is refused with the
# reason and what works, before anything of the gateway is made; a start
# with --gpu has the device plugin's one device, which verify proves.

setup_file() {
	load helpers/gateway
	sim_only "a WSL2 Docker host is made by sim-host --wsl2"
	gateway_suite_start --wsl2 --gpus 2
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

@test "sim-host --wsl2 is a WSL2 host as a gateway sees it: its daemon's kernel, /dev/dxg, no /dev/nvidiaN, no driver procfs" {
	# (That the wrapper speaks for this daemon alone, gateway-node.bats shows
	# with a Linux server beside a WSL2 node.)
	run docker info --format '{{json .}}'
	assert_success
	run jq -r .KernelVersion <<<"$output"
	assert_output --regexp '-microsoft-standard-WSL2$'
	[ -c "$SIM_HOST_DIR/root/dev/dxg" ]
	run ls "$SIM_HOST_DIR/root/dev"
	refute_output --partial nvidia
	[ ! -e "$SIM_HOST_DIR/proc/driver/nvidia" ]
	# What WSL2 has not, the sim host refuses to make.
	run "$SIM_HOST_BIN" start --wsl2 --mig 0=1g.10gb
	assert_failure 2
	assert_output --partial "--wsl2 has no MIG"
	run "$SIM_HOST_BIN" start --wsl2 --no-toolkit
	assert_failure 2
	assert_output --partial "--wsl2 needs the toolkit"
}

@test "a container's GPUs on WSL2 come as the toolkit gives them there: /dev/dxg for every GPU, WSL's libraries, nvidia-smi" {
	local img=openshell-test/busybox:sim uuids
	sim_busybox_image "$img"
	mapfile -t uuids < <(sim_gpu_uuids)
	run docker run --rm --gpus all "$img" sh -c 'ls /dev; nvidia-smi -L; ls /usr/lib/x86_64-linux-gnu; [ -e /proc/driver/nvidia ] && echo driver-procfs; true'
	assert_success
	assert_line dxg
	refute_output --partial nvidiactl
	refute_output --regexp '(^|[[:space:]])nvidia[0-9]'
	assert_line --regexp "^GPU 0: .+ \(UUID: ${uuids[0]}\)$"
	assert_line --regexp "^GPU 1: .+ \(UUID: ${uuids[1]}\)$"
	assert_line libdxcore.so
	assert_line libcuda.so.1
	refute_line driver-procfs   # WSL2's kernel has no NVIDIA module
	# The driver cannot filter GPUs there: one asked for, every one seen.
	run docker run --rm --gpus '"device=1"' "$img" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" 2
	# utility alone: nvidia-smi and NVML, no libcuda.
	run docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=utility "$img" sh -c 'nvidia-smi -L; ls /usr/lib/x86_64-linux-gnu'
	assert_success
	assert_line --regexp "^GPU 1: .+ \(UUID: ${uuids[1]}\)$"
	assert_line libnvidia-ml.so.1
	refute_line libcuda.so.1
	# A privileged container has the host's one GPU device.
	run docker run --rm --privileged "$img" ls /dev
	assert_line dxg
	refute_output --partial nvidia
}

@test "a count or a list of GPUs, MIG and MPS are refused on WSL2 with what works instead; nothing is made" {
	local port
	port=$(free_port)
	run --separate-stderr openshell gateway start --name w1 --gpus 1 --port "$port"
	assert_failure 1
	[[ $stderr == *"openshell: error: --gpus 1 cannot be served on a WSL2 Docker host: its GPUs come through one device, /dev/dxg, all of them or none; use --gpu (all of them), or a Linux host to pick among them"* ]]
	run --separate-stderr openshell gateway start --name w1 --gpus 0,1 --port "$port"
	assert_failure 1
	[[ $stderr == *"error: --gpus 0,1 cannot be served on a WSL2 Docker host"* ]]
	run --separate-stderr openshell gateway start --name w1 --gpu --mig-strategy mixed --port "$port"
	assert_failure 1
	[[ $stderr == *"error: --mig-strategy mixed cannot be served on a WSL2 Docker host: WSL2 has no MIG"* ]]
	run --separate-stderr openshell gateway start --name w1 --gpu --gpu-sharing mps:2 --port "$port"
	assert_failure 1
	[[ $stderr == *"error: --gpu-sharing mps cannot be served on a WSL2 Docker host: MPS needs the GPUs in compute mode EXCLUSIVE_PROCESS, which WSL2's driver cannot set; use --gpu-sharing time-slicing:N"* ]]
	assert_no_gateway_resources w1
	run docker ps -aq
	assert_output ""
	[ ! -e "$XDG_CONFIG_HOME/openshell/gateways/w1" ]
}

@test "Docker Desktop's engine is named as such in the refusal" {
	# SIMULATION: sim-host --docker-desktop's name for the daemon, set on this one.
	echo "Docker Desktop" >"$SIM_HOST_DIR/wsl2/os"
	run --separate-stderr openshell gateway start --name w2 --gpus 1 --port "$(free_port)"
	echo >"$SIM_HOST_DIR/wsl2/os"
	assert_failure 1
	[[ $stderr == *"error: --gpus 1 cannot be served on Docker Desktop on WSL2: "* ]]
	assert_no_gateway_resources w2
}

@test "start --gpu on WSL2: the device plugin's one device 'all' for both GPUs is the gateway's nvidia.com/gpu" {
	run --separate-stderr openshell gateway start --gpu --name wg --image "$IMAGE" --port "$(free_port)"
	assert_success
	assert_output --partial "GPUs:"
	assert_output --partial "1 allocatable (nvidia.com/gpu)"
	run gw_kubectl wg get nodes -o jsonpath='{.items[0].status.allocatable.nvidia\.com/gpu}'
	assert_output 1
	run docker exec openshell-cluster-wg ls /dev
	assert_line dxg
	refute_output --partial nvidiactl
}

@test "time-slicing on WSL2 shares the one device: time-slicing:4 is 4 allocatable, whatever the GPUs" {
	run --separate-stderr openshell gateway start --gpu --name wg --gpu-sharing time-slicing:4 --image "$IMAGE"
	assert_success
	assert_output --partial "4 allocatable (nvidia.com/gpu)"
	run gw_kubectl wg get nodes -o jsonpath='{.items[0].status.allocatable.nvidia\.com/gpu}'
	assert_output 4
}

@test "verify on WSL2: a pod's one device is every GPU, and each check says so" {
	run --separate-stderr openshell gateway verify --name wg
	assert_success
	assert_line --regexp '^  PASS  device-request .*: exactly --gpus all$'
	assert_line --regexp '^  PASS  smoke-pod .*its one device is all 2 GPUs \(WSL2.s device all\)'
	assert_line --regexp '^  PASS  privileged-pod  privileged pod .*its one device is all 2 GPUs'
	assert_line --regexp '^  PASS  pod-isolation .*sees none'
	assert_line --regexp '^  PASS  allocatable .*= 4'
}
