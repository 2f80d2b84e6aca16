# shellcheck shell=sh
# shellcheck disable=SC2034 # variables used by the files that source this one
# shellcheck disable=SC2016 # jq programs use $variables of their own
# SIMULATION: helpers shared by the k3s stand-in's server and kubectl.
#
# Not k3s. A busybox-sh + jq imitation of the small part of k3s/kubectl that
# openshell uses (design.md §5, docs/k3s-standin.md). State lives under the
# k3s data dir (the container volume) so it survives a container restart like
# real k3s state; per-process state lives in a run dir that the server clears
# at every start.

# The stand-in's release: what real k3s compiles in (its version and the
# image of its Helm jobs). tests/testbed/sim-image writes release.env from
# deploy/versions.env and the stand-in's airgap list; these are the defaults.
SIM_VERSION="v1.35.0+k3s1"
SIM_HELM_JOB_IMAGE="rancher/klipper-helm:v0.9.12-build20251215"
# shellcheck source=/dev/null
[ -f "${SIM_LIB:-/nonexistent}/release.env" ] && . "$SIM_LIB/release.env"
SIM_DATA_DIR=${SIM_K3S_DATA_DIR:-/var/lib/rancher/k3s}
SIM_STATE=$SIM_DATA_DIR/sim
SIM_OBJ=$SIM_STATE/objects
SIM_LOGS=$SIM_STATE/logs
SIM_MANIFESTS=$SIM_DATA_DIR/server/manifests
SIM_RUN=${SIM_K3S_RUN_DIR:-/run/k3s-sim}
SIM_KUBECONFIG=${SIM_K3S_KUBECONFIG:-/etc/rancher/k3s/k3s.yaml}
SIM_DEV_DIR=${SIM_DEV_DIR:-/dev}
JQ=${SIM_JQ:-jq}

# Monotonic seconds with centisecond resolution (busybox date has no %N).
sim_now() {
	read -r up _ </proc/uptime
	echo "$up"
}

# sim_after START DELAY: true once DELAY seconds (fractional) passed since START.
sim_after() {
	awk -v s="$1" -v d="$2" -v n="$(sim_now)" 'BEGIN { exit !(n - s >= d) }'
}

# sim_stamp EVENT: for scripts/bench, the moment (/proc/uptime seconds, the
# host's clock too) a readiness change became visible in the API. Not part
# of k3s: a stand-in's measuring tape.
sim_stamp() {
	printf '%s %s\n' "$(sim_now)" "$*" >>"$SIM_RUN/stamps"
}

sim_ts() {
	date -u +%Y-%m-%dT%H:%M:%SZ
}

sim_uid() {
	cat /proc/sys/kernel/random/uuid 2>/dev/null ||
		awk 'BEGIN { srand(); printf "%08x-%04x-4%03x-a%03x-%012x\n", rand()*2^32, rand()*2^16, rand()*2^12, rand()*2^12, rand()*2^48 }'
}

# Five characters from the alphabet Kubernetes uses for generated names.
sim_suffix() {
	od -An -N5 -tu1 /dev/urandom | awk '{
		a = "bcdfghjklmnpqrstvwxz2456789"; s = ""
		for (i = 1; i <= NF; i++) s = s substr(a, $i % 27 + 1, 1)
		print s }'
}

# A failure switch: a file under $SIM_STATE/switches/ (runtime toggle, also
# settable with `docker exec`) wins over the environment variable.
sim_switch() {
	if [ -f "$SIM_STATE/switches/$1" ]; then
		cat "$SIM_STATE/switches/$1"
	else
		eval "printf '%s' \"\${$1:-}\""
	fi
}

# sim_obj PLURAL NAMESPACE NAME: path of a stored object ("" namespace =
# cluster scoped).
sim_obj() {
	echo "$SIM_OBJ/$1/${2:-_}/$3.json"
}

# sim_write PATH: store stdin atomically (readers never see half a file).
sim_write() {
	mkdir -p "$(dirname "$1")"
	cat >"$1.tmp.$$" && mv -f "$1.tmp.$$" "$1"
}

# sim_write_if_changed PATH: like sim_write, but leaves an identical file alone.
sim_write_if_changed() {
	mkdir -p "$(dirname "$1")"
	cat >"$1.tmp.$$"
	if cmp -s "$1.tmp.$$" "$1"; then
		rm -f "$1.tmp.$$"
	else
		mv -f "$1.tmp.$$" "$1"
	fi
}

# One writer at a time (server tick, kubectl apply/delete). A lock whose
# holder died is broken.
sim_lock() {
	mkdir -p "$SIM_RUN"
	n=0
	while ! mkdir "$SIM_RUN/lock" 2>/dev/null; do
		holder=$(cat "$SIM_RUN/lock/pid" 2>/dev/null || true)
		if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
			rm -rf "$SIM_RUN/lock"
			continue
		fi
		n=$((n + 1))
		[ "$n" -lt 500 ] || return 1
		sleep 0.02
	done
	echo "$$" >"$SIM_RUN/lock/pid"
}

sim_unlock() {
	rm -rf "$SIM_RUN/lock"
}

# The API answers once the server marked itself ready and is still alive.
sim_api_up() {
	[ -f "$SIM_RUN/ready" ] || return 1
	pid=$(cat "$SIM_RUN/server.pid" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null
}

# jq: the container of a pod that the stand-in runs, the first that is not
# a sidecar (SIMULATION: the others only log). The server's pod status and
# kubectl's logs agree on it through this one definition.
SIM_JQ_MAIN_CONTAINER='def main_container:
  ((.spec.containers | map(select(.name | endswith("-sidecar") | not)) | first) // .spec.containers[0]);'

# k3s registers its own types (helm.cattle.io's HelmChart, HelmChartConfig)
# a moment after its API server is ready; they stay in the datastore.
sim_crds_registered() {
	[ -f "$SIM_STATE/crds" ]
}

# Resource table: alias -> "plural kind apiVersion scope qualified singular".
# qualified: the name in API errors; singular: the name in kubectl output.
sim_resource() {
	case $1 in
	po | pod | pods) echo "pods Pod v1 ns pods pod" ;;
	no | node | nodes) echo "nodes Node v1 cluster nodes node" ;;
	ns | namespace | namespaces) echo "namespaces Namespace v1 cluster namespaces namespace" ;;
	runtimeclass | runtimeclasses | runtimeclass.node.k8s.io | runtimeclasses.node.k8s.io)
		echo "runtimeclasses RuntimeClass node.k8s.io/v1 cluster runtimeclasses.node.k8s.io runtimeclass.node.k8s.io" ;;
	ds | daemonset | daemonsets | ds.apps | daemonset.apps | daemonsets.apps)
		echo "daemonsets DaemonSet apps/v1 ns daemonsets.apps daemonset.apps" ;;
	job | jobs | job.batch | jobs.batch)
		echo "jobs Job batch/v1 ns jobs.batch job.batch" ;;
	ev | event | events) echo "events Event v1 ns events event" ;;
	helmchart | helmcharts | helmchart.helm.cattle.io | helmcharts.helm.cattle.io)
		echo "helmcharts HelmChart helm.cattle.io/v1 ns helmcharts.helm.cattle.io helmchart.helm.cattle.io" ;;
	helmchartconfig | helmchartconfigs | helmchartconfig.helm.cattle.io | helmchartconfigs.helm.cattle.io)
		echo "helmchartconfigs HelmChartConfig helm.cattle.io/v1 ns helmchartconfigs.helm.cattle.io helmchartconfig.helm.cattle.io" ;;
	*) return 1 ;;
	esac
}

# sim_delete_pod NS NAME: stop the pod's process group and forget the pod
# (the caller holds the lock).
sim_delete_pod() {
	sim_dp_obj=$(sim_obj pods "$1" "$2")
	# The device plugin's socket goes with its pod: the kubelet drops the
	# devices it registered (a new pod registers them again).
	! grep -qs '"nvidia-device-plugin-ctr"' "$sim_dp_obj" || sim_plugin_gone
	pidf=$SIM_RUN/pods/$1_$2.pid
	if [ -f "$pidf" ]; then
		pgid=$(cat "$pidf")
		kill -TERM -- "-$pgid" 2>/dev/null || kill -TERM "$pgid" 2>/dev/null || true
	fi
	rm -f "$SIM_RUN/pods/$1_$2".* "$SIM_STATE/podstate/$1/$2" "$SIM_STATE/alloc/$1/$2" \
		"$SIM_LOGS/$1/$2.log" "$SIM_LOGS/$1/$2.log.prev" "$SIM_LOGS/$1/$2".*.log "$sim_dp_obj"
}

# The device plugin's kubelet socket is gone (its container exited, or its
# pod was deleted). The kubelet's device manager marks every device it
# registered unhealthy: the node keeps them in capacity with none
# allocatable until the grace period ends (srv_device_resources).
# (sh has no locals: its variables are named for it, as its callers' are not.)
sim_plugin_gone() {
	sim_pg_gone=""
	for sim_pg_f in gpu-registered mig-registered; do
		[ -f "$SIM_RUN/$sim_pg_f" ] || continue
		mv -f "$SIM_RUN/$sim_pg_f" "$SIM_RUN/$sim_pg_f.stopped"
		sim_pg_gone=1
	done
	[ -z "$sim_pg_gone" ] || sim_now >"$SIM_RUN/plugin-stopped-at"
	# Health is the plugin's word: the next one's is its own.
	rm -f "$SIM_RUN/gpu-unhealthy"
}

# sim_helm_uninstall CHART: what the Helm controller does when a HelmChart is
# deleted: uninstall the release (its DaemonSet and pods) and drop the job.
sim_helm_uninstall() {
	hd=$SIM_STATE/helm/$1
	[ -d "$hd" ] || return 0
	tns=$(sed -n 's/^targetNamespace=//p' "$hd/vals" 2>/dev/null)
	for p in "$SIM_OBJ/pods/$tns"/*.json "$SIM_OBJ/pods/kube-system"/*.json; do
		[ -f "$p" ] || continue
		if $JQ -e --arg c "$1" '.metadata.labels["app.kubernetes.io/instance"] == $c
			or .metadata.labels["job-name"] == "helm-install-\($c)"' "$p" >/dev/null; then
			sim_delete_pod "$($JQ -r .metadata.namespace "$p")" "$($JQ -r .metadata.name "$p")"
		fi
	done
	rm -f "$(sim_obj daemonsets "$tns" "$1")" "$(sim_obj daemonsets "$tns" "$1-mps-control-daemon")" \
		"$(sim_obj jobs kube-system "helm-install-$1")"
	rm -f "$SIM_RUN/plugin-$1".*
	# Keep the manifest checksum: like the k3s deploy controller, the chart
	# comes back only when its file changes or k3s restarts.
	echo uninstalled >"$hd/phase"
}
