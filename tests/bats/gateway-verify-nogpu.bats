#!/usr/bin/env bats
# verify on a host whose toolkit exposes no GPU: the device plugin runs and
# is ready, finds no device ("No devices found. Waiting indefinitely."),
# registers nothing, so the node has no nvidia.com/gpu; verify and start say
# exactly that.

setup_file() {
	load helpers/gateway
	sim_only "a GPU host with zero GPUs is made by sim-host --gpus 0"
	# A driver new enough for NVIDIA's DRA driver, which a DRA start asks for.
	gateway_suite_start --gpus 0 --driver 570.172.08
	background_start --gpu --name z0 --image "$IMAGE" --port "$(free_port)"
	# The plugin runs and is ready, having found no GPU.
	eventually gw_kubectl_is z0 1 get ds nvidia-device-plugin -n nvidia-device-plugin -o jsonpath='{.status.numberReady}'
	eventually gw_kubectl_says z0 "No devices found" logs -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin
	stop_background_start
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

@test "no allocatable GPU fails the allocatable check and skips the smoke pod" {
	run --separate-stderr openshell gateway verify --name z0
	assert_failure 8
	assert_line --partial 'PASS  device-request  legacy --gpus: driver=nvidia count=all capabilities=utility,compute,gpu; the gateway sees no GPU, and the Docker host has none'
	assert_line '  PASS  device-plugin   DaemonSet nvidia-device-plugin/nvidia-device-plugin: 1/1 pods ready'
	assert_line '  FAIL  allocatable     node allocatable has no nvidia.com/gpu: the device plugin registered no GPU (it logs "No devices found. Waiting indefinitely." when it sees none)'
	assert_line '  SKIP  smoke-pod       not run: no allocatable GPU'
}

@test "start --gpu on that host times out saying the plugin registered no GPU" {
	run --separate-stderr openshell gateway start --gpu --name z0 --image "$IMAGE" --timeout 8s
	assert_failure 4
	[[ "$stderr" == *"waiting for GPUs: the node has no allocatable nvidia.com/gpu: the device plugin runs but registered no GPU (its log says \"No devices found\""* ]]
}

@test "start --gpus 1 on that host fails before anything is created: the host has no GPU to give" {
	run --separate-stderr openshell gateway start --gpus 1 --name z1 --image "$IMAGE"
	assert_failure 1
	[[ "$stderr" == *"openshell: error: --gpus 1: no GPU to give; the Docker host has 0 GPUs"* ]]
	assert_no_gateway_resources z1
}

@test "start --gpu --gpu-allocation dra on that host fails at once: its container sees no GPU for the DRA driver to publish" {
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --name zd --image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	[ "${stderr_lines[-1]}" = "openshell: error: gateway 'zd' sees no GPU in its container openshell-cluster-zd (nvidia-smi -L lists none), so NVIDIA's DRA driver has nothing to publish: check the host's driver and toolkit ('openshell doctor')" ]
	openshell -q gateway destroy --name zd --yes
}
