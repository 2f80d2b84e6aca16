#!/usr/bin/env bats
# A GPU gateway on a Docker host under WSL2 (sim-host --wsl2: the daemon's
# docker info names Microsoft's WSL2 kernel, the host's GPUs come through
# /dev/dxg with no /dev/nvidiaN and no /proc/driver/nvidia; SIMULATION,
# see docs/k3s-standin.md). Its containers get the GPUs as the toolkit
# gives them there; what one /dev/dxg cannot serve is refused with the
# reason and what works, before anything of the gateway is made; a start
# with --gpu has the device plugin's one device, which verify proves. The
# daemon is CDI-capable (--cdi), with the spec nvidia-ctk writes there.

setup_file() {
	load helpers/gateway
	sim_only "a WSL2 Docker host is made by sim-host --wsl2"
	gateway_suite_start --wsl2 --cdi --gpus 2
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

# A test that made the CDI daemon Docker 29.2, or changed its spec, leaves
# it as the suite's host has it (SIMULATION: sim-host --wsl2 --cdi).
suite_teardown() {
	local spec=$SIM_HOST_DIR/root/etc/cdi/nvidia.yaml
	rm -f "$SIM_HOST_DIR/cdi/docker-version"
	[[ ! -e $spec.away ]] || mv -f "$spec.away" "$spec"
	[[ ! -e $spec.wsl ]] || mv -f "$spec.wsl" "$spec"
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
	# Its CDI spec: one device, all, as nvidia-ctk's wsl mode writes it.
	run jq -c '[.DiscoveredDevices[].ID]' <<<"$(docker info --format '{{json .}}')"
	assert_output '["nvidia.com/gpu=all"]'
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
	# Through the CDI spec: /dev/dxg, but no libdxcore.so (toolkit#1739), so NVML fails.
	run docker run --rm --device nvidia.com/gpu=all "$img" sh -c 'ls /dev; nvidia-smi -L'
	assert_failure 255
	assert_line dxg
	assert_line "Failed to initialize NVML: N/A"
}

@test "a count or a list of GPUs, MIG, MPS and --gpu-mode cdi are refused on WSL2 with what works instead; nothing is made" {
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
	run --separate-stderr openshell gateway start --name w1 --gpu --gpu-mode cdi --port "$port"
	assert_failure 1
	[[ $stderr == *"error: --gpu-mode cdi cannot be served on a WSL2 Docker host: with CDI the pods get their GPUs from specs the device plugin writes in the gateway, whose WSL mode can miss libdxcore.so, without which NVML fails in them (nvidia-container-toolkit#1739); leave --gpu-mode out (Docker's --gpus is used there)"* ]]
	run --separate-stderr openshell gateway start --name w1 --gpu --gpu-allocation dra --port "$port"
	assert_failure 1
	[[ $stderr == *"error: --gpu-allocation dra cannot be served on a WSL2 Docker host: NVIDIA's DRA driver hands a claim its GPU as the device node /dev/nvidiaN, and WSL2's GPUs come through /dev/dxg alone; leave --gpu-allocation out (the device plugin serves WSL2), or use a Linux host"* ]]
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

@test "Docker 29.2 on WSL2 gives --gpus through the CDI spec: without libdxcore.so there refused with the fix, which works; with it taken" {
	local port spec=$SIM_HOST_DIR/root/etc/cdi/nvidia.yaml
	port=$(free_port)
	# SIMULATION: the CDI daemon answers as Docker 29.2 from now on.
	echo 29.2.0 >"$SIM_HOST_DIR/cdi/docker-version"
	run --separate-stderr openshell gateway start --gpu --name w3 --image "$IMAGE" --port "$port"
	assert_failure 7
	assert_equal "$stderr" "$(printf '%s\n' "openshell: checking Docker ..." \
		"openshell: checking the Docker host's GPUs for --gpus all ..." \
		"openshell: checking the Docker host's GPUs for --gpus all: failed" \
		"openshell: error: NVML fails in a container given the GPUs on a WSL2 Docker host (Failed to initialize NVML): this Docker (29.2 and later) gives --gpus through the NVIDIA CDI spec, which lacks libdxcore.so there (nvidia-ctk could not locate it: nvidia-container-toolkit#1739); remove /etc/cdi/nvidia.yaml and /var/run/cdi/nvidia.yaml (and stop nvidia-cdi-refresh.service from writing it again), then restart docker: --gpus then takes the toolkit's hook")"
	assert_no_gateway_resources w3
	# A spec that mounts libdxcore.so (where nvidia-ctk found it): NVML
	# works through it, and the gateway takes it.
	cp "$spec" "$spec.wsl"
	sed -i 's|^  mounts:$|&\n  - hostPath: /usr/lib/wsl/lib/libdxcore.so\n    containerPath: /usr/lib/wsl/lib/libdxcore.so\n    options: [ro, nosuid, nodev, bind]|' "$spec"
	grep -q -- '- hostPath: /usr/lib/wsl/lib/libdxcore.so' "$spec"
	run --separate-stderr openshell gateway start --gpu --name w3 --image "$IMAGE" --port "$port"
	assert_success
	assert_line "  GPUs:        1 allocatable (nvidia.com/gpu), through Docker's --gpus, which this Docker gives through CDI"
	openshell -q gateway destroy --name w3 --yes
	mv -f "$spec.wsl" "$spec"
	# The fix: without the spec, --gpus takes the hook again.
	mv "$spec" "$spec.away"
	run --separate-stderr openshell gateway start --gpu --name w3 --image "$IMAGE" --port "$port"
	assert_success
	assert_line "  GPUs:        1 allocatable (nvidia.com/gpu), through Docker's --gpus"
	openshell -q gateway destroy --name w3 --yes
}

@test "start --gpu on WSL2: Docker's --gpus, not the CDI spec; the device plugin's one device 'all' for both GPUs is the gateway's nvidia.com/gpu" {
	run --separate-stderr openshell -v gateway start --gpu --name wg --image "$IMAGE" --port "$(free_port)"
	assert_success
	assert_line "  GPUs:        1 allocatable (nvidia.com/gpu), through Docker's --gpus"
	[[ $stderr == *"GPU mode legacy (WSL2: the toolkit's hook gives libdxcore.so, which CDI specs there can miss)"* ]]
	run docker inspect openshell-cluster-wg --format '{{json .HostConfig.DeviceRequests}}'
	assert_output --partial '"Driver":"nvidia"'
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
	assert_line --regexp "^  PASS  allocatable +node allocatable nvidia.com/gpu = 4: 1 device \(WSL2's all, 2 GPUs\) x 4, time-slicing"
}

@test "gateway gpus and status on WSL2: the pod on the one device holds every GPU; NVML there has no utilisation and no processes" {
	local json
	cuda_pod wg p1 256 30
	run --separate-stderr openshell gateway gpus --name wg --json
	assert_success
	json=$output
	assert_schema gpu_view "$json"
	# Each GPU's row: the device all::K (time-slicing:4) is every GPU, held
	# by p1; its memory counts p1's context, its utilisation is unknown.
	run jq -r '.gpus[] | "\(.index) \(.uuid) \(.health) \(.sharing.mode) \(.sharing.replicas) \(.memory_used_mib) \(.utilization_percent) \([.holders[] | .pod] | join(","))"' <<<"$json"
	assert_equal "${#lines[@]}" 2
	mapfile -t uuids < <(sim_gpu_uuids)
	assert_line "0 ${uuids[0]} healthy time-slicing 4 257 null p1"
	assert_line "1 ${uuids[1]} healthy time-slicing 4 257 null p1"
	assert_equal "$(jq '.processes | length' <<<"$json")" 0
	run --separate-stderr openshell gateway gpus --name wg
	assert_line --regexp "^openshell-wg +0 +${uuids[0]} +.* +257/[0-9]+ MiB +- +time-slicing 4 +healthy +default/p1/work\$"
	# status counts the plugin's devices: one, held by one pod.
	run --separate-stderr openshell gateway status --name wg
	assert_success
	assert_line '  GPU use:     1 device: 1 in use, 0 free'
	gw_kubectl wg delete pod p1 --wait=true >/dev/null
}
