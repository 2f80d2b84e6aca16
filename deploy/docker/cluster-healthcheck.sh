#!/bin/sh
# cluster-healthcheck.sh - Docker HEALTHCHECK of the openshell cluster image.
#
# POSIX sh without jq: it runs inside the openshell cluster image
# (Dockerfile.cluster: Ubuntu's dash and k3s's kubectl, no jq). It asks the
# API with `kubectl ... -o jsonpath=...` and prints exactly one line:
#   HEALTHCHECK_OK [gpus=N [mig=M]]                            (exit 0)
#   HEALTHCHECK_FAIL <marker> [key=value ...]                  (exit 1)
# Markers (stable; openshell reads them from .State.Health.Log):
#   k3s-not-ready                       GET /readyz did not answer "ok"
#   gpu-runtime-missing config=F        k3s's containerd config F has no nvidia
#                                       runtime (a RuntimeClass proves nothing:
#                                       k3s makes RuntimeClass nvidia always)
#   gpu-runtimeclass-missing            RuntimeClass nvidia not found
#   gpu-chart-install-failed job=J failures=N  the helm-install job's pod failed
#                                       N times (its restarts plus failed pods)
#   gpu-device-plugin-missing namespace=NS daemonset=DS
#   gpu-device-plugin-image-pull reason=R image=I  a container of the plugin's
#                                       pods waits for its image (ErrImagePull,
#                                       ImagePullBackOff, ErrImageNeverPull); I is
#                                       the first pod's first container's: the
#                                       plugin's (DEVICE_PLUGIN_IMAGE), which the
#                                       chart runs in each of its containers
#   gpu-device-plugin-not-ready desired=D ready=R
#   gpu-not-allocatable allocatable=V   V is the node's nvidia.com/gpu
#                                       ("absent" when the key is missing),
#                                       and no MIG device is allocatable either
#   HEALTHCHECK_OK gpus=N mig=M         M MIG devices allocatable as resources of
#                                       their own (--mig-strategy mixed), which
#                                       serve GPU pods where no whole GPU is left
# The GPU checks run only when GPU_ENABLED=true, as in cluster-entrypoint.sh.
# With OPENSHELL_GPU_ALLOCATION=dra they look at NVIDIA's DRA driver
# instead: its kubelet plugin's DaemonSet and chart (the markers above name
# them), no RuntimeClass (its pods need none), and for the GPUs the
# ResourceSlices of driver gpu.nvidia.com, whose GPUs (devices of type gpu,
# each UUID once: two generations of a pool may list one) are N:
#   gpu-not-published driver=gpu.nvidia.com   no slice publishes a GPU
#
# A healthy cluster costs two kubectl runs, /readyz and one list of the
# RuntimeClasses, DaemonSets and Nodes (and under DRA the ResourceSlices), side by side: Docker runs this every 30 s for
# as long as the gateway lives, and each kubectl is a process start. Only a
# failing check asks more (the helm job, the plugin's pods), to name why.
set -u

KUBECTL="${KUBECTL:-kubectl}"
KUBECTL_TIMEOUT="${KUBECTL_TIMEOUT:-5s}"
GPU_ENABLED="${GPU_ENABLED:-}"
# What serves the GPUs (deploy/kube/gpu-manifests/ALLOCATION/): the
# DaemonSet, its chart and its pods' label; the types listed, and for DRA
# each slice's driver and its devices' types after the map.
case ${OPENSHELL_GPU_ALLOCATION:-device-plugin} in
dra)
	dra=1 dp_ns=nvidia-dra-driver-gpu dp_ds=dra-driver-nvidia-gpu-kubelet-plugin dp_chart=dra-driver-nvidia-gpu
	pod_label='dra-driver-nvidia-gpu-component=kubelet-plugin'
	types=runtimeclasses,daemonsets,nodes,resourceslices
	extra='|{.spec.driver}|{range .spec.devices[*]}{.attributes.type.string}={.attributes.uuid.string} {end}'
	# Its pods' init container runs the same image: a pull fails there first.
	waiting='{.items[*].status.initContainerStatuses[*].state.waiting.reason} {.items[*].status.containerStatuses[*].state.waiting.reason}'
	;;
*)
	dra=0 dp_ns=nvidia-device-plugin dp_ds=nvidia-device-plugin dp_chart=nvidia-device-plugin
	pod_label='app.kubernetes.io/name=nvidia-device-plugin' types=runtimeclasses,daemonsets,nodes extra=
	waiting='{.items[*].status.containerStatuses[*].state.waiting.reason}'
	;;
esac
DP_NAMESPACE="${GPU_DEVICE_PLUGIN_NAMESPACE:-$dp_ns}"
DP_DAEMONSET="${GPU_DEVICE_PLUGIN_DAEMONSET:-$dp_ds}"
DP_CHART="${GPU_DEVICE_PLUGIN_CHART:-$dp_chart}"
CONTAINERD_CONFIG="${K3S_CONTAINERD_CONFIG:-/var/lib/rancher/k3s/agent/etc/containerd/config.toml}"

fail() {
	echo "HEALTHCHECK_FAIL $*"
	exit 1
}

# Word splitting of $KUBECTL is intended: tests may set it to "cmd arg".
kc() {
	# shellcheck disable=SC2086
	$KUBECTL --request-timeout="$KUBECTL_TIMEOUT" "$@" 2>/dev/null
}

is_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

# One list: "kind|namespace|name|handler|desired|ready|gpus|allocatable" a
# line (under DRA then "|driver|TYPE=UUID TYPE=UUID ..." of a slice's
# devices), allocatable the node's whole allocatable map, as kubectl prints a map
# (JSON); a field an object lacks is empty (kubectl's
# --allow-missing-template-keys). With
# GPUs it runs beside /readyz, so that the probe (and `gateway status`,
# which runs it while Docker still says "starting") waits for one kubectl
# start, not two in turn; its answer counts only once /readyz said ok.
list_objects() {
	kc get "$types" -A -o 'jsonpath={range .items[*]}{.kind}|{.metadata.namespace}|{.metadata.name}|{.handler}|{.status.desiredNumberScheduled}|{.status.numberReady}|{.status.allocatable.nvidia\.com/gpu}|{.status.allocatable}'"$extra"'{"\n"}{end}'
}

# Add the MIG devices of an allocatable map ('{"cpu":"2","nvidia.com/mig-1g.10gb":"4"}')
# to $mig, by the shell's own pattern matching: no process per node.
mig=0
add_mig_devices() {
	rest=$1
	while :; do
		case $rest in *'"nvidia.com/mig-'*) ;; *) return ;; esac
		rest=${rest#*\"nvidia.com/mig-}
		rest=${rest#*\":\"}
		v=${rest%%\"*}
		is_uint "$v" && mig=$((mig + v))
	done
}
list="" lister=""
if [ "$GPU_ENABLED" = "true" ] && list=$(mktemp 2>/dev/null); then
	trap 'rm -f "$list"' EXIT
	list_objects >"$list" &
	lister=$!
fi

readyz=$(kc get --raw /readyz) || fail "k3s-not-ready"
[ "$readyz" = "ok" ] || fail "k3s-not-ready"

if [ "$GPU_ENABLED" != "true" ]; then
	echo "HEALTHCHECK_OK"
	exit 0
fi
# Without a temporary file (a full /tmp), the list comes after /readyz.
if [ -n "$lister" ]; then
	wait "$lister" || fail "k3s-not-ready"
	objects=$(cat "$list")
else
	objects=$(list_objects) || fail "k3s-not-ready"
fi

# k3s writes a runtime table for each runtime binary it found, v3 or v2 style.
if [ -f "$CONTAINERD_CONFIG" ] && ! grep -q "runtimes\.['\"]nvidia['\"]\]" "$CONTAINERD_CONFIG"; then
	fail "gpu-runtime-missing config=$CONTAINERD_CONFIG"
fi

handler="" ds="" alloc="" published=0 seen=" "
while IFS='|' read -r kind ns name h desired ready gpu map driver devices; do
	case $kind in
	ResourceSlice)
		[ "$driver" = gpu.nvidia.com ] || continue
		for d in $devices; do   # TYPE=UUID
			[ "${d%%=*}" = gpu ] || continue
			case $seen in *" ${d#*=} "*) continue ;; esac
			seen="$seen${d#*=} "
			published=$((published + 1))
		done
		;;
	RuntimeClass) [ "$name" = nvidia ] && handler=$h ;;
	DaemonSet) [ "$ns/$name" = "$DP_NAMESPACE/$DP_DAEMONSET" ] && ds="${desired:-0} ${ready:-0}" ;;
	Node)
		[ -n "$gpu" ] && alloc="$alloc $gpu"
		add_mig_devices "$map"
		;;
	esac
done <<EOF
$objects
EOF

[ -n "$handler" ] || [ "$dra" = 1 ] || fail "gpu-runtimeclass-missing"

if [ -z "$ds" ]; then
	# Tell a chart that cannot install apart from one still installing. The
	# k3s Helm controller's job pod restarts on failure (restartPolicy
	# OnFailure), so failures show as restarts more than as failed pods.
	job="helm-install-$DP_CHART"
	failures=0
	for n in $(kc get job "$job" -n kube-system -o 'jsonpath={.status.failed}') \
		$(kc get pods -n kube-system -l "job-name=$job" \
			-o 'jsonpath={.items[*].status.containerStatuses[*].restartCount}'); do
		is_uint "$n" && failures=$((failures + n))
	done
	if [ "$failures" -gt 0 ]; then
		fail "gpu-chart-install-failed job=$job failures=$failures"
	fi
	fail "gpu-device-plugin-missing namespace=$DP_NAMESPACE daemonset=$DP_DAEMONSET"
fi
# shellcheck disable=SC2086 # split "D R" into two fields
set -- $ds
desired=$1
ready=$2
is_uint "$desired" || desired=0
is_uint "$ready" || ready=0
if [ "$desired" -eq 0 ] || [ "$ready" -ne "$desired" ]; then
	reasons=$(kc get pods -n "$DP_NAMESPACE" -l "$pod_label" -o "jsonpath=$waiting")
	for r in $reasons; do
		case $r in
		ErrImagePull | ImagePullBackOff | ErrImageNeverPull)
			image=$(kc get pods -n "$DP_NAMESPACE" -l "$pod_label" \
				-o 'jsonpath={.items[0].spec.containers[0].image}')
			fail "gpu-device-plugin-image-pull reason=$r image=${image:-unknown}"
			;;
		esac
	done
	fail "gpu-device-plugin-not-ready desired=$desired ready=$ready"
fi

if [ "$dra" = 1 ]; then
	[ "$published" -gt 0 ] || fail "gpu-not-published driver=gpu.nvidia.com"
	echo "HEALTHCHECK_OK gpus=$published"
	exit 0
fi
gpus=0
for v in $alloc; do
	is_uint "$v" || fail "gpu-not-allocatable allocatable=$v"
	gpus=$((gpus + v))
done
if [ "$mig" -gt 0 ]; then
	echo "HEALTHCHECK_OK gpus=$gpus mig=$mig"
	exit 0
fi
[ -n "$alloc" ] || fail "gpu-not-allocatable allocatable=absent"
[ "$gpus" -gt 0 ] || fail "gpu-not-allocatable allocatable=$gpus"

echo "HEALTHCHECK_OK gpus=$gpus"
