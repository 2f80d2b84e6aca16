#!/usr/bin/env bats
# verify on a host whose toolkit exposes no GPU: the device plugin runs but
# the node's allocatable nvidia.com/gpu is "0", and verify says exactly that.

setup_file() {
	load helpers/gateway
	sim_only "a GPU host with zero GPUs is made by sim-host --gpus 0"
	gateway_suite_start --gpus 0
	background_start --gpu --name z0 --image "$IMAGE" --port "$(free_port)"
	# The plugin registers, finding no GPU: the key appears as "0".
	eventually node_allocatable_is z0 0
	stop_background_start
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

@test "allocatable 0 fails the allocatable check and skips the smoke pod" {
	run --separate-stderr openshell gateway verify --name z0
	assert_failure 8
	assert_line '  FAIL  allocatable     node allocatable nvidia.com/gpu = 0: the plugin found no GPU'
	assert_line '  SKIP  smoke-pod       not run: no allocatable GPU'
}

@test "start --gpu on that host times out naming allocatable 0" {
	run --separate-stderr openshell gateway start --gpu --name z0 --image "$IMAGE" --timeout 8s
	assert_failure 4
	[[ "$stderr" == *"waiting for GPUs: the node's allocatable nvidia.com/gpu is 0 (the plugin found no GPU)"* ]]
}
