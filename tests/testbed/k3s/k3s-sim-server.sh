# shellcheck shell=sh
# shellcheck disable=SC2016 # jq programs use $variables of their own
# SIMULATION: `k3s server` of the k3s stand-in (sourced by ./k3s).
#
# Runs in the foreground (it is what the entrypoint execs, PID 1 of the
# container) and reconciles a simulated single-node cluster every
# SIM_K3S_RECONCILE_PERIOD seconds:
#   - writes /etc/rancher/k3s/k3s.yaml, becomes ready after SIM_K3S_READY_DELAY;
#   - RuntimeClass nvidia iff nvidia-container-runtime was on PATH at start;
#   - the Helm controller: HelmChart manifests in server/manifests become a
#     helm-install-<name> Job and, for the NVIDIA device plugin chart, the
#     DaemonSet and its pod as the real chart renders them;
#   - the node advertises nvidia.com/gpu once the plugin pod runs, counting
#     $SIM_DEV_DIR/nvidia[0-9]*;
#   - the scheduler and kubelet: pods are bound if their GPU limits fit, and
#     their command runs inside this container, logs and exit code recorded.
# Knobs and failure switches: docs/k3s-standin.md.

srv_log() {
	printf 'time="%s" level=%s msg="%s"\n' "$(sim_ts)" "$1" "$2"
}

srv_hex() {
	od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
}

server_main() {
	node_name=""
	while [ $# -gt 0 ]; do
		case $1 in
		--node-name=*) node_name=${1#*=} ;;
		--node-name) node_name=${2:-}; shift ;;
		esac
		shift
	done
	SRV_NODE=${node_name:-${SIM_NODE_NAME:-$(hostname)}}
	SRV_PERIOD=${SIM_K3S_RECONCILE_PERIOD:-0.25}
	SRV_READY_DELAY=${SIM_K3S_READY_DELAY:-1}
	SRV_IP=$(hostname -i 2>/dev/null | awk '{ print $1 }')
	[ -n "$SRV_IP" ] || SRV_IP=127.0.0.1

	rm -rf "$SIM_RUN"
	mkdir -p "$SIM_RUN/pods" "$SIM_OBJ" "$SIM_LOGS" "$SIM_STATE/helm" "$SIM_STATE/podstate" \
		"$SIM_STATE/alloc" "$SIM_STATE/switches" "$SIM_MANIFESTS" "$SIM_IMAGE_STORE"
	echo $$ >"$SIM_RUN/server.pid"
	srv_log info "Starting k3s $SIM_VERSION (SIMULATION: openshell k3s stand-in, not k3s)"
	srv_kubeconfig
	img_import_dir
	if SRV_NVIDIA=$(command -v nvidia-container-runtime 2>/dev/null); then
		srv_log info "Found nvidia container runtime at $SRV_NVIDIA"
	else
		SRV_NVIDIA=""
	fi
	trap 'srv_stop' TERM INT
	t0=$(sim_now)
	while :; do
		if [ ! -f "$SIM_RUN/ready" ]; then
			if [ "$(sim_switch SIM_K3S_NEVER_READY)" != 1 ] && sim_after "$t0" "$SRV_READY_DELAY"; then
				srv_become_ready
			fi
		elif sim_lock; then
			srv_tick
			sim_unlock
		fi
		sleep "$SRV_PERIOD"
	done
}

srv_stop() {
	srv_log info "Received SIGTERM, shutting down (SIMULATION)"
	for pidf in "$SIM_RUN/pods"/*.pid; do
		[ -f "$pidf" ] && kill -TERM -- "-$(cat "$pidf")" 2>/dev/null
	done
	rm -f "$SIM_RUN/ready" "$SIM_RUN/server.pid"
	exit 0
}

# Like k3s: keep the CA and client cert in the data dir, rewrite the
# kubeconfig at every start. SIMULATION: random bytes in PEM armour, not a
# usable certificate.
srv_pem() {
	printf -- '-----BEGIN %s-----\n' "$1"
	head -c "$2" /dev/urandom | base64 | tr -d '\n' | fold -w 64
	printf '\n-----END %s-----\n' "$1"
}

srv_kubeconfig() {
	tls=$SIM_DATA_DIR/server/tls
	mkdir -p "$tls"
	[ -f "$tls/server-ca.crt" ] || srv_pem CERTIFICATE 400 >"$tls/server-ca.crt"
	[ -f "$tls/client-admin.crt" ] || srv_pem CERTIFICATE 380 >"$tls/client-admin.crt"
	[ -f "$tls/client-admin.key" ] || srv_pem "EC PRIVATE KEY" 121 >"$tls/client-admin.key"
	ca=$(base64 "$tls/server-ca.crt" | tr -d '\n')
	crt=$(base64 "$tls/client-admin.crt" | tr -d '\n')
	key=$(base64 "$tls/client-admin.key" | tr -d '\n')
	mkdir -p "$(dirname "$SIM_KUBECONFIG")"
	umask 077
	cat >"$SIM_KUBECONFIG.tmp" <<KUBECONFIG
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: $ca
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: $crt
    client-key-data: $key
KUBECONFIG
	chmod 0600 "$SIM_KUBECONFIG.tmp"
	mv -f "$SIM_KUBECONFIG.tmp" "$SIM_KUBECONFIG"
	umask 022
	srv_log info "Wrote kubeconfig $SIM_KUBECONFIG"
}

srv_become_ready() {
	sim_lock || return 0
	ts=$(sim_ts)
	for ns in default kube-system kube-public kube-node-lease; do
		f=$(sim_obj namespaces "" "$ns")
		[ -f "$f" ] || srv_namespace "$ns" | sim_write "$f"
	done
	rcf=$(sim_obj runtimeclasses "" nvidia)
	if [ -n "$SRV_NVIDIA" ]; then
		[ -f "$rcf" ] || $JQ -n --arg uid "$(sim_uid)" --arg ts "$ts" '
			{apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", handler: "nvidia",
			 metadata: {name: "nvidia", uid: $uid, resourceVersion: "1", creationTimestamp: $ts}}' |
			sim_write "$rcf"
	else
		rm -f "$rcf"
	fi
	SRV_NODE_CREATED=$ts
	SRV_NODE_UID=$(sim_uid)
	SRV_NODE_SIG=""
	SRV_CPU=$(nproc 2>/dev/null || echo 1)
	SRV_MEM=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	: >"$SIM_RUN/ready"
	sim_unlock
	srv_log info "k3s is up and running"
}

srv_namespace() {
	$JQ -n --arg n "$1" --arg uid "$(sim_uid)" --arg ts "$(sim_ts)" '
		{apiVersion: "v1", kind: "Namespace",
		 metadata: {name: $n, uid: $uid, resourceVersion: "1", creationTimestamp: $ts,
		            labels: {"kubernetes.io/metadata.name": $n}},
		 spec: {finalizers: ["kubernetes"]}, status: {phase: "Active"}}'
}

srv_tick() {
	img_import_dir
	srv_node
	srv_manifests
	for hd in "$SIM_STATE/helm"/*; do
		[ -d "$hd" ] && srv_helm "$(basename "$hd")"
	done
	for ps in "$SIM_STATE/podstate"/*/*; do
		[ -f "$ps" ] && srv_pod "$(basename "$(dirname "$ps")")" "$(basename "$ps")"
	done
}

# Node labels: k3s' own, plus SIM_NODE_LABELS (k=v,k=v) for tests.
srv_node_labels() {
	printf 'beta.kubernetes.io/arch=amd64,beta.kubernetes.io/instance-type=k3s,beta.kubernetes.io/os=linux,'
	printf 'kubernetes.io/arch=amd64,kubernetes.io/hostname=%s,kubernetes.io/os=linux,' "$SRV_NODE"
	printf 'node-role.kubernetes.io/control-plane=true,node-role.kubernetes.io/master=true,'
	printf 'node.kubernetes.io/instance-type=k3s%s' "${SIM_NODE_LABELS:+,$SIM_NODE_LABELS}"
}

srv_node() {
	gpus=""
	[ -f "$SIM_RUN/gpu-registered" ] && gpus=$(wc -l <"$SIM_RUN/gpu-registered" | tr -d ' ')
	pressure=$(sim_switch SIM_NODE_PRESSURE)
	sig="$gpus|$pressure"
	[ "$sig" = "$SRV_NODE_SIG" ] && [ -f "$(sim_obj nodes "" "$SRV_NODE")" ] && return 0
	SRV_NODE_SIG=$sig
	$JQ -n --arg name "$SRV_NODE" --arg uid "$SRV_NODE_UID" --arg ts "$SRV_NODE_CREATED" \
		--arg now "$(sim_ts)" --arg cpu "$SRV_CPU" --arg mem "$SRV_MEM" --arg gpus "$gpus" \
		--arg pressure "$pressure" --arg labels "$(srv_node_labels)" --arg ip "$SRV_IP" \
		--arg ver "$SIM_VERSION" '
		def cond($t; $s; $r; $m): {type: $t, status: $s, reason: $r, message: $m,
			lastHeartbeatTime: $now, lastTransitionTime: $ts};
		({cpu: $cpu, "ephemeral-storage": "61202244Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
		  memory: "\($mem)Ki", pods: "110"}
		 + (if $gpus != "" then {"nvidia.com/gpu": $gpus} else {} end)) as $res
		| {apiVersion: "v1", kind: "Node",
		   metadata: {name: $name, uid: $uid, resourceVersion: "1", creationTimestamp: $ts,
		              labels: ($labels | split(",") | map(select(length > 0) | split("=") | {key: .[0], value: (.[1:] | join("="))}) | from_entries),
		              annotations: {"k3s.io/hostname": $name, "k3s.io/internal-ip": $ip,
		                            "node.alpha.kubernetes.io/ttl": "0",
		                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		              finalizers: ["wrangler.cattle.io/node"]},
		   spec: ({podCIDR: "10.42.0.0/24", podCIDRs: ["10.42.0.0/24"], providerID: "k3s://\($name)"}
		          + (if $pressure == "memory" then {taints: [{key: "node.kubernetes.io/memory-pressure", effect: "NoSchedule", timeAdded: $now}]}
		             elif $pressure == "disk" then {taints: [{key: "node.kubernetes.io/disk-pressure", effect: "NoSchedule", timeAdded: $now}]}
		             else {} end)),
		   status: {
		     addresses: [{type: "InternalIP", address: $ip}, {type: "Hostname", address: $name}],
		     allocatable: $res, capacity: $res,
		     conditions: [
		       (if $pressure == "memory" then cond("MemoryPressure"; "True"; "KubeletHasInsufficientMemory"; "kubelet has insufficient memory available")
		        else cond("MemoryPressure"; "False"; "KubeletHasSufficientMemory"; "kubelet has sufficient memory available") end),
		       (if $pressure == "disk" then cond("DiskPressure"; "True"; "KubeletHasDiskPressure"; "kubelet has disk pressure")
		        else cond("DiskPressure"; "False"; "KubeletHasNoDiskPressure"; "kubelet has no disk pressure") end),
		       cond("PIDPressure"; "False"; "KubeletHasSufficientPID"; "kubelet has sufficient PID available"),
		       cond("Ready"; "True"; "KubeletReady"; "kubelet is posting ready status")],
		     daemonEndpoints: {kubeletEndpoint: {Port: 10250}},
		     nodeInfo: {architecture: "amd64", containerRuntimeVersion: "containerd://1.7.23-k3s2",
		                kernelVersion: "SIMULATION", kubeProxyVersion: $ver, kubeletVersion: $ver,
		                operatingSystem: "linux", osImage: "K3s stand-in (SIMULATION)",
		                machineID: "", systemUUID: "", bootID: ""}}}' |
		sim_write_if_changed "$(sim_obj nodes "" "$SRV_NODE")"
}

# Parse a HelmChart manifest (SIMULATION: a small YAML reader for the shapes
# a HelmChart takes; one document per file). Prints key=value lines and
# writes the valuesContent block to $2.
srv_parse_helmchart() {
	awk -v vfile="$2" '
	function unq(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+#.*$/, "", s); sub(/[ \t]+$/, "", s)
		if (s ~ /^".*"$/ || s ~ /^'\''.*'\''$/) s = substr(s, 2, length(s) - 2); return s }
	function ind(s) { match(s, /^ */); return RLENGTH }
	BEGIN { top = ""; invals = 0; vind = -1; aff = "absent"; ns = "" }
	/^---/ { next }
	{
		line = $0
		if (invals) {
			if (line ~ /^[ \t]*$/) { print "" > vfile; next }
			if (ind(line) > 2 || (vind >= 0 && ind(line) >= vind)) {
				if (vind < 0) vind = ind(line)
				v = substr(line, vind + 1); print v > vfile
				if (v ~ /^[ \t]*#/) next
				vi = ind(v); key = v; sub(/^ */, "", key); val = key
				sub(/:.*/, "", key); sub(/^[^:]*:/, "", val); val = unq(val)
				if (vi == 0) {
					vtop = key
					if (key == "runtimeClassName") print "runtimeClassName=" val
					if (key == "affinity") aff = (val == "null" || val == "~") ? "null" : (val == "{}" ? "empty" : (val == "" ? "pending" : "set"))
					if (key == "nodeSelector" && val != "" && val != "{}" && val != "null") print "nodeSelector=SIMULATION-unsupported-inline"
					next
				}
				if (vtop == "affinity") {
					if (aff == "pending") aff = "set"
					if (v ~ /key:/) { k = v; sub(/.*key:/, "", k); lastkey = unq(k); terms[++nt] = lastkey; vals[nt] = "" }
					else if (v ~ /^[ \t]*- / && lastkey != "" && vals[nt] == "" && v !~ /:/) { x = v; sub(/^[ \t]*- /, "", x); vals[nt] = unq(x) }
				}
				if (vtop == "nodeSelector" && vi > 0) { nsel = nsel (nsel == "" ? "" : ",") key "=" val }
				if ((vtop == "gfd" || vtop == "nfd") && key == "enabled") print vtop "=" val
				next
			}
			invals = 0
		}
		if (line ~ /^[ \t]*(#|$)/) next
		if (line ~ /^[A-Za-z]/) {
			top = line; sub(/:.*/, "", top); val = line; sub(/^[^:]*:/, "", val)
			if (top == "kind" || top == "apiVersion") print top "=" unq(val)
			next
		}
		if (ind(line) == 2) {
			key = line; sub(/^ */, "", key); val = key; sub(/:.*/, "", key); sub(/^[^:]*:/, "", val)
			if (top == "metadata" && (key == "name" || key == "namespace")) print key "=" unq(val)
			if (top == "spec") {
				if (key == "valuesContent") { invals = 1; vind = -1; printf "" > vfile; next }
				if (key ~ /^(chart|version|repo|targetNamespace|createNamespace)$/) print key "=" unq(val)
			}
		}
	}
	END {
		if (aff == "pending") aff = "empty"
		print "affinity=" aff
		t = ""; for (i = 1; i <= nt; i++) t = t (t == "" ? "" : ",") terms[i] "=" vals[i]
		print "affinityTerms=" t
		print "nodeSelector=" nsel
	}' "$1"
}

srv_val() {
	sed -n "s/^$1=//p" "$2" | head -n 1
}

# The k3s deploy controller: pick up new or changed HelmChart manifests.
srv_manifests() {
	for f in "$SIM_MANIFESTS"/*.yaml "$SIM_MANIFESTS"/*.yml; do
		[ -f "$f" ] || continue
		ck=$(md5sum <"$f")
		if [ -f "$SIM_RUN/manifest.$(basename "$f")" ] && [ "$(cat "$SIM_RUN/manifest.$(basename "$f")")" = "$ck" ]; then
			continue
		fi
		echo "$ck" >"$SIM_RUN/manifest.$(basename "$f")"
		tmpv=$SIM_RUN/values.$$
		srv_parse_helmchart "$f" "$tmpv" >"$SIM_RUN/parsed.$$"
		if [ "$(srv_val kind "$SIM_RUN/parsed.$$")" != HelmChart ]; then
			srv_log info "SIMULATION: ignoring manifest $f (only HelmChart manifests are simulated)"
			rm -f "$SIM_RUN/parsed.$$" "$tmpv"
			continue
		fi
		name=$(srv_val name "$SIM_RUN/parsed.$$")
		hd=$SIM_STATE/helm/$name
		if [ -f "$hd/cksum" ] && [ "$(cat "$hd/cksum")" = "$ck" ] && [ "$(cat "$hd/phase" 2>/dev/null)" != uninstalled ]; then
			rm -f "$SIM_RUN/parsed.$$" "$tmpv"
			continue
		fi
		mkdir -p "$hd"
		mv -f "$SIM_RUN/parsed.$$" "$hd/vals"
		if [ -f "$tmpv" ]; then mv -f "$tmpv" "$hd/values.yaml"; else : >"$hd/values.yaml"; fi
		echo "$ck" >"$hd/cksum"
		srv_log info "Applying HelmChart kube-system/$name from $f"
		srv_helmchart_object "$name"
		srv_helm_job_start "$name"
	done
	# A manifest removed from the directory takes its chart away with it.
	for hd in "$SIM_STATE/helm"/*; do
		[ -d "$hd" ] || continue
		name=$(basename "$hd")
		found=""
		for f in "$SIM_MANIFESTS"/*.yaml "$SIM_MANIFESTS"/*.yml; do
			[ -f "$f" ] || continue
			[ "$(srv_parse_helmchart "$f" /dev/null | sed -n 's/^name=//p')" = "$name" ] && found=1 && break
		done
		[ -n "$found" ] && continue
		srv_log info "HelmChart manifest for $name removed: uninstalling"
		sim_helm_uninstall "$name"
		rm -f "$(sim_obj helmcharts kube-system "$name")"
		rm -rf "$hd"
	done
}

srv_helmchart_object() {
	hd=$SIM_STATE/helm/$1
	v=$hd/vals
	f=$(sim_obj helmcharts kube-system "$1")
	uid=$($JQ -r '.metadata.uid // empty' "$f" 2>/dev/null)
	$JQ -n --arg name "$1" --arg uid "${uid:-$(sim_uid)}" --arg ts "$(sim_ts)" \
		--arg chart "$(srv_val chart "$v")" --arg repo "$(srv_val repo "$v")" \
		--arg version "$(srv_val version "$v")" --arg tns "$(srv_val targetNamespace "$v")" \
		--arg cns "$(srv_val createNamespace "$v")" --rawfile values "$hd/values.yaml" '
		{apiVersion: "helm.cattle.io/v1", kind: "HelmChart",
		 metadata: {name: $name, namespace: "kube-system", uid: $uid, resourceVersion: "1",
		            creationTimestamp: $ts, generation: 1,
		            finalizers: ["wrangler.cattle.io/on-helm-chart-remove"]},
		 spec: ({chart: $chart}
		        + (if $repo != "" then {repo: $repo} else {} end)
		        + (if $version != "" then {version: $version} else {} end)
		        + (if $tns != "" then {targetNamespace: $tns} else {} end)
		        + (if $cns == "true" then {createNamespace: true} else {} end)
		        + (if $values != "" then {valuesContent: ($values | sub("\n+$"; ""))} else {} end)),
		 status: {jobName: "helm-install-\($name)",
		          conditions: [{type: "JobCreated", status: "True", reason: "Job created", message: "Applying HelmChart using Job kube-system/helm-install-\($name)"}]}}' |
		sim_write "$f"
}

# SIM_HELM_DELAY after the job's pod starts, it finishes. The helm-install
# job's pod has restartPolicy OnFailure (as in the k3s Helm controller): a
# failed install restarts the same pod after an exponential back-off, its
# restartCount grows and the Job stays active.
srv_helm_job_start() {
	hd=$SIM_STATE/helm/$1
	job=helm-install-$1
	jf=$(sim_obj jobs kube-system "$job")
	pod=$(cat "$hd/job_pod" 2>/dev/null)
	if [ "$(cat "$hd/phase" 2>/dev/null)" = retry ] && [ -n "$pod" ] && [ -f "$(sim_obj pods kube-system "$pod")" ]; then
		echo installing >"$hd/phase"
		sim_now >"$hd/t_attempt"
		srv_pod_status kube-system "$pod" running "" "" "$(cat "$hd/failed")"
		return 0
	fi
	# New chart or changed manifest: a new job and pod.
	[ -z "$pod" ] || sim_delete_pod kube-system "$pod"
	echo installing >"$hd/phase"
	sim_now >"$hd/t_attempt"
	echo 0 >"$hd/failed"
	juid=$($JQ -r '.metadata.uid // empty' "$jf" 2>/dev/null)
	[ -n "$juid" ] || juid=$(sim_uid)
	echo "$juid" >"$hd/job_uid"
	srv_helm_job_object "$1" 1 0
	pod=$job-$(sim_suffix)
	echo "$pod" >"$hd/job_pod"
	mkdir -p "$SIM_LOGS/kube-system"
	srv_managed_pod kube-system "$pod" helm "$1" | sim_write "$(sim_obj pods kube-system "$pod")"
	srv_pod_status kube-system "$pod" running "" "" 0
}

# srv_helm_job_object CHART ACTIVE SUCCEEDED
srv_helm_job_object() {
	hd=$SIM_STATE/helm/$1
	$JQ -n --arg name "helm-install-$1" --arg uid "$(cat "$hd/job_uid")" --arg ts "$(sim_ts)" \
		--argjson active "$2" --argjson ok "$3" --arg chart "$1" --arg jobimage "$SIM_HELM_JOB_IMAGE" '
		{apiVersion: "batch/v1", kind: "Job",
		 metadata: {name: $name, namespace: "kube-system", uid: $uid, resourceVersion: "1",
		            creationTimestamp: $ts, generation: 1,
		            labels: {"helmcharts.helm.cattle.io/chart": $chart, "objectset.rio.cattle.io/hash": "0"},
		            ownerReferences: [{apiVersion: "helm.cattle.io/v1", kind: "HelmChart", name: $chart,
		                               controller: true, blockOwnerDeletion: true}]},
		 spec: {backoffLimit: 1000, completions: 1, parallelism: 1, completionMode: "NonIndexed",
		        template: {metadata: {labels: {"helmcharts.helm.cattle.io/chart": $chart, "job-name": $name}},
		                   spec: {serviceAccountName: "helm-\($chart)", restartPolicy: "OnFailure",
		                          containers: [{name: "helm", image: $jobimage,
		                                        args: ["install"]}]}}},
		 status: ({startTime: $ts}
		          + (if $active > 0 then {active: $active} else {} end)
		          + (if $ok > 0 then {succeeded: $ok, completionTime: $ts,
		                 conditions: [{type: "SuccessCriteriaMet", status: "True", lastProbeTime: $ts, lastTransitionTime: $ts},
		                              {type: "Complete", status: "True", lastProbeTime: $ts, lastTransitionTime: $ts}]}
		             else {} end)
		          + {ready: 0, terminating: 0, uncountedTerminatedPods: {}})}' |
		sim_write "$(sim_obj jobs kube-system "helm-install-$1")"
}

srv_helm() {
	hd=$SIM_STATE/helm/$1
	phase=$(cat "$hd/phase" 2>/dev/null)
	case $phase in
	installing) srv_helm_installing "$1" ;;
	retry) sim_after "$(cat "$hd/t_attempt")" "$(cat "$hd/backoff")" && srv_helm_job_start "$1" ;;
	installed) srv_plugin "$1" ;;
	esac
}

# The chart the job installs, as klipper-helm's entry script gets it: a URL
# (the placeholder %{KUBERNETES_API}% replaced by the API's in-cluster
# address; k3s serves server/static/ there) is downloaded, a name is looked
# up in REPO. Prints name=, version=, appVersion= lines of its Chart.yaml, or
# fails with helm's error on stdout. SIM_CHART_INSTALL_FAIL=1 makes the
# chart's server fail (the repository unreachable, a static chart a 500).
srv_chart_fetch() {
	chart=$1 repo=$2 version=$3
	api=10.43.0.1:443
	case $chart in
	http://* | https://*)
		url=$(printf '%s' "$chart" | sed "s|%{KUBERNETES_API}%|$api|g")
		case $url in
		https://$api/static/*)
			file=$SIM_DATA_DIR/server/static/${url#https://"$api"/static/}
			if [ "$(sim_switch SIM_CHART_INSTALL_FAIL)" = 1 ]; then
				echo "Error: INSTALLATION FAILED: failed to fetch $url : 500 Internal Server Error"
				return 1
			fi
			if [ ! -f "$file" ]; then
				echo "Error: INSTALLATION FAILED: failed to fetch $url : 404 Not Found"
				return 1
			fi
			top=$(tar -tzf "$file" 2>/dev/null | head -n 1)
			top=${top%%/*}
			if ! tar -xzOf "$file" "$top/Chart.yaml" >"$SIM_RUN/chart.$$" 2>/dev/null; then
				rm -f "$SIM_RUN/chart.$$"
				echo "Error: INSTALLATION FAILED: file '$url' does not appear to be a gzipped archive; got 'application/octet-stream'"
				return 1
			fi
			sed -nE 's/^(name|version|appVersion): *"?([^"]*)"?$/\1=\2/p' "$SIM_RUN/chart.$$"
			rm -f "$SIM_RUN/chart.$$"
			;;
		*)
			host=${url#*://}
			host=${host%%/*}
			if [ "$(sim_switch SIM_NETWORK)" != online ]; then
				echo "Error: INSTALLATION FAILED: Get \"$url\": dial tcp: lookup $host on 10.43.0.10:53: server misbehaving"
				return 1
			fi
			base=$(basename "$url" .tgz)
			printf 'name=%s\nversion=%s\nappVersion=%s\n' "${base%-*}" "${base##*-}" "${base##*-}"
			;;
		esac
		;;
	*)
		if [ -n "$repo" ] && { [ "$(sim_switch SIM_NETWORK)" != online ] || [ "$(sim_switch SIM_CHART_INSTALL_FAIL)" = 1 ]; }; then
			host=${repo#*://}
			host=${host%%/*}
			echo "Error: INSTALLATION FAILED: looks like \"$repo\" is not a valid chart repository or cannot be reached: Get \"$repo/index.yaml\": dial tcp: lookup $host on 10.43.0.10:53: server misbehaving"
			return 1
		fi
		printf 'name=%s\nversion=%s\nappVersion=%s\n' "$chart" "${version:-0.0.0}" "${version:-0.0.0}"
		;;
	esac
}

srv_helm_installing() {
	hd=$SIM_STATE/helm/$1
	pod=$(cat "$hd/job_pod")
	# The job's pod needs k3s's klipper-helm image, like any pod.
	if ! img_ready kube-system "$pod"; then
		sim_now >"$hd/t_attempt"
		return 0
	fi
	[ "$($JQ -r '.status.containerStatuses[0].state.running // empty | length' "$(sim_obj pods kube-system "$pod")")" ] ||
		srv_pod_status kube-system "$pod" running "" "" "$(cat "$hd/failed")"
	sim_after "$(cat "$hd/t_attempt")" "${SIM_HELM_DELAY:-1}" || return 0
	v=$hd/vals
	chart=$(srv_val chart "$v")
	repo=$(srv_val repo "$v")
	version=$(srv_val version "$v")
	tns=$(srv_val targetNamespace "$v")
	[ -n "$tns" ] || tns=kube-system
	cns=$(srv_val createNamespace "$v")
	log=$SIM_LOGS/kube-system/$pod.log
	{
		echo "+ export HELM_HOST=127.0.0.1:44134"
		case $chart in
		http://* | https://*) echo "chart path is a url, skipping repo update" ;;
		*) echo "+ helm_v3 repo update" ;;
		esac
		echo "+ echo 'Installing helm_v3 chart'"
		echo "+ helm_v3 install --namespace $tns${cns:+ --create-namespace}${repo:+ --repo $repo}${version:+ --version $version} $1 $chart --values /config/values-01_HelmChart.yaml"
	} >"$log"
	err=""
	if ! srv_chart_fetch "$chart" "$repo" "$version" >"$hd/chart"; then
		err=$(cat "$hd/chart")
		: >"$hd/chart"
	fi
	chart_name=$(srv_val name "$hd/chart")
	version=$(srv_val version "$hd/chart")
	if [ -n "$err" ]; then
		:
	elif [ "$chart_name" = nvidia-device-plugin ] && [ "$tns" = default ] &&
		! grep -q '^allowDefaultNamespace: *true' "$hd/values.yaml"; then
		err="Error: INSTALLATION FAILED: execution error at (nvidia-device-plugin/templates/validation.yml:22:4): 
Running in the 'default' namespace is not recommended.
Set 'allowDefaultNamespace=true' to bypass this error.
Otherwise, use --namespace (with --create-namespace as necessary) to run in a specific namespace.
See: https://helm.sh/docs/helm/helm_install/#options"
	elif [ "$cns" != true ] && [ ! -f "$(sim_obj namespaces "" "$tns")" ]; then
		err="Error: INSTALLATION FAILED: create: failed to create: namespaces \"$tns\" not found"
	fi
	if [ -n "$err" ]; then
		printf '%s\n' "$err" >>"$log"
		failed=$(($(cat "$hd/failed") + 1))
		echo "$failed" >"$hd/failed"
		srv_pod_status kube-system "$pod" crashloop 1 Error "$failed"
		# Back-off doubles from SIM_HELM_DELAY, capped at 30 s (real: 10 s .. 6 min).
		awk -v d="${SIM_HELM_DELAY:-1}" -v n="$failed" 'BEGIN { b = d * 2 ^ (n - 1); if (b > 30) b = 30; print b }' >"$hd/backoff"
		echo retry >"$hd/phase"
		srv_log error "SIMULATION: helm-install-$1 failed (attempt $failed)"
		return 0
	fi
	{
		echo "NAME: $1"
		echo "LAST DEPLOYED: $(date -u '+%a %b %e %H:%M:%S %Y')"
		echo "NAMESPACE: $tns"
		echo "STATUS: deployed"
		echo "REVISION: 1"
		echo "TEST SUITE: None"
	} >>"$log"
	nsf=$(sim_obj namespaces "" "$tns")
	[ -f "$nsf" ] || srv_namespace "$tns" | sim_write "$nsf"
	srv_pod_status kube-system "$pod" terminated 0 Completed "$(cat "$hd/failed")"
	srv_helm_job_object "$1" 0 1
	echo installed >"$hd/phase"
	if [ "$chart_name" = nvidia-device-plugin ]; then
		echo "$tns" >"$hd/ds_ns"
		sim_uid >"$hd/ds_uid"
		rm -f "$hd/ds_sig" "$hd/plugin_pod"
		srv_log info "SIMULATION: rendered DaemonSet $tns/$1 of chart $chart ${version:-latest}"
	else
		srv_log info "SIMULATION: chart ${chart_name:-$chart} is not simulated: release installed without objects"
	fi
}

# Does the node satisfy the chart's effective affinity and nodeSelector?
srv_plugin_schedulable() {
	v=$1
	labels=",$(srv_node_labels),"
	case $(srv_val affinity "$v") in
	null) terms="" ;;
	set) terms=$(srv_val affinityTerms "$v") ;;
	# Absent, or {} (Helm merges an empty map into the default, which stays):
	# the chart's default affinity, which needs labels that NFD would set.
	*) terms="feature.node.kubernetes.io/pci-10de.present=true,feature.node.kubernetes.io/cpu-model.vendor_id=NVIDIA,nvidia.com/gpu.present=true" ;;
	esac
	if [ -n "$terms" ]; then
		ok=""
		for t in $(printf '%s' "$terms" | tr ',' ' '); do
			case $t in
			*=) case $labels in *",${t}"*) ok=1 ;; esac ;;
			*) case $labels in *",$t,"*) ok=1 ;; esac ;;
			esac
		done
		[ -n "$ok" ] || return 1
	fi
	for t in $(srv_val nodeSelector "$v" | tr ',' ' '); do
		case $labels in *",$t,"*) ;; *) return 1 ;; esac
	done
	return 0
}

# The DaemonSet controller and kubelet for the device plugin.
srv_plugin() {
	hd=$SIM_STATE/helm/$1
	[ -f "$hd/ds_ns" ] || return 0
	ns=$(cat "$hd/ds_ns")
	dsf=$(sim_obj daemonsets "$ns" "$1")
	v=$hd/vals
	rc=$(srv_val runtimeClassName "$v")
	desired=0 current=0 ready=0
	pod=$(cat "$hd/plugin_pod" 2>/dev/null)
	if srv_plugin_schedulable "$v"; then
		desired=1
		if [ -n "$rc" ] && [ ! -f "$(sim_obj runtimeclasses "" "$rc")" ]; then
			# The RuntimeClass admission plugin rejects the pod; the
			# DaemonSet keeps trying (FailedCreate events).
			[ -z "$pod" ] || sim_delete_pod "$ns" "$pod"
			pod=""
			rm -f "$hd/plugin_pod" "$SIM_RUN/gpu-registered"
		else
			current=1
			srv_plugin_pod "$1" "$ns" && ready=1
		fi
	elif [ -n "$pod" ]; then
		sim_delete_pod "$ns" "$pod"
		rm -f "$hd/plugin_pod" "$SIM_RUN/gpu-registered"
	fi
	sig="$desired $current $ready"
	if [ -f "$dsf" ] && [ "$(cat "$hd/ds_sig" 2>/dev/null)" = "$sig" ]; then
		return 0
	fi
	# A DaemonSet deleted by hand stays deleted (Helm does not reconcile).
	if [ ! -f "$dsf" ] && [ -f "$hd/ds_sig" ]; then
		return 0
	fi
	echo "$sig" >"$hd/ds_sig"
	case $(srv_val affinity "$v") in
	null) aff=null ;;
	set) aff=$(srv_val affinityTerms "$v" | $JQ -Rc 'split(",") | map(split("=") | {matchExpressions: [{key: .[0], operator: "In", values: [.[1]]}]}) | {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: .}}}') ;;
	*) aff='{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"feature.node.kubernetes.io/pci-10de.present","operator":"In","values":["true"]}]},{"matchExpressions":[{"key":"feature.node.kubernetes.io/cpu-model.vendor_id","operator":"In","values":["NVIDIA"]}]},{"matchExpressions":[{"key":"nvidia.com/gpu.present","operator":"In","values":["true"]}]}]}}}' ;;
	esac
	$JQ -n --arg name "$1" --arg ns "$ns" --arg uid "$(cat "$hd/ds_uid")" --arg ts "$(sim_ts)" \
		--arg ver "$(srv_val version "$hd/chart")" --arg app "$(srv_val appVersion "$hd/chart")" \
		--arg rc "$rc" --argjson aff "$aff" \
		--argjson d "$desired" --argjson c "$current" --argjson r "$ready" '
		{"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": $name} as $sel
		| {apiVersion: "apps/v1", kind: "DaemonSet",
		   metadata: {name: $name, namespace: $ns, uid: $uid, resourceVersion: "1", generation: 1,
		              creationTimestamp: $ts,
		              annotations: {"deprecated.daemonset.template.generation": "1",
		                            "meta.helm.sh/release-name": $name, "meta.helm.sh/release-namespace": $ns},
		              labels: ({"helm.sh/chart": "nvidia-device-plugin-\($ver)"} + $sel
		                       + {"app.kubernetes.io/version": $ver, "app.kubernetes.io/managed-by": "Helm"})},
		   spec: {revisionHistoryLimit: 10, selector: {matchLabels: $sel},
		          updateStrategy: {type: "RollingUpdate", rollingUpdate: {maxSurge: 0, maxUnavailable: 1}},
		          template: {metadata: {labels: $sel},
		                     spec: ({priorityClassName: "system-node-critical",
		                             serviceAccountName: "\($name)-service-account",
		                             containers: [{name: "nvidia-device-plugin-ctr",
		                                           image: "nvcr.io/nvidia/k8s-device-plugin:v\($app)",
		                                           command: ["nvidia-device-plugin"],
		                                           env: [{name: "MPS_ROOT", value: "/run/nvidia/mps"},
		                                                 {name: "NVIDIA_VISIBLE_DEVICES", value: "all"},
		                                                 {name: "NVIDIA_DRIVER_CAPABILITIES", value: "compute,utility"}]}],
		                             tolerations: [{key: "CriticalAddonsOnly", operator: "Exists"},
		                                           {key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule"}]}
		                            + (if $rc != "" then {runtimeClassName: $rc} else {} end)
		                            + (if $aff != null then {affinity: $aff} else {} end))}},
		   status: ({currentNumberScheduled: $c, desiredNumberScheduled: $d, numberMisscheduled: 0,
		             numberReady: $r, observedGeneration: 1}
		            + (if $c > 0 then {updatedNumberScheduled: $c} else {} end)
		            + (if $r > 0 then {numberAvailable: $r} else {} end)
		            + (if $d - $r > 0 then {numberUnavailable: ($d - $r)} else {} end))}' |
		sim_write "$dsf"
}

# srv_plugin_pod CHART NS: run the plugin pod's life; true when it is ready.
srv_plugin_pod() {
	hd=$SIM_STATE/helm/$1
	pod=$(cat "$hd/plugin_pod" 2>/dev/null)
	st=$SIM_RUN/plugin-$1.state
	if [ -z "$pod" ] || [ ! -f "$(sim_obj pods "$2" "$pod")" ]; then
		pod=nvidia-device-plugin-$(sim_suffix)
		echo "$pod" >"$hd/plugin_pod"
		echo 0 >"$hd/restarts"
		srv_managed_pod "$2" "$pod" plugin "$1" | sim_write "$(sim_obj pods "$2" "$pod")"
		rm -f "$st"
	fi
	if [ ! -f "$st" ]; then
		# New pod, or k3s restarted: the container starts (again).
		[ -f "$SIM_LOGS/$2/$pod.log" ] && echo $(($(cat "$hd/restarts") + 1)) >"$hd/restarts"
		echo "starting $(sim_now)" >"$st"
		srv_pod_status "$2" "$pod" creating "" "" ""
		return 1
	fi
	read -r state since <"$st"
	crash=$(sim_switch SIM_PLUGIN_CRASHLOOP)
	case $state in
	starting)
		img_ready "$2" "$pod" || { echo "starting $(sim_now)" >"$st"; return 1; }
		sim_after "$since" "${SIM_PLUGIN_DELAY:-0.5}" || return 1
		mkdir -p "$SIM_LOGS/$2"
		srv_plugin_log "$1" >"$SIM_LOGS/$2/$pod.log"
		if [ "$crash" = 1 ]; then
			srv_plugin_crash_log >>"$SIM_LOGS/$2/$pod.log"
			echo "crash $(sim_now)" >"$st"
			rm -f "$SIM_RUN/gpu-registered"
			srv_pod_status "$2" "$pod" crashloop 1 Error "$(cat "$hd/restarts")"
			return 1
		fi
		srv_plugin_register >>"$SIM_LOGS/$2/$pod.log"
		echo "running $(sim_now)" >"$st"
		srv_pod_status "$2" "$pod" running "" "" "$(cat "$hd/restarts")"
		return 0
		;;
	running)
		if [ "$crash" = 1 ]; then
			echo "starting $(sim_now)" >"$st"
			echo $(($(cat "$hd/restarts") + 1)) >"$hd/restarts"
			rm -f "$SIM_RUN/gpu-registered"
			return 1
		fi
		return 0
		;;
	crash)
		if sim_after "$since" "${SIM_CRASHLOOP_PERIOD:-1}"; then
			echo $(($(cat "$hd/restarts") + 1)) >"$hd/restarts"
			echo "starting $(sim_now)" >"$st"
		fi
		return 1
		;;
	esac
	return 1
}

srv_klog() {
	# klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
	SRV_KLOG_N=$((${SRV_KLOG_N:-0} + 1))
	us=$(awk -v t="$(sim_now)" -v n="$SRV_KLOG_N" 'BEGIN { printf "%06d", (int(t * 100) % 100) * 10000 + n * 137 % 10000 }')
	printf '%s%s %s.%s       1 %s] %s\n' "$1" "$(date -u +%m%d)" "$(date -u +%H:%M:%S)" "$us" "$2" "$3"
}

srv_plugin_log() {
	srv_klog I main.go:235 '"Starting NVIDIA Device Plugin" version=<SIMULATION>'
	srv_klog I main.go:238 "Starting FS watcher for /var/lib/kubelet/device-plugins"
	srv_klog I main.go:245 "Starting OS watcher."
	srv_klog I main.go:260 "Starting Plugins."
	srv_klog I main.go:317 "Loading configuration."
	srv_klog I main.go:342 "Updating config with default resource matching patterns."
	srv_klog I main.go:356 "Retrieving plugins."
}

srv_plugin_crash_log() {
	srv_klog W factory.go:31 "No valid resources detected, creating a null CDI handler"
	srv_klog I factory.go:104 "Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
	srv_klog I factory.go:104 "Detected non-Tegra platform: /sys/devices/soc0/family file not found"
	srv_klog E factory.go:112 "Incompatible strategy detected auto"
	srv_klog E factory.go:113 "If this is a GPU node, did you configure the NVIDIA Container Toolkit?"
	srv_klog E factory.go:114 "You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites"
	srv_klog E factory.go:115 "You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start"
	srv_klog E factory.go:116 "If this is not a GPU node, you should set up a toleration or nodeSelector to only deploy this plugin on GPU nodes"
	srv_klog E main.go:177 "error starting plugins: error creating plugin manager: unable to create plugin manager: invalid device discovery strategy"
}

# Register with the kubelet: the GPUs are the /dev/nvidiaN devices of this
# container, identified (as the plugin's default deviceIDStrategy=uuid does)
# by UUID when the driver's nvidia-smi can tell them.
srv_plugin_register() {
	n=0
	for d in "$SIM_DEV_DIR"/nvidia[0-9]*; do
		[ -e "$d" ] && n=$((n + 1))
	done
	uuids=""
	if [ "$n" -gt 0 ] && command -v nvidia-smi >/dev/null 2>&1; then
		uuids=$(NVIDIA_VISIBLE_DEVICES=all nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -n "$n")
	fi
	if [ "$(printf '%s\n' "$uuids" | grep -c .)" != "$n" ]; then
		uuids=$(awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) print i }')
	fi
	if [ "$n" -gt 0 ]; then printf '%s\n' "$uuids"; else printf ''; fi >"$SIM_RUN/gpu-registered"
	srv_klog I main.go:369 "Starting GRPC server for 'nvidia.com/gpu'"
	srv_klog I server.go:146 "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock"
	srv_klog I server.go:154 "Registered device plugin for 'nvidia.com/gpu' with Kubelet"
}

# srv_managed_pod NS NAME helm|plugin CHART: the pod object a controller creates.
srv_managed_pod() {
	hd=$SIM_STATE/helm/$4
	if [ "$3" = helm ]; then
		$JQ -n --arg ns "$1" --arg name "$2" --arg uid "$(sim_uid)" --arg ts "$(sim_ts)" \
			--arg chart "$4" --arg juid "$(cat "$hd/job_uid")" --arg node "$SRV_NODE" \
			--arg jobimage "$SIM_HELM_JOB_IMAGE" '
			{apiVersion: "v1", kind: "Pod",
			 metadata: {name: $name, generateName: "helm-install-\($chart)-", namespace: $ns, uid: $uid,
			            resourceVersion: "1", creationTimestamp: $ts,
			            labels: {"batch.kubernetes.io/controller-uid": $juid, "batch.kubernetes.io/job-name": "helm-install-\($chart)",
			                     "controller-uid": $juid, "helmcharts.helm.cattle.io/chart": $chart,
			                     "job-name": "helm-install-\($chart)"},
			            ownerReferences: [{apiVersion: "batch/v1", kind: "Job", name: "helm-install-\($chart)",
			                               uid: $juid, controller: true, blockOwnerDeletion: true}]},
			 spec: {nodeName: $node, restartPolicy: "OnFailure", serviceAccountName: "helm-\($chart)",
			        containers: [{name: "helm", image: $jobimage, args: ["install"],
			                      resources: {}}]},
			 status: {phase: "Pending", qosClass: "BestEffort"}}'
	else
		v=$hd/vals
		$JQ -n --arg ns "$1" --arg name "$2" --arg uid "$(sim_uid)" --arg ts "$(sim_ts)" \
			--arg chart "$4" --arg dsuid "$(cat "$hd/ds_uid")" --arg node "$SRV_NODE" \
			--arg rc "$(srv_val runtimeClassName "$v")" --arg app "$(srv_val appVersion "$hd/chart")" '
			{apiVersion: "v1", kind: "Pod",
			 metadata: {name: $name, generateName: "\($chart)-", namespace: $ns, uid: $uid,
			            resourceVersion: "1", creationTimestamp: $ts,
			            labels: {"app.kubernetes.io/instance": $chart, "app.kubernetes.io/name": "nvidia-device-plugin",
			                     "controller-revision-hash": "5c7b8d9f6d", "pod-template-generation": "1"},
			            ownerReferences: [{apiVersion: "apps/v1", kind: "DaemonSet", name: $chart, uid: $dsuid,
			                               controller: true, blockOwnerDeletion: true}]},
			 spec: ({nodeName: $node, restartPolicy: "Always", priorityClassName: "system-node-critical",
			         serviceAccountName: "\($chart)-service-account",
			         containers: [{name: "nvidia-device-plugin-ctr", image: "nvcr.io/nvidia/k8s-device-plugin:v\($app)",
			                       command: ["nvidia-device-plugin"], resources: {}}]}
			        + (if $rc != "" then {runtimeClassName: $rc} else {} end)),
			 status: {phase: "Pending", qosClass: "BestEffort"}}'
	fi
}

# srv_pod_status NS NAME MODE CODE REASON RESTARTS [MESSAGE]
# MODE: unschedulable | creating | waiting (REASON, MESSAGE: a pull failure)
#       | running | terminated | crashloop | backoff
srv_pod_status() {
	f=$(sim_obj pods "$1" "$2")
	[ -f "$f" ] || return 0
	$JQ --arg mode "$3" --arg code "$4" --arg reason "$5" --arg restarts "${6:-0}" \
		--arg msg "${7:-}" --arg ts "$(sim_ts)" --arg node "$SRV_NODE" --arg ip "$SRV_IP" \
		--arg cid "containerd://$(srv_hex 32)" '
		def c($t; $s): {type: $t, status: $s, lastProbeTime: null, lastTransitionTime: $ts};
		.status.containerStatuses[0] as $prev
		| ($restarts | tonumber) as $rc
		| (.spec.containers[0]) as $c
		| {name: $c.name, image: $c.image, imageID: "", restartCount: $rc,
		   containerID: ($prev.containerID // $cid), started: false, ready: false} as $base
		| if $mode == "unschedulable" then
		    .status = {phase: "Pending", qosClass: .status.qosClass,
		               conditions: [c("PodScheduled"; "False") + {reason: "Unschedulable", message: $msg}]}
		  else
		    .spec.nodeName = $node
		    | .status.hostIP = $ip | .status.hostIPs = [{ip: $ip}]
		    | .status.podIP = "10.42.0.\(((.metadata.uid | explode | add) % 200) + 10)"
		    | .status.podIPs = [{ip: .status.podIP}]
		    | .status.startTime = (.status.startTime // $ts)
		    | if $mode == "creating" then
		        .status.phase = "Pending"
		        | .status.conditions = [c("PodReadyToStartContainers"; "False"), c("Initialized"; "True"),
		            c("Ready"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("ContainersReady"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("PodScheduled"; "True")]
		        | .status.containerStatuses = [$base + {containerID: null, state: {waiting: {reason: "ContainerCreating"}}, lastState: {}} | del(.containerID)]
		      elif $mode == "waiting" then
		        .status.phase = "Pending"
		        | .status.conditions = [c("PodReadyToStartContainers"; "True"), c("Initialized"; "True"),
		            c("Ready"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("ContainersReady"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("PodScheduled"; "True")]
		        | .status.containerStatuses = [$base + {state: {waiting: {reason: $reason, message: $msg}}, lastState: {}} | del(.containerID)]
		      elif $mode == "running" then
		        .status.phase = "Running"
		        | .status.conditions = [c("PodReadyToStartContainers"; "True"), c("Initialized"; "True"),
		            c("Ready"; "True"), c("ContainersReady"; "True"), c("PodScheduled"; "True")]
		        | .status.containerStatuses = [$base + {containerID: $cid, started: true, ready: true,
		            state: {running: {startedAt: $ts}}, lastState: ($prev.lastState // {})}]
		      elif $mode == "terminated" then
		        (if $code == "0" then "Succeeded" else "Failed" end) as $ph
		        | .status.phase = (if .spec.restartPolicy == "Never" or ($code == "0" and .spec.restartPolicy == "OnFailure") then $ph else "Running" end)
		        | .status.conditions = [c("PodReadyToStartContainers"; "False"), c("Initialized"; "True"),
		            c("Ready"; "False") + {reason: (if $ph == "Succeeded" then "PodCompleted" else "PodFailed" end)},
		            c("ContainersReady"; "False") + {reason: (if $ph == "Succeeded" then "PodCompleted" else "PodFailed" end)},
		            c("PodScheduled"; "True")]
		        | .status.containerStatuses = [$base + {
		            state: {terminated: ({exitCode: ($code | tonumber), reason: $reason,
		                                  startedAt: ($prev.state.running.startedAt // $ts), finishedAt: $ts,
		                                  containerID: ($prev.containerID // $cid)}
		                                 + (if $msg != "" then {message: $msg} else {} end))},
		            lastState: ($prev.lastState // {})}]
		      else
		        # crashloop / backoff: the container exited and waits to be restarted.
		        .status.phase = "Running"
		        | .status.conditions = [c("PodReadyToStartContainers"; "True"), c("Initialized"; "True"),
		            c("Ready"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("ContainersReady"; "False") + {reason: "ContainersNotReady", message: "containers with unready status: [\($c.name)]"},
		            c("PodScheduled"; "True")]
		        | .status.containerStatuses = [$base + {
		            state: {waiting: {reason: "CrashLoopBackOff",
		                              message: "back-off 10s restarting failed container=\($c.name) pod=\(.metadata.name)_\(.metadata.namespace)(\(.metadata.uid))"}},
		            lastState: {terminated: ({exitCode: ($code | tonumber), reason: $reason, startedAt: $ts, finishedAt: $ts,
		                                      containerID: $cid} + (if $msg != "" then {message: $msg} else {} end))}}]
		      end
		  end' "$f" | sim_write "$f"
}

# ---- user pods: scheduler + kubelet ------------------------------------

srv_gpu_limit() {
	$JQ -r '[.spec.containers[] | .resources.limits["nvidia.com/gpu"] // .resources.requests["nvidia.com/gpu"] // "0" | tostring | tonumber] | add // 0' "$1"
}

# GPUs registered and not allocated to a live pod, one per line.
srv_free_gpus() {
	[ -f "$SIM_RUN/gpu-registered" ] || return 0
	used=$(cat "$SIM_STATE/alloc"/*/* 2>/dev/null | tr ' ' '\n')
	awk -v used="$used" 'BEGIN { n = split(used, a, "\n"); for (i = 1; i <= n; i++) if (a[i] != "") u[a[i]] = 1 }
		$0 != "" && !($0 in u)' "$SIM_RUN/gpu-registered"
}

srv_pod() {
	ns=$1 name=$2
	psf=$SIM_STATE/podstate/$ns/$name
	f=$(sim_obj pods "$ns" "$name")
	if [ ! -f "$f" ]; then
		rm -f "$psf"
		return 0
	fi
	read -r state since <"$psf"
	case $state in
	new | unsched) srv_schedule "$ns" "$name" "$f" "$state" ;;
	running) srv_check_exit "$ns" "$name" "$f" ;;
	pulling) srv_start_pod "$ns" "$name" "$f" ;;
	backoff)
		if sim_after "$since" "${SIM_POD_BACKOFF:-1}"; then
			mv -f "$SIM_LOGS/$ns/$name.log" "$SIM_LOGS/$ns/$name.log.prev" 2>/dev/null
			srv_start_pod "$ns" "$name" "$f"
		fi
		;;
	esac
}

srv_unschedulable() {
	if [ "$4" != unsched ] || [ "$(cat "$SIM_RUN/unsched.$1_$2" 2>/dev/null)" != "$5" ]; then
		srv_pod_status "$1" "$2" unschedulable "" "" 0 "$5"
		echo "$5" >"$SIM_RUN/unsched.$1_$2"
		echo unsched >"$SIM_STATE/podstate/$1/$2"
	fi
}

srv_schedule() {
	ns=$1 name=$2 f=$3
	pressure=$(sim_switch SIM_NODE_PRESSURE)
	if [ -n "$pressure" ]; then
		key=node.kubernetes.io/$pressure-pressure
		if ! $JQ -e --arg k "$key" 'any(.spec.tolerations[]?; (.key == $k or (.key == null and .operator == "Exists")) and ((.effect // "NoSchedule") == "NoSchedule"))' "$f" >/dev/null; then
			srv_unschedulable "$ns" "$name" "$f" "$4" "0/1 nodes are available: 1 node(s) had untolerated taint {$key: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
			return 0
		fi
	fi
	want=$(srv_gpu_limit "$f")
	alloc=""
	if [ "$want" -gt 0 ]; then
		free=$(srv_free_gpus)
		have=$(printf '%s\n' "$free" | grep -c . || true)
		if [ "$have" -lt "$want" ]; then
			srv_unschedulable "$ns" "$name" "$f" "$4" "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
			return 0
		fi
		alloc=$(printf '%s\n' "$free" | head -n "$want" | tr '\n' ' ')
		mkdir -p "$SIM_STATE/alloc/$ns"
		echo "$alloc" >"$SIM_STATE/alloc/$ns/$name"
	fi
	rm -f "$SIM_RUN/unsched.${ns}_$name"
	srv_start_pod "$ns" "$name" "$f"
}

# Run the pod's first container: its command + args as a process group in
# this container (SIMULATION: no image, no isolation; the container's own
# tools, including the hook-injected nvidia-smi, answer).
srv_start_pod() {
	ns=$1 name=$2 f=$3
	mkdir -p "$SIM_LOGS/$ns" "$SIM_RUN/pods"
	if ! img_ready "$ns" "$name"; then
		echo "pulling $(sim_now)" >"$SIM_STATE/podstate/$ns/$name"
		return 0
	fi
	base=$SIM_RUN/pods/${ns}_$name
	rm -f "$base.exit" "$base.pid"
	gpus=""
	[ -f "$SIM_STATE/alloc/$ns/$name" ] && gpus=$(tr -s ' ' ',' <"$SIM_STATE/alloc/$ns/$name" | sed 's/,$//')
	handler=""
	rcn=$($JQ -r '.spec.runtimeClassName // ""' "$f")
	[ -n "$rcn" ] && handler=$($JQ -r '.handler // ""' "$(sim_obj runtimeclasses "" "$rcn")" 2>/dev/null)
	# What the NVIDIA runtime would expose: the device plugin's allocation
	# (NVIDIA_VISIBLE_DEVICES), or the pod's own NVIDIA_VISIBLE_DEVICES; with
	# runc (no nvidia handler) or neither, no GPU and no nvidia-smi.
	$JQ -r --arg gpus "$gpus" --arg handler "$handler" --arg name "$name" --arg log "$SIM_LOGS/$ns/$name.log" \
		--arg exitf "$base.exit" '
		.spec.containers[0] as $c
		| ([$c.env[]? | select(.name | test("^[A-Za-z_][A-Za-z0-9_]*$")) | select(.value != null)]) as $env
		| (($c.command // []) + ($c.args // [])) as $argv
		| (if $handler != "nvidia" then "void"
		   elif $gpus != "" then $gpus
		   else ([$env[] | select(.name == "NVIDIA_VISIBLE_DEVICES") | .value] | last // "void") end) as $vis
		| "# SIMULATION: pod container process (k3s stand-in)",
		  "exec </dev/null >>\($log | @sh) 2>&1",
		  "cd \(($c.workingDir // "/") | @sh) 2>/dev/null || cd /",
		  "export HOSTNAME=\($name | @sh)",
		  ($env[] | "export \(.name)=\(.value | @sh)"),
		  "export NVIDIA_VISIBLE_DEVICES=\($vis | @sh)",
		  (if ($argv | length) == 0 then
		     "# no command: SIMULATION runs an idle container (the image entrypoint is unknown)",
		     "while :; do sleep 3600; done"
		   else
		     "set -- \($argv | map(@sh) | join(" "))",
		     "case $1 in */*) [ -x \"$1\" ] ;; *) command -v \"$1\" >/dev/null 2>&1 ;; esac || { echo startfail >\($exitf | @sh).tmp; mv -f \($exitf | @sh).tmp \($exitf | @sh); exit 0; }",
		     (if $vis == "void" then "case ${1##*/} in nvidia-smi) echo startfail >\($exitf | @sh).tmp; mv -f \($exitf | @sh).tmp \($exitf | @sh); exit 0 ;; esac" else empty end),
		     "\"$@\"",
		     "echo $? >\($exitf | @sh).tmp; mv -f \($exitf | @sh).tmp \($exitf | @sh)"
		   end)' "$f" >"$base.sh"
	setsid sh "$base.sh" &
	echo $! >"$base.pid"
	restarts=$($JQ -r '.status.containerStatuses[0].restartCount // 0' "$f")
	srv_pod_status "$ns" "$name" running "" "" "$restarts"
	echo running >"$SIM_STATE/podstate/$ns/$name"
}

srv_check_exit() {
	ns=$1 name=$2 f=$3
	base=$SIM_RUN/pods/${ns}_$name
	if [ -f "$base.exit" ]; then
		code=$(cat "$base.exit")
	elif [ -f "$base.pid" ] && kill -0 "$(cat "$base.pid")" 2>/dev/null; then
		return 0
	elif [ -f "$base.pid" ]; then
		code=137 # killed without recording its status
	else
		code=255 # k3s restarted while the container ran
	fi
	rm -f "$base.pid" "$base.exit"
	restarts=$($JQ -r '.status.containerStatuses[0].restartCount // 0' "$f")
	policy=$($JQ -r '.spec.restartPolicy // "Always"' "$f")
	msg=""
	if [ "$code" = startfail ]; then
		cmd0=$($JQ -r '(.spec.containers[0].command // []) + (.spec.containers[0].args // []) | .[0]' "$f")
		msg="failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"$cmd0\": executable file not found in \$PATH: unknown"
		code=128 reason=StartError
	elif [ "$code" = 0 ]; then
		reason=Completed
	else
		reason=Error
	fi
	if [ "$policy" = Always ] || { [ "$policy" = OnFailure ] && [ "$code" != 0 ]; }; then
		srv_pod_status "$ns" "$name" crashloop "$code" "$reason" $((restarts + 1)) "$msg"
		echo "backoff $(sim_now)" >"$SIM_STATE/podstate/$ns/$name"
		return 0
	fi
	srv_pod_status "$ns" "$name" terminated "$code" "$reason" "$restarts" "$msg"
	rm -f "$SIM_STATE/alloc/$ns/$name"
	echo "done" >"$SIM_STATE/podstate/$ns/$name"
}
