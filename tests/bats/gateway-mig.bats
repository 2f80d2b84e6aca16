#!/usr/bin/env bats
# `gateway start --mig-strategy none|single|mixed`: the device plugin's MIG
# strategy, the MIG resources status shows, and verify's smoke pod on a MIG
# device. The SIMULATED host (unless OPENSHELL_TEST_REAL_HOST=1) has four
# GPUs: 0 with MIG devices of two profiles, 1 with two of one profile, 2
# without MIG, 3 with MIG enabled and no MIG device yet (sim-host --mig),
# which the simulated nvidia-smi lists as the real one does and the
# stand-in's plugin advertises per strategy.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 4 --mig 0=1g.10gb+1g.10gb+3g.40gb --mig 1=1g.10gb+1g.10gb --mig 3=
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	sim_only "needs the sim host's MIG layout"
}

mig_uuids() { # GPU: its MIG devices' UUIDs
	awk -v g="$1" '$1 == "mig" && $2 == g { print $4 }' "$SIM_HOST_DIR/gpus"
}

# gateway gpus --json of gateway $1, a row a line: "INDEX[:MIG] UUID MODEL SHARING HEALTH PODS".
gpu_rows() {
	openshell gateway gpus --name "$1" --json | jq -r '.gpus[] |
		"\(.index)\(if .mig_index == null then "" else ":\(.mig_index)" end) \(.uuid) \(.model) \(.sharing.mode) \(.health) \([.holders[] | .pod] | join(","))"'
}

@test "nvidia-smi -L lists a MIG GPU's devices under it, as the real one does" {
	run docker run --rm --gpus all --entrypoint nvidia-smi "$IMAGE" -L
	assert_success
	assert_line --index 1 "  MIG 1g.10gb       Device  0: (UUID: $(mig_uuids 0 | sed -n 1p))"
	assert_line --index 3 "  MIG 3g.40gb       Device  2: (UUID: $(mig_uuids 0 | sed -n 3p))"
	assert_line --regexp '^GPU 2: .* \(UUID: GPU-[0-9a-f-]+\)$'
	[ "${#lines[@]}" -eq 9 ]   # 4 GPUs, 5 MIG devices
	run docker run --rm --gpus all --entrypoint nvidia-smi "$IMAGE" --query-gpu=index,mig.mode.current --format=csv,noheader
	assert_output "0, Enabled
1, Enabled
2, Disabled
3, Enabled"
}

@test "the driver's capability minors: its fixed table in nvidia-caps/mig-minors, each MIG instance's access file naming its own" {
	# nv-caps.c: GPU minor M, GPU instance G, compute instance C: 3 + 135M + 9G, 4 + 135M + 9G + C.
	run docker run --rm --gpus all --entrypoint sh "$IMAGE" -c \
		'grep -c . /proc/driver/nvidia-caps/mig-minors; grep -E "^(config|monitor|gpu1/gi2/access|gpu1/gi2/ci0/access) " /proc/driver/nvidia-caps/mig-minors; cat /proc/driver/nvidia/capabilities/gpu1/mig/gi2/access /proc/driver/nvidia/capabilities/gpu1/mig/gi2/ci0/access'
	assert_success
	assert_line --index 0 4322
	assert_line 'config 1'
	assert_line 'monitor 2'
	assert_line 'gpu1/gi2/access 156'
	assert_line 'gpu1/gi2/ci0/access 157'
	assert_line 'DeviceFileMinor: 156'
	assert_line 'DeviceFileMinor: 157'
}

@test "--gpus MIG-…: the gateway keeps that MIG device's capabilities, not its sibling instances'" {
	# GPU 0's second MIG device is GPU instance 2 (compute instance 0); a
	# privileged container has every capability device of the host until the
	# entrypoint removes the ones the hook did not give (gpu-isolate.sh).
	mig=$(mig_uuids 0 | sed -n 2p)
	# The entrypoint isolates before k3s: no need to wait for the cluster.
	openshell -q gateway start --gpus "$mig" --name onemig --image "$IMAGE" --port "$(free_port)" --no-wait
	isolated() { docker logs openshell-cluster-onemig 2>&1 | grep -q "GPUs of this gateway"; }
	eventually isolated
	minors=$(docker exec openshell-cluster-onemig cat /proc/driver/nvidia-caps/mig-minors)
	given=$(awk '$1 == "gpu0/gi2/access" || $1 == "gpu0/gi2/ci0/access" { print $2 }' <<<"$minors")
	others=$(awk '$1 ~ /^gpu[0-9]+\/gi[0-9]+\/(ci[0-9]+\/)?access$/ && $1 !~ /^gpu0\/gi2\// { print $2 }' <<<"$minors")
	run docker exec openshell-cluster-onemig ls /dev/nvidia-caps
	for m in $given; do assert_line "nvidia-cap$m"; done
	# The table has some 4300 other minors: one grep for all of them.
	[[ -n $given && -n $others ]]
	left=$(grep -cxFf <(sed 's/^/nvidia-cap/' <<<"$others") <<<"$output" || true)
	assert_equal "$left" 0
	# Its own GPU's other instances are among what the entrypoint says it removed.
	siblings=$(docker exec openshell-cluster-onemig sh -c 'for f in /proc/driver/nvidia/capabilities/gpu0/mig/gi*/access \
		/proc/driver/nvidia/capabilities/gpu0/mig/gi*/ci*/access; do case $f in */gi2/*) ;; *) sed -n "s/^DeviceFileMinor: *//p" "$f" ;; esac; done')
	[[ -n $siblings ]]
	run docker logs openshell-cluster-onemig
	for m in $siblings; do assert_output --partial " /dev/nvidia-caps/nvidia-cap$m"; done
	# verify's request check: exactly the capabilities that an unprivileged
	# container given that MIG device gets from the hook. It needs no pod:
	# the cluster was not waited for, and a short --timeout ends the rest.
	run --separate-stderr openshell gateway verify --name onemig --timeout 10s
	assert_line --regexp "^  PASS  device-request .*; MIG capabilities nvidia-cap[0-9]+, nvidia-cap[0-9]+: exactly a container's given --gpus $mig\$"
	for m in $given; do assert_line --regexp "[ ,]nvidia-cap$m[,:]"; done
	# A sibling's node made again (as a driver allowed to modify device
	# files would), then a node of another GPU's instance: each a fail.
	major=$(sed -n 's/^caps-major //p' "$SIM_HOST_DIR/gpus")
	sibling=${siblings%%[[:space:]]*}
	docker exec openshell-cluster-onemig mknod "/dev/nvidia-caps/nvidia-cap$sibling" c "$major" "$sibling"
	run --separate-stderr openshell gateway verify --name onemig --timeout 10s
	assert_failure
	assert_line --regexp "^  FAIL  device-request .*; it can open /dev/nvidia-caps/nvidia-cap$sibling, of MIG instances it was not given \\(a container given --gpus $mig gets nvidia-cap[0-9]+, nvidia-cap[0-9]+\\)\$"
	docker exec openshell-cluster-onemig rm "/dev/nvidia-caps/nvidia-cap$sibling"
	read -r ogpu other < <(docker exec openshell-cluster-onemig sh -c 'for f in /proc/driver/nvidia/capabilities/gpu*/mig/gi*/access; do
		case $f in */gpu0/*) continue ;; esac; g=${f#*/capabilities/gpu}; echo "${g%%/*} $(sed -n "s/^DeviceFileMinor: *//p" "$f")"; break; done')
	[[ -n $other ]]
	docker exec openshell-cluster-onemig mknod "/dev/nvidia-caps/nvidia-cap$other" c "$major" "$other"
	run --separate-stderr openshell gateway verify --name onemig --timeout 10s
	assert_failure
	assert_line --partial "; it can open MIG capabilities of GPUs it was not given: /dev/nvidia-caps/nvidia-cap$other (of /dev/nvidia$ogpu)"
	openshell -q gateway destroy --name onemig --yes
}

@test "mixed: each profile is a resource of its own; status shows them; the smoke pod gets a MIG device" {
	# The plugin registers nvidia.com/gpu, then each profile, and the node
	# may be posted between them: start waits for every MIG device.
	cid=$(docker create "$IMAGE")
	docker commit --change 'ENV SIM_PLUGIN_REGISTER_GAP=2' "$cid" openshell-cluster:sim-mig-gap >/dev/null
	docker rm "$cid" >/dev/null
	run --separate-stderr openshell gateway start --gpu --mig-strategy mixed --name mixed \
		--image openshell-cluster:sim-mig-gap --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -c '[.mig_strategy, .gpus_allocatable, .mig_allocatable]' <<<"$output")" \
		'["mixed",1,{"nvidia.com/mig-1g.10gb":4,"nvidia.com/mig-3g.40gb":1}]'
	run --separate-stderr openshell gateway status --name mixed
	assert_line '  MIG:         strategy mixed; nvidia.com/mig-1g.10gb=4, nvidia.com/mig-3g.40gb=1'
	run jq -c .mig_allocatable <<<"$(openshell gateway status --name mixed --json)"
	assert_output '{"nvidia.com/mig-1g.10gb":4,"nvidia.com/mig-3g.40gb":1}'
	run --separate-stderr openshell gateway verify --name mixed
	assert_success
	assert_line '  PASS  allocatable     node allocatable nvidia.com/gpu = 1, nvidia.com/mig-1g.10gb=4, nvidia.com/mig-3g.40gb=1'
	assert_line --regexp "PASS  smoke-pod .*\\(nvidia.com/mig-1g.10gb\\) Succeeded: GPU 0: .*; MIG 1g.10gb +Device +[0-9]: \\(UUID: MIG-"
	# A kept gateway keeps its strategy; MPS does not go with mixed.
	run --separate-stderr openshell gateway start --gpu --mig-strategy single --name mixed
	assert_failure 6
	[[ "$stderr" == *"exists with --mig-strategy mixed but --mig-strategy single was asked for"* ]]
	run --separate-stderr openshell gateway start --gpu --gpu-sharing mps:2 --name mixed
	assert_failure 6
	[[ "$stderr" == *"runs with --mig-strategy mixed, and the device plugin does not share MIG devices by MPS: use --gpu-sharing time-slicing:N, or rebuild it with --recreate"* ]]
	# Time-slicing shares the whole GPUs: GPU 2 alone, not GPU 3, whose MIG is on without a device.
	run --separate-stderr openshell gateway start --gpu --gpu-sharing time-slicing:2 --name mixed --json --timeout 2m
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 2
	openshell -q gateway destroy --name mixed --yes
}

@test "mixed on MIG GPUs alone: no whole GPU, and the start is ready on the MIG devices" {
	run --separate-stderr openshell gateway start --gpus 0,1 --mig-strategy mixed --name migonly --image "$IMAGE" \
		--port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -c '[.gpus_allocatable, .mig_allocatable]' <<<"$output")" \
		'[null,{"nvidia.com/mig-1g.10gb":4,"nvidia.com/mig-3g.40gb":1}]'
	run --separate-stderr openshell gateway verify --name migonly
	assert_success
	assert_line --partial 'PASS  allocatable     node allocatable nvidia.com/mig-1g.10gb=4, nvidia.com/mig-3g.40gb=1 (MIG, --mig-strategy mixed); no whole GPU'
	# Docker's probe agrees: healthy on the MIG devices, with no whole GPU.
	run docker exec openshell-cluster-migonly /usr/local/bin/cluster-healthcheck.sh
	assert_success
	assert_output 'HEALTHCHECK_OK gpus=0 mig=5'
	# gateway gpus: each card served as its MIG devices, each of those on a
	# row of its own under it; a pod holds the 3g.40gb one.
	holding_pod migonly big nvidia.com/mig-3g.40gb
	run gpu_rows migonly
	assert_output "0 $(sim_gpu_uuids | sed -n 1p) NVIDIA H100 80GB HBM3 mig null 
0:0 $(mig_uuids 0 | sed -n 1p) 1g.10gb mig healthy 
0:1 $(mig_uuids 0 | sed -n 2p) 1g.10gb mig healthy 
0:2 $(mig_uuids 0 | sed -n 3p) 3g.40gb mig healthy big
1 $(sim_gpu_uuids | sed -n 2p) NVIDIA H100 80GB HBM3 mig null 
1:0 $(mig_uuids 1 | sed -n 1p) 1g.10gb mig healthy 
1:1 $(mig_uuids 1 | sed -n 2p) 1g.10gb mig healthy "
	run --separate-stderr openshell gateway gpus --name migonly
	assert_line --regexp "^openshell-migonly +0:2 +$(mig_uuids 0 | sed -n 3p) +3g.40gb +- +- +MIG +healthy +default/big/work\$"
	assert_line --regexp "^openshell-migonly +0 +$(sim_gpu_uuids | sed -n 1p) +NVIDIA H100 80GB HBM3 +1/81559 MiB +0% +MIG GPU +- +free\$"
	openshell -q gateway destroy --name migonly --yes
}

@test "none (the default) counts a MIG GPU whole" {
	run --separate-stderr openshell gateway start --gpu --name none --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -c '[.mig_strategy, .gpus_allocatable, .mig_allocatable]' <<<"$output")" '["none",4,{}]'
	run --separate-stderr openshell gateway status --name none
	refute_line --partial 'MIG:'
	openshell -q gateway destroy --name none --yes
}

@test "single: each MIG device of one profile is an nvidia.com/gpu" {
	run --separate-stderr openshell gateway start --gpus device=1 --mig-strategy single --name single \
		--image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 2
	run --separate-stderr openshell gateway verify --name single
	assert_success
	assert_line --regexp "PASS  smoke-pod .*Succeeded: GPU 0: .*\\(UUID: $(sim_gpu_uuids | sed -n 2p)\\)"
	# gateway gpus: the MIG devices are the nvidia.com/gpu the pod holds.
	holding_pod single one nvidia.com/gpu
	run gpu_rows single
	assert_line --index 0 "0 $(sim_gpu_uuids | sed -n 2p) NVIDIA H100 80GB HBM3 mig null "
	assert_equal "$(grep -c '^0:[01] MIG-.* 1g.10gb mig healthy' <<<"$output")" 2
	assert_equal "$(grep -c ' one$' <<<"$output")" 1
	openshell -q gateway destroy --name single --yes
}

@test "single with MIG and whole GPUs mixed: the plugin's own error ends the start" {
	run --separate-stderr openshell gateway start --gpu --mig-strategy single --name bad --image "$IMAGE" \
		--port "$(free_port)" --timeout 2m
	assert_failure 1   # at its second failed restart, not at the deadline
	[[ "$stderr" == *"the NVIDIA device plugin in gateway container openshell-cluster-bad exits at every start"*"all devices on the node must be configured with the same migEnabled value; choose a --mig-strategy that fits the GPUs' MIG layout ('nvidia-smi -L' shows it), then rerun with --recreate"* ]]
	openshell -q gateway destroy --name bad --yes
	run --separate-stderr openshell gateway start --gpus device=0 --mig-strategy single --name bad --image "$IMAGE" \
		--port "$(free_port)" --timeout 2m
	assert_failure 1
	[[ "$stderr" == *"invalid MIG configuration: more than one MIG device type present on node"* ]]
	openshell -q gateway destroy --name bad --yes
}

@test "MPS on MIG devices is refused before anything is created, naming the GPU and the way out" {
	run --separate-stderr openshell gateway start --gpus device=1 --mig-strategy single --gpu-sharing mps:2 --name mpsmig \
		--image "$IMAGE" --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"--gpu-sharing mps:2 cannot share GPU $(sim_gpu_uuids | sed -n 2p): it has MIG enabled, and under --mig-strategy single the device plugin shares no MIG device by MPS; use time-slicing:N, or GPUs without MIG"* ]]
	assert_no_gateway_resources mpsmig
	# On a running gateway too, before the sharing changes.
	openshell -q gateway start --gpus device=1 --mig-strategy single --name mpsmig --image "$IMAGE" --port "$(free_port)"
	run --separate-stderr openshell gateway start --gpus device=1 --mig-strategy single --gpu-sharing mps:2 --name mpsmig
	assert_failure 1
	[[ "$stderr" == *"cannot share GPU $(sim_gpu_uuids | sed -n 2p): it has MIG enabled"* ]]
	run --separate-stderr gw_kubectl mpsmig get helmchartconfig -n kube-system -o name
	assert_success
	assert_output ''
	openshell -q gateway destroy --name mpsmig --yes
}

@test "bad --mig-strategy values are usage errors" {
	for v in "" Mixed both 1; do
		OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --mig-strategy "$v" --name bad
		assert_failure 2
		[[ "$stderr" == "openshell: error: invalid --mig-strategy '$v': give none, single or mixed"* ]]
	done
	OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --mig-strategy mixed --name bad
	assert_failure 2
	[[ "$stderr" == *"--mig-strategy says how GPUs are given, and none were asked for"* ]]
}
