#!/usr/bin/env bats
# `openshell gateway verify`: seven checks, each of which fails when its
# piece of the GPU chain is broken, and skipped as not applicable (never pass)
# without --gpu.

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 2
	openshell -q gateway start --gpu --name vg --image "$IMAGE" --port "$(free_port)" >/dev/null
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

# A gateway container made by hand, as openshell never would, once its
# API answers: NAME, docker run's options up to --, then k3s's arguments.
hand_made() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	docker run -d --privileged --cgroupns private --network none --name "openshell-cluster-$name" \
		--hostname "openshell-$name" --label org.openshell.managed-by=openshell \
		--label "org.openshell.gateway=$name" --env GPU_ENABLED=true "${opts[@]}" \
		"$IMAGE" server --disable=traefik "$@" >/dev/null
	eventually gw_kubectl "$name" get --raw /readyz
}

# bats test_tags=lane
@test "verify passes all seven checks on a GPU gateway" {
	run --separate-stderr openshell -v gateway verify --name vg
	assert_success
	# Under --gpus all too, the host's GPUs are the driver's list in the
	# gateway (the toolkit's tmpfs, if still there, lists them all): no
	# container of their own.
	[[ "$stderr" != *"docker run "* ]]
	assert_line --regexp '^  PASS  device-request  legacy --gpus: driver=nvidia count=all capabilities=utility,compute,gpu; the gateway sees GPU-[0-9a-f-]+(, GPU-[0-9a-f-]+)*: exactly --gpus all$'
	assert_line '  PASS  runtime-class   RuntimeClass nvidia, handler nvidia; containerd runs it with /usr/bin/nvidia-container-runtime'
	assert_line --regexp '^  PASS  device-plugin   DaemonSet nvidia-device-plugin/nvidia-device-plugin: 1/1 pods ready$'
	assert_line "  PASS  allocatable     node allocatable nvidia.com/gpu = $(sim_gpu_count)"
	assert_line --regexp '^  PASS  smoke-pod       pod openshell-verify-[0-9a-f]+ Succeeded: GPU 0: .*\(UUID: GPU-'
	assert_line --regexp '^  PASS  pod-isolation   pod openshell-verify-[0-9a-f]+-nogpu, no GPU asked, NVIDIA_VISIBLE_DEVICES=all: sees none \('
	# Privileged, and still its one GPU: containerd gives it no host devices (the image's drop-in).
	assert_line --regexp '^  PASS  privileged-pod  privileged pod openshell-verify-[0-9a-f]+-privileged Succeeded: GPU 0: .*\(UUID: GPU-'
	assert_line '7 passed, 0 failed'
}

# bats test_tags=lane
@test "verify --json is one object with every check's status and evidence" {
	run --separate-stderr openshell gateway verify --name vg --json
	assert_success
	doc=$output
	run jq -r '[.name, .counts.pass, .counts.fail, .counts.skip, (.checks | length), ([.checks[].status] | unique | join(","))] | @tsv' <<<"$doc"
	assert_output "$(printf 'vg\t7\t0\t0\t7\tpass')"
	assert_schema verify "$doc"
}

# verify_pods_are NAME PHASES: verify's pods in gateway NAME, by phase.
verify_pods_are() {
	local pods
	pods=$(gw_kubectl "$1" get pods --namespace default -o json) || return 1
	[ "$(jq -r '[.items[] | select(.metadata.name | startswith("openshell-verify-")) | .status.phase] | join(",")' <<<"$pods")" = "$2" ]
}

# bats test_tags=lane
@test "verify's pods are deleted afterwards, and kept with --keep" {
	# The delete is detached (the user waits for none of it): it lands
	# shortly after verify returns, not before.
	eventually verify_pods_are vg ""
	run --separate-stderr openshell gateway verify --name vg --keep
	assert_success
	verify_pods_are vg Succeeded,Succeeded,Succeeded
}

@test "pods the API refuses fail their checks, each with the API's own line, and nothing is left" {
	# k3s writes RuntimeClass nvidia once; its admission plugin then refuses
	# every pod that names it (plugin/pkg/admission/runtimeclass).
	suite_teardown() {
		gw_kubectl vg apply -f - >/dev/null \
			<<<'{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"nvidia"},"handler":"nvidia"}'
	}
	gw_kubectl vg delete runtimeclass nvidia >/dev/null
	run --separate-stderr openshell gateway verify --name vg
	assert_failure 8
	assert_line '  FAIL  runtime-class   RuntimeClass nvidia not found, though k3s applied its runtimes.yaml: it was deleted since (restart the gateway to apply it again)'
	refused='is forbidden: pod rejected: RuntimeClass "nvidia" not found$'
	assert_line --regexp "^  FAIL  smoke-pod       kubectl create of verify's pods failed: Error from server \(Forbidden\): error when creating \"STDIN\": pods \"openshell-verify-[0-9a-f]+\" $refused"
	assert_line --regexp "^  FAIL  pod-isolation   kubectl create of verify's pods failed: Error from server \(Forbidden\): error when creating \"STDIN\": pods \"openshell-verify-[0-9a-f]+-nogpu\" $refused"
	assert_line --regexp "^  FAIL  privileged-pod  kubectl create of verify's pods failed: Error from server \(Forbidden\): error when creating \"STDIN\": pods \"openshell-verify-[0-9a-f]+-privileged\" $refused"
	pod=$(sed -n 's/^  FAIL  smoke-pod .*pods "\(openshell-verify-[0-9a-f]*\)".*/\1/p' <<<"$output")
	run gw_kubectl vg get pods "$pod" "$pod-nogpu" "$pod-privileged" --namespace default --ignore-not-found -o name
	assert_success
	assert_output ''
}

@test "a smoke pod that cannot schedule fails with the scheduler's condition" {
	# Every GPU of the host held by another pod leaves none for the smoke test.
	# Its image is the bundled smoke image: the gateway has no network.
	smoke=$(sed -n 's/^SMOKE_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	hog='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"hog","namespace":"default"},"spec":{"restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"hog","image":"'$smoke'","command":["sleep","600"],"resources":{"limits":{"nvidia.com/gpu":"'$(sim_gpu_count)'"}}}]}}'
	gw_kubectl vg apply -f - <<<"$hog"
	run --separate-stderr openshell gateway verify --name vg --timeout 8s
	assert_failure 8
	assert_line --regexp '^  FAIL  smoke-pod       pod openshell-verify-[0-9a-f]+ Pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu\.'
	assert_line --regexp '^  FAIL  privileged-pod  pod openshell-verify-[0-9a-f]+-privileged Pending: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu\.'
	assert_line '5 passed, 2 failed'
	gw_kubectl vg delete pod hog --namespace default >/dev/null
}

runc_pod_running() {
	[[ $(gw_kubectl vg get pod params --namespace default -o jsonpath='{.status.phase}') == Running ]]
}

@test "a runc pod, privileged too, reads ModifyDeviceFiles 0: the image's base spec runs the toolkit's hook" {
	# A pod's procfs is its own: beneath the hook's bind it has the
	# kernel's params, which a privileged pod can uncover.
	smoke=$(sed -n 's/^SMOKE_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"params","namespace":"default"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'$smoke'","command":["sh","-c","grep ^ModifyDeviceFiles /proc/driver/nvidia/params; sleep 600"],"securityContext":{"privileged":true}}]}}'
	gw_kubectl vg apply -f - <<<"$pod" >/dev/null
	eventually runc_pod_running
	run gw_kubectl vg logs params --namespace default
	assert_output 'ModifyDeviceFiles: 0'
	run gw_kubectl vg exec params --namespace default -- sh -c 'umount /proc/driver/nvidia/params && grep ^ModifyDeviceFiles /proc/driver/nvidia/params'
	assert_success
	assert_output 'ModifyDeviceFiles: 1'
	gw_kubectl vg delete pod params --namespace default --wait=false >/dev/null
}

@test "a crash-looping device plugin fails the device-plugin check with its logs" {
	sim_only "needs the stand-in's crash-loop switch"
	background_start --gpu --name vc --image openshell-cluster:sim-plugin-crashloop --port "$(free_port)"
	eventually plugin_crashlooping vc
	stop_background_start
	run --separate-stderr openshell gateway verify --name vc
	assert_failure 8
	assert_line --regexp '^  FAIL  device-plugin   DaemonSet nvidia-device-plugin/nvidia-device-plugin: 0/1 pods ready$'
	assert_output --partial 'could not load NVML library'
	assert_line '  SKIP  smoke-pod       not run: no allocatable GPU'
	# A gateway left crash-looping would hold CPU for the rest of the file.
	openshell -q gateway destroy --name vc --yes
}

@test "a plugin that dies after registering its GPUs: allocatable 0 is the kubelet counting none healthy" {
	sim_only "needs the stand-in's crash-loop switch"
	sw=/var/lib/rancher/k3s/sim/switches/SIM_PLUGIN_CRASHLOOP
	suite_teardown() {
		docker exec openshell-cluster-vg rm -f "$sw"
		eventually node_allocatable_is vg "$(sim_gpu_count)"
	}
	docker exec openshell-cluster-vg sh -c "mkdir -p ${sw%/*} && echo 1 >$sw"
	eventually node_allocatable_is vg 0
	run --separate-stderr openshell gateway verify --name vg
	assert_failure 8
	assert_line --regexp '^  FAIL  device-plugin   DaemonSet nvidia-device-plugin/nvidia-device-plugin: 0/1 pods ready$'
	assert_line '  FAIL  allocatable     node allocatable nvidia.com/gpu = 0: the device plugin registered its GPUs, and the kubelet now counts none healthy: the plugin stopped serving them or found them unhealthy (its log says which)'
	assert_line '  SKIP  smoke-pod       not run: no allocatable GPU'
}

@test "a GPU the plugin marked unhealthy (Xid 79): start warns, status counts it, verify fails" {
	sim_only "needs the stand-in's Xid switch"
	sw=/var/lib/rancher/k3s/sim/switches/SIM_GPU_XID
	suite_teardown() {
		# A new plugin pod sees the GPU healthy again.
		docker exec openshell-cluster-vg sh -c "rm -f $sw; for p in \$(kubectl get pods -n nvidia-device-plugin -o name); do kubectl delete -n nvidia-device-plugin \$p; done" >/dev/null
		eventually node_allocatable_is vg "$(sim_gpu_count)"
	}
	docker exec openshell-cluster-vg sh -c "mkdir -p ${sw%/*} && echo 0 >$sw"
	eventually node_allocatable_is vg "$(($(sim_gpu_count) - 1))"
	run --separate-stderr openshell gateway start --gpu --name vg
	assert_success
	[[ "$stderr" == *"openshell: warning: 1 of the node's $(sim_gpu_count) nvidia.com/gpu devices is unhealthy: the device plugin marked it (its log names the Xid error or the lost device); 'openshell gateway verify' fails while any is"* ]]
	run --separate-stderr openshell gateway status --name vg
	assert_line "  GPUs:        requested; $(($(sim_gpu_count) - 1)) allocatable (nvidia.com/gpu), 1 unhealthy"
	run jq -r '"\(.gpus_allocatable) \(.gpus_capacity)"' <<<"$(openshell gateway status --name vg --json)"
	assert_output "$(($(sim_gpu_count) - 1)) $(sim_gpu_count)"
	run --separate-stderr openshell gateway verify --name vg
	assert_failure 8
	assert_line "  FAIL  allocatable     node allocatable nvidia.com/gpu = $(($(sim_gpu_count) - 1)): 1 of the node's $(sim_gpu_count) nvidia.com/gpu devices is unhealthy: the device plugin marked it (its log names the Xid error or the lost device)"
	# The smoke pod still runs on a healthy one.
	assert_line --regexp '^  PASS  smoke-pod       '
	# With every GPU unhealthy the start waits for one, then says why it has none.
	docker exec openshell-cluster-vg sh -c "echo $(seq -s, 0 $(($(sim_gpu_count) - 1))) >$sw"
	eventually node_allocatable_is vg 0
	run --separate-stderr openshell gateway start --gpu --name vg --timeout 10s
	assert_failure 4
	[[ "$stderr" == *"waiting for GPUs: the node's allocatable nvidia.com/gpu is 0: the device plugin registered its GPUs, and the kubelet now counts none healthy: the plugin stopped serving them or found them unhealthy (its log says which)"* ]]
	[[ "$stderr" == *"XidCriticalError: Xid=79"* ]]   # the plugin's log
}

@test "a gateway without --gpu reports every check as skipped, not applicable, and exits 9" {
	openshell -q gateway start --name vn --image "$IMAGE" --port "$(free_port)" >/dev/null
	run --separate-stderr openshell gateway verify --name vn
	assert_failure 9
	run grep -c '^  SKIP  [a-z-]* *not applicable: the gateway was started without --gpu$' <<<"$output"
	assert_output 7
	refute_output --partial PASS
	run --separate-stderr openshell gateway verify --name vn --json
	assert_failure 9
	doc=$output
	run jq -r '[.counts.skip, .counts.pass, ([.checks[].status] | unique | join(","))] | @tsv' <<<"$doc"
	assert_output "$(printf '7\t0\tskip')"
	assert_schema verify "$doc"
	openshell -q gateway destroy --name vn --yes
}

@test "verify of an unknown gateway exits 5" {
	run --separate-stderr openshell gateway verify --name nosuch
	assert_failure 5
	[ "$stderr" = "openshell: error: no gateway named 'nosuch' (see 'openshell gateway list')" ]
}

@test "verify of a gateway whose k3s API does not answer fails the cluster checks, with that reason" {
	sim_only "needs the stand-in's never-ready switch"
	background_start --gpu --name vr --image openshell-cluster:sim-never-ready --port "$(free_port)"
	eventually docker exec openshell-cluster-vr true
	stop_background_start
	# An API that does not come up: no longer than the --timeout (one
	# that answers 503 is waited for).
	run --separate-stderr openshell gateway verify --name vr --timeout 3s
	assert_failure 8
	assert_line '  FAIL  runtime-class   the k3s API does not answer (kubectl get --raw /readyz)'
	assert_line '  SKIP  smoke-pod       not run: the k3s API does not answer'
	assert_line '  SKIP  pod-isolation   not run: the k3s API does not answer'
	# Its looks cut short by the --timeout, as on a slow host: still no
	# answer, which /readyz explains, not a timeout of its own.
	run --separate-stderr openshell gateway verify --name vr --timeout 10ms
	assert_failure 8
	assert_line '  FAIL  runtime-class   the k3s API does not answer (kubectl get --raw /readyz)'
	refute_line --partial 'PASS  device-request'
	assert_line --regexp '^  SKIP  device-request .*not looked at: the --timeout ran out before the gateway.s GPUs were read$'
	openshell -q gateway destroy --name vr --yes
}

@test "verify waits out k3s's API server answering 503 while it starts, within its --timeout" {
	sim_only "needs the stand-in's switches"
	# The next requests get k3s's 503 "apiserver not ready", as in a
	# cluster's first seconds: the get is tried again until one answers.
	docker exec openshell-cluster-vg sh -c 'echo 12 >/var/lib/rancher/k3s/sim/switches/SIM_API_FLAKY'
	run --separate-stderr openshell -v gateway verify --name vg
	assert_success
	assert_line '7 passed, 0 failed'
	[ "$(grep -c ' get nodes,daemonsets,runtimeclasses,helmchartconfigs,addons.k3s.cattle.io ' <<<"$stderr")" -ge 2 ]
}

@test "verify's first looks meeting k3s's API server still starting (503) are made again" {
	# The race of a verify right after start --no-wait: kubectl's discovery
	# is answered 503 for the pods' create and for the cluster get, and
	# the API runs by the time /readyz is asked (kubectl's lines as a
	# clean-clone check saw them; the create's look still runs).
	export FAKE_DIR=$BATS_TEST_TMPDIR REAL_DOCKER FAKE_MADE=
	REAL_DOCKER=$(command -v docker)
	cat >"$BATS_TEST_TMPDIR/docker" <<-'SH'
	#!/bin/bash
	said='E1207 02:05:22.907089     251 memcache.go:265] "Unhandled Error" err="couldn\047t get current server API group list: the server is currently unable to handle the request"\n'
	a=()
	for x; do
		if [[ $x == *" create --validate=false "* ]] && mkdir "$FAKE_DIR/create" 2>/dev/null; then
			x="made=$FAKE_MADE; refused() { if [ -n \"\$made\" ]; then kubectl \"\$@\"; else cat; fi >/dev/null; printf '${said}error: unable to recognize \"STDIN\": the server is currently unable to handle the request\n' >&2; return 1; }; ${x/kubectl --request-timeout/refused --request-timeout}"
		elif [[ $x == kubectl && " $* " == *" get nodes,daemonsets,runtimeclasses,helmchartconfigs,addons.k3s.cattle.io "* ]] &&
			mkdir "$FAKE_DIR/get" 2>/dev/null; then
			a+=(sh -c "printf '${said}error: the server doesn\047t have a resource type \"nodes\"\n' >&2; exit 1")
		fi
		a+=("$x")
	done
	exec "$REAL_DOCKER" "${a[@]}"
	SH
	chmod +x "$BATS_TEST_TMPDIR/docker"
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/docker run --separate-stderr openshell gateway verify --name vg
	assert_success
	assert_line '7 passed, 0 failed'
	# Both were refused once, as the test meant.
	[[ -d $BATS_TEST_TMPDIR/create && -d $BATS_TEST_TMPDIR/get ]]
	# The API up between the create's items: what the first create made
	# already exists when it is made again, which is no failure.
	rmdir "$BATS_TEST_TMPDIR/create" "$BATS_TEST_TMPDIR/get"
	FAKE_MADE=1 OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/docker run --separate-stderr openshell gateway verify --name vg
	assert_success
	assert_line '7 passed, 0 failed'
	[[ -d $BATS_TEST_TMPDIR/create ]]
}

@test "verify of a stopped gateway says how to start it" {
	openshell -q gateway start --name vs --image "$IMAGE" --port "$(free_port)" >/dev/null
	docker stop openshell-cluster-vs >/dev/null
	run --separate-stderr openshell gateway verify --name vs
	assert_failure 1
	[[ "$stderr" == "openshell: error: gateway 'vs' is not running (exited); start it with 'openshell gateway start --name vs'" ]]
}

@test "a GPU request without the compute capability fails the device-request check" {
	# Made by hand, as openshell never would: the check must judge the
	# request itself, not only that there is one.
	hand_made dr --gpus 'driver=nvidia,count=all,"capabilities=utility"' --
	run --separate-stderr openshell gateway verify --name dr --timeout 5s
	assert_failure 8
	assert_line '  FAIL  device-request  driver=nvidia count=all capabilities=utility,gpu: capabilities compute missing'
	docker rm -f openshell-cluster-dr >/dev/null
}

@test "a smoke image the gateway does not have fails with the kubelet's pull error" {
	sim_only "the stand-in is offline; a real runner may reach a registry"
	run --separate-stderr openshell gateway verify --name vg --smoke-image busybox:1.36 --timeout 10s
	assert_failure 8
	assert_line --regexp '^  FAIL  smoke-pod       pod openshell-verify-[0-9a-f]+ Pending: (ErrImagePull: rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/busybox:1.36"|ImagePullBackOff: Back-off pulling image "busybox:1.36")'
}

@test "an image without the NVIDIA runtime fails the runtime check, though k3s made the RuntimeClass" {
	sim_only "needs the stand-in image built without the toolkit"
	run --separate-stderr openshell gateway start --gpu --name nt --image openshell-cluster:sim-notoolkit --port "$(free_port)"
	assert_failure 1
	# The start fails before k3s's deploy controller has made the
	# RuntimeClasses: verify waits for them, and ends when they come.
	run --separate-stderr openshell gateway verify --name nt --timeout 120s
	assert_failure 8
	assert_line '  FAIL  runtime-class   RuntimeClass nvidia exists (k3s always makes it), but containerd has no nvidia runtime: the image lacks nvidia-container-runtime (/var/lib/rancher/k3s/agent/etc/containerd/config.toml)'
	assert_line '  SKIP  pod-isolation   not run: containerd has no nvidia runtime'
	# Once applied, a RuntimeClass deleted does not come back by itself.
	gw_kubectl nt delete runtimeclass nvidia >/dev/null
	run --separate-stderr openshell gateway verify --name nt --timeout 120s
	assert_failure 8
	assert_line '  FAIL  runtime-class   RuntimeClass nvidia not found, though k3s applied its runtimes.yaml: it was deleted since (restart the gateway to apply it again)'
	openshell -q gateway destroy --name nt --yes
}

@test "pods refused before k3s made RuntimeClass nvidia are made again once the get finds it" {
	sim_only "needs the stand-in's CRD delay"
	# By hand, as a start --no-wait leaves it, with k3s's own types (and so
	# its deploy controller) late: the pods' create, made before the get,
	# meets the RuntimeClass admission plugin's refusal.
	hand_made rl --gpus 'driver=nvidia,count=all,"capabilities=utility,compute"' --env SIM_K3S_CRD_DELAY=6 --
	run --separate-stderr openshell gateway verify --name rl --timeout 120s
	assert_line '  PASS  runtime-class   RuntimeClass nvidia, handler nvidia; containerd runs it with /usr/bin/nvidia-container-runtime'
	assert_line --regexp '^  PASS  pod-isolation   pod openshell-verify-[0-9a-f]+-nogpu, no GPU asked, NVIDIA_VISIBLE_DEVICES=all: sees none \('
	docker rm -f openshell-cluster-rl >/dev/null
}

@test "a cluster still starting when the --timeout runs out is reported, not an error" {
	sim_only "needs the stand-in's CRD delay"
	hand_made sl --gpus 'driver=nvidia,count=all,"capabilities=utility,compute"' --env SIM_K3S_CRD_DELAY=600 --
	run --separate-stderr openshell gateway verify --name sl --timeout 6s
	assert_failure 8
	assert_line --regexp '^  FAIL  runtime-class   k3s was still starting when the --timeout ran out: .*the server doesn.t have a resource type "(helmchartconfigs|addons)"'
	assert_line '  SKIP  smoke-pod       not run: k3s was still starting'
	docker rm -f openshell-cluster-sl >/dev/null
}

@test "k3s run with --disable=runtimes fails the runtime check at once, naming the flag" {
	# By hand, as openshell never would; k3s then neither stages nor keeps
	# its RuntimeClasses, so waiting for them would wait out the --timeout.
	hand_made dn --gpus all -- --disable runtimes
	run --separate-stderr openshell gateway verify --name dn --timeout 60s
	assert_failure 8
	assert_line '  FAIL  runtime-class   RuntimeClass nvidia not found: k3s runs with --disable=runtimes, which deletes them'
	docker rm -f openshell-cluster-dn >/dev/null
}

@test "a runtime that takes NVIDIA_VISIBLE_DEVICES from any pod fails pod-isolation" {
	# The toolkit's defaults, as an image without openshell's setting has them.
	cfg=/etc/nvidia-container-runtime/config.toml
	suite_teardown() { docker exec openshell-cluster-vg sh -c "[ ! -f $cfg.saved ] || mv $cfg.saved $cfg"; }
	docker exec openshell-cluster-vg sed -i.saved '/^accept-nvidia-visible-devices/d' "$cfg"
	run --separate-stderr openshell gateway verify --name vg
	assert_failure 8
	assert_line --regexp "^  FAIL  pod-isolation   pod openshell-verify-[0-9a-f]+-nogpu asked for no GPU and sees $(sim_gpu_count) through NVIDIA_VISIBLE_DEVICES=all \(GPU 0: .*\): the nvidia runtime takes that variable from unprivileged pods; the gateway's image must set accept-nvidia-visible-devices-envvar-when-unprivileged = false$"
	# A restart puts the setting back: the entrypoint writes it at every start.
	# (verify's pods gone first, which its detached delete would do: a restart would cut that short.)
	gw_kubectl vg delete pods -n default -l app.kubernetes.io/managed-by=openshell >/dev/null
	docker restart openshell-cluster-vg >/dev/null
	openshell -q gateway start --gpu --name vg
	run docker exec openshell-cluster-vg grep -c '^accept-nvidia-visible-devices' "$cfg"
	assert_output 2
	run --separate-stderr openshell gateway verify --name vg
	assert_success
}
