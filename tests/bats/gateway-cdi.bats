#!/usr/bin/env bats
# `gateway start --gpu-mode auto|cdi|legacy`: GPUs as CDI devices of the
# NVIDIA spec when the daemon lists them (Docker >= 28.2), else through
# Docker's --gpus. The test bed's dockerd 20.10 has no CDI: the sim host's
# --cdi puts a SIMULATED CDI-capable docker in front of it
# (tests/testbed/host/docker-cdi), with the spec nvidia-ctk would write, so
# the tests that edit its spec are simulation only; on a real CDI host the same flows run
# against the real daemon's answers, and the first test runs on either.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 2 --cdi
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	SPEC=${SIM_HOST_DIR:-}/root/etc/cdi/nvidia.yaml
	[[ ! -f $SPEC ]] || cp "$SPEC" "$BATS_TEST_TMPDIR/spec.orig"
}

suite_teardown() {
	[[ ! -f $BATS_TEST_TMPDIR/spec.orig ]] || cp "$BATS_TEST_TMPDIR/spec.orig" "$SPEC"
	rm -f "${SIM_HOST_DIR:-}/cdi/docker-version"
}

sim_cdi_only() {
	sim_only "the sim host's CDI daemon is a simulation; a real host's spec is not ours to edit"
}

uuid_of() { # INDEX: the host's GPU of that index
	sim_gpu_uuids | sed -n "$(($1 + 1))p"
}

requests() { # NAME: the container's DeviceRequests, as docker inspect shows them
	docker inspect "openshell-cluster-$1" | jq -c '.[0].HostConfig.DeviceRequests'
}

@test "auto takes what the daemon offers: CDI when it lists NVIDIA CDI devices, else --gpus" {
	run --separate-stderr openshell gateway start --gpus 1 --name auto --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	mode=$(jq -r .gpu_mode <<<"$output")
	if docker info --format '{{json .}}' | jq -e '[.DiscoveredDevices[]? | select(.ID | startswith("nvidia.com/gpu="))] | length > 0' >/dev/null; then
		assert_equal "$mode" cdi
		run requests auto
		assert_output --partial '"Driver":"cdi"'
	else
		assert_equal "$mode" legacy
		run requests auto
		assert_output --partial '"Driver":"nvidia"'
	fi
	run --separate-stderr openshell gateway verify --name auto
	assert_success
	openshell -q gateway destroy --name auto --yes
}

@test "the simulated daemon lists the spec's devices, as Docker 28.2 does" {
	sim_cdi_only
	run docker info --format '{{json .}}'
	assert_success
	run jq -r '.DiscoveredDevices[] | "\(.Source) \(.ID)"' <<<"$output"
	assert_line "cdi nvidia.com/gpu=0"
	assert_line "cdi nvidia.com/gpu=$(uuid_of 1)"
	assert_line "cdi nvidia.com/gpu=all"
}

@test "auto on a CDI daemon asks for nvidia.com/gpu=all, and the plugin hands out CDI devices" {
	sim_cdi_only
	run --separate-stderr openshell -v gateway start --gpu --name cdi --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r '[.gpu_mode, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$output")" "cdi 2"
	# What openshell asked Docker for: the CDI device, and no --gpus beside it.
	run grep -E '^openshell: .*docker run ' <<<"$stderr"
	assert_output --partial ' --device=nvidia.com/gpu=all '
	refute_output --partial '--gpus'
	# And how the devices came: through the spec's container edits (the driver's
	# procfs, masked by its hook), not libnvidia-container's.
	run grep " pid $(docker inspect -f '{{.State.Pid}}' openshell-cluster-cdi) " "$SIM_HOST_DIR/hook.log"
	assert_output --partial 'procfs=cdi-masked'
	run docker exec openshell-cluster-cdi grep '^ModifyDeviceFiles' /proc/driver/nvidia/params
	assert_output 'ModifyDeviceFiles: 0'
	run gw_kubectl cdi get helmchart nvidia-device-plugin -n kube-system -o json
	run jq -r .spec.valuesContent <<<"$output"
	assert_line 'deviceListStrategy: cdi-cri'
	run --separate-stderr openshell gateway status --name cdi
	assert_line '  GPUs:        requested through CDI; 2 allocatable (nvidia.com/gpu)'
	run jq -r .gpu_mode <<<"$(openshell gateway status --name cdi --json)"
	assert_output cdi
	run --separate-stderr openshell gateway verify --name cdi
	assert_success
	assert_line "  PASS  device-request  CDI: driver=cdi devices=nvidia.com/gpu=all; the gateway sees $(uuid_of 0), $(uuid_of 1): exactly --gpus all"
	openshell -q gateway destroy --name cdi --yes
}

@test "--gpus 1 with CDI is nvidia.com/gpu=0, and a kept gateway keeps the count" {
	sim_cdi_only
	run --separate-stderr openshell gateway start --gpus 1 --name one --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 1
	run requests one
	assert_output --partial '"DeviceIDs":["nvidia.com/gpu=0"]'
	run docker inspect openshell-cluster-one --format '{{index .Config.Labels "org.openshell.gpus"}}'
	assert_output 1
	run --separate-stderr openshell gateway start --gpus 1 --name one --json
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" running
	run --separate-stderr openshell gateway start --gpus 2 --name one
	assert_failure 6
	[[ "$stderr" == *"exists with --gpus 1 but --gpus 2 was asked for"* ]]
	run --separate-stderr openshell gateway start --gpus 1 --gpu-mode legacy --name one
	assert_failure 6
	[[ "$stderr" == *"exists with --gpu-mode cdi but --gpu-mode legacy was asked for; rerun with --recreate"* ]]
	run --separate-stderr openshell gateway verify --name one
	assert_success
	assert_line --partial "the gateway sees $(uuid_of 0): exactly --gpus 1"
	run --separate-stderr openshell gateway list --json
	assert_equal "$(jq -c '.gateways[] | select(.name == "one") | [.gpus, .gpu_mode]' <<<"$output")" '[{"count":1},"cdi"]'
}

@test "a stopped CDI gateway fails its resume with the fix when its device left the spec, or CDI was turned off" {
	sim_cdi_only
	openshell -q gateway stop --name one
	sed -i '/^- name: "0"$/d' "$SPEC"
	run --separate-stderr openshell gateway start --gpus 1 --name one
	assert_failure 7
	[[ "$stderr" == *"Docker cannot resolve the gateway's CDI devices"*"nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"*"nvidia-cdi-refresh.service"* ]]
	[[ "$stderr" == *"unresolvable CDI devices nvidia.com/gpu=0"* ]]
	cp "$BATS_TEST_TMPDIR/spec.orig" "$SPEC"
	# CDI turned off in the daemon since: its own error, with the fix.
	touch "$SIM_HOST_DIR/cdi/disabled"
	run --separate-stderr openshell gateway start --gpus 1 --name one
	rm -f "$SIM_HOST_DIR/cdi/disabled"
	assert_failure 7
	[[ "$stderr" == *"the Docker daemon has CDI turned off: enable it (\"features\": {\"cdi\": true} in /etc/docker/daemon.json, then restart docker), or rebuild the gateway with --recreate --gpu-mode legacy (its cluster state is lost)"* ]]
	run --separate-stderr openshell gateway start --gpus 1 --name one
	assert_success
	openshell -q gateway destroy --name one --yes
}

@test "--gpu-mode legacy on a CDI daemon asks Docker's nvidia driver" {
	sim_cdi_only
	run --separate-stderr openshell gateway start --gpus 1 --gpu-mode legacy --name leg --image "$IMAGE" \
		--port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpu_mode <<<"$output")" legacy
	run requests leg
	assert_output '[{"Driver":"nvidia","Count":1,"DeviceIDs":null,"Capabilities":[["utility","compute","gpu"]],"Options":{}}]'
	run gw_kubectl leg get helmchart nvidia-device-plugin -n kube-system -o json
	run jq -r .spec.valuesContent <<<"$output"
	assert_line 'deviceListStrategy: volume-mounts'
	run --separate-stderr openshell gateway verify --name leg
	assert_success
	assert_line --partial "PASS  device-request  legacy --gpus: driver=nvidia count=1"
	openshell -q gateway destroy --name leg --yes
}

@test "Docker 29.2 sends --gpus through CDI: a legacy gateway's verify and doctor say what happened" {
	sim_cdi_only
	echo 29.2.0 >"$SIM_HOST_DIR/cdi/docker-version"
	run --separate-stderr openshell doctor
	assert_output --partial "--gpu-mode legacy uses --gpus, which this Docker (29.2 or later) sends through CDI as well"
	run --separate-stderr openshell gateway start --gpus 1 --gpu-mode legacy --name g29 --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r '[.gpu_mode, .gpu_injection] | join(" ")' <<<"$output")" "legacy cdi"
	# The request stays as the CLI sent it; the container's first process has the spec's void.
	run requests g29
	assert_output --partial '"Driver":"nvidia","Count":1'
	run docker exec openshell-cluster-g29 sh -c "tr '\\0' '\\n' </proc/1/environ | grep ^NVIDIA_VISIBLE_DEVICES="
	assert_output NVIDIA_VISIBLE_DEVICES=void
	run --separate-stderr openshell gateway verify --name g29
	assert_success
	assert_line --partial "PASS  device-request  legacy --gpus: driver=nvidia count=1 capabilities=utility,compute,gpu (Docker gave them through CDI, as Docker 29.2 and later do for --gpus when the NVIDIA CDI spec has them); the gateway sees $(uuid_of 0): exactly --gpus 1"
	openshell -q gateway destroy --name g29 --yes
	# Before 29.2 the same request is the hook's, and verify says nothing more.
	rm "$SIM_HOST_DIR/cdi/docker-version"
	run --separate-stderr openshell gateway start --gpus 1 --gpu-mode legacy --name g28 --image "$IMAGE" --port "$(free_port)" --json
	assert_equal "$(jq -r '[.gpu_mode, .gpu_injection] | join(" ")' <<<"$output")" "legacy hook"
	run --separate-stderr openshell gateway verify --name g28
	assert_success
	assert_line --partial "PASS  device-request  legacy --gpus: driver=nvidia count=1 capabilities=utility,compute,gpu; the gateway sees"
	openshell -q gateway destroy --name g28 --yes
}

@test "a GPU the spec lacks is refused before anything is created" {
	sim_cdi_only
	sed -i '/^- name: "1"$/d' "$SPEC"
	run --separate-stderr openshell gateway start --gpus device=1 --name lack --image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"the Docker daemon's CDI spec has no device nvidia.com/gpu=1 (it lists nvidia.com/gpu=0, $(uuid_of 0), $(uuid_of 1), all)"* ]]
	[[ "$stderr" == *"nvidia-ctk cdi generate"* ]]
	assert_no_gateway_resources lack
	# A GPU the host lacks is the host's error, which names its GPUs.
	run --separate-stderr openshell gateway start --gpus 5 --name lack --image "$IMAGE" --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"--gpus 5: more GPUs than the host has; the Docker host has 2 GPUs"* ]]
}

@test "with the image to build, what the CDI devices refuse is refused first, without a container" {
	sim_cdi_only
	# The docker on PATH: the CDI daemon's (SIMULATION), which a build goes through too.
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	for sel in 5 0,7 GPU-00000000-dead-beef-0000-000000000000; do
		OPENSHELL_IMAGE_CONTEXT=$(standin_recipe) \
			run --separate-stderr openshell -v gateway start --gpus "$sel" --name early --port "$(free_port)"
		stderr_of_start=$stderr
		assert_failure 1
		# docker info and the image's inspect, then the refusal: no container, no build.
		run grep -E '^openshell: \+ .*docker (run|create|build|buildx|pull|images) |building image|not here yet' <<<"$stderr_of_start"
		assert_output ''
		run docker image inspect "$default"
		assert_failure
		assert_no_gateway_resources early
		[[ "$stderr_of_start" == *"openshell: error: --gpus $sel: "*"; the Docker host has 2 GPUs, by the Docker daemon's CDI devices (nvidia.com/gpu=0, $(uuid_of 0), 1, $(uuid_of 1), all)"* ]]
	done
	# A device the spec lacks is the daemon's refusal, as after a build.
	sed -i '/^- name: "1"$/d' "$SPEC"
	OPENSHELL_IMAGE_CONTEXT=$(standin_recipe) \
		run --separate-stderr openshell gateway start --gpus device=1 --name early --port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"the Docker daemon's CDI spec has no device nvidia.com/gpu=1"* ]]
	[[ "$stderr" != *"building image"* ]]
	assert_no_gateway_resources early
}

@test "a spec older than the driver fails the start with the fix, and nothing is left" {
	sim_cdi_only
	sed -i 's/libcuda\.so\.[0-9.]*/libcuda.so.535.104.05/g' "$SPEC"
	run --separate-stderr openshell gateway start --gpu --name stale --image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"the NVIDIA CDI spec names driver files that are gone (it is older than the driver)"*"nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"* ]]
	[[ "$stderr" == *'error mounting "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"'* ]]
	assert_no_gateway_resources stale
}

@test "--gpu-mode cdi on a daemon without CDI devices is refused with the fix" {
	sim_cdi_only
	sim_host_extra --gpus 1
	# That daemon's own docker CLI, not this host's simulated CDI one.
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST OPENSHELL_DOCKER=$(cat "$SIM_HOST_DIR/cdi/real-docker") \
		run --separate-stderr openshell gateway start --gpu --gpu-mode cdi --name nocdi --image "$IMAGE"
	assert_failure 7
	[[ "$stderr" == *"--gpu-mode cdi: the Docker daemon lists no NVIDIA CDI devices"*"nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"*"--gpu-mode legacy"* ]]
	# A daemon whose docker info fails: the start ends at its first call, quoting it.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n[ "$1" = info ] && { echo "Cannot connect: info broke (SIMULATION)" >&2; exit 1; }\nexec %s "$@"\n' \
		"$(command -v docker)" >"$BATS_TEST_TMPDIR/bin/docker"
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker run --separate-stderr openshell gateway start --gpu --gpu-mode cdi --name broken --image "$IMAGE"
	assert_failure 3
	[[ "$stderr" == *"cannot reach the Docker daemon (DOCKER_HOST="*"): Cannot connect: info broke (SIMULATION); check that the daemon runs and 'docker info' works"* ]]
	for bad in CDI none ""; do
		OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --gpu-mode "$bad" --name bad
		assert_failure 2
		[[ "$stderr" == "openshell: error: invalid --gpu-mode '$bad': give auto, cdi or legacy"* ]]
	done
	OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu-mode cdi --name bad
	assert_failure 2
	[[ "$stderr" == *"--gpu-mode says how GPUs are given, and none were asked for: add --gpu or --gpus"* ]]
}

@test "--gpus MIG-… with CDI: the gateway keeps the capabilities a container given that device gets, not its siblings'" {
	sim_cdi_only
	# A CDI container has no tmpfs of the hook's to tell its MIG instances
	# by: start asks a container given the same CDI device, and the
	# entrypoint keeps what it got (OPENSHELL_GPU_CAPS).
	sim_host_extra --cluster-images --gpus 2 --mig 1=1g.10gb+1g.10gb+1g.10gb --cdi
	export PATH=$SIM_HOST_EXTRA_DIR/host-bin:$PATH DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST
	mig=$(awk '$1 == "mig" && $2 == 1 { print $4 }' "$SIM_HOST_EXTRA_DIR/gpus" | sed -n 2p)
	openshell -q gateway start --gpus "$mig" --name cmig --image "$IMAGE" --port "$(free_port)" --no-wait
	eventually sh -c "docker logs openshell-cluster-cmig 2>&1 | grep -q 'GPUs of this gateway'"
	run jq -r '.[0].Config.Env[] | select(startswith("OPENSHELL_GPU_CAPS="))' <<<"$(docker inspect openshell-cluster-cmig)"
	assert_output --regexp '^OPENSHELL_GPU_CAPS=[0-9]+,[0-9]+$'
	caps=${output#*=}
	all=$(docker exec openshell-cluster-cmig sh -c 'for f in /proc/driver/nvidia/capabilities/gpu*/mig/gi*/access \
		/proc/driver/nvidia/capabilities/gpu*/mig/gi*/ci*/access; do sed -n "s/^DeviceFileMinor: *//p" "$f"; done')
	run docker exec openshell-cluster-cmig ls /dev/nvidia-caps
	for m in ${caps//,/ }; do assert_line "nvidia-cap$m"; done
	left=0 siblings=0
	for m in $all; do
		[[ ,$caps, == *",$m,"* ]] && continue
		siblings=$((siblings + 1))
		grep -qx "nvidia-cap$m" <<<"$output" && left=$((left + 1))
	done
	assert_equal "$siblings" 4
	assert_equal "$left" 0
	run --separate-stderr openshell gateway verify --name cmig --timeout 10s
	assert_line --regexp "^  PASS  device-request  CDI: .*; MIG capabilities nvidia-cap[0-9]+, nvidia-cap[0-9]+: exactly a container's given --gpus $mig\$"
	openshell -q gateway destroy --name cmig --yes
}
