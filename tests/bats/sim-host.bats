#!/usr/bin/env bats
# The test bed itself: tests/testbed/sim-host (a real private dockerd), the runtime shim (test-bed
# adaptation) and the SIMULATED NVIDIA Container Toolkit (hook + nvidia-smi). GPU-facing tests hold
# on a real GPU host too (OPENSHELL_TEST_REAL_HOST=1); sim-host's own behaviour is guarded by
# sim_only.

bats_require_minimum_version 1.5.0
load helpers/assert
load helpers/sim-host

IMG=openshell-test/busybox:sim

setup_file() {
	# Device minors in the other order than the indices, as a driver's probe may give them.
	sim_host_start --gpus 2 --minors 1,0
	sim_busybox_image "$IMG"
}

teardown_file() {
	sim_host_stop
}

teardown() {
	if [[ -n ${CID:-} ]]; then
		docker rm -f "$CID" >/dev/null 2>&1 || true
	fi
}

# --- GPUs through docker run --gpus ---------------------------------------------------------

@test "--gpus all: nvidia-smi -L lists every GPU of the host, with its UUID" {
	mapfile -t uuids < <(sim_gpu_uuids)
	run docker run --rm --gpus all "$IMG" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" "${#uuids[@]}"
	for i in "${!uuids[@]}"; do
		assert_line --index "$i" --regexp "^GPU $i: .+ \(UUID: ${uuids[i]}\)$"
	done
}

@test "the simulated host has the GPUs sim-host start was given" {
	sim_only "checks the configured inventory"
	run docker run --rm --gpus all "$IMG" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_line --index 0 --regexp '^GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)$'
	assert_line --index 1 --regexp '^GPU 1: NVIDIA H100 80GB HBM3 \(UUID: GPU-'
	[[ ${lines[0]#*UUID} != "${lines[1]#*UUID}" ]]
}

@test "--gpus device=1: one GPU, GPU 1's UUID, numbered 0 in the container" {
	(($(sim_gpu_count) >= 2)) || skip "needs a host with at least 2 GPUs"
	uuid1=$(sim_gpu_uuids | sed -n 2p)
	run docker run --rm --gpus '"device=1"' "$IMG" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_output --regexp "^GPU 0: .+ \(UUID: $uuid1\)$"
}

# The device minor the driver gave the GPU of UUID $1, from its procfs.
minor_of() {
	# shellcheck disable=SC2016 # expanded by the shell in the container
	docker run --rm "$IMG" sh -c 'grep -l "^GPU UUID:[[:space:]]*$1\$" /proc/driver/nvidia/gpus/*/information |
		xargs sed -n "s/^Device Minor:[[:space:]]*//p"' sh "$1"
}

@test "--gpus device=UUID selects that GPU; its device node is the driver's minor, not its index" {
	(($(sim_gpu_count) >= 2)) || skip "needs a host with at least 2 GPUs"
	uuid1=$(sim_gpu_uuids | sed -n 2p)
	minor=$(minor_of "$uuid1")
	[[ $minor =~ ^[0-9]+$ ]]
	run docker run --rm --gpus "\"device=$uuid1\"" "$IMG" sh -c \
		'nvidia-smi --query-gpu=uuid --format=csv,noheader; ls /dev | grep "^nvidia[0-9]"; test -c /dev/nvidiactl'
	assert_success
	assert_equal "${lines[*]}" "$uuid1 nvidia$minor"
}

@test "the driver's /proc/driver/nvidia is in every container; the hook's tmpfs lists its GPUs alone, ModifyDeviceFiles 0" {
	n=$(sim_gpu_count)
	run docker run --rm "$IMG" sh -c 'grep ^ModifyDeviceFiles /proc/driver/nvidia/params; ls /proc/driver/nvidia/gpus | wc -l'
	assert_success
	assert_output "ModifyDeviceFiles: 1
$n"
	uuid1=$(sim_gpu_uuids | sed -n 2p)
	run docker run --rm --gpus '"device=1"' "$IMG" sh -c 'grep ^ModifyDeviceFiles /proc/driver/nvidia/params
		cat /proc/driver/nvidia/gpus/*/information'
	assert_success
	assert_line "ModifyDeviceFiles: 0"
	assert_line --regexp "^GPU UUID:[[:space:]]+$uuid1\$"
	assert_equal "$(grep -c '^GPU UUID' <<<"$output")" 1
}

@test "a privileged container has every GPU's node, whatever --gpus selected, and nvidia-smi sees them all" {
	# moby's WithDevices gives a privileged container the host's /dev (NVIDIA/nvidia-docker#764).
	(($(sim_gpu_count) >= 2)) || skip "needs a host with at least 2 GPUs"
	run docker run --rm --privileged --gpus '"device=1"' "$IMG" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" "$(sim_gpu_count)"
}

@test "privileged, the driver makes a removed node again while ModifyDeviceFiles is 1, not once it is 0" {
	(($(sim_gpu_count) >= 2)) || skip "needs a host with at least 2 GPUs"
	uuid0=$(sim_gpu_uuids | sed -n 1p)
	minor=$(minor_of "$uuid0")
	# Off with the hook's tmpfs: the driver's own params (1); then the same with 0 bound over it.
	run docker run --rm --privileged --gpus all "$IMG" sh -c "umount /proc/driver/nvidia
		rm /dev/nvidia$minor; nvidia-smi -L | wc -l; test -c /dev/nvidia$minor && echo made-again
		sed 's/^ModifyDeviceFiles: 1/ModifyDeviceFiles: 0/' /proc/driver/nvidia/params >/params0
		mount --bind /params0 /proc/driver/nvidia/params
		rm /dev/nvidia$minor; nvidia-smi -L | wc -l; test -c /dev/nvidia$minor || echo stays-gone"
	assert_success
	assert_output "$(sim_gpu_count)
made-again
$(($(sim_gpu_count) - 1))
stays-gone"
}

@test "an unknown device fails the container start like the real toolkit" {
	n=$(sim_gpu_count)
	run docker run --rm --gpus "\"device=$((n + 5))\"" "$IMG" true
	assert_failure 125
	assert_output --partial "nvidia-container-cli: device error: $((n + 5)): unknown device"
}

@test "docker inspect shows the DeviceRequest (driver nvidia, all GPUs, capabilities)" {
	CID=$(docker create --gpus '"capabilities=gpu,utility,compute",driver=nvidia,all' "$IMG" nvidia-smi -L)
	run docker inspect --format '{{json .HostConfig.DeviceRequests}}' "$CID"
	assert_success
	run jq -c '.[0] | {Driver, Count, Capabilities: [.Capabilities[] | unique]}' <<<"$output"
	assert_output '{"Driver":"nvidia","Count":-1,"Capabilities":[["compute","gpu","utility"]]}'
	run docker start -a "$CID"
	assert_success
	assert_equal "${#lines[@]}" "$(sim_gpu_count)"
}

@test "--query-gpu: csv with and without header, any fields in the order asked" {
	sim_only "exact model, memory and UUIDs of the simulated inventory"
	mapfile -t uuids < <(sim_gpu_uuids)
	run docker run --rm --gpus all "$IMG" nvidia-smi --query-gpu=index,name,uuid,memory.total --format=csv,noheader
	assert_success
	assert_output "0, NVIDIA H100 80GB HBM3, ${uuids[0]}, 81559 MiB
1, NVIDIA H100 80GB HBM3, ${uuids[1]}, 81559 MiB"
	run docker run --rm --gpus all "$IMG" nvidia-smi --query-gpu=uuid,memory.total,index --format=csv
	assert_success
	assert_output "uuid, memory.total [MiB], index
${uuids[0]}, 81559 MiB, 0
${uuids[1]}, 81559 MiB, 1"
	run docker run --rm --gpus all "$IMG" nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits
	assert_output "81559
81559"
	run docker run --rm --gpus all "$IMG" nvidia-smi --query-gpu=bogus --format=csv
	assert_failure 2
	assert_output --partial 'Field "bogus" is not a valid field to query.'
}

@test "plain nvidia-smi prints the summary table with every GPU" {
	run docker run --rm --gpus all "$IMG" nvidia-smi
	assert_success
	assert_output --regexp 'NVIDIA-SMI [0-9.]+ +Driver Version: [0-9.]+ +CUDA Version: [0-9.]+'
	for ((i = 0; i < $(sim_gpu_count); i++)); do
		assert_line --regexp "^\| +$i +NVIDIA .+\| +[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.0 "
	done
	assert_output --partial '| Processes:'
	# The table is rectangular, as the real tool's is (91 columns in the 550 series).
	run bash -c "docker run --rm --gpus all $IMG nvidia-smi | sed 1d | grep '^[|+]' | awk '{ print length }' | sort -u"
	assert_success
	assert_equal "${#lines[@]}" 1
}

@test "a container without --gpus has no GPU devices and no nvidia-smi" {
	run docker run --rm "$IMG" sh -c \
		'for f in /dev/nvidia*; do [ -e "$f" ] && echo "device $f"; done; command -v nvidia-smi || echo "no nvidia-smi"; env | grep ^NVIDIA_ || true'
	assert_success
	assert_output "no nvidia-smi"
}

@test "NVIDIA_DRIVER_CAPABILITIES without utility: devices but no nvidia-smi (as the real toolkit)" {
	run docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute "$IMG" sh -c \
		'test -c /dev/nvidia0 && echo has-device; command -v nvidia-smi || echo no-smi'
	assert_success
	assert_output "has-device
no-smi"
}

@test "nvidia-smi shows only the caller's SIM_RUNTIME_DEVICES (the devices the k3s stand-in's runtime gives a pod)" {
	sim_only "a real pod has only its own devices; the stand-in's pods run in the gateway itself"
	uuid1=$(sim_gpu_uuids | sed -n 2p)
	run docker run --rm --gpus all "$IMG" sh -c "SIM_RUNTIME_DEVICES=$uuid1 nvidia-smi -L"
	assert_success
	assert_output --regexp "^GPU 0: .+ \(UUID: $uuid1\)$"
	run docker run --rm --gpus all "$IMG" sh -c "SIM_RUNTIME_DEVICES=1 nvidia-smi --query-gpu=index,uuid --format=csv,noheader"
	assert_output "0, $uuid1"
	for none in none void ''; do
		run docker run --rm --gpus all "$IMG" sh -c "SIM_RUNTIME_DEVICES='$none' nvidia-smi -L"
		assert_failure 6
		assert_output "No devices were found"
	done
	# NVML reads no such variable: NVIDIA_VISIBLE_DEVICES changes nothing.
	run docker run --rm --gpus all "$IMG" sh -c "NVIDIA_VISIBLE_DEVICES=$uuid1 nvidia-smi -L"
	assert_equal "${#lines[@]}" "$(sim_gpu_count)"
}

# --- privileged containers (runtime shim) ---------------------------------------------------

@test "--privileged containers run and docker exec into them works" {
	CID=$(docker run -d --privileged "$IMG" sleep 300)
	run docker exec "$CID" sh -c 'echo exec-ok; grep ^CapEff /proc/self/status'
	assert_success
	assert_line --index 0 exec-ok
	# CAP_SYS_ADMIN (bit 21) survives the shim: only what the host cannot grant is dropped.
	eff=$(awk '{ print $2 }' <<<"${lines[1]}")
	assert_equal $(((16#$eff >> 21) & 1)) 1
	run docker exec --privileged "$CID" true
	assert_success
}

@test "runc-shim drops exactly the capabilities outside this host's bounding set" {
	sim_only "unit test of the test-bed runtime shim"
	bundle=$BATS_TEST_TMPDIR/bundle fake=$BATS_TEST_TMPDIR/fakebin
	mkdir -p "$bundle" "$fake"
	printf '#!/bin/sh\necho "runc $*"\n' >"$fake/runc"
	chmod +x "$fake/runc"
	all='["CAP_CHOWN","CAP_SYS_ADMIN","CAP_SYS_RESOURCE","CAP_CHECKPOINT_RESTORE","CAP_MKNOD"]'
	printf '{"process":{"capabilities":{"bounding":%s,"effective":%s,"ambient":null}},"keep":1}' "$all" "$all" >"$bundle/config.json"
	printf '{"capabilities":{"bounding":%s,"permitted":%s},"args":["sh"]}' "$all" "$all" >"$bundle/process.json"
	bnd=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
	expected=
	for cap in CHOWN:0 SYS_ADMIN:21 SYS_RESOURCE:24 CHECKPOINT_RESTORE:40 MKNOD:27; do
		if (((16#$bnd >> ${cap#*:}) & 1)); then expected+=${expected:+,}\"CAP_${cap%:*}\"; fi
	done
	expected="[$expected]"

	run env PATH="$fake:$PATH" "$SIM_HOST_REPO/tests/testbed/host/runc-shim" --root /r --log /l create --bundle "$bundle" --pid-file p ctr
	assert_success
	assert_output "runc --root /r --log /l create --bundle $bundle --pid-file p ctr"
	run jq -c '[.process.capabilities.bounding, .process.capabilities.effective, .process.capabilities.ambient, .keep]' "$bundle/config.json"
	assert_output "[$expected,$expected,null,1]"

	run env PATH="$fake:$PATH" "$SIM_HOST_REPO/tests/testbed/host/runc-shim" --root /r exec --process "$bundle/process.json" --detach ctr
	assert_success
	run jq -c '[.capabilities.bounding, .capabilities.permitted, .args]' "$bundle/process.json"
	assert_output "[$expected,$expected,[\"sh\"]]"
}

# --- sim-host itself ------------------------------------------------------------------------

@test "sim-host env prints an eval-able DOCKER_HOST and the hook's PATH; status says running (exit 0)" {
	sim_only "sim-host's own interface"
	run "$SIM_HOST_BIN" env
	assert_success
	assert_line "export DOCKER_HOST=unix://$SIM_HOST_DIR/docker.sock"
	assert_line "export PATH=$SIM_HOST_DIR/host-bin:\"\$PATH\""
	(eval "$output" && [[ $DOCKER_HOST == "unix://$SIM_HOST_DIR/docker.sock" ]] &&
		[[ $(command -v nvidia-container-runtime-hook) == "$SIM_HOST_DIR/host-bin/nvidia-container-runtime-hook" ]])
	run "$SIM_HOST_BIN" status
	assert_success
	assert_output --regexp "^running: pid [0-9]+, DOCKER_HOST=unix://$SIM_HOST_DIR/docker.sock, 2 simulated GPUs, toolkit: yes$"
	run "$SIM_HOST_BIN" start
	assert_failure 1
	assert_output --partial "already running in $SIM_HOST_DIR"
}

@test "sim-host: usage errors exit 2; status of a stopped host exits 1; stop of it is a no-op" {
	sim_only "sim-host's own interface"
	run "$SIM_HOST_BIN" frobnicate
	assert_failure 2
	run "$SIM_HOST_BIN" start --gpus many
	assert_failure 2
	for minors in 0,0 1 1,x 1,254; do
		run "$SIM_HOST_BIN" start --gpus 2 --minors "$minors"
		assert_failure 2
		assert_output --partial -- "--minors must"
	done
	dir=/tmp/osim-never-started-$$
	SIM_HOST_DIR=$dir run "$SIM_HOST_BIN" status
	assert_failure 1
	assert_output "stopped: $dir"
	SIM_HOST_DIR=$dir run "$SIM_HOST_BIN" stop
	assert_success
	assert_output --partial "nothing to do"
	[[ ! -e $dir ]]
}

@test "sim-host names the Debian package of a missing prerequisite" {
	sim_only "sim-host's own interface"
	bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	# Everything on PATH but jq (later directories override earlier ones, as on PATH).
	for d in /bin /sbin /usr/bin /usr/sbin /usr/local/bin /usr/local/sbin; do
		ln -sf "$d"/* "$bin"/ 2>/dev/null || true
	done
	rm -f "$bin/jq"
	SIM_HOST_DIR=/tmp/osim-nojq-$$ PATH=$bin run "$SIM_HOST_BIN" start
	assert_failure 1
	assert_output "sim-host: error: 'jq' not found; install the Debian package 'jq' (apt-get install jq)"
}

@test "sim_host_start fails (not skips) with the daemon's log when dockerd cannot start" {
	sim_only "starts a sim host"
	fake=$BATS_TEST_TMPDIR/fakebin
	mkdir -p "$fake"
	printf '#!/bin/sh\necho "failed to start daemon: simulated start-up failure" >&2\nexit 1\n' >"$fake/dockerd"
	chmod +x "$fake/dockerd"
	PATH=$fake:$PATH run sim_host_start
	assert_failure
	assert_output --partial "dockerd exited during start-up"
	assert_output --partial "failed to start daemon: simulated start-up failure"
	dir=$(grep -o '/tmp/osim\.[A-Za-z0-9]*' <<<"$output" | head -n 1)
	[[ -n $dir && ! -e $dir ]]
}

@test "--no-toolkit: --gpus fails with Docker's own error, as on a host without the toolkit" {
	sim_only "a host without the NVIDIA Container Toolkit exists only as a sim host"
	sim_host_extra --no-toolkit
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST sim_busybox_image "$IMG"
	run env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" docker run --rm --gpus all "$IMG" nvidia-smi -L
	assert_failure 125
	assert_output --partial 'could not select device driver "" with capabilities: [[gpu]]'
	run env SIM_HOST_DIR="$SIM_HOST_EXTRA_DIR" "$SIM_HOST_BIN" status
	assert_output --partial "toolkit: no"
}

@test "--cdi: docker info lists the spec's devices; a stale spec (--cdi-stale) fails a CDI start" {
	sim_only "the CDI-capable daemon is a simulation in front of dockerd 20.10"
	sim_host_extra --gpus 1 --cdi --cdi-stale --mig 0=1g.10gb
	cdi_docker=$SIM_HOST_EXTRA_DIR/host-bin/docker
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST sim_busybox_image "$IMG"
	run env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" "$cdi_docker" info --format '{{json .}}'
	assert_success
	run jq -r '[.DiscoveredDevices[].ID] | join(" ")' <<<"$output"
	assert_output --regexp '^nvidia.com/gpu=0 nvidia.com/gpu=GPU-[0-9a-f-]+ nvidia.com/gpu=0:0 nvidia.com/gpu=MIG-[0-9a-f-]+ nvidia.com/gpu=all$'
	run -127 env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" "$cdi_docker" run --rm --device nvidia.com/gpu=0 "$IMG" nvidia-smi -L
	assert_failure 127
	assert_output --partial 'error mounting "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"'
	run env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" "$cdi_docker" run --rm --device nvidia.com/gpu=7 "$IMG" true
	assert_failure 125
	assert_output --partial 'docker: Error response from daemon: CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=7'
	run "$SIM_HOST_BIN" start --cdi-stale
	assert_failure 2
	assert_output --partial "--cdi-stale needs --cdi"
}

@test "two sim hosts side by side are independent; stop leaves no process, mount or dir" {
	sim_only "starts and stops sim hosts"
	sim_host_extra --gpus 1 --model "NVIDIA A100-SXM4-40GB" --memory 40960
	other=$SIM_HOST_EXTRA_DOCKER_HOST odir=$SIM_HOST_EXTRA_DIR
	sim_busybox_image "$IMG" # on the current host: already there
	DOCKER_HOST=$other sim_busybox_image "$IMG"

	run env DOCKER_HOST="$other" docker run --rm --gpus all "$IMG" nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
	assert_success
	assert_output "0, NVIDIA A100-SXM4-40GB, 40960 MiB"
	# Different hosts, different GPUs.
	other_uuid=$(awk '$1 == "gpu" { print $3 }' "$odir/gpus")
	refute [ -z "$other_uuid" ]
	run sim_gpu_uuids
	refute_output --partial "$other_uuid"

	# A container on one engine does not exist on the other.
	oc=$(env DOCKER_HOST="$other" docker run -d --privileged "$IMG" sleep 300)
	run docker ps -aq --no-trunc
	refute_output --partial "$oc"

	run sim_host_stop_dir "$odir"
	assert_success
	# Anchored, so that grep does not find its own argv; processes that end
	# while grep reads /proc are not ours to report.
	run --separate-stderr grep -lzE "^${odir//./\\.}/" /proc/[0-9]*/cmdline
	assert_output ""
	run grep -F " $odir" /proc/self/mountinfo
	assert_failure
	[[ ! -e $odir ]]
	# The first host is untouched.
	run docker run --rm --gpus all "$IMG" nvidia-smi -L
	assert_success
	assert_equal "${#lines[@]}" 2
}

# poll N CMD…: CMD succeeds within N tries, half a second apart.
poll() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.5
	done
	return 1
}

@test "--own-network: a machine apart, with its own address and hostname, that reaches this one; stop takes its link" {
	sim_only "a machine apart exists only as a sim host"
	sim_host_machine gpu-b --gpus 1 --tls-tcp :2376
	DOCKER_HOST=$(sim_host_of gpu-b docker-host) sim_busybox_image "$IMG"
	addr=$(sim_host_of gpu-b addr) up=$(sim_host_of gpu-b uplink) odir=$(sim_host_of gpu-b dir)
	[[ $addr =~ ^10\.214\.[0-9]+\.2$ && $up == "${addr%.2}.1" ]]
	run sim_docker gpu-b info --format '{{.Name}}'
	assert_output gpu-b
	# Its daemon over TCP and TLS, at its own address, as a docker context would reach it.
	run env -u DOCKER_HOST docker --tlsverify --tlscacert "$odir/tls/ca.pem" --tlscert "$odir/tls/cert.pem" \
		--tlskey "$odir/tls/key.pem" -H "tcp://$addr:2376" info --format '{{.Name}}'
	assert_output gpu-b
	# A --network host container is on that machine: its name, its one address, its route to this one.
	run sim_docker gpu-b run --rm --network host "$IMG" sh -c 'hostname; ip -4 -o addr show scope global; ip route'
	assert_success
	assert_line --index 0 gpu-b
	assert_output --regexp "eth0 +inet $addr/24"
	assert_output --partial "default via $up dev eth0"
	# It reaches a port published on this machine's address on its link, from its own network
	# and, through its NAT, from a bridge network of its daemon.
	docker network create own-network-test >/dev/null
	web=$(docker run -d --network own-network-test -p "$up:0:8080" "$IMG" \
		sh -c 'while true; do echo from-this-machine | nc -l -p 8080; done')
	port=$(docker port "$web" 8080/tcp | sed 's/.*://')
	reach() { sim_docker gpu-b run --rm "$@" "$IMG" nc "$up" "$port" </dev/null | grep -q from-this-machine; }
	sim_docker gpu-b network create test >/dev/null
	poll 20 reach --network host
	poll 20 reach --network test
	# The container's own address, on this machine's bridge network, is not on the LAN: a
	# machine apart has no route to it, as it has none to another Docker host's containers.
	ip=$(docker inspect "$web" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}')
	run sim_docker gpu-b run --rm --network host "$IMG" nc -w 5 "$ip" 8080 </dev/null
	assert_failure
	assert_output --partial "No route to host"
	docker rm -f "$web" >/dev/null
	docker network rm own-network-test >/dev/null
	# This machine reaches what it publishes, at its address.
	pub=$(sim_docker gpu-b run -d --network test -p 18080:8080 "$IMG" \
		sh -c 'while true; do echo from-b | nc -l -p 8080; done')
	got() { busybox nc "$addr" 18080 </dev/null | grep -q from-b; }
	poll 20 got
	sim_docker gpu-b rm -f "$pub" >/dev/null
	link=$(sed -n 's/^SIM_HOST_LINK=//p' "$odir/net.env")
	ip link show "$link" >/dev/null
	run sim_host_stop_dir "$odir"
	assert_success
	run ip link show "$link"
	assert_failure
	run grep -F " $odir" /proc/self/mountinfo
	assert_failure
	[[ ! -e $odir ]]
}
