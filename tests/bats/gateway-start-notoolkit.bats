#!/usr/bin/env bats
# `gateway start --gpu` on a host whose Docker has no NVIDIA toolkit: one
# clear line, the fix, a documented exit status, and nothing left behind.

setup_file() {
	load helpers/gateway
	sim_only "a host without the toolkit is made by sim-host --no-toolkit"
	gateway_suite_start --no-toolkit
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

@test "start --gpu without the toolkit exits 7 naming the fix, leaving nothing" {
	run --separate-stderr openshell gateway start --gpu --name nt --image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	# The Docker host's own files say which: not installed there.
	[[ "$stderr" == *"openshell: error: Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is not on the Docker host (no nvidia-container-runtime-hook in /usr/bin, /usr/local/bin, /usr/sbin, /usr/local/sbin, /bin or /sbin there); install it, run 'nvidia-ctk runtime configure --runtime=docker' and restart docker"* ]]
	# Docker's own words are quoted beneath.
	[[ "$stderr" == *'could not select device driver "nvidia" with capabilities: [[utility compute gpu]]'* ]]
	assert_no_gateway_resources nt
	[ ! -e "$XDG_CONFIG_HOME/openshell/gateways/nt/kubeconfig" ]
}

@test "start --gpus 1 without the toolkit exits 7 as --gpu does, before anything is created" {
	run --separate-stderr openshell gateway start --gpus 1 --name ns --image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"openshell: error: Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is not on the Docker host"* ]]
	[[ "$stderr" == *'could not select device driver "nvidia"'* ]]
	assert_no_gateway_resources ns
}

@test "a toolkit installed after dockerd started: exit 7 says to restart docker" {
	# SIMULATION: the toolkit's hook put on the host after its dockerd started without it.
	cp "$OPENSHELL_SRCDIR/tests/testbed/host/nvidia-container-runtime-hook" "$SIM_HOST_DIR/root/usr/bin/"
	run --separate-stderr openshell gateway start --gpu --name late --image "$IMAGE" --port "$(free_port)"
	rm "$SIM_HOST_DIR/root/usr/bin/nvidia-container-runtime-hook"
	assert_failure 7
	[[ "$stderr" == *"openshell: error: Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is on the Docker host (/usr/bin/nvidia-container-runtime-hook), but dockerd has not taken it up (it does when it finds the hook on its PATH as it starts): run 'nvidia-ctk runtime configure --runtime=docker' and restart docker"* ]]
	assert_no_gateway_resources late
}

@test "the same host still starts a gateway without --gpu" {
	run openshell gateway start --name plain --image "$IMAGE" --port "$(free_port)"
	assert_success
	assert_output --partial 'GPUs:        none'
}

@test "this machine's PATH says nothing of the Docker host: a hook here neither quiets doctor nor misleads start" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/bin/nvidia-container-runtime-hook"
	chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-container-runtime-hook"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH OPENSHELL_CLUSTER_IMAGE=$IMAGE run --separate-stderr openshell doctor --json
	run jq -r '.checks[] | select(.name == "nvidia-container-runtime-hook") | .status + " " + .evidence' <<<"$output"
	assert_output --partial "warn nvidia-container-runtime-hook: not on the Docker host"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run --separate-stderr openshell gateway start --gpu --name nw --image "$IMAGE" \
		--port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"the NVIDIA Container Toolkit is not on the Docker host"* ]]
	assert_no_gateway_resources nw
}
