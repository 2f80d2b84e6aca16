#!/usr/bin/env bats
# `gateway start --gpu-allocation dra`: NVIDIA's DRA driver in place of the
# device plugin. The image's entrypoint installs the driver's chart, k3s
# runs pods under the nvidia runtime and labels the node, and the start
# waits until the node's ResourceSlices publish the gateway's GPUs by UUID.
# On the SIMULATED toolkit and stand-in (docs/k3s-standin.md): four GPUs,
# the third with MIG devices and the fourth with MIG enabled and none, and
# a driver new enough for NVIDIA's DRA driver (565 or later).

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 4 --driver 570.172.08 --mig 2=1g.10gb+1g.10gb+3g.40gb --mig 3=
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

# What a test of refusals may have left, had it failed halfway.
suite_teardown() {
	[ -z "$(docker ps -aq --filter name=openshell-cluster-x)" ] || openshell gateway destroy --name x --yes >/dev/null 2>&1
	[ -z "$(docker ps -aq --filter name=openshell-cluster-dm)" ] || openshell gateway destroy --name dm --yes >/dev/null 2>&1
	docker rmi openshell-cluster:k3s133 openshell-cluster:nodrachart openshell-cluster:nodraimage >/dev/null 2>&1 || true
}

# The UUIDs gateway $1's node publishes in slices of driver gpu.nvidia.com, sorted, one a line.
published() {
	gw_kubectl "$1" get resourceslices -o json |
		jq -r --arg node "openshell-$1" '.items[] | select(.spec.driver == "gpu.nvidia.com" and .spec.nodeName == $node)
			| .spec.devices[].attributes.uuid.string' | sort
}

# A README sample exactly as written there: the yaml block after its
# <!-- sample-dra-$1 --> marker (pod: the claim pod; shared: the shared
# claim and its two pods; mps: the MPS claim and its pod).
readme_sample() {
	awk -v mark="<!-- sample-dra-$1 -->" '$0 == mark { marked = 1; next }
	     marked && /^```yaml$/ { on = 1; next }
	     on && /^```$/ { exit }
	     on' "$OPENSHELL_SRCDIR/README.md"
}
readme_shared_sample() { readme_sample shared; }

# Its first pod, from its kind on (without its apiVersion line).
readme_shared_pod() { readme_shared_sample | sed -n '/^kind: Pod$/,/^---$/{/^---$/q;p}'; }

# The FEATURE_GATES of the DRA driver's kubelet plugin (its gpus container).
plugin_gates() {
	gw_kubectl d get daemonset -n nvidia-dra-driver-gpu dra-driver-nvidia-gpu-kubelet-plugin \
		-o jsonpath='{.spec.template.spec.containers[?(@.name=="gpus")].env[?(@.name=="FEATURE_GATES")].value}'
}

# verify of gateway d passes, its dra-driver check saying --gpu-sharing $1's
# feature gate $2 is on in the driver's pods.
verify_says_gate() {
	run --separate-stderr openshell gateway verify --name d --json
	assert_success
	run evidence "$output" dra-driver
	assert_output --partial "; $1 on: its pods run with feature gate $2, so a claim's GpuConfig may ask for it"
}

# What the simulated driver keeps of GPU $1's compute settings, in the gateway.
gpu_compute() { docker exec openshell-cluster-d cat "/run/nvidia-sim/compute/$1" 2>/dev/null; }
timeslice_is() { gpu_compute "$1" | grep -qx "timeslice $2"; }

@test "--gpus 2 --gpu-allocation dra: the DRA driver publishes the two GPUs by UUID; no device plugin runs" {
	# With the driver's time-slicing on from the start (none turns it off, below).
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation dra --gpu-sharing time-slicing --name d \
		--image "$IMAGE" --port "$(free_port)" --json
	assert_success
	doc=$output
	assert_schema start "$doc"
	run plugin_gates
	assert_output "TimeSlicingSettings=true,"
	run jq -r '[.gpu_allocation, .gpus_allocatable, .mig_strategy] | map(tostring) | join(" ")' <<<"$doc"
	assert_output "dra 2 none"
	run published d
	assert_output "$(sim_gpu_uuids | head -2 | sort)"
	# The driver's chart in place of the device plugin's, its class serving nvidia.com/gpu too.
	run gw_kubectl d get helmcharts -n kube-system -o jsonpath='{.items[*].metadata.name}'
	assert_output "dra-driver-nvidia-gpu"
	run gw_kubectl d get daemonsets -A -o jsonpath='{.items[*].metadata.name}'
	assert_output "dra-driver-nvidia-gpu-kubelet-plugin"
	run gw_kubectl d get deviceclass gpu.nvidia.com -o jsonpath='{.spec.extendedResourceName}'
	assert_output "nvidia.com/gpu"
	run gw_kubectl d get node openshell-d -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.present}'
	assert_output "true"
	# k3s runs a pod without a RuntimeClass under the nvidia runtime.
	run docker exec openshell-cluster-d sh -c 'grep -A1 "containerd\]$" /var/lib/rancher/k3s/agent/etc/containerd/config.toml'
	assert_line '  default_runtime_name = "nvidia"'
	# The image's own probe, as Docker runs it: the driver and its slices, no device plugin.
	run docker exec openshell-cluster-d /usr/local/bin/cluster-healthcheck.sh
	assert_success
	assert_output "HEALTHCHECK_OK gpus=2"
	run --separate-stderr openshell gateway status --name d
	assert_success
	assert_line "  GPUs:        requested (--gpus 2); 2 published in ResourceSlices (DRA driver gpu.nvidia.com)"
	assert_line --partial "  Health:      healthy"
	run --separate-stderr openshell gateway status --name d --json
	assert_success
	doc=$output
	assert_schema status "$doc"
	assert_equal "$(jq -r '[.gpu_allocation, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$doc")" "dra 2"
	# metadata.json records the allocation: status's one get, started
	# before the container's inspect, asks for the slices at once.
	run jq -r .gpu_allocation "$XDG_CONFIG_HOME/openshell/gateways/d/metadata.json"
	assert_output dra
	# Started again, it points at verify, which checks a DRA gateway.
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation dra --name d
	assert_success
	assert_line "  openshell gateway verify --name d"
	run --separate-stderr openshell -v gateway status --name d
	assert_line '  GPU use:     2 devices: 2 free'
	run grep -c '^openshell: + .* kubectl .* get ' <<<"$stderr"
	assert_output 1
	[[ "$stderr" == *" get runtimeclasses,"*",resourceslices,resourceclaims "* ]]
}

readme_dra_sample() { readme_sample pod; }

kd() { openshell gateway kubectl --name d -- "$@"; }

claim_gone() { gw_kubectl_is d "" get resourceclaim "$1" --ignore-not-found -o name; }   # the API answers: none

@test "the README's sample claim pod runs as written: one published GPU seen through its claim, deleted once the pod is done" {
	readme_dra_sample >"$BATS_TEST_TMPDIR/dra-pod.yaml"
	run kd apply -f - <"$BATS_TEST_TMPDIR/dra-pod.yaml"
	assert_success
	assert_line "resourceclaimtemplate.resource.k8s.io/one-gpu created"
	assert_line "pod/dra-gpu-test created"
	run kd wait --for=jsonpath='{.status.phase}'=Succeeded pod/dra-gpu-test --timeout=60s
	assert_success
	run kd logs dra-gpu-test
	assert_success
	assert_equal "${#lines[@]}" 1
	uuid=$(sed -n 's/^GPU 0: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$output")
	run grep -cxF "$uuid" <(published d)
	assert_output 1
	# The claim the template made for it; the claim controller deletes it
	# once the pod is done (pkg/controller/resourceclaim/controller.go).
	claim=$(kd get pod dra-gpu-test -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
	[[ "$claim" == dra-gpu-test-gpu-* ]]
	eventually claim_gone "$claim"
	run kd delete pod dra-gpu-test
	assert_success
	kd delete resourceclaimtemplate one-gpu >/dev/null
}

@test "a pod asking for nvidia.com/gpu: 1 is served through the DRA driver's class" {
	readme_dra_sample | awk '/^---$/ { on = 1; next } on' |
		sed 's/^  name: dra-gpu-test$/  name: extended/; /^  resourceClaims:$/,/^    resourceClaimTemplateName:/d;
			s/^      claims:$/      limits:/; s/^      - name: gpu$/        nvidia.com\/gpu: 1/' >"$BATS_TEST_TMPDIR/pod.yaml"
	run grep -c "resourceClaim\|claims" "$BATS_TEST_TMPDIR/pod.yaml"
	assert_output 0
	run kd apply -f - <"$BATS_TEST_TMPDIR/pod.yaml"
	assert_success
	run kd wait --for=jsonpath='{.status.phase}'=Succeeded pod/extended --timeout=60s
	assert_success
	run kd logs extended
	assert_equal "${#lines[@]}" 1
	uuid=$(sed -n 's/^GPU 0: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$output")
	run grep -cxF "$uuid" <(published d)
	assert_output 1
	run kd get pod extended -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}'
	assert_output --regexp '^extended-extended-resources-'
	kd delete pod extended >/dev/null
}

# What verify's check NAME of document $1 saw.
evidence() { jq -r --arg n "$2" '.checks[] | select(.name == $n) | .evidence' <<<"$1"; }
statuses() { jq -r '[.checks[] | .name + "=" + .status] | join(" ")' <<<"$1"; }

# verify's claims and templates, by its label, in the default namespace.
verify_claims_left() {
	gw_kubectl d get resourceclaims,resourceclaimtemplates \
		-l app.kubernetes.io/managed-by=openshell -o name
}
no_verify_claims() { local out; out=$(verify_claims_left) && [ -z "$out" ]; }

@test "verify of a DRA gateway: the driver, the node's slices, a claim pod on its claim's GPU, nvidia.com/gpu through the class, none without" {
	run --separate-stderr openshell -v gateway verify --name d --json
	assert_success
	doc=$output
	# The claims' watch replays from the version of the run's template,
	# made first: a claim whose pod ran and was done before the watch
	# began is read too (a listing would miss it).
	local from='get --raw .?/apis/resource\.k8s\.io/v1/namespaces/default/resourceclaims\?watch=true&resourceVersion=[0-9]+&'
	[[ $stderr =~ $from ]] || fail "no watch of the claims from a version in: $stderr"
	assert_schema verify "$doc"
	run statuses "$doc"
	assert_output "device-request=pass runtime-class=pass dra-driver=pass resource-slices=pass smoke-pod=pass pod-isolation=pass privileged-pod=pass extended-pod=pass"
	run evidence "$doc" dra-driver
	assert_output "DaemonSet nvidia-dra-driver-gpu/dra-driver-nvidia-gpu-kubelet-plugin: 1/1 pods ready; time-slicing on: its pods run with feature gate TimeSlicingSettings, so a claim's GpuConfig may ask for it"
	run evidence "$doc" resource-slices
	assert_output --regexp "^node openshell-d's ResourceSlices \(driver gpu.nvidia.com\) publish 2 GPUs, the gateway's own by UUID: GPU-"
	assert_equal "$(sed 's/.*by UUID: //; s/, /\n/g' <<<"$output" | sort)" "$(published d)"
	# The smoke pod's GPU is the device its claim, made from verify's template, was allocated.
	run evidence "$doc" smoke-pod
	assert_output --regexp '^pod openshell-verify-[0-9a-f]+ Succeeded: GPU 0: .* \(UUID: GPU-[^)]*\), the device gpu-[0-9]+ its claim openshell-verify-[0-9a-f]+-gpu-[a-z0-9]+ was allocated and reserved for it$'
	uuid=$(sed -n 's/.*(UUID: \(GPU-[^)]*\)).*/\1/p' <<<"$output")
	run grep -cxF "$uuid" <(published d)
	assert_output 1
	run evidence "$doc" privileged-pod
	assert_output --partial "its claim openshell-verify-"
	run evidence "$doc" extended-pod
	assert_output --regexp '^pod openshell-verify-[0-9a-f]+-extended Succeeded: GPU 0: .*; nvidia.com/gpu: 1 served through DeviceClass gpu.nvidia.com, by claim openshell-verify-[0-9a-f]+-extended-extended-resources-'
	run evidence "$doc" pod-isolation
	assert_output --partial "sees none"
	# Its template goes with its pods, and their claims with them.
	eventually no_verify_claims
}

@test "verify of a DRA gateway whose GPU class is gone: the claim pods pend with the scheduler's reason" {
	gw_kubectl d get deviceclass gpu.nvidia.com -o json |
		jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' \
			>"$BATS_TEST_TMPDIR/class.json"
	gw_kubectl d delete deviceclass gpu.nvidia.com >/dev/null
	run --separate-stderr openshell gateway verify --name d --json --timeout 15s
	gw_kubectl d create -f - <"$BATS_TEST_TMPDIR/class.json" >/dev/null
	assert_failure 8
	doc=$output
	run statuses "$doc"
	assert_output "device-request=pass runtime-class=pass dra-driver=pass resource-slices=pass smoke-pod=fail pod-isolation=pass privileged-pod=fail extended-pod=fail"
	run evidence "$doc" smoke-pod
	# The scheduler's words: its DRA plugin's PreFilter, before any node.
	assert_output --regexp '^pod openshell-verify-[0-9a-f]+ Pending: 0/1 nodes are available: request gpu/whole: device class gpu\.nvidia\.com does not exist\. no new claims to deallocate, preemption: '
	run evidence "$doc" extended-pod
	assert_output --regexp '^pod openshell-verify-[0-9a-f]+-extended Pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu'
	eventually no_verify_claims
}

@test "a host driver older than 565 is refused under dra, as a container reads it, before anything is made" {
	sim_only "the driver's version is the sim host's"
	# The kernel module's version, as its procfs says it (nvidia-smi's own
	# word is left at 570: the procfs is what is read).
	local v=$SIM_HOST_DIR/proc/driver/nvidia/version
	sed -i.bak 's/Kernel Module  [0-9.]*/Kernel Module  550.54.15/' "$v"
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --name x --image "$IMAGE"
	mv "$v.bak" "$v"
	assert_failure 7
	[[ "$stderr" == *"openshell: error: --gpu-allocation dra needs NVIDIA driver 565 or later on the Docker host (NVIDIA's DRA driver does), and it has 550.54.15: upgrade the driver, or use --gpu-allocation device-plugin" ]]
	run docker ps -aq --filter name=openshell-cluster-x
	assert_output ""
	run docker volume ls -q --filter name=openshell-x
	assert_output ""
}

# Under DRA k3s runs every pod on the nvidia runtime: the chart's Helm job is
# the first it cannot start, before any of the driver's own pods exist.
@test "a broken nvidia runtime ends a DRA start at once with the runtime's own error, from the chart's Helm job" {
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --name x --image openshell-cluster:sim-runtime-broken \
		--port "$(free_port)" --timeout 5m
	openshell -q gateway destroy --name x --yes
	assert_failure 1
	[[ "${stderr_lines[-1]}" == "openshell: error: the nvidia runtime in gateway container openshell-cluster-x cannot start pods: pod kube-system/helm-install-dra-driver-nvidia-gpu-"*": FailedCreatePodSandBox: "*"nvidia-container-runtime did not terminate successfully"*"check the image's toolkit ('openshell image info') and the host's driver ('nvidia-smi'), then rerun with --recreate" ]]
}

# hold_by_claim GATEWAY POD TEMPLATE CLASS [side]: a sleeping pod whose
# container "work" holds a claim of CLASS made from TEMPLATE (with "side",
# a second container that holds none).
hold_by_claim() {
	local smoke side=""
	smoke=$(docker inspect "$IMAGE" --format '{{index .Config.Labels "org.openshell.smoke-image"}}')
	[ "${5-}" != side ] || side=',{"name":"side","image":"'"$smoke"'","command":["sleep","3600"]}'
	gw_kubectl "$1" apply -f - >/dev/null <<-JSON
	{"apiVersion":"v1","kind":"List","items":[
	 {"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"$3"},
	  "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"$4"}}]}}}},
	 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"},"spec":{"restartPolicy":"Never",
	  "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"$3"}],
	  "containers":[{"name":"work","image":"$smoke","command":["sleep","3600"],"resources":{"claims":[{"name":"gpu"}]}}$side]}}]}
	JSON
}

@test "gateway gpus of a DRA gateway: each GPU's holders by the claims allocated it, a template's and an extended resource's" {
	hold_by_claim d byclaim hold-gpu gpu.nvidia.com side
	eventually pod_phase_is d byclaim Running
	holding_pod d bycount
	run --separate-stderr openshell gateway gpus --name d --json
	status=$status json=$output
	# status counts them by the claims too, in its one exec.
	use=$(openshell gateway status --name d | grep '^  GPU use:')
	# The GPU the scheduler allocated byclaim's claim, by its device's uuid in the slices.
	claim=$(kd get pod byclaim -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
	dev=$(kd get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}')
	uuid=$(gw_kubectl d get resourceslices -o json |
		jq -r --arg d "$dev" '.items[] | select(.spec.nodeName == "openshell-d") | .spec.devices[] | select(.name == $d) | .attributes.uuid.string')
	kd delete pod byclaim bycount --wait=false >/dev/null
	kd delete resourceclaimtemplate hold-gpu >/dev/null
	assert_equal "$status" 0
	assert_schema gpu_view "$json"
	row() { jq -r --arg u "$uuid" ".gpus[] | select(.uuid $1 \$u) | [.health, (.holders[] | \"\(.namespace)/\(.pod)/\(.container)\")] | join(\" \")" <<<"$json"; }
	assert_equal "$(row ==)" "healthy default/byclaim/work"
	assert_equal "$(row !=)" "healthy default/bycount/work"
	assert_equal "$use" "  GPU use:     2 devices: 2 in use, 0 free"
}

# IMAGE with LABEL $2=$3, tagged $1.
relabelled() {
	printf 'FROM %s\nLABEL %s="%s"\n' "$IMAGE" "$2" "$3" | DOCKER_BUILDKIT=0 docker build -q -t "$1" - >/dev/null
}

@test "an image of a k3s older than 1.34, or whose bundle lacks the DRA driver's chart or image, is refused under dra before anything is made" {
	relabelled openshell-cluster:k3s133 org.openshell.k3s-version v1.33.5+k3s1
	run --separate-stderr openshell -v gateway start --gpu --gpu-allocation dra --name x --image openshell-cluster:k3s133
	assert_failure 1
	# Its labels came with the start's first look: no inspect of its own.
	[[ "$stderr" != *"docker image inspect"* ]]
	[[ "$stderr" == *"openshell: error: --gpu-allocation dra needs Kubernetes 1.34 or later (DRA's resource.k8s.io/v1), and image openshell-cluster:k3s133 runs k3s v1.33.5+k3s1: use an image of a newer k3s ('openshell image build' makes one), or --gpu-allocation device-plugin" ]]
	relabelled openshell-cluster:nodrachart org.openshell.bundle.charts nvidia-device-plugin-0.17.1.tgz
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --name x --image openshell-cluster:nodrachart
	assert_failure 1
	[[ "$stderr" == *"openshell: error: image openshell-cluster:nodrachart bundles no chart of NVIDIA's DRA driver (an older openshell built it; its charts: nvidia-device-plugin-0.17.1.tgz): rebuild it with 'openshell image build', or use --gpu-allocation device-plugin" ]]
	relabelled openshell-cluster:nodraimage org.openshell.bundle.images "nvcr.io/nvidia/k8s-device-plugin:v0.17.1 nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04"
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --name x --image openshell-cluster:nodraimage
	assert_failure 1
	[[ "$stderr" == *"openshell: error: image openshell-cluster:nodraimage bundles no image of NVIDIA's DRA driver (its images: nvcr.io/nvidia/k8s-device-plugin:v0.17.1 nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04), which an offline gateway could not pull: rebuild it with 'openshell image build', or use --gpu-allocation device-plugin" ]]
	run docker ps -aq --filter name=openshell-cluster-x
	assert_output ""
	# The device plugin needs none of it.
	run --separate-stderr openshell gateway start --gpu --name x --image openshell-cluster:nodraimage --no-wait
	assert_success
}

@test "--gpu-allocation is refused where it has no place, before anything is made" {
	run --separate-stderr openshell gateway start --gpu-allocation dra --name x --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == "openshell: error: --gpu-allocation says how GPUs are given, and none were asked for: add --gpu or --gpus"$'\n'* ]]
	run --separate-stderr openshell gateway start --gpu --gpu-allocation plugins --name x --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"invalid --gpu-allocation 'plugins': give device-plugin or dra"* ]]
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --gpu-sharing time-slicing:2 --name x --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"under --gpu-allocation dra pods share a GPU by using one ResourceClaim, whose GpuConfig asks the DRA driver for time-slicing, and there is no count of replicas: give --gpu-sharing time-slicing, without :N"* ]]
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --gpu-sharing mps:4 --name x --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"whose GpuConfig asks the DRA driver for MPS, and there is no count of replicas: give --gpu-sharing mps, without :N"* ]]
	# Without a count it is DRA's: the device plugin, asked or by default, takes none.
	for alloc in "--gpu-allocation device-plugin" ""; do
		# shellcheck disable=SC2086 # the option and its value, or nothing
		run --separate-stderr openshell gateway start --gpu $alloc --gpu-sharing time-slicing --name x --image "$IMAGE"
		assert_failure 2
		[[ "$stderr" == *"--gpu-sharing without a count is for --gpu-allocation dra, where each claim asks for it; NVIDIA's device plugin shares each GPU as a count of replicas: give --gpu-sharing time-slicing:N or mps:N, or add --gpu-allocation dra"* ]]
	done
	run --separate-stderr openshell gateway start --gpu --gpu-allocation dra --mig-strategy single --name x --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"leave out --mig-strategy, or use --gpu-allocation device-plugin"* ]]
	run docker ps -aq --filter name=openshell-cluster-x
	assert_output ""
	# A DRA gateway keeps its allocation.
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation device-plugin --name d --image "$IMAGE"
	assert_failure 6
	[[ "$stderr" == *"gateway 'd' exists with --gpu-allocation dra but --gpu-allocation device-plugin was asked for; rerun with --recreate"* ]]
	run --separate-stderr openshell gateway start --gpus 2 --gpu-sharing time-slicing:2 --name d --image "$IMAGE"
	assert_failure 6
	[[ "$stderr" == *"gateway 'd' allocates its GPUs by dra: under --gpu-allocation dra pods share a GPU by using one ResourceClaim"*"give --gpu-sharing time-slicing, without :N"* ]]
	run --separate-stderr openshell gateway start --gpus 2 --mig-strategy single --name d --image "$IMAGE"
	assert_failure 6
	[[ "$stderr" == *"gateway 'd' allocates its GPUs by DRA (--gpu-allocation dra), where --mig-strategy has no place"* ]]
}

@test "--gpu-sharing none on a DRA gateway turns the gate off: a claim asking for time-slicing then pends with the driver's words" {
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation dra --gpu-sharing none --name d
	assert_success
	run plugin_gates
	assert_output ""
	readme_shared_sample | sed '/^kind: Pod$/,$d' | sed '$d' >"$BATS_TEST_TMPDIR/claim.yaml"
	readme_shared_pod >"$BATS_TEST_TMPDIR/pod.yaml"
	run kd apply -f - < <(cat "$BATS_TEST_TMPDIR/claim.yaml"; printf -- '---\napiVersion: v1\n'; cat "$BATS_TEST_TMPDIR/pod.yaml")
	assert_success
	# The kubelet's event of the driver's refusal (device_state.go, validate.go).
	want='"TimeSlicing" is selected as the GPU sharing strategy, but the "TimeSlicingSettings" feature gate is not enabled'
	eventually gw_kubectl_says d "$want" get events --field-selector involvedObject.name=shared-a \
		-o jsonpath='{.items[*].message}'
	run kd get pod shared-a -o jsonpath='{.status.phase}'
	assert_output "Pending"
	run --separate-stderr openshell gateway verify --name d --json
	assert_success
	run evidence "$output" dra-driver
	assert_output "DaemonSet nvidia-dra-driver-gpu/dra-driver-nvidia-gpu-kubelet-plugin: 1/1 pods ready"
	kd delete pod shared-a >/dev/null
	kd delete resourceclaim shared-gpu >/dev/null
}

@test "--gpu-sharing time-slicing on a DRA gateway again: the driver's gate rolled out, the README's shared claim gives both pods its one GPU, time slice Long while held" {
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation dra --gpu-sharing time-slicing --name d
	assert_success
	[[ "$stderr" == *"setting GPU sharing to time-slicing (the DRA driver's feature gate)"* ]]
	# The start waited for the DaemonSet's rollout with the gate.
	run plugin_gates
	assert_output "TimeSlicingSettings=true,"
	run gw_kubectl d get daemonset -n nvidia-dra-driver-gpu dra-driver-nvidia-gpu-kubelet-plugin \
		-o jsonpath='{.status.updatedNumberScheduled}/{.status.numberReady}/{.status.desiredNumberScheduled}'
	assert_output "1/1/1"
	readme_shared_sample >"$BATS_TEST_TMPDIR/shared-gpu.yaml"
	run kd apply -f - <"$BATS_TEST_TMPDIR/shared-gpu.yaml"
	assert_success
	assert_line "resourceclaim.resource.k8s.io/shared-gpu created"
	run kd wait --for=jsonpath='{.status.phase}'=Succeeded pod/shared-a pod/shared-b --timeout=60s
	assert_success
	a=$(kd logs shared-a) b=$(kd logs shared-b)
	assert_equal "$a" "$b"
	uuid=$(sed -n 's/^GPU 0: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$a")
	run grep -cxF "$uuid" <(published d)
	assert_output 1
	# The claim outlives its pods; held again, the driver sets the GPU's
	# time slice as its GpuConfig asks (Long: 3), and back once released.
	readme_shared_pod | sed 's/name: shared-a/name: shared-hold/; s/\["nvidia-smi", "-L"\]/["sleep", "3600"]/' \
		>"$BATS_TEST_TMPDIR/hold.yaml"
	run kd apply -f - < <(printf 'apiVersion: v1\n'; cat "$BATS_TEST_TMPDIR/hold.yaml")
	assert_success
	run kd wait --for=jsonpath='{.status.phase}'=Running pod/shared-hold --timeout=60s
	assert_success
	run gpu_compute "$uuid"
	assert_line "mode DEFAULT"
	assert_line "timeslice 3"
	verify_says_gate time-slicing TimeSlicingSettings
	kd delete pod shared-hold --wait=false >/dev/null
	eventually timeslice_is "$uuid" 0
	run kd delete -f - <"$BATS_TEST_TMPDIR/shared-gpu.yaml"
	assert_success
}

# The kubelet plugin's DaemonSet rolled out with no feature gate: its
# generation observed, its one pod updated and ready (one read).
plugin_rolled_without_gates() {
	local g o rest
	IFS=/ read -r g o rest < <(gw_kubectl d get daemonset -n nvidia-dra-driver-gpu dra-driver-nvidia-gpu-kubelet-plugin \
		-o jsonpath='{.metadata.generation}/{.status.observedGeneration}/{.status.updatedNumberScheduled}/{.status.numberReady}/{.status.desiredNumberScheduled}/{.spec.template.spec.containers[?(@.name=="gpus")].env[?(@.name=="FEATURE_GATES")].value}') || true   # no newline ends jsonpath's line
	[ -n "$g" ] && [ "$g" = "$o" ] && [ "$rest" = "1/1/1/" ]
}

# The DRA driver's MPS control daemons: "NAME READY", one a line.
mps_daemons() {
	gw_kubectl d get deployments -n nvidia-dra-driver-gpu \
		-o jsonpath='{range .items[*]}{.metadata.name} {.status.readyReplicas}{"\n"}{end}'
}
no_mps_daemons() { gw_kubectl_is d "" get deployments -n nvidia-dra-driver-gpu -o name; }

@test "--gpu-sharing mps on a DRA gateway: the README's MPS claim gets a control daemon of its own, which every pod of the claim shares, gone with its last pod" {
	run --separate-stderr openshell gateway start --gpus 2 --gpu-allocation dra --gpu-sharing mps --name d
	assert_success
	[[ "$stderr" == *"setting GPU sharing to mps (the DRA driver's feature gate)"* ]]
	[[ "$stderr" == *"a claim that asks for MPS puts its GPUs in compute mode EXCLUSIVE_PROCESS on the host"* ]]
	run plugin_gates
	assert_output "MPSSupport=true,"
	# The README's claim and pod, and beside them a second pod of the claim
	# that holds it.
	readme_sample mps >"$BATS_TEST_TMPDIR/mps-gpu.yaml"
	readme_sample mps | sed -n '/^kind: Pod$/,$p' |
		sed 's/name: mps-a/name: mps-hold/; s/\["sh", "-c", .*\]$/["sleep", "3600"]/' >"$BATS_TEST_TMPDIR/hold.yaml"
	run kd apply -f - <"$BATS_TEST_TMPDIR/mps-gpu.yaml"
	assert_success
	run gw_kubectl d apply -f - < <(printf 'apiVersion: v1\n'; cat "$BATS_TEST_TMPDIR/hold.yaml")
	assert_success
	run gw_kubectl d wait --for=jsonpath='{.status.phase}'=Succeeded pod/mps-a --timeout=60s
	assert_success
	# Its GPU, then the claim's daemon's answer through the pipe: the
	# percentage the claim's mpsConfig set.
	run kd logs mps-a
	assert_line --index 1 "50.0"
	uuid=$(sed -n 's/^GPU 0: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$output")
	run grep -cxF "$uuid" <(published d)
	assert_output 1
	run gpu_compute "$uuid"
	assert_line "mode EXCLUSIVE_PROCESS"
	# The other pod on the same daemon, the one named for the claim's UID,
	# with its pipe where CUDA_MPS_PIPE_DIRECTORY says.
	run gw_kubectl d wait --for=jsonpath='{.status.phase}'=Running pod/mps-hold --timeout=60s
	assert_success
	uid=$(gw_kubectl d get resourceclaim mps-gpu -o jsonpath='{.metadata.uid}')
	run mps_daemons
	assert_output --regexp "^mps-control-daemon-$uid-[0-9a-f]{5} 1$"
	# the daemon's control endpoint and PID file, there as on a real host
	run gw_kubectl d exec mps-hold -- sh -c 'cd "$CUDA_MPS_PIPE_DIRECTORY" && pwd && [ -e control ] && [ -s nvidia-cuda-mps-control.pid ] && echo daemon'
	assert_output $'/tmp/nvidia-mps\ndaemon'
	# gateway gpus: that GPU shared by MPS, as its claim asks, no count;
	# the other one exclusive.
	run --separate-stderr openshell gateway gpus --name d --json
	assert_success
	json=$output
	assert_schema gpu_view "$json"
	run jq -r --arg u "$uuid" '.gpus[] | [(.uuid == $u), .sharing.mode, .sharing.replicas, (.holders | map(.pod) | join(","))] | join(" ")' <<<"$json"
	assert_line "true mps  mps-hold"
	assert_line "false exclusive  "
	run --separate-stderr openshell gateway gpus --name d
	assert_success
	assert_line --regexp "^openshell-d +[0-9] +$uuid .* MPS +healthy +default/mps-hold/cuda$"
	verify_says_gate mps MPSSupport
	# Its last pod gone, the claim is unprepared: the daemon goes; the
	# GPU stays in EXCLUSIVE_PROCESS, as the driver leaves it, the claim
	# gone too.
	kd delete pod mps-hold --wait=false >/dev/null
	eventually no_mps_daemons
	run kd delete -f - <"$BATS_TEST_TMPDIR/mps-gpu.yaml"
	assert_success
	run gpu_compute "$uuid"
	assert_line "mode EXCLUSIVE_PROCESS"
	# Drift: the kubelet plugin's DaemonSet edited by hand to run without
	# the gate, rolled out. verify judges the pods' template against what
	# --gpu-sharing asked, and fails naming the gate and the remedy. (The
	# tests after it remove the driver: nothing to set back.)
	gw_kubectl d set env daemonset/dra-driver-nvidia-gpu-kubelet-plugin -n nvidia-dra-driver-gpu -c gpus \
		FEATURE_GATES= >/dev/null
	eventually plugin_rolled_without_gates
	run --separate-stderr openshell gateway verify --name d --json
	assert_failure
	run evidence "$output" dra-driver
	assert_output "DaemonSet nvidia-dra-driver-gpu/dra-driver-nvidia-gpu-kubelet-plugin: 1/1 pods ready, but --gpu-sharing mps asks for feature gate MPSSupport, which its pods do not run with (all 1 updated): job helm-install-dra-driver-nvidia-gpu in kube-system has not rendered the chart again yet, or the DaemonSet was changed by hand; once that job is done, 'openshell gateway start --gpu-sharing none', then '--gpu-sharing mps', renders it again"
}

# The devices gateway $1's node publishes: "TYPE NAME PARENT", sorted.
published_devices() {
	gw_kubectl "$1" get resourceslices -o json |
		jq -r --arg node "openshell-$1" '.items[] | select(.spec.driver == "gpu.nvidia.com" and .spec.nodeName == $node)
			| .spec.devices[] | [.attributes.type.string, .name, (.attributes.parentUUID.string // "-")] | join(" ")' | sort
}

@test "MIG under DRA: a MIG-enabled GPU is published as its MIG devices, one without any not at all; verify's claim pod gets a MIG device" {
	run --separate-stderr openshell gateway start --gpus 2,3 --gpu-allocation dra --name dm --image "$IMAGE" \
		--port "$(free_port)" --json
	assert_success
	[[ "$stderr" == *"GPU $(sim_gpu_uuids | sed -n 4p) has MIG enabled and no MIG device: NVIDIA's DRA driver publishes nothing of it"* ]]
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 1
	gpu=$(sim_gpu_uuids | sed -n 3p)
	run published_devices dm
	assert_output "mig gpu-2-mig-1g10gb-19-0 $gpu
mig gpu-2-mig-1g10gb-19-1 $gpu
mig gpu-2-mig-3g40gb-9-4 $gpu"
	run --separate-stderr openshell gateway verify --name dm --json
	assert_success
	doc=$output
	run statuses "$doc"
	# No extended-pod: nvidia.com/gpu is served by the class of whole GPUs.
	assert_output "device-request=pass runtime-class=pass dra-driver=pass resource-slices=pass smoke-pod=pass pod-isolation=pass privileged-pod=pass"
	# Its claim's subrequest for a MIG device: the pod sees that one alone.
	run evidence "$doc" smoke-pod
	assert_output --regexp "^pod openshell-verify-[0-9a-f]+ Succeeded: GPU 0: .* \(UUID: $gpu\); MIG [0-9]g\.[0-9]+gb +Device +0: \(UUID: MIG-[^)]*\), the device gpu-2-mig-[0-9a-z-]+ its claim openshell-verify-[0-9a-f]+-gpu-[a-z0-9]+ was allocated and reserved for it$"
	run evidence "$doc" resource-slices
	assert_output "node openshell-dm's ResourceSlices (driver gpu.nvidia.com) publish 1 GPU, the gateway's own by UUID: $gpu"
	# gateway gpus counts a claim's MIG device to its GPU.
	hold_by_claim dm holdmig hold-mig mig.nvidia.com
	eventually pod_phase_is dm holdmig Running
	run --separate-stderr openshell gateway gpus --name dm --json
	assert_success
	assert_equal "$(jq -r --arg u "$gpu" '.gpus[] | select(.uuid == $u) | [.holders[] | "\(.namespace)/\(.pod)/\(.container)"] | join(" ")' <<<"$output")" \
		"default/holdmig/work"
	openshell gateway destroy --name dm --yes >/dev/null 2>&1
	# With no GPU the driver can publish, the start ends at once.
	run --separate-stderr openshell gateway start --gpus "$(sim_gpu_uuids | sed -n 4p)" --gpu-allocation dra --name dm \
		--image "$IMAGE" --port "$(free_port)"
	assert_failure 7
	[[ "$stderr" == *"every GPU of gateway 'dm' has MIG enabled and no MIG device, and NVIDIA's DRA driver publishes none of them: create MIG devices (nvidia-smi mig -cgi PROFILE -C), or disable MIG"* ]]
	openshell gateway destroy --name dm --yes >/dev/null 2>&1
}

@test "a device-plugin gateway on a DRA gateway's kept volume removes the DRA driver first" {
	run --separate-stderr openshell gateway destroy --name d --keep-volume --yes
	assert_success
	run --separate-stderr openshell gateway start --gpu --name d --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	[[ "$stderr" == *"removing what an earlier GPU run installed on the volume"* ]]
	run jq -r '[.gpu_allocation, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$output"
	assert_output "device-plugin 4"
	run gw_kubectl d get helmcharts -n kube-system -o jsonpath='{.items[*].metadata.name}'
	assert_output "nvidia-device-plugin"
	run gw_kubectl d get daemonsets -n nvidia-dra-driver-gpu -o name
	assert_output ""
	# And the DRA driver's sharing config, lest it come back with that chart.
	run gw_kubectl d get helmchartconfigs -n kube-system -o name
	assert_output ""
	run published d
	assert_output ""
	openshell gateway destroy --name d --yes >/dev/null 2>&1
}
