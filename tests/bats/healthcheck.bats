#!/usr/bin/env bats
# deploy/docker/cluster-healthcheck.sh, run directly (under busybox sh, as in
# the k3s image) against a fake kubectl that answers from environment
# variables and records every call. k3s-standin.bats runs it with the real
# kubectl against the stand-in's API.

load helpers/assert

SCRIPT=$BATS_TEST_DIRNAME/../../deploy/docker/cluster-healthcheck.sh

setup() {
	export FK_LOG=$BATS_TEST_TMPDIR/kubectl.calls
	export KUBECTL=$BATS_TEST_TMPDIR/kubectl
	# Healthy GPU cluster by default; each test breaks one thing.
	export FK_READY=ok FK_RC=nvidia FK_DS="1 1" FK_ALLOC=2 FK_MIG="" FK_LIST_FAIL="" FK_JOB_FAILED="" FK_RESTARTS="" FK_WAITING="" FK_IMAGE="" FK_SLICES=""
	# k3s's containerd config with the nvidia runtime (the v3 template's table).
	export K3S_CONTAINERD_CONFIG=$BATS_TEST_TMPDIR/config.toml
	printf '%s\n' "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]" \
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']" \
		'  runtime_type = "io.containerd.runc.v2"' >"$K3S_CONTAINERD_CONFIG"
	cat >"$KUBECTL" <<-'FAKE'
	#!/bin/sh
	printf '%s\n' "$*" >>"$FK_LOG"
	case $1 in --request-timeout=*) shift ;; *) echo "missing --request-timeout" >&2; exit 3 ;; esac
	nf() { echo "Error from server (NotFound): $1 \"$2\" not found" >&2; exit 1; }
	case "$*" in
	"get --raw /readyz")
		[ -n "$FK_READY" ] || { echo "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" >&2; exit 1; }
		echo "$FK_READY" ;;
	'get runtimeclasses,daemonsets,nodes -A -o jsonpath={range .items[*]}{.kind}|{.metadata.namespace}|{.metadata.name}|{.handler}|{.status.desiredNumberScheduled}|{.status.numberReady}|{.status.allocatable.nvidia\.com/gpu}|{.status.allocatable}{"\n"}{end}')
		# The jsonpath as kubectl prints it: a field an object lacks is empty,
		# a map is JSON.
		[ -z "$FK_LIST_FAIL" ] || { echo "Unable to connect to the server: net/http: TLS handshake timeout" >&2; exit 1; }
		echo "RuntimeClass||crun|crun||||"
		[ -z "$FK_RC" ] || echo "RuntimeClass||nvidia|$FK_RC||||"
		[ -z "$FK_DS" ] || echo "DaemonSet|nvidia-device-plugin|nvidia-device-plugin||${FK_DS% *}|${FK_DS#* }||"
		echo "DaemonSet|nvidia-device-plugin|nvidia-device-plugin-mps-control-daemon||0|0||"
		[ -n "$FK_ALLOC" ] || echo "Node||server|||||{\"cpu\":\"2\",${FK_MIG:+$FK_MIG,}\"pods\":\"110\"}"
		for a in $FK_ALLOC; do echo "Node||node-$a||||$a|{\"cpu\":\"2\",\"nvidia.com/gpu\":\"$a\",\"pods\":\"110\"}"; done ;;
	'get runtimeclasses,daemonsets,nodes,resourceslices -A -o jsonpath={range .items[*]}{.kind}|{.metadata.namespace}|{.metadata.name}|{.handler}|{.status.desiredNumberScheduled}|{.status.numberReady}|{.status.allocatable.nvidia\.com/gpu}|{.status.allocatable}|{.spec.driver}|{range .spec.devices[*]}{.attributes.type.string}={.attributes.uuid.string} {end}{"\n"}{end}')
		# Under DRA: no RuntimeClass needed, the driver's DaemonSet, and
		# slices (FK_SLICES: "DRIVER:TYPE=UUID,TYPE=UUID ..." each) with their devices.
		echo "RuntimeClass||crun|crun||||{}||"
		[ -z "$FK_DS" ] || echo "DaemonSet|nvidia-dra-driver-gpu|dra-driver-nvidia-gpu-kubelet-plugin||${FK_DS% *}|${FK_DS#* }||||"
		echo "Node||server|||||{\"cpu\":\"2\",\"pods\":\"110\"}||"
		for sl in $FK_SLICES; do t=${sl#*:}; echo "ResourceSlice||s-$sl||||||${sl%%:*}|$(echo "$t" | tr , ' ')"; done ;;
	"get job helm-install-dra-driver-nvidia-gpu -n kube-system -o jsonpath={.status.failed}")
		printf '%s' "$FK_JOB_FAILED" ;;
	"get pods -n kube-system -l job-name=helm-install-dra-driver-nvidia-gpu -o jsonpath={.items[*].status.containerStatuses[*].restartCount}")
		printf '%s' "$FK_RESTARTS" ;;
	"get pods -n nvidia-dra-driver-gpu -l dra-driver-nvidia-gpu-component=kubelet-plugin -o jsonpath={.items[*].status.initContainerStatuses[*].state.waiting.reason} {.items[*].status.containerStatuses[*].state.waiting.reason}")
		printf '%s' "$FK_WAITING" ;;
	"get pods -n nvidia-dra-driver-gpu -l dra-driver-nvidia-gpu-component=kubelet-plugin -o jsonpath={.items[0].spec.containers[0].image}")
		printf '%s' "$FK_IMAGE" ;;
	"get job helm-install-nvidia-device-plugin -n kube-system -o jsonpath={.status.failed}")
		printf '%s' "$FK_JOB_FAILED" ;;
	"get pods -n kube-system -l job-name=helm-install-nvidia-device-plugin -o jsonpath={.items[*].status.containerStatuses[*].restartCount}")
		printf '%s' "$FK_RESTARTS" ;;
	"get pods -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin -o jsonpath={.items[*].status.containerStatuses[*].state.waiting.reason}")
		printf '%s' "$FK_WAITING" ;;
	"get pods -n nvidia-device-plugin -l app.kubernetes.io/name=nvidia-device-plugin -o jsonpath={.items[0].spec.containers[0].image}")
		printf '%s' "$FK_IMAGE" ;;
	*) echo "fake kubectl: unexpected call: $*" >&2; exit 3 ;;
	esac
	FAKE
	chmod +x "$KUBECTL"
}

healthcheck() {
	run busybox sh "$SCRIPT"
}

@test "without GPU: k3s ready is healthy, and no GPU question is asked" {
	healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK"
	run cat "$FK_LOG"
	assert_output --regexp '^--request-timeout=5s get --raw /readyz$'
}

@test "k3s API refused: k3s-not-ready" {
	FK_READY="" healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL k3s-not-ready"
}

@test "readyz answering something else than ok: k3s-not-ready" {
	FK_READY="[-]etcd failed" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL k3s-not-ready"
}

@test "GPU: all good prints the GPU count, for two kubectl runs" {
	GPU_ENABLED=true healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK gpus=2"
	run cat "$FK_LOG"
	assert_equal "${#lines[@]}" 2
}

@test "GPU: the list runs beside /readyz, and after it where no temporary file can be made; none is left" {
	mkdir -p "$BATS_TEST_TMPDIR/tmp"
	TMPDIR=$BATS_TEST_TMPDIR/tmp GPU_ENABLED=true healthcheck
	assert_output "HEALTHCHECK_OK gpus=2"
	run ls -A "$BATS_TEST_TMPDIR/tmp"
	assert_output ''
	TMPDIR=$BATS_TEST_TMPDIR/nosuch GPU_ENABLED=true healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK gpus=2"
	FK_LIST_FAIL=1 TMPDIR=$BATS_TEST_TMPDIR/nosuch GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL k3s-not-ready"
}

@test "GPU: the API failing the list after /readyz: k3s-not-ready" {
	FK_LIST_FAIL=1 GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL k3s-not-ready"
}

@test "GPU: containerd without the nvidia runtime fails, though the RuntimeClass exists" {
	printf '%s\n' "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]" >"$K3S_CONTAINERD_CONFIG"
	GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-runtime-missing config=$K3S_CONTAINERD_CONFIG"
	# containerd 1.7's v2 config names it with double quotes.
	printf '%s\n' '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia"]' >"$K3S_CONTAINERD_CONFIG"
	GPU_ENABLED=true healthcheck
	assert_success
}

@test "GPU: the plugin's image that cannot be pulled is named" {
	FK_DS="1 0" FK_WAITING="ImagePullBackOff" FK_IMAGE="nvcr.io/nvidia/k8s-device-plugin:v0.20.0" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-image-pull reason=ImagePullBackOff image=nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
}

@test "GPU: RuntimeClass nvidia missing" {
	FK_RC="" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-runtimeclass-missing"
}

@test "GPU: device-plugin DaemonSet missing while the chart installs" {
	FK_DS="" FK_RESTARTS="0" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-missing namespace=nvidia-device-plugin daemonset=nvidia-device-plugin"
}

@test "GPU: chart install failing (job pod restarts) is told apart" {
	FK_DS="" FK_RESTARTS="3" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-chart-install-failed job=helm-install-nvidia-device-plugin failures=3"
}

@test "GPU: chart install failing (failed job pods) is told apart" {
	FK_DS="" FK_JOB_FAILED="2" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-chart-install-failed job=helm-install-nvidia-device-plugin failures=2"
}

@test "GPU: DaemonSet that schedules no pod (affinity) is not ready" {
	FK_DS="0 0" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=0 ready=0"
}

@test "GPU: DaemonSet pod not ready (crash loop)" {
	FK_DS="1 0" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=1 ready=0"
}

@test "GPU: node without nvidia.com/gpu" {
	FK_ALLOC="" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-not-allocatable allocatable=absent"
}

@test "GPU: node with nvidia.com/gpu 0" {
	FK_ALLOC="0" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-not-allocatable allocatable=0"
}

@test "GPU: a non-numeric allocatable is reported as is" {
	FK_ALLOC="2k" GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-not-allocatable allocatable=2k"
}

@test "GPU: MIG devices alone (--mig-strategy mixed on MIG GPUs) are GPUs to serve" {
	# As the real kubectl prints the node's allocatable map.
	FK_ALLOC="" FK_MIG='"nvidia.com/mig-1g.10gb":"4","nvidia.com/mig-3g.40gb":"1"' GPU_ENABLED=true healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK gpus=0 mig=5"
	# A profile whose devices are all taken by the plugin's health check: none.
	FK_ALLOC="" FK_MIG='"nvidia.com/mig-1g.10gb":"0"' GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-not-allocatable allocatable=absent"
}

@test "GPU: allocatable of several nodes adds up" {
	FK_ALLOC="2 1" GPU_ENABLED=true healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK gpus=3"
}

@test "plugin namespace and DaemonSet name are overridable" {
	GPU_DEVICE_PLUGIN_NAMESPACE=other GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-missing namespace=other daemonset=nvidia-device-plugin"
	GPU_DEVICE_PLUGIN_DAEMONSET=nvidia-device-plugin-mps-control-daemon GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=0 ready=0"
}

@test "DRA: the slices' GPUs of driver gpu.nvidia.com are the count; no RuntimeClass asked" {
	FK_RC="" FK_SLICES="gpu.nvidia.com:gpu=GPU-a,gpu=GPU-b gpu.nvidia.com:mig=MIG-x,gpu=GPU-c other.example.com:gpu=GPU-d" \
		OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_success
	assert_output "HEALTHCHECK_OK gpus=3"
	# A pool's two generations listing one GPU: it counts once.
	FK_SLICES="gpu.nvidia.com:gpu=GPU-a,gpu=GPU-b gpu.nvidia.com:gpu=GPU-b" OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_output "HEALTHCHECK_OK gpus=2"
}

@test "DRA: the driver's DaemonSet missing, not ready, or no GPU published: each named" {
	FK_DS="" FK_RESTARTS="0" OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-missing namespace=nvidia-dra-driver-gpu daemonset=dra-driver-nvidia-gpu-kubelet-plugin"
	FK_DS="" FK_RESTARTS="3" OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_output "HEALTHCHECK_FAIL gpu-chart-install-failed job=helm-install-dra-driver-nvidia-gpu failures=3"
	FK_DS="1 0" OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=1 ready=0"
	FK_DS="1 0" FK_WAITING="ImagePullBackOff" FK_IMAGE="registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1" \
		OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_output "HEALTHCHECK_FAIL gpu-device-plugin-image-pull reason=ImagePullBackOff image=registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"
	FK_SLICES="gpu.nvidia.com: other.example.com:gpu=GPU-a" OPENSHELL_GPU_ALLOCATION=dra GPU_ENABLED=true healthcheck
	assert_failure 1
	assert_output "HEALTHCHECK_FAIL gpu-not-published driver=gpu.nvidia.com"
}

@test "the healthcheck is POSIX sh and shellcheck-clean" {
	run shellcheck -s sh "$SCRIPT"
	assert_success
}
