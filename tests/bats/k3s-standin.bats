#!/usr/bin/env bats
# The SIMULATED k3s stand-in image (openshell-cluster:sim, tests/testbed/sim-image)
# on a simulated 2-GPU host (tests/testbed/sim-host): each behaviour openshell relies
# on (docs/design.md), the failure switches, and a container without --gpus.
# Simulation only: on a real GPU runner these facts are the real k3s' and are
# covered by the gateway suites.

bats_require_minimum_version 1.5.0
load helpers/assert
load helpers/sim-host

REPO=$BATS_TEST_DIRNAME/../..
pin() { sed -n "s/^$1=//p" "$REPO/deploy/versions.env"; }
# The stand-in is offline, as a host without network: pods run the images
# the cluster image bundles.
SMOKE=$(pin SMOKE_IMAGE)

# start NAME [docker run args...] -- [k3s args...]: a cluster container as
# openshell starts it (privileged, a cgroup namespace of its own, own network and volume).
start() {
	local n=$1
	shift
	docker network create "openshell-cluster-$n" >/dev/null
	docker volume create "openshell-cluster-$n" >/dev/null
	docker run -d --privileged --cgroupns private --name "openshell-cluster-$n" \
		--hostname "openshell-$n" --network "openshell-cluster-$n" \
		-v "openshell-cluster-$n:/var/lib/rancher/k3s" "$@" \
		server --disable=traefik --tls-san=127.0.0.1 >/dev/null
}

setup_file() {
	sim_only "the k3s stand-in exists only in the simulation"
	sim_host_start --cluster-images --gpus 2
	export SIM_K3S_IMAGE=openshell-cluster:sim
	# The deploy controller lists its manifests every second, not every 15 s.
	start gpu --gpus all -e GPU_ENABLED=true -e SIM_K3S_DEPLOY_PERIOD=1 -p 127.0.0.1:0:6443 "$SIM_K3S_IMAGE"
	start nogpu --no-healthcheck "$SIM_K3S_IMAGE"
	start gpuflag-only --no-healthcheck -e GPU_ENABLED=true "$SIM_K3S_IMAGE"
	start never --no-healthcheck --gpus all -e GPU_ENABLED=true "$SIM_K3S_IMAGE-never-ready"
	start chartfail --no-healthcheck --gpus all -e GPU_ENABLED=true -e SIM_CHART_INSTALL_FAIL=1 -e SIM_HELM_DELAY=0.3 "$SIM_K3S_IMAGE"
	start crash --no-healthcheck --gpus all -e GPU_ENABLED=true -e SIM_PLUGIN_CRASHLOOP=1 "$SIM_K3S_IMAGE"
	start gone --no-healthcheck --gpus all -e GPU_ENABLED=true "$SIM_K3S_IMAGE"
	start pressure --no-healthcheck --gpus all -e GPU_ENABLED=true -e SIM_NODE_PRESSURE=memory "$SIM_K3S_IMAGE"
	start notoolkit --no-healthcheck --gpus all -e GPU_ENABLED=true "$SIM_K3S_IMAGE-notoolkit"
	start broken --no-healthcheck --gpus all -e GPU_ENABLED=true -e SIM_NVIDIA_RUNTIME_BROKEN=1 "$SIM_K3S_IMAGE"
	# No healthcheck: nothing else may spend the flaky switch's count.
	start flaky --no-healthcheck "$SIM_K3S_IMAGE"
}

teardown_file() {
	sim_host_stop
}

# The gateways a test starts for itself go with it, passed or failed: on a
# loaded machine one left running would slow every test after it.
# One docker call for all of them: eight a test cost the file 300 calls.
teardown() {
	docker rm -f openshell-cluster-{crds,cdi,mps,multi,multi2,privdev,badspec,dra} openshell-agent-{a1,bad} >/dev/null 2>&1 || true
}

# kx NAME ARGS...: kubectl against cluster NAME. The gpu cluster, the one
# most tests ask, publishes its API: the host's real kubectl reaches it with
# its own k3s.yaml, once it is written, aimed at the published port (a
# `docker exec` costs a fifth of a second of CPU beyond the kubectl).
kx() {
	local n=$1 cfg=$BATS_FILE_TMPDIR/gpu.kubeconfig port
	shift
	if [[ $n == gpu && ! -s $cfg && -x $HOST_KUBECTL ]] &&
		port=$(docker port openshell-cluster-gpu 6443/tcp) &&
		docker exec openshell-cluster-gpu cat /etc/rancher/k3s/k3s.yaml 2>/dev/null |
		sed "s|server: https://127.0.0.1:6443|server: https://${port%%$'\n'*}|" >"$cfg.tmp" && [[ -s $cfg.tmp ]]; then
		mv "$cfg.tmp" "$cfg"
	fi
	if [[ $n == gpu && -s $cfg ]]; then
		"$HOST_KUBECTL" --kubeconfig "$cfg" --cache-dir "$BATS_FILE_TMPDIR/kube-cache" "$@"
	else
		docker exec -i "openshell-cluster-$n" kubectl "$@"
	fi
}

# wait_for SECONDS CMD...: poll CMD with a short backoff until it succeeds
# (growing to half a second, as eventually's: a poll costs CPU).
wait_for() {
	local deadline=$((SECONDS + $1)) delay=0.1
	shift
	until "$@"; do
		if ((SECONDS >= deadline)); then
			echo "timed out waiting for: $*" >&2
			return 1
		fi
		sleep "$delay"
		case $delay in 0.1) delay=0.3 ;; *) delay=0.5 ;; esac
	done
}

health_has() {
	docker inspect -f '{{range .State.Health.Log}}{{.Output}}{{end}}' "openshell-cluster-$1" | grep -qF -- "$2"
}

# probe_has NAME MARKER: the image's healthcheck, run as Docker runs it (an
# exec with the container's environment), says MARKER. Only the gpu gateway
# keeps Docker's own probe: every probe is an exec and kubectl runs, and ten
# gateways probing all through the suite would hold both CPUs.
probe_has() {
	docker exec "openshell-cluster-$1" /usr/local/bin/cluster-healthcheck.sh | grep -qF -- "$2"
}

alloc() {
	kx "$1" get nodes -o json | jq -r '.items[0].status.allocatable["nvidia.com/gpu"] // "absent"'
}

alloc_is() {
	[[ $(alloc "$1") == "$2" ]]
}

# gpu_is NAME ALLOCATABLE CAPACITY: the node's nvidia.com/gpu, both ways.
gpu_is() {
	[[ $(kx "$1" get nodes -o json |
		jq -r '.items[0].status | "\(.allocatable["nvidia.com/gpu"] // "absent") \(.capacity["nvidia.com/gpu"] // "absent")"') == "$2 $3" ]]
}

# switch NAME SWITCH [VALUE]: set a stand-in switch at run time; no VALUE clears it.
switch() {
	if [ $# -gt 2 ]; then
		docker exec "openshell-cluster-$1" sh -c "mkdir -p /var/lib/rancher/k3s/sim/switches && echo $3 >/var/lib/rancher/k3s/sim/switches/$2"
	else
		docker exec "openshell-cluster-$1" rm -f "/var/lib/rancher/k3s/sim/switches/$2"
	fi
}

pod_phase_is() {
	[[ $(kx "$1" get pod "$2" -o json | jq -r .status.phase) == "$3" ]]
}

gpu_pod() { # NAME GPUS CMD-JSON
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"%s","image":"%s","command":%s,"resources":{"limits":{"nvidia.com/gpu":%s}}}]}}' \
		"$1" "$1" "$SMOKE" "$3" "$2"
}

@test "sim-host --cluster-images: a daemon from the set's image store has the set, its layers hard links, none loaded" {
	# The first host to load the set leaves the store (this file's own may
	# have come from a build, which leaves none).
	sim_host_extra --cluster-images --gpus 1
	seed=$("$REPO/tests/testbed/sim-image" --seed)
	sim_host_stop_dir "$SIM_HOST_EXTRA_DIR"
	sim_host_extra --cluster-images --gpus 1
	# Every image of the set as docker save wrote it: each tag, under its config's ID.
	set_tar=${seed%/seed-*}/images-${seed##*/seed-}.tar
	# In use through its seed, the set's archive is kept fresh: another key's
	# sim-image drops what is an hour old.
	touch -d '2 hours ago' "$set_tar"
	"$REPO/tests/testbed/sim-image" --seed >/dev/null
	(($(date +%s) - $(stat -c %Y "$set_tar") < 600))
	want=$(tar -xOf "$set_tar" manifest.json |
		jq -r '.[] | (.Config | sub("^blobs/sha256/"; "") | sub("\\.json$"; "")) as $id | .RepoTags[] | "\(.) sha256:\($id)"' | sort)
	[[ "$want" == *"openshell-cluster:sim-nobundle sha256:"* ]]
	run env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" docker images --no-trunc --format '{{.Repository}}:{{.Tag}} {{.ID}}'
	assert_success
	[ "$(sort <<<"$output")" = "$want" ]
	# The k3s binary of the image: one file in the store and the daemon.
	layer=$(cd "$seed" && find overlay2 -path '*/diff/usr/local/bin/k3s' | head -1)
	[ -n "$layer" ]
	[ "$(stat -c %i "$seed/$layer")" = "$(stat -c %i "$SIM_HOST_EXTRA_DIR/data/$layer")" ]
	# Its containers run, and what one writes stays in its own layer.
	run env DOCKER_HOST="$SIM_HOST_EXTRA_DOCKER_HOST" docker run --rm --entrypoint /bin/sh "$SIM_K3S_IMAGE" \
		-c 'echo changed >>/usr/local/bin/k3s && tail -1 /usr/local/bin/k3s'
	assert_output changed
	[ "$(tail -1 "$seed/$layer")" != changed ]
	sim_host_stop_dir "$SIM_HOST_EXTRA_DIR"
}

@test "k3s server writes a k3s-shaped kubeconfig, 0600, and answers /readyz" {
	wait_for 60 kx gpu get --raw /readyz
	run kx gpu get --raw /readyz
	assert_success
	assert_output "ok"
	run docker exec openshell-cluster-gpu stat -c %a /etc/rancher/k3s/k3s.yaml
	assert_output "600"
	run docker exec openshell-cluster-gpu cat /etc/rancher/k3s/k3s.yaml
	assert_line "    server: https://127.0.0.1:6443"
	assert_line --regexp '^    certificate-authority-data: [A-Za-z0-9+/=]{100,}$'
	assert_line --regexp '^    client-certificate-data: [A-Za-z0-9+/=]{100,}$'
	assert_line --regexp '^    client-key-data: [A-Za-z0-9+/=]{100,}$'
	assert_line "current-context: default"
	ca=$(docker exec openshell-cluster-gpu sed -n 's/^ *certificate-authority-data: //p' /etc/rancher/k3s/k3s.yaml)
	run bash -c "base64 -d <<<'$ca' | head -n 1"
	assert_output "-----BEGIN CERTIFICATE-----"
}

@test "resource.k8s.io/v1 through the real kubectl: DRA's four types, the real printers' columns, a new claim pending" {
	wait_for 60 kx gpu get --raw /readyz
	run kx gpu api-resources --api-group resource.k8s.io --no-headers
	assert_success
	assert_line --regexp '^deviceclasses +resource\.k8s\.io/v1 +false +DeviceClass$'
	assert_line --regexp '^resourceclaims +resource\.k8s\.io/v1 +true +ResourceClaim$'
	assert_line --regexp '^resourceclaimtemplates +resource\.k8s\.io/v1 +true +ResourceClaimTemplate$'
	assert_line --regexp '^resourceslices +resource\.k8s\.io/v1 +false +ResourceSlice$'
	run kx gpu apply -f - <<-'EOF'
	apiVersion: resource.k8s.io/v1
	kind: DeviceClass
	metadata: {name: dra-test.example.com}
	spec:
	  selectors:
	  - cel: {expression: "device.driver == 'gpu.nvidia.com'"}
	---
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: one-gpu, namespace: default}
	spec:
	  spec:
	    devices:
	      requests:
	      - name: gpu
	        exactly: {deviceClassName: dra-test.example.com}
	---
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaim
	metadata: {name: mine, namespace: default}
	spec:
	  devices:
	    requests:
	    - name: gpu
	      exactly: {deviceClassName: dra-test.example.com, count: 1}
	status:
	  reservedFor: [{resource: pods, name: someone, uid: "1"}]
	EOF
	assert_success
	assert_line 'deviceclass.resource.k8s.io/dra-test.example.com created'
	assert_line 'resourceclaimtemplate.resource.k8s.io/one-gpu created'
	assert_line 'resourceclaim.resource.k8s.io/mine created'
	run kx gpu get resourceclaims
	assert_success
	assert_line --index 0 --regexp '^NAME +STATE +AGE$'
	assert_line --index 1 --regexp '^mine +pending +[0-9]+s$'
	# A claim's status is the server's: what a create carried is dropped.
	run kx gpu get resourceclaim mine -o jsonpath='{.status}'
	assert_output ''
	run kx gpu get resourceslices
	assert_success
	assert_output 'No resources found'
	# Strict field validation knows the types.
	run kx gpu apply -f - <<-'EOF'
	apiVersion: resource.k8s.io/v1
	kind: DeviceClass
	metadata: {name: dra-bad.example.com}
	spec: {selector: []}
	EOF
	assert_failure
	assert_output --partial 'strict decoding error: unknown field "spec.selector"'
	kx gpu delete resourceclaim mine >/dev/null
	kx gpu delete resourceclaimtemplate one-gpu >/dev/null
	kx gpu delete deviceclass dra-test.example.com >/dev/null
}

# claim_pod NAME: a pod whose one claim comes from the template one-gpu.
claim_pod() {
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"c","image":"%s","command":["nvidia-smi","-L"],"resources":{"claims":[{"name":"gpu"}]}}]}}' \
		"$1" "$SMOKE"
}

# claim_of POD: the name of the claim the claim controller made for POD.
claim_of() {
	kx gpu get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'
}

@test "DRA claims: a template's claim per pod, allocated from the node's slice and reserved; none left: Pending with the scheduler's reason" {
	wait_for 60 kx gpu get --raw /readyz
	node=$(kx gpu get nodes -o jsonpath='{.items[0].metadata.name}')
	kx gpu apply -f - >/dev/null <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: DeviceClass
	metadata: {name: gpu-test.example.com}
	spec:
	  selectors:
	  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
	---
	apiVersion: resource.k8s.io/v1
	kind: ResourceSlice
	metadata: {name: $node-gpu.nvidia.com-test}
	spec:
	  driver: gpu.nvidia.com
	  nodeName: $node
	  pool: {name: $node, generation: 1, resourceSliceCount: 1}
	  devices:
	  - {name: gpu-0, attributes: {type: {string: gpu}, uuid: {string: GPU-a}}}
	  - {name: gpu-1, attributes: {type: {string: gpu}, uuid: {string: GPU-b}}}
	  - {name: gpu-0-mig-1g.10gb-0, attributes: {type: {string: mig}, uuid: {string: MIG-c}}}
	---
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: one-gpu, namespace: default}
	spec:
	  metadata: {labels: {from: template}}
	  spec:
	    devices:
	      requests:
	      - name: gpu
	        exactly: {deviceClassName: gpu-test.example.com}
	EOF
	for p in dra1 dra2 dra3; do
		claim_pod "$p" | kx gpu apply -f - >/dev/null
	done
	wait_for 30 bash -c "[ -n \"\$(docker exec openshell-cluster-gpu kubectl get pod dra3 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}')\" ]"
	c1=$(claim_of dra1)
	[[ $c1 == dra1-gpu-????? ]]
	run kx gpu get resourceclaim "$c1" -o json
	assert_success
	claim=$output
	[ "$(jq -r '.metadata.ownerReferences[0] | "\(.kind) \(.name) \(.controller) \(.blockOwnerDeletion)"' <<<"$claim")" = "Pod dra1 true null" ]
	[ "$(jq -r '.metadata.annotations["resource.kubernetes.io/pod-claim-name"] + " " + .metadata.labels.from' <<<"$claim")" = "gpu template" ]
	[ "$(jq -r '.metadata.finalizers[0]' <<<"$claim")" = resource.kubernetes.io/delete-protection ]
	[ "$(jq -r '.status.allocation.devices.results[0] | "\(.request) \(.driver) \(.pool)"' <<<"$claim")" = "gpu gpu.nvidia.com $node" ]
	[ "$(jq -r '.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]' <<<"$claim")" = "$node" ]
	[ "$(jq -r '.status.reservedFor[0] | "\(.resource) \(.name)"' <<<"$claim")" = "pods dra1" ]
	jq -e '.status.allocation.allocationTimestamp' <<<"$claim" >/dev/null
	# Two pods, the two GPUs (never the MIG device the class leaves out).
	d1=$(jq -r '.status.allocation.devices.results[0].device' <<<"$claim")
	d2=$(kx gpu get resourceclaim "$(claim_of dra2)" -o jsonpath='{.status.allocation.devices.results[0].device}')
	[ "$(printf '%s\n' "$d1" "$d2" | sort | tr '\n' ' ')" = "gpu-0 gpu-1 " ]
	[ "$(kx gpu get pod dra1 -o jsonpath='{.spec.nodeName}')" = "$node" ]
	run kx gpu get resourceclaims --no-headers
	assert_line --regexp "^dra1-gpu-[a-z0-9]{5} +allocated,reserved "
	assert_line --regexp "^dra3-gpu-[a-z0-9]{5} +pending "
	# The third waits, as kube-scheduler says.
	run kx gpu get pod dra3 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
	assert_output '0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
	# No DRA driver's plugin runs on the node: the kubelet cannot prepare the claim.
	wait_for 30 bash -c "docker exec openshell-cluster-gpu kubectl get events --field-selector involvedObject.name=dra1 -o json | jq -e '.items[] | select(.reason == \"FailedPrepareDynamicResources\")' >/dev/null"
	run kx gpu get events --field-selector involvedObject.name=dra1,reason=FailedPrepareDynamicResources -o jsonpath='{.items[0].message}'
	assert_output 'Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.nvidia.com is not registered'
	[ "$(kx gpu get pod dra1 -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}')" = ContainerCreating ]
	# Deleting a pod releases its device, and its claim goes with it.
	kx gpu delete pod dra1 --wait=false >/dev/null
	wait_for 60 bash -c "! docker exec openshell-cluster-gpu kubectl get resourceclaim $c1 >/dev/null 2>&1"
	wait_for 60 bash -c "[ -n \"\$(docker exec openshell-cluster-gpu kubectl get pod dra3 -o jsonpath='{.spec.nodeName}')\" ]"
	[ "$(kx gpu get resourceclaim "$(claim_of dra3)" -o jsonpath='{.status.allocation.devices.results[0].device}')" = "$d1" ]
	kx gpu delete pod dra1 dra2 dra3 --grace-period=0 --force --ignore-not-found >/dev/null 2>&1
	kx gpu delete resourceclaimtemplate one-gpu >/dev/null
	kx gpu delete resourceslice "$node-gpu.nvidia.com-test" >/dev/null
	kx gpu delete deviceclass gpu-test.example.com >/dev/null
}

# stage_dra_driver NAME: the DRA driver's chart in k3s's static charts and its
# image among the node's imports (SIMULATION: both named as the release,
# as the offline bundle would hold them), and the node labelled as the
# chart's affinity asks.
stage_dra_driver() {
	docker exec -i "openshell-cluster-$1" sh -eu <<-'EOF'
	d=$(mktemp -d)
	mkdir -p "$d/dra-driver-nvidia-gpu" /var/lib/rancher/k3s/server/static/charts /var/lib/rancher/k3s/agent/images
	printf 'apiVersion: v2\nname: dra-driver-nvidia-gpu\nversion: 0.4.1\nappVersion: 0.4.1\n' >"$d/dra-driver-nvidia-gpu/Chart.yaml"
	: >"$d/dra-driver-nvidia-gpu/values.yaml"
	tar -C "$d" -czf /var/lib/rancher/k3s/server/static/charts/dra-driver-nvidia-gpu-0.4.1.tgz dra-driver-nvidia-gpu
	printf '[{"Config":"c.json","RepoTags":["registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"],"Layers":[]}]' >"$d/manifest.json"
	printf '{}' >"$d/c.json"
	tar -C "$d" -cf /var/lib/rancher/k3s/agent/images/dra-driver-nvidia-gpu.tar manifest.json c.json
	EOF
	wait_for 60 kx "$1" get node "openshell-$1"
	kx "$1" label node "openshell-$1" nvidia.com/gpu.present=true >/dev/null
}

@test "NVIDIA's DRA driver: its kubelet plugin publishes the gateway's GPUs; a claim's pod, or one asking nvidia.com/gpu, sees exactly its GPU through CDI, unprepared when done" {
	# A privileged runc pod sees the GPUs only as containerd's host devices:
	# k3s with the bundle alone, no drop-in (docs/dra-sources.md).
	start dra --no-healthcheck --gpus all --entrypoint sh "$SIM_K3S_IMAGE" -c \
		'mount --make-rshared / && mkdir -p /var/lib/rancher/k3s/agent/images && cp /opt/openshell/images/* /var/lib/rancher/k3s/agent/images/ && exec k3s "$@"' k3s
	stage_dra_driver dra
	switch dra SIM_DRA_WIPE_DELAY 1
	wait_for 60 kx dra get crd helmcharts.helm.cattle.io
	kx dra apply -f - >/dev/null <<-'EOF'
	apiVersion: helm.cattle.io/v1
	kind: HelmChart
	metadata: {name: dra-driver, namespace: kube-system}
	spec:
	  chart: https://%{KUBERNETES_API}%/static/charts/dra-driver-nvidia-gpu-0.4.1.tgz
	  targetNamespace: nvidia-dra-driver-gpu
	  createNamespace: true
	  valuesContent: |-
	    gpuResourcesEnabledOverride: true
	    resources: {computeDomains: {enabled: false}}
	EOF
	wait_for 90 bash -c "[ -n \"\$(docker exec openshell-cluster-dra kubectl get resourceslices -o jsonpath='{.items[0].spec.devices[1].name}')\" ]"
	run kx dra get resourceslices -o json
	slice=$(jq '.items[0]' <<<"$output")
	[[ $(jq -r .metadata.name <<<"$slice") == 00000-gpu.nvidia.com-openshell-dra-????? ]]
	[ "$(jq -r '.metadata.ownerReferences[0] | "\(.kind) \(.name) \(.controller)"' <<<"$slice")" = "Node openshell-dra true" ]
	[ "$(jq -r '.spec | "\(.driver) \(.nodeName) \(.pool.name)"' <<<"$slice")" = "gpu.nvidia.com openshell-dra openshell-dra" ]
	# Its devices are the gateway's GPUs, named for their minors, by UUID.
	want=$(docker exec openshell-cluster-dra nvidia-smi --query-gpu=uuid --format=csv,noheader | sort)
	[ "$(jq -r '.spec.devices[].attributes.uuid.string' <<<"$slice" | sort)" = "$want" ]
	[ "$(jq -r '[.spec.devices[].name] | sort | join(" ")' <<<"$slice")" = "gpu-0 gpu-1" ]
	[ "$(jq -r '.spec.devices[0].attributes.type.string' <<<"$slice")" = gpu ]
	[ "$(kx dra get deviceclass gpu.nvidia.com -o jsonpath='{.spec.extendedResourceName}')" = nvidia.com/gpu ]
	pod=$(kx dra get pods -n nvidia-dra-driver-gpu -o jsonpath='{.items[0].metadata.name}')
	run kx dra logs -n nvidia-dra-driver-gpu "$pod" -c init-container
	assert_line "nvidia-smi returned with code 0: success, leave"
	kx dra apply -f - >/dev/null <<-EOF
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: one-gpu, namespace: default}
	spec:
	  spec:
	    devices:
	      requests:
	      - name: gpu
	        exactly: {deviceClassName: gpu.nvidia.com}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: smi}
	spec:
	  restartPolicy: Never
	  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
	  containers:
	  - {name: c, image: $SMOKE, command: [nvidia-smi, -L], resources: {claims: [{name: gpu}]}}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: holder}
	spec:
	  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
	  containers:
	  - name: c
	    image: $SMOKE
	    command: [sleep, "600"]
	    env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
	    resources: {claims: [{name: gpu}]}
	EOF
	# Under runc, nvidia-smi and exactly one GPU: the claim's CDI spec gave both.
	wait_for 60 pod_phase_is dra smi Succeeded
	run kx dra logs smi
	assert_equal "$(grep -c '^GPU ' <<<"$output")" 1
	wait_for 60 pod_phase_is dra holder Running
	claim=$(kx dra get pod holder -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
	read -r uid dev < <(kx dra get resourceclaim "$claim" -o json | jq -r '"\(.metadata.uid) \(.status.allocation.devices.results[0].device)"')
	# The kubelet's checkpoint holds the prepared claim, the spec its device;
	# the spec's NVIDIA_VISIBLE_DEVICES=void wins over the pod's "all".
	run docker exec openshell-cluster-dra cat /var/lib/kubelet/dra_manager_state
	[ "$(jq -r '.Data | fromjson | .Entries[] | "\(.ClaimUID) \(.DriverState["gpu.nvidia.com"].Devices[0].CDIDeviceIDs[0])"' <<<"$output")" = \
		"$uid k8s.gpu.nvidia.com/claim=$uid-$dev" ]
	run docker exec openshell-cluster-dra ls /var/run/cdi
	assert_output "k8s.gpu.nvidia.com-claim_$uid.yaml"
	run kx dra exec holder -- nvidia-smi --query-gpu=uuid --format=csv,noheader
	assert_output "$(jq -r --arg d "$dev" '.spec.devices[] | select(.name == $d) | .attributes.uuid.string' <<<"$slice")"
	# Deleted: unprepared (the spec gone, the checkpoint empty), the claim deleted.
	kx dra delete pod holder --grace-period=1 >/dev/null
	run docker exec openshell-cluster-dra ls /var/run/cdi
	assert_output ""
	run docker exec openshell-cluster-dra cat /var/lib/kubelet/dra_manager_state
	[ "$(jq -r '.Data | fromjson | .Entries | length' <<<"$output")" = 0 ]
	wait_for 30 bash -c "[ -z \"\$(docker exec openshell-cluster-dra kubectl get resourceclaims -o name)\" ]"
	# nvidia.com/gpu: 1 on a node without a device plugin: the class's
	# extended resource, through the scheduler's special claim, whose
	# generated name's base is cut to 58 characters.
	ext=ext-pod-with-a-name-long-enough-to-cut-its-claim
	kx dra apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Pod
	metadata: {name: $ext}
	spec:
	  containers:
	  - {name: c, image: $SMOKE, command: [sleep, "600"], resources: {limits: {nvidia.com/gpu: 1}}}
	---
	apiVersion: v1
	kind: Pod
	metadata: {name: three}
	spec:
	  containers:
	  - {name: c, image: $SMOKE, command: [sleep, "600"], resources: {limits: {nvidia.com/gpu: 3}}}
	EOF
	wait_for 60 pod_phase_is dra "$ext" Running
	run kx dra get pod "$ext" -o json
	assert_equal "$(jq -c '.status.extendedResourceClaimStatus.requestMappings' <<<"$output")" \
		'[{"containerName":"c","requestName":"container-0-request-0","resourceName":"nvidia.com/gpu"}]'
	claim=$(jq -r .status.extendedResourceClaimStatus.resourceClaimName <<<"$output")
	[[ $claim == ext-pod-with-a-name-long-enough-to-cut-its-claim-extended-????? ]]
	run kx dra get resourceclaim "$claim" -o json
	[ "$(jq -r '.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] + " " + .metadata.ownerReferences[0].name' <<<"$output")" = "true $ext" ]
	[ "$(jq -r '.spec.devices.requests[0] | "\(.name) \(.exactly.deviceClassName) \(.exactly.count)"' <<<"$output")" = "container-0-request-0 gpu.nvidia.com 1" ]
	[ "$(jq -r '.status.reservedFor[0].name' <<<"$output")" = "$ext" ]
	run kx dra exec "$ext" -- nvidia-smi -L
	assert_equal "$(grep -c '^GPU ' <<<"$output")" 1
	# Three of two GPUs: no claim is made, and PostFilter speaks as for claims.
	wait_for 30 bash -c "[ -n \"\$(docker exec openshell-cluster-dra kubectl get pod three -o jsonpath='{.status.conditions[0].message}')\" ]"
	run kx dra get pod three -o jsonpath='{.status.conditions[0].message}'
	assert_output '0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
	kx dra delete pod "$ext" three --grace-period=1 >/dev/null
	wait_for 30 bash -c "[ -z \"\$(docker exec openshell-cluster-dra kubectl get resourceclaims -o name)\" ]"
	# The driver uninstalled: the kubelet wipes the node's slices once the
	# plugin is gone (30 s later; 1 s under the switch).
	kx dra delete helmchart dra-driver -n kube-system >/dev/null
	wait_for 60 bash -c "[ -z \"\$(docker exec openshell-cluster-dra kubectl get resourceslices -o name)\" ]"
}

@test "never-ready switch: k3s's supervisor answers, its API server never does" {
	run kx never get --raw /readyz
	assert_failure 1
	assert_output "Error from server (ServiceUnavailable): apiserver not ready"
	run kx never get nodes -o json
	assert_failure 1
	wait_for 60 probe_has never "HEALTHCHECK_FAIL k3s-not-ready"
}

@test "k3s makes every RuntimeClass of its runtimes.yaml, whatever runtimes exist" {
	for c in gpu nogpu notoolkit; do
		wait_for 60 kx "$c" get runtimeclass nvidia -o json
		run kx "$c" get runtimeclasses -o json
		assert_success
		assert_equal "$(jq -r '[.items[] | .metadata.name + "=" + .handler] | sort | join(" ")' <<<"$output")" \
			"crun=crun lunatic=lunatic nvidia-experimental=nvidia-experimental nvidia=nvidia slight=slight spin=spin wasmedge=wasmedge wasmer=wasmer wasmtime=wasmtime wws=wws"
	done
}

@test "containerd gets the nvidia runtime only when k3s finds nvidia-container-runtime" {
	cfg=/var/lib/rancher/k3s/agent/etc/containerd/config.toml
	wait_for 60 docker exec openshell-cluster-gpu test -f "$cfg"
	run docker exec openshell-cluster-gpu cat "$cfg"
	assert_line "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']"
	assert_line '  BinaryName = "/usr/bin/nvidia-container-runtime"'
	run docker logs openshell-cluster-gpu
	assert_output --partial 'msg="Found nvidia container runtime at /usr/bin/nvidia-container-runtime"'
	wait_for 60 docker exec openshell-cluster-notoolkit test -f "$cfg"
	run docker exec openshell-cluster-notoolkit cat "$cfg"
	assert_line "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]"
	refute_output --partial nvidia
}

@test "without the nvidia runtime the plugin pod never gets a sandbox: ContainerCreating and the kubelet's event" {
	pod_name() { kx notoolkit get pods -n nvidia-device-plugin -o 'jsonpath={.items[0].metadata.name}'; }
	wait_for 60 bash -c "[[ -n \$(docker exec openshell-cluster-notoolkit kubectl get pods -n nvidia-device-plugin -o 'jsonpath={.items[0].metadata.name}') ]]"
	pod=$(pod_name)
	has_event() {
		kx notoolkit get events -n nvidia-device-plugin -o json |
			jq -e --arg p "$pod" 'any(.items[]; .involvedObject.name == $p and .reason == "FailedCreatePodSandBox")' >/dev/null
	}
	wait_for 60 has_event
	run kx notoolkit get events -n nvidia-device-plugin -o json
	msg=$(jq -r --arg p "$pod" '[.items[] | select(.involvedObject.name == $p and .reason == "FailedCreatePodSandBox")] | last | .message' <<<"$output")
	# client-go's aggregator rewrites the tenth like event within ten minutes.
	assert_regex "$msg" '^(\(combined from similar events\): )?Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for sandbox "[0-9a-f]{64}": no runtime for "nvidia" is configured$'
	run kx notoolkit get pod "$pod" -n nvidia-device-plugin -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.reason}'
	assert_output "Pending ContainerCreating"
	run alloc notoolkit
	assert_output absent
	wait_for 60 probe_has notoolkit "HEALTHCHECK_FAIL gpu-runtime-missing config=/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
}

@test "broken runtime switch: the runtime is configured, but no sandbox under it can be made" {
	warned() {
		kx broken get events -n nvidia-device-plugin -o json |
			jq -e 'any(.items[]; .reason == "FailedCreatePodSandBox")' >/dev/null
	}
	wait_for 60 warned
	run kx broken get events -n nvidia-device-plugin -o json
	assert_regex "$(jq -r '[.items[] | select(.reason == "FailedCreatePodSandBox")] | last | .message' <<<"$output")" '^Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: .*/usr/bin/nvidia-container-runtime did not terminate successfully'
	run docker exec openshell-cluster-broken cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml
	assert_line "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']"
}

@test "the chart's second DaemonSet, the MPS control daemon, has the same labels and schedules nothing" {
	wait_for 60 alloc_is gpu 2
	run kx gpu get ds -n nvidia-device-plugin -o json
	run jq -r '.items[] | [.metadata.name, .metadata.labels["app.kubernetes.io/name"], .metadata.labels["app.kubernetes.io/instance"], .status.desiredNumberScheduled] | @tsv' <<<"$output"
	assert_line "$(printf 'nvidia-device-plugin\tnvidia-device-plugin\tnvidia-device-plugin\t1')"
	assert_line "$(printf 'nvidia-device-plugin-mps-control-daemon\tnvidia-device-plugin\tnvidia-device-plugin\t0')"
}

@test "transient API switch: the next requests get k3s's 503, as while its API server restarts" {
	wait_for 60 kx flaky get --raw /readyz
	docker exec openshell-cluster-flaky sh -c 'echo 1 >/var/lib/rancher/k3s/sim/switches/SIM_API_FLAKY'
	run kx flaky get --raw /readyz
	assert_failure 1
	assert_output "Error from server (ServiceUnavailable): apiserver not ready"
	run kx flaky get --raw /readyz
	assert_success
	assert_output ok
}

@test "k3s's own types come a moment after its API: kubectl says what it says before a CRD exists" {
	# Long enough for the looks below on a loaded machine, which must come before the CRDs.
	start crds --no-healthcheck -e SIM_K3S_CRD_DELAY=10 "$SIM_K3S_IMAGE"
	wait_for 60 kx crds get --raw /readyz
	manifest='{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"x","namespace":"kube-system"},"spec":{"valuesContent":"a: 1"}}'
	run kx crds apply -f - <<<"$manifest"
	assert_failure 1
	assert_output 'error: resource mapping not found for name: "x" namespace: "kube-system" from "STDIN": no matches for kind "HelmChartConfig" in version "helm.cattle.io/v1"
ensure CRDs are installed first'
	run kx crds get helmchartconfigs -A -o json
	assert_failure 1
	assert_output 'error: the server doesn'\''t have a resource type "helmchartconfigs"'
	run kx crds get nodes -o json   # the core API answers meanwhile
	assert_success
	wait_for 60 kx crds get helmcharts -A -o json
	run kx crds apply -f - <<<"$manifest"
	assert_success
	assert_output "helmchartconfig.helm.cattle.io/x created"
	# They stay registered: a restarted k3s knows them at once.
	docker restart openshell-cluster-crds >/dev/null
	wait_for 60 kx crds get --raw /readyz
	run kx crds get helmchartconfigs -A -o json
	assert_success
	docker rm -f openshell-cluster-crds >/dev/null
}

@test "the HelmChart becomes a completed helm-install job and the chart's DaemonSet" {
	wait_for 60 alloc_is gpu 2
	run kx gpu get job helm-install-nvidia-device-plugin -n kube-system -o json
	assert_success
	assert_equal "$(jq -r '.status.succeeded' <<<"$output")" 1
	run kx gpu get helmcharts.helm.cattle.io nvidia-device-plugin -n kube-system -o json
	# The entrypoint rendered the pinned chart version into the bundled chart's URL.
	assert_equal "$(jq -r '.spec.chart' <<<"$output")" \
		"https://%{KUBERNETES_API}%/static/charts/nvidia-device-plugin-$(pin DEVICE_PLUGIN_CHART_VERSION).tgz"
	assert_equal "$(jq -r '.spec.repo // "none"' <<<"$output")" none
	run kx gpu get ns nvidia-device-plugin -o json
	assert_success
	run kx gpu get ds -n nvidia-device-plugin -o json
	assert_success
	# The API lists by name: the plugin, then the chart's MPS control daemon.
	ds=$(jq -c '.items[0]' <<<"$output")
	assert_equal "$(jq -r '.kind' <<<"$output")" "List"
	assert_equal "$(jq -r '.metadata.name' <<<"$ds")" "nvidia-device-plugin"
	assert_equal "$(jq -r '.metadata.labels["app.kubernetes.io/name"]' <<<"$ds")" "nvidia-device-plugin"
	assert_equal "$(jq -r '.metadata.labels["app.kubernetes.io/instance"]' <<<"$ds")" "nvidia-device-plugin"
	assert_equal "$(jq -c '.status | [.desiredNumberScheduled, .currentNumberScheduled, .numberReady, .numberAvailable, .updatedNumberScheduled, .observedGeneration]' <<<"$ds")" "[1,1,1,1,1,1]"
	assert_equal "$(jq -r '.spec.template.spec.runtimeClassName' <<<"$ds")" "nvidia"
	run kx gpu get pods -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin -o json
	pod=$(jq -c '.items[0]' <<<"$output")
	assert_regex "$(jq -r .metadata.name <<<"$pod")" '^nvidia-device-plugin-[bcdfghjklmnpqrstvwxz2456789]{5}$'
	assert_equal "$(jq -r '.status.phase' <<<"$pod")" "Running"
	assert_equal "$(jq -r '.status.containerStatuses[0].ready' <<<"$pod")" "true"
	run kx gpu logs -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin --tail=1
	assert_output --regexp "^I[0-9]{4} .* server.go:[0-9]+\] Registered device plugin for 'nvidia.com/gpu' with Kubelet$"
	run kx gpu logs -n kube-system job/helm-install-nvidia-device-plugin
	assert_line "STATUS: deployed"
}

@test "node advertises the simulated GPU count as strings; the container is healthy" {
	wait_for 60 alloc_is gpu 2
	run kx gpu get nodes -o json
	assert_equal "$(jq -r '.items[0].metadata.name' <<<"$output")" "openshell-gpu"
	assert_equal "$(jq -c '.items[0].status.capacity | [.["nvidia.com/gpu"], (.cpu | type), (.memory | type), .pods]' <<<"$output")" '["2","string","string","110"]'
	assert_equal "$(sim_gpu_count)" 2
	wait_for 60 health_has gpu "HEALTHCHECK_OK gpus=2"
	# shellcheck disable=SC2016 # expanded by that bash
	wait_for 60 bash -c '[[ $(docker inspect -f "{{.State.Health.Status}}" openshell-cluster-gpu) == healthy ]]'
}

@test "kubectl wait --for=jsonpath: met, with the object; a missing field waits; timeout and none found as kubectl says" {
	wait_for 60 alloc_is gpu 2
	run kx gpu wait --for='jsonpath={.status.allocatable.nvidia\.com/gpu}' nodes --all --timeout=5s
	assert_success
	assert_output "node/openshell-gpu condition met"
	run kx gpu wait --for='jsonpath={.status.allocatable.nvidia\.com/gpu}=2' node/openshell-gpu -o json --timeout=5s
	assert_success
	assert_equal "$(jq -r .metadata.name <<<"$output")" openshell-gpu
	run --separate-stderr kx gpu wait --for='jsonpath={.status.allocatable.nvidia\.com/gpu}=3' node/openshell-gpu --timeout=1s
	assert_failure 1
	assert_equal "$stderr" "error: timed out waiting for the condition on nodes/openshell-gpu"
	run --separate-stderr kx gpu wait --for='jsonpath={.status.nosuch}' node/openshell-gpu --timeout=500ms
	assert_failure 1
	run --separate-stderr kx gpu wait --for='jsonpath={.status.phase}' pods --all -n nosuch --timeout=1s
	assert_failure 1
	assert_equal "$stderr" "error: no matching resources found"
	run --separate-stderr kx gpu wait --for='jsonpath={.status.phase}' pod/nosuch --timeout=1s
	assert_failure 1
	assert_equal "$stderr" 'Error from server (NotFound): pods "nosuch" not found'
}

@test "kubectl wait notices a change made while it waits" {
	wait_for 60 alloc_is gpu 2
	kx gpu apply -f - <<<"$(gpu_pod waiter 0 '["sh","-c","sleep 1"]')" >/dev/null
	run kx gpu wait --for='jsonpath={.status.containerStatuses[0].state.terminated}' pod/waiter -o json --timeout=30s
	assert_success
	assert_equal "$(jq -r .status.phase <<<"$output")" Succeeded
	kx gpu delete pod waiter >/dev/null
}

@test "a watch from a resourceVersion replays each change after it, with the types a selector's view gives, of an object gone since too" {
	wait_for 60 alloc_is gpu 2
	local rv url='/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&labelSelector=app.kubernetes.io%2Finstance%3Dreplay'
	cm() { echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"'"$1"'","labels":{'"${2-}"'}}}'; }
	# (kubectl create configmap speaks protobuf, which the stand-in does not)
	kx gpu create -f - >/dev/null <<<"$(cm replay-old '"app.kubernetes.io/instance":"replay"')"
	rv=$(kx gpu create -f - -o 'jsonpath={.metadata.resourceVersion}' <<<"$(cm replay-mark)")
	kx gpu delete configmap replay-old >/dev/null
	kx gpu create -f - >/dev/null <<<"$(cm replay-kept '"app.kubernetes.io/instance":"replay"')"
	kx gpu create -f - >/dev/null <<<"$(cm replay-gone)"
	kx gpu label configmap replay-gone app.kubernetes.io/instance=replay >/dev/null
	kx gpu delete configmap replay-gone >/dev/null
	kx gpu label configmap replay-kept x=1 >/dev/null
	run --separate-stderr kx gpu get --raw "$url&resourceVersion=$rv"
	assert_success
	# In the selector at the version, then deleted: DELETED; made in it:
	# ADDED, though it is there now; labelled into it: ADDED there; then
	# each change, the deletion too.
	assert_equal "$(jq -rs 'map(.type + " " + .object.metadata.name) | join(",")' <<<"$output")" \
		"DELETED replay-old,ADDED replay-kept,ADDED replay-gone,DELETED replay-gone,MODIFIED replay-kept"
	kx gpu delete configmap replay-mark replay-kept >/dev/null
}

@test "one get of several types is one List of them all, in the order given" {
	wait_for 60 alloc_is gpu 2
	run kx gpu get nodes,daemonsets,runtimeclasses -A -o json
	assert_success
	assert_equal "$(jq -r '.kind' <<<"$output")" List
	assert_equal "$(jq -r '[.items[].kind] | unique | join(",")' <<<"$output")" DaemonSet,Node,RuntimeClass
	assert_equal "$(jq -r '.items[0].kind' <<<"$output")" Node
	assert_equal "$(jq -r '[.items[].kind] | index("RuntimeClass") > index("DaemonSet")' <<<"$output")" true
}

@test "the server logs k3s's API line when it is ready, and stamps the moments for the benchmark" {
	wait_for 60 alloc_is gpu 2
	run docker logs openshell-cluster-gpu
	assert_output --partial 'level=info msg="Kube API server is now running"'
	run docker exec openshell-cluster-gpu cat /run/k3s-sim/stamps
	assert_line --regexp '^[0-9.]+ api-ready$'
	assert_line --regexp '^[0-9.]+ gpu-allocatable 2$'
}

@test "a pod with nvidia.com/gpu: 1 runs nvidia-smi -L and sees one simulated GPU" {
	wait_for 60 alloc_is gpu 2
	run kx gpu apply -f - <<<"$(gpu_pod smoke 1 '["nvidia-smi","-L"]')"
	assert_success
	assert_output "pod/smoke created"
	wait_for 60 pod_phase_is gpu smoke Succeeded
	run kx gpu logs smoke
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_output --regexp '^GPU 0: .* \(UUID: GPU-[0-9a-f-]+\)$'
	uuid=$(sed -n 's/.*(UUID: \(.*\))$/\1/p' <<<"$output")
	sim_gpu_uuids | grep -qxF "$uuid"
	run kx gpu get pod smoke -o json
	assert_equal "$(jq -r '.status.containerStatuses[0].state.terminated.exitCode' <<<"$output")" 0
	run kx gpu apply -f - <<<"$(gpu_pod smoke 1 '["nvidia-smi","-L"]')"
	assert_output "pod/smoke unchanged"
	run kx gpu delete pod smoke
	assert_output 'pod "smoke" deleted from default namespace'
	run kx gpu get pod smoke -o json
	assert_failure 1
	assert_output 'Error from server (NotFound): pods "smoke" not found'
}

@test "a pod asking for more GPUs than are free stays Pending: Insufficient nvidia.com/gpu" {
	wait_for 60 alloc_is gpu 2
	kx gpu apply -f - <<<"$(gpu_pod greedy 3 '["nvidia-smi","-L"]')"
	cond() {
		kx gpu get pod greedy -o json |
			jq -e '.status.phase == "Pending" and any(.status.conditions[]; .type == "PodScheduled" and .status == "False" and .reason == "Unschedulable")' >/dev/null
	}
	wait_for 60 cond
	run kx gpu get pod greedy -o 'jsonpath={.status.conditions[0].message}'
	# As a 1.37 cluster words it: DynamicResources' PostFilter ahead of preemption's.
	assert_output "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
	kx gpu delete pod greedy --ignore-not-found
}

@test "a failing command is recorded: phase Failed, exit code, logs" {
	wait_for 60 alloc_is gpu 2
	kx gpu apply -f - <<<"$(gpu_pod fails 1 '["sh","-c","echo about to fail; exit 3"]')"
	wait_for 60 pod_phase_is gpu fails Failed
	run kx gpu get pod fails -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}'
	assert_output "3"
	run kx gpu logs fails
	assert_output "about to fail"
}

@test "a container killed by a signal ends with 128 + the signal, as runc reports it" {
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"killed"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","command":["sh","-c","echo before; kill -9 $$"]}]}}'
	wait_for 60 pod_phase_is gpu killed Failed
	run kx gpu get pod killed -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}'
	assert_output "137 Error"
	run kx gpu logs killed
	assert_output "before"
	kx gpu delete pod killed >/dev/null
}

@test "a container's termination message is what it wrote to its terminationMessagePath, or its log's tail" {
	# The kubelet bind-mounts a file of its own at the path and reads it
	# when the container ends (kuberuntime_container.go).
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"said"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","command":["sh","-c","echo to-log; printf done >/dev/termination-log"]}]}}'
	# FallbackToLogsOnError: a failed container that wrote no message gets its log's tail.
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"fell"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","terminationMessagePolicy":"FallbackToLogsOnError","command":["sh","-c","echo one; echo two; exit 3"]}]}}'
	# With the default policy (File) the same failure says nothing.
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"file"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","command":["sh","-c","echo one; exit 3"]}]}}'
	wait_for 60 pod_phase_is gpu said Succeeded
	wait_for 60 pod_phase_is gpu fell Failed
	wait_for 60 pod_phase_is gpu file Failed
	run kx gpu get pod said -o 'jsonpath={.status.containerStatuses[0].state.terminated.message}'
	assert_output done
	run kx gpu get pod fell -o 'jsonpath={.status.containerStatuses[0].state.terminated.message}'
	assert_output $'one\ntwo'
	run kx gpu get pod file -o json
	assert_equal "$(jq -r '.status.containerStatuses[0].state.terminated | has("message")' <<<"$output")" false
	kx gpu delete pod said fell file >/dev/null
}

@test "without runtimeClassName nvidia the container gets no nvidia-smi (StartError)" {
	wait_for 60 alloc_is gpu 2
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"runc"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","command":["nvidia-smi"],"resources":{"limits":{"nvidia.com/gpu":1}}}]}}'
	wait_for 60 pod_phase_is gpu runc Failed
	run kx gpu get pod runc -o json
	assert_equal "$(jq -r '.status.containerStatuses[0].state.terminated.reason' <<<"$output")" StartError
	# shellcheck disable=SC2016 # a literal $PATH in the expected message
	assert_regex "$(jq -r '.status.containerStatuses[0].state.terminated.message' <<<"$output")" 'exec: "nvidia-smi": executable file not found in \$PATH'
	run kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"runtimeClassName":"nope","containers":[{"name":"c","image":"busybox"}]}}'
	assert_failure 1
	assert_output 'Error from server (Forbidden): error when creating "STDIN": pods "x" is forbidden: pod rejected: RuntimeClass "nope" not found'
}

# pod_env NAME SECURITY-JSON: a pod under the nvidia runtime that asks for
# no GPU but names every one, as a CUDA image's environment does.
pod_env() {
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"c","image":"%s","command":["sh","-c","nvidia-smi -L; true"],"env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"all"}],"securityContext":%s}]}}' \
		"$1" "$SMOKE" "$2"
}

@test "the nvidia runtime gives a pod the plugin's devices; NVIDIA_VISIBLE_DEVICES=all counts only from a privileged one" {
	wait_for 60 alloc_is gpu 2
	# The entrypoint's config: mounts accepted, the variable of unprivileged containers not.
	run docker exec openshell-cluster-gpu grep '^accept-' /etc/nvidia-container-runtime/config.toml
	assert_output "accept-nvidia-visible-devices-envvar-when-unprivileged = false
accept-nvidia-visible-devices-as-volume-mounts = true"
	kx gpu apply -f - <<<"$(pod_env envall '{}')"
	kx gpu apply -f - <<<"$(pod_env privall '{"privileged":true}')"
	kx gpu apply -f - <<<"$(pod_env sysadmin '{"capabilities":{"add":["SYS_ADMIN"]}}')"
	for p in envall privall sysadmin; do wait_for 60 pod_phase_is gpu "$p" Succeeded; done
	run kx gpu logs envall
	assert_output "No devices were found"
	run kx gpu logs privall
	assert_equal "${#lines[@]}" 2
	run kx gpu logs sysadmin
	assert_equal "${#lines[@]}" 2
	# With the toolkit's defaults the same unprivileged pod gets every GPU.
	docker exec openshell-cluster-gpu sed -i.openshell '/^accept-/d' /etc/nvidia-container-runtime/config.toml
	kx gpu apply -f - <<<"$(pod_env envall2 '{}')"
	wait_for 60 pod_phase_is gpu envall2 Succeeded
	docker exec openshell-cluster-gpu mv /etc/nvidia-container-runtime/config.toml.openshell /etc/nvidia-container-runtime/config.toml
	run kx gpu logs envall2
	assert_equal "${#lines[@]}" 2
	kx gpu delete pod envall privall sysadmin envall2 >/dev/null
}

@test "CDI: the plugin writes its spec from the driver root the chart mounts; without nvidiaDriverRoot it stops as the toolkit does" {
	# No healthcheck: the test looks at the facts itself, and the machine has enough to do.
	start cdi --no-healthcheck --gpus all -e GPU_ENABLED=true -e OPENSHELL_GPU_MODE=cdi "$SIM_K3S_IMAGE"
	wait_for 60 alloc_is cdi 2
	run docker exec openshell-cluster-cdi cat /var/run/cdi/k8s.device-plugin.nvidia.com-gpu.yaml
	assert_success
	assert_line "kind: k8s.device-plugin.nvidia.com/gpu"
	# A pod's GPU comes as a CDI device of that spec.
	kx cdi apply -f - <<<"$(gpu_pod viacdi 1 '["nvidia-smi","-L"]')"
	wait_for 60 pod_phase_is cdi viacdi Succeeded
	run kx cdi logs viacdi
	assert_equal "${#lines[@]}" 1
	# The chart mounts /driver-root only when nvidiaDriverRoot is set.
	docker exec openshell-cluster-cdi rm /var/run/cdi/k8s.device-plugin.nvidia.com-gpu.yaml
	printf '{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"nvidia-device-plugin","namespace":"kube-system"},"spec":{"valuesContent":"nvidiaDriverRoot: null\n"}}' |
		kx cdi apply -f - >/dev/null
	plugin_failed() {
		kx cdi logs -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin -c nvidia-device-plugin-ctr 2>/dev/null |
			grep -qF 'unable to create cdi spec file: failed to get CDI spec: failed to locate "libcuda.so."'
	}
	wait_for 60 plugin_failed
	# No spec: a GPU pod's CDI device cannot be resolved by containerd.
	run docker exec openshell-cluster-cdi ls /var/run/cdi
	refute_output --partial k8s.device-plugin
	kx cdi delete helmchartconfig nvidia-device-plugin -n kube-system >/dev/null
	wait_for 60 docker exec openshell-cluster-cdi test -f /var/run/cdi/k8s.device-plugin.nvidia.com-gpu.yaml
}

@test "MPS's Bidirectional mount: the kubelet refuses it unless the gateway's / is a shared mount" {
	start mps --no-healthcheck --gpus all -e GPU_ENABLED=true "$SIM_K3S_IMAGE"
	wait_for 60 alloc_is mps 2
	# The entrypoint made / shared; undo that, as in a container that did not.
	run docker exec openshell-cluster-mps sh -c "grep ' / / ' /proc/self/mountinfo | grep -c shared:"
	assert_output 1
	docker exec openshell-cluster-mps mount --make-rprivate /
	printf '%s' '{"apiVersion":"helm.cattle.io/v1","kind":"HelmChartConfig","metadata":{"name":"nvidia-device-plugin","namespace":"kube-system"},"spec":{"valuesContent":"config:\n  default: mps\n  map:\n    mps: |-\n      version: v1\n      sharing:\n        mps:\n          resources:\n          - name: nvidia.com/gpu\n            replicas: 2\n"}}' |
		kx mps apply -f - >/dev/null
	kx mps label nodes --all nvidia.com/mps.capable=true >/dev/null
	refused() {
		kx mps get pods -n nvidia-device-plugin -o json | jq -e '.items[] | select(.metadata.name | startswith("nvidia-device-plugin-mps-control-daemon"))
			| .status.initContainerStatuses[]? | select(.name == "mps-control-daemon-mounts") | .state.waiting
			| select(.reason == "CreateContainerError")
			| .message | test("failed to generate spec: path \"/run/nvidia/mps\" is mounted on \"/\" but it is not a shared mount$")' >/dev/null
	}
	wait_for 60 refused
	# Shared again: the daemon's pod gets its mount, and the plugin its replicas.
	docker exec openshell-cluster-mps mount --make-rshared /
	wait_for 90 alloc_is mps 4
}

@test "offline, a pod whose image was not imported fails to pull as containerd says, then backs off" {
	wait_for 60 alloc_is gpu 2
	kx gpu apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pull"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1.36","command":["true"]}]}}'
	# The reason and its message from one read: the next may be the back-off's.
	waiting_is() {
		waiting=$(kx gpu get pod pull -o 'jsonpath={.status.containerStatuses[0].state.waiting.reason} {.status.containerStatuses[0].state.waiting.message}')
		[ "${waiting%% *}" = "$1" ]
	}
	wait_for 60 waiting_is ErrImagePull
	assert_equal "${waiting#* }" 'rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/busybox:1.36": failed to resolve reference "docker.io/library/busybox:1.36": failed to do request: Head "https://registry-1.docker.io/v2/library/busybox/manifests/1.36": dial tcp: lookup registry-1.docker.io: no such host'
	# Within the back-off a sync says so; each pull after it fails anew.
	backing_off() {
		waiting=$(kx gpu get pod pull -o 'jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.message}')
		[[ $waiting == 'Pending Back-off pulling image "busybox:1.36": ErrImagePull: rpc error:'* ]]
	}
	wait_for 60 backing_off
	wait_for 60 waiting_is ErrImagePull
	# The bundled images were imported from agent/images at start.
	run docker logs openshell-cluster-gpu
	assert_output --partial 'msg="Imported images from /var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst in '
	assert_output --partial "msg=\"Imported images from /var/lib/rancher/k3s/agent/images/$(pin SMOKE_IMAGE | tr '/:' '__').tar in "
	# With network (the switch), the same pod pulls and runs.
	docker exec openshell-cluster-gpu sh -c 'echo online >/var/lib/rancher/k3s/sim/switches/SIM_NETWORK'
	wait_for 60 pod_phase_is gpu pull Succeeded
	docker exec openshell-cluster-gpu rm /var/lib/rancher/k3s/sim/switches/SIM_NETWORK
	kx gpu delete pod pull >/dev/null
}

@test "offline, a chart named by a repository fails as the Helm job does without network" {
	wait_for 60 alloc_is gpu 2
	# Manifests go in whole (a temporary file, then a rename), as the
	# entrypoint writes them: k3s's deploy controller may read a file
	# while it is written.
	printf 'apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: repochart\n  namespace: kube-system\nspec:\n  repo: https://charts.example.com/stable\n  chart: thing\n  version: 1.0.0\n' |
		docker exec -i openshell-cluster-gpu sh -c 'cat >/tmp/m.yaml && mv /tmp/m.yaml /var/lib/rancher/k3s/server/manifests/repochart.yaml'
	# The line from the read that found it: the job's pod restarts, and a
	# container just started has no log yet.
	failed() {
		said=$(kx gpu logs -n kube-system -l job-name=helm-install-repochart --tail=1)
		[[ $said == Error:* ]]
	}
	wait_for 60 failed
	assert_equal "$said" 'Error: INSTALLATION FAILED: looks like "https://charts.example.com/stable" is not a valid chart repository or cannot be reached: Get "https://charts.example.com/stable/index.yaml": dial tcp: lookup charts.example.com on 10.43.0.10:53: server misbehaving'
	docker exec openshell-cluster-gpu rm /var/lib/rancher/k3s/server/manifests/repochart.yaml
}

@test "the chart's default affinity, or an empty map, schedules no plugin pod" {
	wait_for 60 alloc_is gpu 2
	for variant in default:absent empty:'{}'; do
		name=dp-${variant%%:*}
		aff=${variant#*:}
		{
			printf 'apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: %s\n  namespace: kube-system\n' "$name"
			printf 'spec:\n  chart: https://%%{KUBERNETES_API}%%/static/charts/nvidia-device-plugin-%s.tgz\n' \
				"$(pin DEVICE_PLUGIN_CHART_VERSION)"
			printf '  targetNamespace: %s\n  createNamespace: true\n  valuesContent: |-\n    runtimeClassName: nvidia\n' "$name"
			[[ $aff == absent ]] || printf '    affinity: %s\n' "$aff"
		} | docker exec -i openshell-cluster-gpu sh -c "cat >/tmp/m.yaml && mv /tmp/m.yaml /var/lib/rancher/k3s/server/manifests/$name.yaml"
	done
	# A release whose name lacks the chart's gets the chart's fullname:
	# RELEASE-nvidia-device-plugin (the chart's _helpers.tpl).
	for name in dp-default dp-empty; do
		wait_for 60 kx gpu get ds "$name-nvidia-device-plugin" -n "$name" -o json
		run kx gpu get ds "$name-nvidia-device-plugin" -n "$name" -o 'jsonpath={.status.desiredNumberScheduled} {.status.numberReady}'
		assert_output "0 0"
	done
	alloc_is gpu 2
}

@test "GPU_ENABLED=true without --gpus: the plugin finds no device, stays ready, registers nothing" {
	ds_ready() { [ "$(kx gpuflag-only get ds nvidia-device-plugin -n nvidia-device-plugin -o 'jsonpath={.status.numberReady}')" = 1 ]; }
	wait_for 60 ds_ready
	# Privileged, it has the host's device nodes, but no toolkit put the
	# driver's files in: no NVML, no nvidia-smi.
	run docker exec openshell-cluster-gpuflag-only sh -c 'ls /dev/nvidia0 /dev/nvidia1; command -v nvidia-smi || echo no-nvidia-smi'
	assert_success
	assert_output "/dev/nvidia0
/dev/nvidia1
no-nvidia-smi"
	run kx gpuflag-only logs -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin
	assert_output --partial "No devices found. Waiting indefinitely."
	run alloc gpuflag-only
	assert_output absent
	wait_for 60 probe_has gpuflag-only "HEALTHCHECK_FAIL gpu-not-allocatable allocatable=absent"
}

@test "a manifest removed from the directory uninstalls nothing; deleting the HelmChart does" {
	wait_for 60 alloc_is gpu 2
	printf 'apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: keepme\n  namespace: kube-system\nspec:\n  chart: https://%%{KUBERNETES_API}%%/static/charts/nvidia-device-plugin-%s.tgz\n  targetNamespace: keepme\n  createNamespace: true\n  valuesContent: |-\n    runtimeClassName: nvidia\n' \
		"$(pin DEVICE_PLUGIN_CHART_VERSION)" |
		docker exec -i openshell-cluster-gpu sh -c 'cat >/tmp/m.yaml && mv /tmp/m.yaml /var/lib/rancher/k3s/server/manifests/keepme.yaml'
	wait_for 60 kx gpu get ds keepme-nvidia-device-plugin -n keepme -o json
	docker exec openshell-cluster-gpu rm /var/lib/rancher/k3s/server/manifests/keepme.yaml
	# A manifest written after the removal is applied by a later pass of the
	# same loop: by then the removal has been seen.
	printf 'apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: probe\n  namespace: kube-system\nspec:\n  chart: https://%%{KUBERNETES_API}%%/static/charts/nvidia-device-plugin-%s.tgz\n  targetNamespace: probe\n  createNamespace: true\n' \
		"$(pin DEVICE_PLUGIN_CHART_VERSION)" |
		docker exec -i openshell-cluster-gpu sh -c 'cat >/tmp/m.yaml && mv /tmp/m.yaml /var/lib/rancher/k3s/server/manifests/probe.yaml'
	wait_for 60 kx gpu get helmchart probe -n kube-system -o json
	docker exec openshell-cluster-gpu rm /var/lib/rancher/k3s/server/manifests/probe.yaml
	kx gpu delete helmchart probe -n kube-system >/dev/null
	run kx gpu get helmchart keepme -n kube-system -o json
	assert_success
	run kx gpu get ds keepme-nvidia-device-plugin -n keepme -o json
	assert_success
	run kx gpu delete helmchart keepme -n kube-system
	assert_output 'helmchart.helm.cattle.io "keepme" deleted from kube-system namespace'
	run kx gpu get ds keepme-nvidia-device-plugin -n keepme -o json
	assert_failure 1
	alloc_is gpu 2
}

@test "no --gpus and no GPU_ENABLED: no device plugin, no nvidia.com/gpu, healthy" {
	wait_for 60 kx nogpu get --raw /readyz
	run alloc nogpu
	assert_output "absent"
	# kubectl 1.35 names the namespace that is missing, not the object.
	run kx nogpu get ds nvidia-device-plugin -n nvidia-device-plugin -o json
	assert_failure 1
	assert_output 'Error from server (NotFound): namespaces "nvidia-device-plugin" not found'
	run docker exec openshell-cluster-nogpu ls /var/lib/rancher/k3s/server/manifests
	refute_output --partial nvidia
	wait_for 60 probe_has nogpu "HEALTHCHECK_OK"
}

@test "chart install failure switch: helm-install pod restarts with helm's error, no DaemonSet" {
	restarted() {
		[[ $(kx chartfail get pods -n kube-system -l job-name=helm-install-nvidia-device-plugin \
			-o 'jsonpath={.items[*].status.containerStatuses[*].restartCount}') =~ ^[1-9] ]]
	}
	wait_for 60 restarted
	# The run that ended: the current one may not have said anything yet.
	run kx chartfail logs -n kube-system -l job-name=helm-install-nvidia-device-plugin --previous --tail=1
	assert_output "Error: INSTALLATION FAILED: failed to fetch https://10.43.0.1:443/static/charts/nvidia-device-plugin-$(pin DEVICE_PLUGIN_CHART_VERSION).tgz : 500 Internal Server Error"
	run kx chartfail get job helm-install-nvidia-device-plugin -n kube-system -o 'jsonpath={.status.active}'
	assert_output "1"
	run kx chartfail get ds -n nvidia-device-plugin -o json
	assert_equal "$(jq '.items | length' <<<"$output")" 0
	wait_for 60 probe_has chartfail "HEALTHCHECK_FAIL gpu-chart-install-failed job=helm-install-nvidia-device-plugin"
}

@test "plugin crash-loop switch: CrashLoopBackOff, growing restarts, NVML error, no GPUs" {
	restarts() {
		kx crash get pods -n nvidia-device-plugin -o 'jsonpath={.items[0].status.containerStatuses[0].restartCount}'
	}
	crashing() { [[ $(restarts) -ge 2 ]]; }
	wait_for 60 crashing
	run kx crash get pods -n nvidia-device-plugin -o json
	assert_equal "$(jq -r '.items[0].status.containerStatuses[0].state.waiting.reason' <<<"$output")" CrashLoopBackOff
	assert_equal "$(jq -r '.items[0].status.containerStatuses[0].ready' <<<"$output")" false
	run kx crash get ds nvidia-device-plugin -n nvidia-device-plugin -o 'jsonpath={.status.desiredNumberScheduled} {.status.numberReady}'
	assert_output "1 0"
	run kx crash logs -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin --tail=-1
	assert_output --partial "could not load NVML library"
	run alloc crash
	assert_output "absent"
	wait_for 60 probe_has crash "HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=1 ready=0"
}

@test "a plugin that dies after registering: its GPUs stay in capacity, none allocatable, then 0; never absent again" {
	wait_for 60 gpu_is gone 2 2
	# The kubelet marks a stopped plugin's devices unhealthy (devicemanager).
	switch gone SIM_PLUGIN_CRASHLOOP 1
	wait_for 60 gpu_is gone 0 2
	# Its checkpoint keeps the resource over a restart, at 0 until the plugin registers.
	docker restart -t 2 openshell-cluster-gone >/dev/null
	wait_for 60 gpu_is gone 0 0
	switch gone SIM_PLUGIN_CRASHLOOP
	wait_for 60 gpu_is gone 2 2
	# After the grace period the removed resource reads 0, not absent.
	switch gone SIM_ENDPOINT_GRACE 1
	switch gone SIM_PLUGIN_CRASHLOOP 1
	wait_for 60 gpu_is gone 0 0
	switch gone SIM_PLUGIN_CRASHLOOP
	switch gone SIM_ENDPOINT_GRACE
	wait_for 60 gpu_is gone 2 2
}

@test "Xid switch: the plugin marks that GPU unhealthy; capacity keeps it, allocatable and pods do not" {
	wait_for 60 gpu_is gone 2 2
	switch gone SIM_GPU_XID 1
	wait_for 60 gpu_is gone 1 2
	pod=$(kx gone get pods -n nvidia-device-plugin -o json | jq -r '.items[0].metadata.name')
	run kx gone logs -n nvidia-device-plugin "$pod" -c nvidia-device-plugin-ctr
	assert_line --regexp '^I[0-9]{4} [0-9:.]+ +1 health\.go:169\] XidCriticalError: Xid=79 on Device=GPU-[0-9a-f-]+; marking device as unhealthy\.$'
	assert_line --regexp "^I[0-9]{4} [0-9:.]+ +1 server\.go:279\] 'nvidia\.com/gpu' device marked unhealthy: GPU-"
	# Only the healthy GPU can be given to a pod.
	gpu_pod xid2 2 '["nvidia-smi","-L"]' | kx gone apply -f - >/dev/null
	wait_for 60 sh -c "docker exec openshell-cluster-gone kubectl get pod xid2 -o json | grep -q 'Insufficient nvidia.com/gpu'"
	kx gone delete pod xid2 >/dev/null
	# The plugin never takes it back; a new plugin sees a healthy GPU.
	switch gone SIM_GPU_XID
	sleep 1
	gpu_is gone 1 2
	kx gone delete pod "$pod" -n nvidia-device-plugin >/dev/null
	wait_for 60 gpu_is gone 2 2
}

@test "node pressure switch: MemoryPressure True with its taint, node still Ready" {
	wait_for 60 kx pressure get --raw /readyz
	wait_for 60 kx pressure get nodes -o json
	run kx pressure get nodes -o json
	node=$(jq -c '.items[0]' <<<"$output")
	assert_equal "$(jq -r '.status.conditions[] | select(.type == "MemoryPressure") | .status + " " + .reason' <<<"$node")" "True KubeletHasInsufficientMemory"
	assert_equal "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$node")" "True"
	assert_equal "$(jq -r '.spec.taints[0].key' <<<"$node")" "node.kubernetes.io/memory-pressure"
}

@test "kubectl errors read like the real ones" {
	wait_for 60 kx gpu get --raw /readyz
	run kx gpu get runtimeclass missing -o json
	assert_failure 1
	assert_output 'Error from server (NotFound): runtimeclasses.node.k8s.io "missing" not found'
	run kx gpu get jobs.batch nope -n kube-system -o json
	assert_output 'Error from server (NotFound): jobs.batch "nope" not found'
	run kx gpu get frobs
	assert_failure 1
	assert_output 'error: the server doesn'"'"'t have a resource type "frobs"'
	run kx gpu get pods --frob
	assert_failure 1
	assert_line 'error: unknown flag: --frob'
	run kx gpu get pods -n kube-system -o json
	assert_equal "$(jq -c '[.apiVersion, .kind, .metadata]' <<<"$output")" '["v1","List",{"resourceVersion":""}]'
	run kx gpu delete pod nothere
	assert_failure 1
	assert_output 'Error from server (NotFound): pods "nothere" not found'
	run kx gpu delete pod nothere --ignore-not-found
	assert_success
	assert_output ""
}

@test "a restarted container keeps its cluster state and comes back with its GPUs" {
	wait_for 60 alloc_is gpu 2
	uid=$(kx gpu get helmchart nvidia-device-plugin -n kube-system -o 'jsonpath={.metadata.uid}')
	# k3s stops on SIGTERM, its pods with it, and exits 0.
	docker stop -t 30 openshell-cluster-gpu >/dev/null
	run docker inspect openshell-cluster-gpu --format '{{.State.ExitCode}}'
	assert_output 0
	docker start openshell-cluster-gpu >/dev/null
	# Docker publishes the API on another port now: kx reads it again (the
	# one restart of the gpu cluster in this file; any other needs the same).
	rm -f "$BATS_FILE_TMPDIR/gpu.kubeconfig"
	wait_for 60 alloc_is gpu 2
	run kx gpu get helmchart nvidia-device-plugin -n kube-system -o 'jsonpath={.metadata.uid}'
	assert_output "$uid"
}

# agent NAME SERVER [docker run args...] -- [k3s agent args...]: an agent
# container on SERVER's network, as a k3s agent on another machine.
agent() {
	local n=$1 srv=$2
	shift 2
	docker run -d --privileged --cgroupns private --name "openshell-agent-$n" --hostname "agent-$n" \
		--network "openshell-cluster-$srv" "$@" >/dev/null
}

server_token() {
	docker exec "openshell-cluster-$1" cat /var/lib/rancher/k3s/server/token
}

# The server's address on its network: its node address, which its
# certificate names (the container's name is no SAN of it).
server_ip() {
	docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "openshell-cluster-$1"
}

@test "an agent joins with the server's URL and token: its node runs the device plugin and advertises its own GPUs" {
	start multi --no-healthcheck --gpus all -e GPU_ENABLED=true "$SIM_K3S_IMAGE"
	wait_for 60 kx multi get --raw /readyz
	gpu1=$(sim_gpu_uuids | sed -n 2p)
	# Privileged, the agent has every GPU's node: the entrypoint keeps its own (OPENSHELL_GPU_UUIDS).
	agent a1 multi --gpus device=1 -e GPU_ENABLED=true -e OPENSHELL_GPU_UUIDS="$gpu1" -e K3S_TOKEN="$(server_token multi)" \
		"$SIM_K3S_IMAGE" agent --server "https://$(server_ip multi):6443"
	node_gpus() {
		[[ $(kx multi get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.allocatable.nvidia\.com/gpu} {end}') == "$1" ]]
	}
	wait_for 60 node_gpus "agent-a1=1 openshell-multi=2 "
	run kx multi get nodes agent-a1 -o json
	assert_equal "$(jq -r '.metadata.labels["node-role.kubernetes.io/control-plane"] // "none"' <<<"$output")" none
	assert_equal "$(jq -r '.status.conditions[] | select(.type == "Ready") | .status' <<<"$output")" True
	# The plugin's DaemonSet runs a pod on each node. Its status is the
	# controller's next sync, after the node's allocatable (as in
	# pkg/controller/daemon): wait for it, do not expect it at once.
	ds_counts() {
		[[ $(kx multi get ds nvidia-device-plugin -n nvidia-device-plugin -o 'jsonpath={.status.desiredNumberScheduled} {.status.numberReady}') == "2 2" ]]
	}
	wait_for 30 ds_counts
	# A pod bound to the agent runs there and sees the agent's GPU; its log
	# comes through the server from the agent's kubelet (port 10250).
	kx multi apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-agent"},"spec":{"nodeName":"agent-a1","restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"c","image":"'"$SMOKE"'","command":["nvidia-smi","-L"],"resources":{"limits":{"nvidia.com/gpu":1}}}]}}'
	wait_for 60 pod_phase_is multi on-agent Succeeded
	run kx multi logs on-agent
	assert_success
	assert_output --partial "(UUID: $gpu1)"
	docker rm -f openshell-agent-a1 >/dev/null
}

@test "an agent checks the server's certificate and the token's CA hash, and is refused a wrong password: each time it tries again" {
	start multi2 --no-healthcheck "$SIM_K3S_IMAGE"
	wait_for 60 kx multi2 get --raw /readyz
	token=$(server_token multi2)
	ip=$(server_ip multi2)
	# A host the server's certificate does not name: Go's TLS check fails, as k3s's agent reports it.
	agent bad multi2 -e K3S_TOKEN="$token" "$SIM_K3S_IMAGE" agent --server https://openshell-cluster-multi2:6443
	says() { docker logs "openshell-agent-$1" 2>&1 | grep -qF -- "$2"; }
	wait_for 60 says bad 'level=error msg="Failed to validate connection to cluster at https://openshell-cluster-multi2:6443: CA cert validation failed: Get \"https://openshell-cluster-multi2:6443/cacerts\": tls: failed to verify certificate: x509: certificate is valid for kubernetes, kubernetes.default, kubernetes.default.svc, kubernetes.default.svc.cluster.local, localhost, openshell-multi2, not openshell-cluster-multi2"'
	docker rm -f openshell-agent-bad >/dev/null
	# A token of another cluster's CA.
	agent bad multi2 -e K3S_TOKEN="K10$(printf '0%.0s' {1..64})::server:${token##*:}" "$SIM_K3S_IMAGE" agent --server "https://$ip:6443"
	wait_for 60 says bad "level=error msg=\"Failed to validate connection to cluster at https://$ip:6443: token CA hash does not match the Cluster CA certificate hash: $(printf '0%.0s' {1..64}) != ${token:3:64}\""
	docker rm -f openshell-agent-bad >/dev/null
	# The right CA and a wrong password: the supervisor's 401, again every 2 s.
	agent bad multi2 -e K3S_TOKEN="${token%:*}:wrong" "$SIM_K3S_IMAGE" agent --server "https://$ip:6443"
	wait_for 60 says bad "Waiting to retrieve agent configuration; server is not ready: failed to retrieve configuration from server: https://$ip:6443/v1-k3s/config: 401 Unauthorized"
	run docker inspect -f '{{.State.Running}}' openshell-agent-bad
	assert_output true
	run kx multi2 get nodes -o name
	refute_output --partial agent-bad
	docker rm -f openshell-agent-bad >/dev/null
}

docker_logs_have() {
	docker logs "openshell-cluster-$1" 2>&1 | grep -qF "$2"
}

pod_ended() {
	[[ $(kx "$1" get pod "$2" -o jsonpath='{.status.phase}') == @(Succeeded|Failed) ]]
}

# A privileged pod asking for no GPU, under the nvidia runtime, on gateway $1: its nvidia-smi -L.
privileged_pod() {
	kx "$1" apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"priv"},"spec":{"restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"priv","image":"'"$SMOKE"'","command":["nvidia-smi","-L"],"securityContext":{"privileged":true}}]}}' >/dev/null
	wait_for 60 pod_ended "$1" priv
	kx "$1" logs priv
}

@test "a privileged pod gets containerd's host devices unless its runtime says privileged_without_host_devices, as the image's drop-in does" {
	# k3s's config imports config-v3.toml.d, where the image's entrypoint writes the setting.
	run docker exec openshell-cluster-gpu cat /var/lib/rancher/k3s/agent/etc/containerd/config.toml
	assert_line 'imports = ["/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d/*.toml"]'
	run docker exec openshell-cluster-gpu cat /var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d/openshell.toml
	assert_line "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']"
	run privileged_pod gpu
	assert_output "No devices were found"
	kx gpu delete pod priv --wait=false >/dev/null
	# An image without the drop-in: k3s with the bundle's images alone, every device of the gateway.
	start privdev --no-healthcheck --gpus all --entrypoint sh "$SIM_K3S_IMAGE" -c \
		'mkdir -p /var/lib/rancher/k3s/agent/images && cp /opt/openshell/images/* /var/lib/rancher/k3s/agent/images/ && exec k3s "$@"' k3s
	# k3s makes its RuntimeClasses once the API runs; a pod naming one before is refused.
	wait_for 60 kx privdev get runtimeclass nvidia
	run docker exec openshell-cluster-privdev ls /var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d
	refute_output --partial openshell.toml
	run privileged_pod privdev
	assert_equal "$(grep -c '^GPU ' <<<"$output")" 2
}

@test "a base_runtime_spec containerd cannot read stops its CRI plugin: k3s waits for it, and no node registers" {
	# plugins/cri/runtime/plugin.go loadBaseOCISpecs, at the plugin's start;
	# k3s's pkg/agent/cri WaitForService then waits for ever.
	d=/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d
	start badspec --no-healthcheck --entrypoint sh "$SIM_K3S_IMAGE" -c \
		"mkdir -p $d && printf '%s\n' 'version = 3' \"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'runc']\" \"base_runtime_spec = '/gone.json'\" >$d/x.toml && exec k3s \"\$@\"" k3s
	wait_for 60 kx badspec get namespaces
	wait_for 30 docker_logs_have badspec 'Waiting for containerd startup: rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService'
	run docker logs openshell-cluster-badspec
	assert_output --partial 'failed to load plugin io.containerd.cri.v1.runtime: failed to create load basic oci spec: failed to load base OCI spec from file: /gone.json'
	run kx badspec get nodes -o name
	assert_output ''
}
