#!/usr/bin/env bats
# `gateway start --gpus all|N|LIST`: which GPUs a gateway gets, checked
# against the Docker host's GPUs before anything is created, shown by
# status and list, and proven by verify, UUID by UUID. On the SIMULATED
# toolkit (unless OPENSHELL_TEST_REAL_HOST=1): three V100 GPUs whose
# device minors are not their indices, and a privileged container gets
# every GPU's node, as on a real host, whatever --gpus selected.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	# GPUs before compute capability 7.5, where MPS serves 16 clients at most.
	gateway_suite_start --gpus 3 --minors 2,0,1 --model "Tesla V100-SXM2-32GB" --memory 32768 --compute-cap 7.0
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

# Gateway $1 runs the plugin with MPS, ready and waiting for a control
# daemon that has failed: its DaemonSet 1/1 ready, the daemon's 0/1.
mps_daemon_broken_settled() {
	local ds pod
	ds=$(gw_kubectl "$1" get ds -n nvidia-device-plugin -o json |
		jq -r '[.items[] | "\(.metadata.name)=\(.status.desiredNumberScheduled)/\(.status.numberReady)"] | sort | join(" ")')
	echo "DaemonSets: $ds" >&2
	[ "$ds" = "nvidia-device-plugin-mps-control-daemon=1/0 nvidia-device-plugin=1/1" ] || return 1
	pod=$(gw_kubectl "$1" get pods -n nvidia-device-plugin -o json |
		jq -r '.items[] | .metadata.name | select(startswith("nvidia-device-plugin-mps-") | not)')
	gw_kubectl "$1" logs -n nvidia-device-plugin "$pod" -c nvidia-device-plugin-ctr |
		grep -q "error waiting for MPS daemon"
}

uuid_of() { # INDEX: the host's GPU of that index
	sim_gpu_uuids | sed -n "$(($1 + 1))p"
}

# In gateway $1, each GPU the driver lists as "UUID MINOR present|absent":
# whether its /dev/nvidiaMINOR is there.
gpu_nodes() {
	# shellcheck disable=SC2016 # expanded by the shell in the container
	docker exec "openshell-cluster-$1" sh -c 'for f in /proc/driver/nvidia/gpus/*/information; do
		u=$(sed -n "s/^GPU UUID:[[:space:]]*//p" "$f"); m=$(sed -n "s/^Device Minor:[[:space:]]*//p" "$f")
		if [ -e "/dev/nvidia$m" ]; then echo "$u $m present"; else echo "$u $m absent"; fi
	done' | sort
}

@test "--gpus 1: the first GPU only, allocatable 1, shown by status, list and --json" {
	run --separate-stderr openshell gateway start --gpus 1 --name one --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 1
	[[ "$stderr" == *"creating gateway 'one' with 1 GPU (the first)"* ]]
	run docker inspect openshell-cluster-one --format '{{json .HostConfig.DeviceRequests}}'
	assert_output '[{"Driver":"nvidia","Count":1,"DeviceIDs":null,"Capabilities":[["utility","compute","gpu"]],"Options":{}}]'
	run --separate-stderr openshell gateway status --name one
	assert_line '  GPUs:        requested (--gpus 1); 1 allocatable (nvidia.com/gpu)'
	run jq -c '[.gpu, .gpus]' <<<"$(openshell gateway status --name one --json)"
	assert_output '[true,{"count":1}]'
	run --separate-stderr openshell gateway list
	assert_line --regexp '^one +running +1 +https://'
}

@test "verify proves the gateway sees exactly the selected GPU, by UUID, and the smoke pod got it" {
	run --separate-stderr openshell -v gateway verify --name one
	assert_success
	assert_line --partial "the gateway sees $(uuid_of 0): exactly --gpus 1"
	assert_line --regexp "PASS  smoke-pod .*\\(UUID: $(uuid_of 0)\\)"
	# The host's GPUs are the driver's list in the gateway: no container of
	# their own. The look rides in the pods' exec, beside their create and
	# before their watch; containerd's config with the cluster's get.
	[[ "$stderr" != *"docker run "* ]]
	run grep -c '^openshell: + ' <<<"$stderr"
	assert_output 4   # inspect, the pods' create, look and watch, the config and the get, the (detached) delete
	[[ "$stderr" == *"docker exec --interactive openshell-cluster-one sh -c "*"{ nvidia-smi -L 2>&1; "*"/proc/driver/nvidia/gpus/"*"} </dev/null & l=\$!; o=\$(kubectl --request-timeout="*"s create --validate=false -f - "*"; wait \$l; "*"kubectl --request-timeout="*"s get pods --namespace default --selector=app.kubernetes.io/instance=openshell-verify-"*" --watch "* ]]
	[[ "$stderr" == *"docker exec openshell-cluster-one sh -c "*"/var/lib/rancher/k3s/agent/etc/containerd/config.toml kubectl --request-timeout="*"s get nodes,daemonsets,"* ]]
}

# In gateway $1, what a toolkit's tmpfs over /proc/driver/nvidia lists:
# GPU $2 alone (libnvidia-container's mount_procfs, as an image without
# gpu-isolate.sh leaves it), or the driver's own list again (no $2).
toolkit_procfs() {
	local bus
	if [ -z "${2:-}" ]; then
		docker exec "openshell-cluster-$1" umount /proc/driver/nvidia
		return
	fi
	# shellcheck disable=SC2016 # expanded by the shell in the container
	bus=$(docker exec "openshell-cluster-$1" sh -c 'grep -l "^GPU UUID:[[:space:]]*$1\$" /proc/driver/nvidia/gpus/*/information' \
		sh "$(uuid_of "$2")" | awk -F/ '{ print $(NF - 1) }')
	[ -n "$bus" ]
	# shellcheck disable=SC2016 # expanded by the shell in the container
	docker exec "openshell-cluster-$1" sh -euc 'd=/proc/driver/nvidia; t=$(mktemp -d)
		cp "$d/params" "$d/version" "$d/registry" "$t/"; mkdir -p "$t/gpus/$1"; cp "$d/gpus/$1/information" "$t/gpus/$1/"
		mount -t tmpfs tmpfs "$d"; cp -r "$t/." "$d/"; rm -rf "$t"' sh "$bus"
}

@test "verify reads the host's GPUs from the driver's list: a wrong list fails the check, a covered one is asked of the host" {
	# The driver's list in the gateway (its entrypoint undid the toolkit's
	# tmpfs) is the judge: where it says GPU 1 comes first, --gpus 1 means
	# GPU 1, which the gateway does not see.
	docker exec openshell-cluster-one sh -euc 'g=/proc/driver/nvidia/gpus; t=$(mktemp -d); cp -r "$g/." "$t/"
		a=$(ls "$t" | sed -n 1p); b=$(ls "$t" | sed -n 2p); mv "$t/$a" "$t/x"; mv "$t/$b" "$t/$a"; mv "$t/x" "$t/$b"
		mount --bind "$t" "$g"'
	run --separate-stderr openshell gateway verify --name one
	docker exec openshell-cluster-one umount /proc/driver/nvidia/gpus
	assert_failure 8
	assert_line --partial "FAIL  device-request  legacy --gpus: driver=nvidia count=1 capabilities=utility,compute,gpu; the gateway sees $(uuid_of 0), but --gpus 1 is $(uuid_of 1) on the Docker host"
	# Under the toolkit's tmpfs the list is the GPUs it gave, not the
	# host's: verify asks the host with a container of its own.
	toolkit_procfs one 0
	run --separate-stderr openshell -v gateway verify --name one
	toolkit_procfs one
	assert_success
	assert_line --partial "the gateway sees $(uuid_of 0): exactly --gpus 1"
	[[ "$stderr" == *"docker run --rm --network=none "*"--label=org.openshell.managed-by=openshell-gpu-probe"* ]]
	run docker ps -aq --filter label=org.openshell.managed-by=openshell-gpu-probe
	assert_output ''
}

@test "--gpus device=1 and --gpus UUID give that GPU alone" {
	run --separate-stderr openshell gateway start --gpus device=1 --name second --image "$IMAGE" --port "$(free_port)"
	assert_success
	run docker exec openshell-cluster-second nvidia-smi --query-gpu=uuid --format=csv,noheader
	assert_output "$(uuid_of 1)"
	run --separate-stderr openshell gateway verify --name second
	assert_success
	assert_line --partial "exactly --gpus device=1"
	run jq -c .gpus <<<"$(openshell gateway status --name second --json)"
	assert_output '{"devices":["1"]}'
	openshell -q gateway destroy --name second --yes
	run --separate-stderr openshell gateway start --gpus "$(uuid_of 1)" --name byuuid --image "$IMAGE" --port "$(free_port)"
	assert_success
	run docker exec openshell-cluster-byuuid nvidia-smi -L
	assert_output --partial "(UUID: $(uuid_of 1))"
	openshell -q gateway destroy --name byuuid --yes
}

@test "--gpus 0,2 in a privileged gateway: the plugin, nvidia-smi and verify see those two alone, after a restart too" {
	# Two of three (GPU 1 hidden); on a 2-GPU host the second alone.
	n=$(sim_gpu_count)
	[ "$n" -ge 2 ] || skip "needs a host with 2 GPUs or more: one GPU cannot show another one hidden"
	if [ "$n" -ge 3 ]; then sel=0,2 keep="0 2" hide=1; else sel=device=1 keep=1 hide=0; fi
	want=$(for i in $keep; do uuid_of "$i"; done)
	run --separate-stderr openshell gateway start --gpus "$sel" --name pick --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" "$(wc -w <<<"$keep")"
	for round in created restarted; do
		run docker exec openshell-cluster-pick nvidia-smi --query-gpu=uuid --format=csv,noheader
		assert_output "$want"
		# Every other GPU's node is gone, found by its device minor.
		run gpu_nodes pick
		for i in $keep; do assert_line --regexp "^$(uuid_of "$i") [0-9]+ present$"; done
		assert_line --regexp "^$(uuid_of "$hide") [0-9]+ absent$"
		run --separate-stderr openshell gateway verify --name pick
		assert_success
		assert_line --partial "exactly --gpus $sel"
		assert_line --regexp "PASS  allocatable +node allocatable nvidia.com/gpu = $(wc -w <<<"$keep")$"
		[ "$round" = created ] || break
		# A restart gives the container every node of the host again.
		docker restart openshell-cluster-pick >/dev/null
		run --separate-stderr openshell gateway start --gpus "$sel" --name pick --json
		assert_success
		assert_equal "$(jq -r .gpus_allocatable <<<"$output")" "$(wc -w <<<"$keep")"
	done
	openshell -q gateway destroy --name pick --yes
}

@test "a selection the host cannot satisfy fails before anything is created, naming the host's GPUs" {
	n=$(sim_gpu_count)
	for sel in $((n + 1)) 0,$((n + 2)) GPU-00000000-dead-beef-0000-000000000000; do
		run --separate-stderr openshell gateway start --gpus "$sel" --name nope --image "$IMAGE"
		assert_failure 1
		[[ "$stderr" == *"openshell: error: --gpus $sel: "* ]]
		[[ "$stderr" == *"the Docker host has $n GPUs: 0 $(uuid_of 0) ("*"), 1 $(uuid_of 1) ("* ]]
		assert_no_gateway_resources nope
	done
	# The probe container is gone too.
	run docker ps -aq --filter label=org.openshell.managed-by=openshell-gpu-probe
	assert_output ''
	# The image here: one inspect of the gateway's name and the image, then the one look, no other call.
	run --separate-stderr openshell -v gateway start --gpus $((n + 1)) --name nope --image "$IMAGE"
	assert_failure 1
	run sed -n 's/^openshell: + [^ ]*docker \([a-z]*\) \([^ ]*\).*/\1 \2/p' <<<"$stderr"
	assert_output "$(printf '%s\n' 'info --format' 'inspect --' 'run --rm')"
}

# The default image's build by a start: from the stand-ins' recipe, with BuildKit.
start_building() {
	OPENSHELL_IMAGE_CONTEXT=$(standin_recipe) OPENSHELL_DOCKER=$(sim_buildkit_docker) \
		run --separate-stderr openshell -v gateway start "$@"
}

@test "with the image to build, a selection the host lacks is refused first, looked at with a cluster image that is here" {
	sim_only "removes the default image, and builds it from the stand-ins' recipe"
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	n=$(sim_gpu_count)
	for sel in $((n + 2)) 0,$((n + 4)) GPU-00000000-dead-beef-0000-000000000000; do
		start_building --gpus "$sel" --name early --port "$(free_port)"
		stderr_of_start=$stderr
		assert_failure 1
		# No build began: none was asked of docker, and the image is still absent.
		run grep -E '^openshell: \+ .*docker (buildx )?build |building image|not here yet: building' <<<"$stderr_of_start"
		assert_output ''
		run docker image inspect "$default"
		assert_failure
		assert_no_gateway_resources early
		[[ "$stderr_of_start" == *"openshell: error: --gpus $sel: "*"; the Docker host has $n GPUs: 0 $(uuid_of 0) ("* ]]
		# The look ran in a container of another cluster image.
		[[ "$stderr_of_start" == *"image $default is not here yet: the Docker host's GPUs are looked at with image openshell-cluster:"* ]]
		grep -E '^openshell: \+ .*docker run --rm --network=none .*--label=org.openshell.managed-by=openshell-gpu-probe openshell-cluster:' <<<"$stderr_of_start"
	done
	# MPS's limits are the GPUs' facts: the same look refuses them.
	start_building --gpus 1 --gpu-sharing mps:17 --name early --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"--gpu-sharing mps:17 is more than GPU $(uuid_of 0) (Tesla V100-SXM2-32GB, compute capability 7.0) serves by MPS"* ]]
	[[ "$stderr" != *"building image"* ]]
	assert_no_gateway_resources early
}

@test "with the image to build, a selection the host has is looked at once, before the build, and the gateway gets its GPU" {
	sim_only "builds the default image from the stand-ins' recipe"
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	start_building --gpus device=1 --name early --port "$(free_port)" --no-wait
	assert_success
	# One look, and before the build.
	probe='^openshell: \+ .*docker run --rm --network=none .*openshell-gpu-probe openshell-cluster:'
	assert_equal "$(grep -c -E "$probe" <<<"$stderr")" 1
	looked=$(grep -n -E "$probe" <<<"$stderr" | cut -d: -f1)
	built=$(grep -n -m1 "^openshell: building image $default" <<<"$stderr" | cut -d: -f1)
	[[ -n $built ]] && ((looked < built))
	run docker inspect openshell-cluster-early --format '{{range .Config.Env}}{{println .}}{{end}}'
	assert_line "OPENSHELL_GPU_UUIDS=$(uuid_of 1)"
	openshell -q gateway destroy --name early --yes
	docker image rm "$default" >/dev/null
}

@test "with the image to get and no cluster image here, the selection waits for it, and the start says so" {
	sim_host_extra --gpus 2
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST run --separate-stderr openshell gateway start --gpus 5 --name late \
		--image openshell-test/nosuch:1
	assert_failure 1
	[[ "$stderr" == *"--gpus 5 is checked against the Docker host's GPUs once image openshell-test/nosuch:1 is here (a container of it lists them)"* ]]
	[[ "$stderr" == *"cannot get image openshell-test/nosuch:1"* ]]
}

@test "--recreate with a selection the host lacks keeps the old gateway" {
	openshell -q gateway start --gpus 1 --name keep --image "$IMAGE" --port "$(free_port)" --no-wait
	before=$(docker inspect openshell-cluster-keep --format '{{.Id}}')
	run --separate-stderr openshell gateway start --gpus "$(($(sim_gpu_count) + 1))" --name keep --image "$IMAGE" --recreate
	assert_failure 1
	[[ "$stderr" == *"more GPUs than the host has"* ]]
	[[ "$stderr" != *"removing gateway"* ]]
	assert_equal "$(docker inspect openshell-cluster-keep --format '{{.Id}}')" "$before"
	openshell -q gateway destroy --name keep --yes
}

@test "bad --gpus values are usage errors, before any docker call" {
	for sel in 0 -1 abc 0,,1 1,1 ''; do
		OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpus "$sel" --name bad
		assert_failure 2
		[[ "$stderr" == "openshell: error: invalid --gpus '$sel': "*"; give all, a count such as 2, or GPU indices or UUIDs"* ]]
		[[ "$stderr" == *"Try 'openshell gateway start --help' for more information."* ]]
	done
	run --separate-stderr openshell gateway start --gpu --gpus 1 --name bad
	assert_failure 2
	[[ "$stderr" == "openshell: error: --gpu means --gpus all, which --gpus 1 contradicts; give one of them"* ]]
}

@test "a kept gateway keeps its GPUs: another selection is refused, the same one reused" {
	run --separate-stderr openshell gateway start --gpus 2 --name one
	assert_failure 6
	[[ "$stderr" == *"gateway 'one' exists with --gpus 1 but --gpus 2 was asked for; rerun with --recreate to rebuild it with --gpus 2"* ]]
	run --separate-stderr openshell gateway start --gpu --name one
	assert_failure 6
	[[ "$stderr" == *"exists with --gpus 1 but --gpus all was asked for"* ]]
	run --separate-stderr openshell gateway start --gpus 1 --name one --json
	assert_success
	assert_equal "$(jq -r .outcome <<<"$output")" running
	# A stopped one says how to resume it, with its own selection.
	openshell -q gateway stop --name one
	run --separate-stderr openshell gateway verify --name one
	[[ "$stderr" == *"start it with 'openshell gateway start --name one --gpus 1'"* ]]
	run --separate-stderr openshell gateway start --gpus 1 --name one
	assert_success
	openshell -q gateway destroy --name one --yes
}

@test "--gpu-sharing time-slicing:N makes allocatable GPUs x N, and pods share a GPU in turns" {
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing time-slicing:3 --name ts --image "$IMAGE" \
		--port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 3
	# Through the Helm controller: a HelmChartConfig over the plugin's HelmChart.
	run gw_kubectl ts get helmchartconfig nvidia-device-plugin -n kube-system -o json
	assert_success
	run jq -r .spec.valuesContent <<<"$output"
	assert_line '  default: openshell'
	assert_line '          - name: nvidia.com/gpu'
	assert_line '            replicas: 3'
	# With a config.map the chart runs its config manager beside the plugin,
	# first: kubectl logs shows the plugin's own log only with -c.
	pod=$(gw_kubectl ts get pods -n nvidia-device-plugin -o json |
		jq -r '.items[] | select(.spec.containers | any(.name == "nvidia-device-plugin-ctr")) | .metadata.name')
	run gw_kubectl ts get pod "$pod" -n nvidia-device-plugin -o json
	assert_equal "$(jq -r '[.spec.containers[].name] | join(" ")' <<<"$output")" "nvidia-device-plugin-sidecar nvidia-device-plugin-ctr"
	run --separate-stderr gw_kubectl ts logs "$pod" -n nvidia-device-plugin
	[[ "$stderr" == *'Defaulted container "nvidia-device-plugin-sidecar" out of: nvidia-device-plugin-sidecar, nvidia-device-plugin-ctr, nvidia-device-plugin-init (init)'* ]]
	# Three pods of one GPU each run on the one GPU: the same UUID.
	smoke=$(docker inspect "$IMAGE" --format '{{index .Config.Labels "org.openshell.smoke-image"}}')
	for i in 1 2 3; do
		gw_kubectl ts apply -f - >/dev/null <<-JSON
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"share$i"},"spec":{"restartPolicy":"Never",
		 "runtimeClassName":"nvidia","containers":[{"name":"c","image":"$smoke","command":["nvidia-smi","-L"],
		 "resources":{"limits":{"nvidia.com/gpu":1}}}]}}
		JSON
	done
	for i in 1 2 3; do
		eventually gw_kubectl_is ts Succeeded get pod "share$i" -o jsonpath='{.status.phase}'
	done
	uuids=$(for i in 1 2 3; do gw_kubectl ts logs "share$i"; done | sed -n 's/.*(UUID: \(.*\))$/\1/p' | sort -u)
	assert_equal "$uuids" "$(uuid_of 0)"
	run --separate-stderr openshell gateway verify --name ts
	assert_success
	assert_line --partial 'node allocatable nvidia.com/gpu = 3: 1 GPU x 3, time-slicing'
}

@test "sharing changes on a running gateway, without a recreate; none undoes it" {
	before=$(docker inspect openshell-cluster-ts --format '{{.Id}}')
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing time-slicing:5 --name ts --json
	assert_success
	assert_equal "$(jq -r '[.outcome, .gpus_allocatable] | join(" ")' <<<"$output")" 'running 5'
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing none --name ts --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 1
	run gw_kubectl ts get helmchartconfig nvidia-device-plugin -n kube-system
	assert_failure
	[ "$(docker inspect openshell-cluster-ts --format '{{.Id}}')" = "$before" ]
	# Without --gpu-sharing a start leaves the sharing as it is.
	openshell -q gateway start --gpus 1 --gpu-sharing time-slicing:2 --name ts
	run --separate-stderr openshell gateway start --gpus 1 --name ts --json
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 2
	openshell -q gateway destroy --name ts --yes
}

@test "--gpu-sharing mps:N labels the node for the chart's MPS daemon; allocatable GPUs x N; back out in place" {
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing mps:2 --name mps --image "$IMAGE" \
		--port "$(free_port)" --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" 2
	run gw_kubectl mps get helmchartconfig nvidia-device-plugin -n kube-system -o json
	run jq -r .spec.valuesContent <<<"$output"
	assert_line '        mps:'
	assert_line '            replicas: 2'
	refute_line --partial 'timeSlicing'
	# GPU Feature Discovery's label, which the chart's MPS daemon needs, set by the gateway.
	run gw_kubectl mps get nodes -o json
	assert_equal "$(jq -r '.items[0].metadata.labels["nvidia.com/mps.capable"]' <<<"$output")" true
	run gw_kubectl mps get daemonset nvidia-device-plugin-mps-control-daemon -n nvidia-device-plugin -o json
	assert_equal "$(jq -r '"\(.status.desiredNumberScheduled) \(.status.numberReady)"' <<<"$output")" "1 1"
	run --separate-stderr openshell gateway verify --name mps
	assert_success
	assert_line --partial 'node allocatable nvidia.com/gpu = 2: 1 GPU x 2, mps (pods share a GPU at once'
	# To time-slicing on the running gateway: the label goes, and the MPS daemon with it.
	before=$(docker inspect openshell-cluster-mps --format '{{.Id}}')
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing time-slicing:3 --name mps --json
	assert_success
	assert_equal "$(jq -r '[.outcome, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$output")" "running 3"
	run gw_kubectl mps get nodes -o json
	assert_equal "$(jq -r '.items[0].metadata.labels["nvidia.com/mps.capable"] // "absent"' <<<"$output")" absent
	eventually gw_kubectl_is mps 0 get ds nvidia-device-plugin-mps-control-daemon -n nvidia-device-plugin \
		-o jsonpath='{.status.desiredNumberScheduled}'
	[ "$(docker inspect openshell-cluster-mps --format '{{.Id}}')" = "$before" ]
}

@test "more MPS clients than a GPU before compute capability 7.5 serves are refused before anything is created" {
	sim_only "needs the sim host's V100s"
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing mps:17 --name old --image "$IMAGE" --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"openshell: error: --gpu-sharing mps:17 is more than GPU $(uuid_of 0) (Tesla V100-SXM2-32GB, compute capability 7.0) serves by MPS: at most 16 clients before compute capability 7.5; give mps:16 or fewer, or time-slicing:N"* ]]
	assert_no_gateway_resources old
}

@test "an MPS control daemon that cannot start: the start's timeout says so" {
	sim_only "needs the stand-in's MPS switch"
	docker exec openshell-cluster-mps sh -c 'echo 1 >/var/lib/rancher/k3s/sim/switches/SIM_MPS_DAEMON_BROKEN'
	# The upgrade to MPS first, to its end: the plugin up and retrying, its
	# daemon crash-looping. A loaded machine may take long to get there.
	background_start --gpus 1 --gpu-sharing mps:2 --name mps
	eventually mps_daemon_broken_settled mps
	stop_background_start
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing mps:2 --name mps --timeout 10s
	assert_failure 4
	# The plugin had registered time-slicing's replicas: the kubelet keeps the resource, at 0.
	[[ "$stderr" == *"waiting for GPUs: the node's allocatable nvidia.com/gpu is 0, not the 2 that --gpu-sharing makes: the MPS control daemon has 0 of 1 pods ready, and the plugin registers the replicas once it is up"* ]]
	[[ "$stderr" == *"error waiting for MPS daemon"* ]]   # the plugin's log
	openshell -q gateway destroy --name mps --yes
}

@test "a k3s that never registers its HelmChartConfig type: --gpu-sharing waits, then says so" {
	sim_only "needs the stand-in's CRD delay"
	# Made first, so that on a loaded machine too the asserting start's
	# deadline comes after k3s has answered the apply at least once.
	openshell -q gateway start --gpus 1 --name crds --image openshell-cluster:sim-crds-late --port "$(free_port)" --no-wait
	run --separate-stderr openshell gateway start --gpus 1 --gpu-sharing time-slicing:2 --name crds --timeout 8s
	assert_failure 4
	[[ "$stderr" == *"error: k3s in gateway container openshell-cluster-crds did not register its HelmChartConfig type in time (kubectl apply): error: resource mapping not found for name: \"nvidia-device-plugin\" namespace: \"kube-system\" from \"STDIN\": no matches for kind \"HelmChartConfig\" in version \"helm.cattle.io/v1\""* ]]
	openshell -q gateway destroy --name crds --yes
}

@test "bad --gpu-sharing values are usage errors" {
	for v in 0 time-slicing:1 time-slicing:0 time-slicing:x time-slicing:-2 time-slicing:99999 spread:2 \
		mps:1 mps:x MPS:2; do
		OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --gpu-sharing "$v" --name bad
		assert_failure 2
		[[ "$stderr" == "openshell: error: invalid --gpu-sharing '$v': give none, time-slicing:N with N from 2 to 1024, or mps:N with N from 2 to 48"* ]]
	done
	# Without a count: DRA's form (each claim asks), named with it.
	for mode in time-slicing mps; do
		OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --gpu-sharing $mode --name bad
		assert_failure 2
		[[ "$stderr" == "openshell: error: --gpu-sharing without a count is for --gpu-allocation dra, where each claim asks for it; NVIDIA's device plugin shares each GPU as a count of replicas: give --gpu-sharing time-slicing:N or mps:N, or add --gpu-allocation dra"* ]]
	done
	# MPS's own limit (the plugin's mps-control-daemon: 48 clients a GPU).
	OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --gpu-sharing mps:49 --name bad
	assert_failure 2
	[[ "$stderr" == "openshell: error: invalid --gpu-sharing 'mps:49': MPS serves at most 48 clients on a GPU (16 before compute capability 7.5); give mps:2 to mps:48"* ]]
	OPENSHELL_DOCKER=/nonexistent run --separate-stderr openshell gateway start --gpu --gpu-sharing mps:2 --mig-strategy mixed --name bad
	assert_failure 2
	[[ "$stderr" == *"--gpu-sharing mps:N cannot go with --mig-strategy mixed"* ]]
	run --separate-stderr openshell gateway start --gpu-sharing time-slicing:2 --name bad
	assert_failure 2
	[[ "$stderr" == *"--gpu-sharing shares GPUs, and none were asked for: add --gpu or --gpus"* ]]
	run --separate-stderr openshell gateway start --gpu --gpu-sharing time-slicing:2 --no-wait --name bad
	assert_failure 2
}

# gateway gpus --json of gateway $1 as "INDEX:HEALTH:SHARING:HOLDERS" a row.
gpu_rows() {
	openshell gateway gpus --name "$1" --json |
		jq -r '.gpus[] | "\(.index):\(.health):\(.sharing.mode)\(.sharing.replicas // ""):\([.holders[] | .pod] | join(","))"'
}

# The UUID the kubelet recorded for pod $2 of gateway $1.
checkpoint_uuid() {
	docker exec "openshell-cluster-$1" cat /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint |
		jq -r --arg uid "$(gw_kubectl "$1" get pod "$2" -o jsonpath='{.metadata.uid}')" \
			'.Data.PodDeviceEntries[] | select(.PodUID == $uid) | .DeviceIDs[][]'
}

@test "gateway gpus: three GPUs, two pods: each pod on its own GPU by UUID, its processes named, the third free; a pod that ended holds none" {
	openshell -q gateway start --gpu --name gv --image "$IMAGE" --port "$(free_port)"
	holding_pod gv p1
	cuda_pod gv p2 512 40
	run --separate-stderr openshell gateway gpus --name gv
	assert_success
	assert_line --index 0 --regexp '^NODE +INDEX +UUID +MODEL +MEMORY +UTIL +SHARING +HEALTH +PODS$'
	assert_equal "${#lines[@]}" 6
	# The UUID each pod's container was given, as the kubelet recorded it,
	# is the row that names it; nvidia-smi's numbering, memory and use: p2
	# uses its GPU.
	uuid1=$(checkpoint_uuid gv p1)
	assert_line --regexp "^openshell-gv +[0-2] +$uuid1 +Tesla V100-SXM2-32GB +1/32768 MiB +0% +exclusive +healthy +default/p1/work\$"
	uuid2=$(checkpoint_uuid gv p2)
	assert_line --regexp "^openshell-gv +[0-2] +$uuid2 +Tesla V100-SXM2-32GB +513/32768 MiB +40% +exclusive +healthy +default/p2/work\$"
	assert_equal "$(grep -c ' free$' <<<"$output")" 1
	# Its process, named by the cgroup the kubelet put it in (its pod's UID
	# and its container's ID, as the node's /proc says).
	json=$(openshell gateway gpus --name gv --json)
	pid=$(jq -r '.processes[0].pid' <<<"$json")
	idx2=$(jq -r --arg u "$uuid2" '.gpus[] | select(.uuid == $u) | .index' <<<"$json")
	run docker exec openshell-cluster-gv cat "/proc/$pid/cgroup"
	assert_output --partial "/kubepods/besteffort/pod$(gw_kubectl gv get pod p2 -o jsonpath='{.metadata.uid}')/$(gw_kubectl gv get pod p2 -o jsonpath='{.status.containerStatuses[0].containerID}' | sed 's|^containerd://||')"
	run --separate-stderr openshell gateway gpus --name gv
	assert_line --index 4 --regexp '^NODE +INDEX +PID +MEMORY +POD$'
	assert_line --index 5 --regexp "^openshell-gv +$idx2 +$pid +512 MiB +default/p2/work\$"
	# status says it in one line, from its one exec.
	run --separate-stderr openshell gateway status --name gv
	assert_line '  GPU use:     3 devices: 2 in use, 1 free'
	run --separate-stderr openshell gateway gpus --name gv --json
	assert_success
	json=$output
	assert_schema gpu_view "$json"
	assert_equal "$(jq -r '[.gpus[].uuid] | sort | join(" ")' <<<"$json")" "$(sim_gpu_uuids | sort | paste -sd' ')"
	assert_equal "$(jq -r '[.gpus[].holders[] | "\(.namespace)/\(.pod)/\(.container)"] | sort | join(" ")' <<<"$json")" \
		"default/p1/work default/p2/work"
	assert_equal "$(jq -c '[.processes[] | [.node, .uuid, .memory_used_mib, .namespace, .pod, .container]]' <<<"$json")" \
		"[[\"openshell-gv\",\"$uuid2\",512,\"default\",\"p2\",\"work\"]]"
	# A process of no pod's (one in the gateway's container itself, which
	# has every GPU) is on every GPU, unnamed.
	docker exec -d openshell-cluster-gv cuda-sim --memory 64 --utilization 10
	three_unnamed() { [ "$(openshell gateway gpus --name gv --json | jq '[.processes[] | select(.pod == null)] | length')" = 3 ]; }
	eventually three_unnamed
	run --separate-stderr openshell gateway gpus --name gv
	assert_equal "$(grep -cE '^openshell-gv +[0-2] +[0-9]+ +64 MiB +-$' <<<"$output")" 3
	assert_line --regexp "^openshell-gv +[0-2] +$uuid2 +.* +577/32768 MiB +50% +exclusive +healthy +default/p2/work\$"
	docker exec openshell-cluster-gv kill "$(openshell gateway gpus --name gv --json | jq -r 'first(.processes[] | select(.pod == null)) | .pid')"
	# p2's process ends with its pod: its GPU's memory is freed.
	gw_kubectl gv delete pod p2 --wait=true >/dev/null
	run --separate-stderr openshell gateway gpus --name gv --json
	assert_equal "$(jq -c '[.processes[]] | length' <<<"$output")" 0
	assert_equal "$(jq -r --arg u "$uuid2" '.gpus[] | select(.uuid == $u) | "\(.memory_used_mib) \(.utilization_percent)"' <<<"$output")" "1 0"
	cuda_pod gv p2 64 5
	# The kubelet keeps an ended pod's entry until its next allocation: only
	# the pods that live hold a GPU.
	gw_kubectl gv delete pod p1 --wait=true >/dev/null
	uid_left=$(docker exec openshell-cluster-gv cat /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint |
		jq '.Data.PodDeviceEntries | length')
	assert_equal "$uid_left" 2
	run gpu_rows gv
	assert_equal "$(grep -c ':$' <<<"$output")" 2
	assert_equal "$(grep -c ':p2$' <<<"$output")" 1
	run jq -c .gpu_use <<<"$(openshell gateway status --name gv --json)"
	assert_output '{"devices":3,"in_use":1,"shared":0,"shared_by":0,"free":2}'
	# The API failing (503, as while it restarts): the GPUs still show, from
	# the node itself, their holders unknown, and why.
	sw=/var/lib/rancher/k3s/sim/switches/SIM_API_FLAKY
	docker exec openshell-cluster-gv sh -c "mkdir -p ${sw%/*} && echo 1000000 >$sw"
	run --separate-stderr openshell gateway gpus --name gv
	docker exec openshell-cluster-gv rm -f "$sw"
	assert_success
	assert_equal "$(grep -cE ' healthy +\?$' <<<"$output")" 3
	# Its process is a pod's by its cgroup, which pod unknown: ?, as the rows' holders.
	assert_line --regexp '^openshell-gv +[0-2] +[0-9]+ +64 MiB +\?$'
	assert_line --regexp '^holders unknown: kubectl get pods,nodes,helmchartconfigs failed \(exit status 1\): .*'
	# A gateway that is not running: said, exit 1.
	openshell -q gateway stop --name gv
	run --separate-stderr openshell gateway gpus --name gv
	assert_failure 1
	assert_equal "$stderr" "openshell: error: gateway 'gv' is not running (exited); start it with 'openshell gateway start --name gv --gpu'"
	openshell -q gateway destroy --name gv --yes
}

gpu0_unhealthy() {
	openshell gateway gpus --name "$1" --json | jq -e '.gpus[0].health == "unhealthy"'
}

@test "gateway gpus: time-slicing with four pods on one GPU; a GPU the plugin marked unhealthy says why" {
	openshell -q gateway start --gpus 1 --gpu-sharing time-slicing:4 --name gt --image "$IMAGE" --port "$(free_port)"
	for p in s1 s2 s3 s4; do holding_pod gt "$p"; done
	run gpu_rows gt
	assert_output '0:healthy:time-slicing4:s1,s2,s3,s4'
	run --separate-stderr openshell gateway status --name gt
	assert_line '  GPU use:     1 device: 1 shared by 4 pods, 0 free'
	run --separate-stderr openshell gateway gpus --name gt
	assert_line --regexp "^openshell-gt +0 +$(uuid_of 0) +.* time-slicing 4 +healthy +default/s1/work,default/s2/work,default/s3/work,default/s4/work\$"
	# Xid 79: the plugin marks the GPU (one of its replicas) unhealthy and
	# logs why; the kubelet counts it unhealthy.
	sw=/var/lib/rancher/k3s/sim/switches/SIM_GPU_XID
	docker exec openshell-cluster-gt sh -c "mkdir -p ${sw%/*} && echo 0 >$sw"
	eventually gpu0_unhealthy gt
	run --separate-stderr openshell gateway gpus --name gt
	assert_success
	assert_line --regexp "^openshell-gt +0 +$(uuid_of 0) +.* time-slicing 4 +unhealthy +default/s1/work,"
	assert_line "openshell-gt $(uuid_of 0): XidCriticalError: Xid=79 on Device=$(uuid_of 0)::3; marking device as unhealthy."
	openshell -q gateway destroy --name gt --yes
}

@test "gateway gpus of a gateway without GPUs says so; --watch looks again until interrupted" {
	openshell -q gateway start --name gn --image "$IMAGE" --port "$(free_port)"
	run --separate-stderr openshell gateway gpus --name gn
	assert_success
	assert_output "gateway 'gn' has no GPUs (start it with --gpu)"
	run --separate-stderr openshell gateway gpus --name gn --json
	assert_success
	json=$output
	assert_equal "$(jq -c .gpus <<<"$json")" '[]'
	assert_schema gpu_view "$json"
	# Not a terminal: a blank line after each look; SIGINT ends it, exit 0.
	# (run-under-test execs openshell: the pid is openshell's.)
	"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" gateway gpus --name gn --watch >"$BATS_TEST_TMPDIR/watch" 2>&1 &
	pid=$!
	eventually sh -c "[ \$(grep -c 'has no GPUs' '$BATS_TEST_TMPDIR/watch') -ge 2 ]"
	kill -INT "$pid"
	wait "$pid"
	openshell -q gateway destroy --name gn --yes
}
