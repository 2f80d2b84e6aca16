#!/usr/bin/env bats
# `openshell gateway start` end to end: a real Docker engine, GPUs from the
# (simulated, unless OPENSHELL_TEST_REAL_HOST=1) NVIDIA toolkit, and the
# cluster image (the k3s stand-in, or the real one on a GPU runner).

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 2
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

# bats test_tags=lane
@test "start --gpu reaches allocatable GPUs equal to the host's count" {
	port=$(free_port)
	run --separate-stderr openshell -v gateway start --gpu --name t1 --image "$IMAGE" --port "$port"
	assert_success
	assert_output --partial "GPUs:        $(sim_gpu_count) allocatable (nvidia.com/gpu)"
	# k3s.yaml comes in the exec of the GPU wait's DaemonSet watch, ahead of
	# kubectl: no docker call of its own.
	[[ "$stderr" == *"openshell /etc/rancher/k3s/k3s.yaml kubectl --request-timeout="*"s get daemonsets "* ]]
	[[ "$stderr" != *" exec openshell-cluster-t1 cat /etc/rancher/k3s/k3s.yaml"* ]]
	# The toolkit is there: nothing said of it.
	[[ "$stderr" != *"NVIDIA Container Toolkit"* ]]
	# -v says the plan before the container is made: the request's GPUs, as decided.
	[[ "$stderr" =~ "openshell: plan: image $IMAGE, API on "[^\ ]+":$port reached at $API_ADDR:$port, node network vxlan, GPUs all by "(--gpus|CDI devices)", allocated by device-plugin, MIG strategy none"$'\n' ]]
	assert_output --partial "API:         https://$API_ADDR:$port"
	# Readiness came from state: the node really advertises them.
	run gw_kubectl t1 get nodes -o jsonpath='{.items[0].status.allocatable.nvidia\.com/gpu}'
	assert_output "$(sim_gpu_count)"
}

@test "k3s's own log line ends the API wait of a new gateway: no /readyz needs to answer" {
	# docker, but every /readyz fails: only the log followed can say the API runs.
	fake_docker_on " get --raw /readyz " 'echo "the test refuses /readyz" >&2; exit 1'
	OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell gateway start --gpu --name lg --image "$IMAGE" \
		--port "$(free_port)" --timeout 3m
	openshell -q gateway destroy --name lg --yes
	assert_success
}

@test "start --json says how long each phase took, and what openshell itself cost" {
	openshell -q gateway start --gpu --name t1 --image "$IMAGE" >/dev/null
	# Now a reused gateway: it passes no image phase, and its facts hold at once.
	run --separate-stderr openshell gateway start --gpu --name t1 --image "$IMAGE" --json
	assert_success
	run jq -r '.phases_ms | keys_unsorted | join(",")' <<<"$output"
	assert_output 'container,api,runtime,device_plugin,allocatable,total'
	run jq -r '(.phases_ms | [.container, .api, .runtime, .device_plugin, .allocatable] | add) == .phases_ms.total' \
		<<<"$(openshell gateway start --gpu --name t1 --image "$IMAGE" --json)"
	assert_output true
	run jq -r '.openshell_usage | (.cpu_ms >= 0) and (.max_rss_kib > 0)' <<<"$(openshell gateway start --gpu --name t1 --image "$IMAGE" --json)"
	assert_output true
	run --separate-stderr openshell -v gateway start --gpu --name t1 --image "$IMAGE"
	[[ "$stderr" =~ "openshell: phases: container "[0-9.]+m?s", api "[0-9.]+m?s", runtime ".*"allocatable ".*"(total " ]]
}

# gateway status of gateway $1 says Health: $2.
health_says() {
	openshell gateway status --name "$1" | grep -qxF "  Health:      $2"
}

@test "a start returns on the facts, not on Docker's next probe; status judges them meanwhile" {
	sim_only "builds an image from the stand-in's"
	# Docker would first probe this image an hour after the start.
	printf 'FROM %s\nHEALTHCHECK --interval=1h --start-period=1h CMD ["/usr/local/bin/cluster-healthcheck.sh"]\n' \
		"$IMAGE" | DOCKER_BUILDKIT=0 docker build -q -t openshell-cluster:sim-slowprobe - >/dev/null
	run --separate-stderr openshell gateway start --gpu --name sp --image openshell-cluster:sim-slowprobe --port "$(free_port)"
	assert_success
	run docker inspect openshell-cluster-sp --format '{{.State.Health.Status}}'
	assert_output starting
	# Start's facts hold, read from status's own get: healthy, and no probe
	# (another exec with two kubectl runs) is run for it.
	run --separate-stderr openshell -v gateway status --name sp
	assert_success
	assert_line "  Health:      healthy: start's checks pass; Docker's first probe is still to come"
	[[ "$stderr" == *" get runtimeclasses,daemonsets,nodes,pods --all-namespaces --output=json"* ]]
	[[ "$stderr" != *cluster-healthcheck.sh* ]]
	run jq -r .health <<<"$(openshell gateway status --name sp --json)"
	assert_output healthy
	# A fact that stops holding has the probe run, and its marker says why;
	# Docker's "starting" stands. The plugin crash-loops:
	sw=/var/lib/rancher/k3s/sim/switches/SIM_PLUGIN_CRASHLOOP
	docker exec openshell-cluster-sp sh -c "mkdir -p ${sw%/*} && echo 1 >$sw"
	# (The node's allocatable may drop before the DaemonSet's status does:
	# the probe names the first fact that fails, in its order.)
	eventually health_says sp 'starting: HEALTHCHECK_FAIL gpu-device-plugin-not-ready desired=1 ready=0'
	# The API answers 503 from now on, as while its API server restarts.
	docker exec openshell-cluster-sp sh -c 'echo 1000000 >/var/lib/rancher/k3s/sim/switches/SIM_API_FLAKY'
	run --separate-stderr openshell gateway status --name sp
	assert_line '  Health:      starting: HEALTHCHECK_FAIL k3s-not-ready'
	openshell -q gateway destroy --name sp --yes
}

# bats test_tags=lane
@test "the GPU container carries the DeviceRequest and GPU_ENABLED=true" {
	run docker inspect openshell-cluster-t1 --format '{{json .HostConfig.DeviceRequests}}'
	assert_output '[{"Driver":"nvidia","Count":-1,"DeviceIDs":null,"Capabilities":[["utility","compute","gpu"]],"Options":{}}]'
	run docker inspect openshell-cluster-t1 --format '{{json .Config.Env}}'
	assert_output --partial '"GPU_ENABLED=true"'
	run docker inspect openshell-cluster-t1 --format '{{.HostConfig.Privileged}} {{.HostConfig.CgroupnsMode}} {{.HostConfig.RestartPolicy.Name}} {{.Config.Hostname}}'
	assert_output 'true private unless-stopped openshell-t1'
	run docker inspect openshell-cluster-t1 --format '{{index .Config.Labels "org.openshell.gateway"}} {{index .Config.Labels "org.openshell.gpu"}} {{index .Config.Labels "org.openshell.managed-by"}}'
	assert_output 't1 true openshell'
	run docker inspect openshell-cluster-t1 --format '{{range $p, $b := .HostConfig.PortBindings}}{{$p}}={{(index $b 0).HostIp}}{{end}}'
	assert_output "6443/tcp=$API_ADDR"
}

# bats test_tags=lane
@test "the kubeconfig is 0600, points at the published port, and keeps k3s' credentials" {
	dir=$XDG_CONFIG_HOME/openshell/gateways/t1
	[ "$(stat -c %a "$dir")" = 700 ]
	[ "$(stat -c %a "$dir/kubeconfig")" = 600 ]
	[ "$(stat -c %a "$dir/metadata.json")" = 600 ]
	port=$(jq -r .port "$dir/metadata.json")
	run grep -E '^ +server: ' "$dir/kubeconfig"
	assert_output "    server: https://$API_ADDR:$port"
	run grep -c 'current-context: openshell-t1' "$dir/kubeconfig"
	assert_output 1
	# The client key is k3s' own, unchanged.
	key=$(docker exec openshell-cluster-t1 cat /etc/rancher/k3s/k3s.yaml | awk '/client-key-data/ {print $2}')
	[ -n "$key" ]
	grep -qF "client-key-data: $key" "$dir/kubeconfig"
	run jq -r '[.name, .container, .image, .gpu, .server, .kubeconfig] | @tsv' "$dir/metadata.json"
	assert_output "$(printf 't1\topenshell-cluster-t1\t%s\ttrue\thttps://%s:%s\t%s' "$IMAGE" "$API_ADDR" "$port" "$dir/kubeconfig")"
}

# bats test_tags=lane
@test "a second start --gpu is a no-op success on the same container" {
	before=$(docker inspect openshell-cluster-t1 --format '{{.Id}}')
	port=$(jq -r .port "$XDG_CONFIG_HOME/openshell/gateways/t1/metadata.json")
	run --separate-stderr openshell gateway start --gpu --name t1 --image "$IMAGE" --port "$port" --json
	assert_success
	[[ "$stderr" == *"gateway 't1' is already running"* ]]
	run jq -c '[.outcome, .gpus_allocatable, .gpu, .gpus, .mig_allocatable, .user_kubeconfig]' <<<"$output"
	assert_output "[\"running\",$(sim_gpu_count),true,{\"all\":true},{},null]"
	[ "$(docker inspect openshell-cluster-t1 --format '{{.Id}}')" = "$before" ]
}

@test "an empty containerd config is one k3s is writing, not one without the nvidia runtime" {
	# k3s rewrites it at every start, truncating it first (os.WriteFile).
	cfg=/var/lib/rancher/k3s/agent/etc/containerd/config.toml
	docker exec openshell-cluster-t1 sh -c "cp $cfg /tmp/config.toml.keep && : >$cfg"
	# Room for the API check and the kubeconfig on a loaded machine: the
	# GPU wait is the one that runs out.
	run --separate-stderr openshell gateway start --gpu --name t1 --timeout 8s
	docker exec openshell-cluster-t1 sh -c "cp /tmp/config.toml.keep $cfg"
	assert_failure 4
	[[ "$stderr" == *"k3s has not written its containerd config yet"* ]]
	run --separate-stderr openshell gateway start --gpu --name t1
	assert_success
}

@test "a GPU wait whose every read of the cluster fails says so, not that an object is missing" {
	# /readyz answers; every watch of the GPU facts gets the API server's 503.
	fake_docker_on " --watch " \
		'echo "Error from server (ServiceUnavailable): the server is currently unable to handle the request" >&2; exit 1'
	OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell gateway start --gpu --name t1 --timeout 8s
	assert_failure 4
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -ge 1 ]
	[[ "$stderr" == *"waiting for GPUs: no read of the cluster's objects succeeded: "*"ServiceUnavailable"* ]]
	[[ "$stderr" != *"RuntimeClass 'nvidia' does not exist"* ]]
}

@test "a kept gateway whose k3s never registers its HelmChart type: a start without --gpu waits, then says so" {
	sim_only "needs the stand-in's CRD delay"
	openshell -q gateway start --name crdl --image openshell-cluster:sim-crds-late --port "$(free_port)"
	# The volume is kept now: this start deletes a GPU run's device plugin through the API.
	# Long enough that, on a loaded machine too, the API check ends and
	# k3s answers at least once before the deadline.
	run --separate-stderr openshell gateway start --name crdl --timeout 10s
	assert_failure 4
	[[ "$stderr" == *"k3s in gateway container openshell-cluster-crdl did not register its HelmChart type in time (kubectl delete): error: the server doesn't have a resource type \"helmchart\""* ]]
}

@test "a --timeout that runs out inside the HelmChart delete: before k3s answered, the --timeout; after, k3s's answer" {
	sim_only "uses the gateway of the test before"
	# docker, but `kubectl delete helmchart,helmchartconfig` hangs after the
	# first $PASS calls, as on an API server that stops answering.
	fake_docker_on " delete helmchart,helmchartconfig " '[ "$n" -lt "$PASS" ] || exec sleep 60'
	# Room for the API check on a loaded machine; the delete hangs to the end.
	PASS=0 OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell gateway start --name crdl --timeout 10s
	assert_failure 4
	[ "${stderr_lines[-1]}" = "openshell: error: the --timeout ran out while kubectl delete of HelmChart ran in gateway container openshell-cluster-crdl" ]
	# k3s said no once; the try after it is cut short: that answer is the news.
	rm "$BATS_TEST_TMPDIR/calls"
	PASS=1 OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell gateway start --name crdl --timeout 10s
	openshell -q gateway destroy --name crdl --yes
	assert_failure 4
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -ge 2 ]
	[[ "$stderr" == *"k3s in gateway container openshell-cluster-crdl did not register its HelmChart type in time (kubectl delete): error: the server doesn't have a resource type \"helmchart\""* ]]
}

# bats test_tags=lane
@test "start without --gpu against a GPU gateway is refused, naming --recreate" {
	before=$(docker inspect openshell-cluster-t1 --format '{{.Id}}')
	run --separate-stderr openshell gateway start --name t1 --image "$IMAGE"
	assert_failure 6
	[ "${#stderr_lines[@]}" -ge 1 ]
	[[ "${stderr_lines[-1]}" == "openshell: error: gateway 't1' exists with GPUs but no GPUs were asked for; rerun with --recreate"* ]]
	[ "$(docker inspect openshell-cluster-t1 --format '{{.Id}}')" = "$before" ]
}

@test "a stopped gateway is resumed with its state kept" {
	before=$(docker inspect openshell-cluster-t1 --format '{{.Id}}')
	docker exec openshell-cluster-t1 touch /var/lib/rancher/k3s/kept-marker
	docker stop openshell-cluster-t1 >/dev/null
	port=$(jq -r .port "$XDG_CONFIG_HOME/openshell/gateways/t1/metadata.json")
	run --separate-stderr openshell gateway start --gpu --name t1 --image "$IMAGE" --port "$port" --json
	assert_success
	run jq -r .outcome <<<"$output"
	assert_output resumed
	[ "$(docker inspect openshell-cluster-t1 --format '{{.Id}}')" = "$before" ]
	docker exec openshell-cluster-t1 test -e /var/lib/rancher/k3s/kept-marker
}

@test "--recreate rebuilds the gateway without GPUs and drops its volume" {
	before=$(docker inspect openshell-cluster-t1 --format '{{.Id}}')
	run --separate-stderr openshell gateway start --name t1 --image "$IMAGE" --port "$(free_port)" --recreate
	assert_success
	assert_output --partial 'GPUs:        none'
	[ "$(docker inspect openshell-cluster-t1 --format '{{.Id}}')" != "$before" ]
	run docker inspect openshell-cluster-t1 --format '{{json .HostConfig.DeviceRequests}} {{index .Config.Labels "org.openshell.gpu"}}'
	assert_output 'null false'
	run docker exec openshell-cluster-t1 test -e /var/lib/rancher/k3s/kept-marker
	assert_failure
	# Without GPUs the node advertises none: the key is absent.
	run gw_kubectl t1 get nodes -o jsonpath='{.items[0].status.allocatable.nvidia\.com/gpu}'
	assert_output ''
	# A privileged container gets every device of the host, /dev/nvidiaN too;
	# a gateway without GPUs keeps none of them.
	run docker exec openshell-cluster-t1 sh -c 'ls /dev/nvidia[0-9]* 2>/dev/null'
	assert_output ''
}

@test "a name that is not a DNS label is refused before any docker call" {
	calls=$BATS_TEST_TMPDIR/calls
	printf '#!/bin/sh\necho "$@" >>%s\nexit 1\n' "$calls" >"$BATS_TEST_TMPDIR/docker"
	chmod +x "$BATS_TEST_TMPDIR/docker"
	for bad in 'Upper' 'a_b' '-x' 'x-' '../etc' 'a;rm -rf' "$(printf 'a\nb')" "$(printf 'x%.0s' {1..54})"; do
		OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/docker run --separate-stderr openshell gateway start --name "$bad"
		assert_failure 2
		[ "${#stderr_lines[@]}" -eq 2 ]
		[[ "$stderr" == "openshell: error: invalid gateway name '"* ]]
		[ "${stderr_lines[1]}" = "Try 'openshell gateway start --help' for more information." ]
	done
	[ ! -e "$calls" ]
}

# bats test_tags=lane
@test "an absent --image that cannot be pulled is a clear error, nothing created" {
	run --separate-stderr openshell gateway start --name noimg --image openshell-cluster:nosuch
	assert_failure 1
	[[ "$stderr" == *"cannot get image openshell-cluster:nosuch: docker pull failed"*"'docker login'"* ]]
	assert_no_gateway_resources noimg
}

@test "a port already in use is named, and the failed gateway is rolled back" {
	sim_only "needs a second gateway on a known port"
	port=$(free_port)
	run openshell gateway start --name p1 --image "$IMAGE" --port "$port"
	assert_success
	run --separate-stderr openshell gateway start --name p2 --image "$IMAGE" --port "$port"
	assert_failure 1
	[[ "$stderr" == *"port $port on 127.0.0.1 is already in use; choose another with --port"* ]]
	assert_no_gateway_resources p2
	openshell -q gateway destroy --name p1 --yes
}

@test "a k3s that never becomes ready ends in a timeout error with diagnostics" {
	sim_only "needs the stand-in's never-ready switch"
	run --separate-stderr openshell gateway start --name nr --image openshell-cluster:sim-never-ready \
		--port "$(free_port)" --timeout 8s
	assert_failure 4
	[[ "$stderr" == *"openshell: error: timed out after 8s waiting for the k3s API (kubectl get --raw /readyz); the gateway was kept for inspection"* ]]
	# The healthcheck's marker is quoted: Docker's latest, or the probe run then.
	[[ "$stderr" == *"HEALTHCHECK_FAIL k3s-not-ready"* ]]
	openshell -q gateway destroy --name nr --yes
	# Docker would first probe this one an hour in: the marker is the probe openshell ran.
	printf 'FROM openshell-cluster:sim-never-ready\nHEALTHCHECK --interval=1h --start-period=1h CMD ["/usr/local/bin/cluster-healthcheck.sh"]\n' |
		DOCKER_BUILDKIT=0 docker build -q -t openshell-cluster:sim-never-ready-slowprobe - >/dev/null
	run --separate-stderr openshell gateway start --name nr2 --image openshell-cluster:sim-never-ready-slowprobe \
		--port "$(free_port)" --timeout 8s
	assert_failure 4
	[ "$(docker inspect openshell-cluster-nr2 --format '{{len .State.Health.Log}}')" = 0 ]
	[[ "$stderr" == *"HEALTHCHECK_FAIL k3s-not-ready"* ]]
	openshell -q gateway destroy --name nr2 --yes
}

# The GPU wait's diagnosis, free of the timing of the earlier stages: the
# first start creates the gateway (and may time out anywhere); once the
# cluster shows the fault, a second start reuses it and times out in the
# GPU wait alone.
@test "a device plugin that exits at every start ends the start with its own error and its logs" {
	sim_only "needs the stand-in's crash-loop switch"
	run --separate-stderr openshell gateway start --gpu --name cl --image openshell-cluster:sim-plugin-crashloop \
		--port "$(free_port)" --timeout 5m
	# Exit 1 at its second failed restart, not a timeout five minutes later.
	assert_failure 1
	[[ "$stderr" == *"error: the NVIDIA device plugin in gateway container openshell-cluster-cl exits at every start ("*" restarts): error starting plugins: error creating plugin manager: unable to create plugin manager: invalid device discovery strategy; check the host's driver ('nvidia-smi') and the gateway's GPU options, then rerun with --recreate"* ]]
	[[ "$stderr" == *"NVML"* ]]   # the log comes along
	# A gateway left crash-looping would hold CPU for the rest of the file.
	openshell -q gateway destroy --name cl --yes
}

@test "a crash-looping plugin without a fatal line of its own times out naming the DaemonSet, with its logs" {
	sim_only "needs the stand-in's crash-loop switches"
	# Killed before its last words: only the kubelet's crash loop is left to see.
	# The second start's 15 s hold a few reads on a loaded machine, whose
	# docker exec can take seconds.
	port=$(free_port)
	background_start --gpu --name cl2 --image openshell-cluster:sim-plugin-crash-quiet --port "$port"
	eventually plugin_crashlooping cl2
	stop_background_start
	run --separate-stderr openshell gateway start --gpu --name cl2 --image openshell-cluster:sim-plugin-crash-quiet \
		--port "$port" --timeout 15s
	assert_failure 4
	[[ "$stderr" == *"waiting for GPUs: the nvidia-device-plugin DaemonSet has 0 of 1 pods ready"* ]]
	[[ "$stderr" == *"device plugin logs:"* ]]
	[[ "$stderr" == *"NVML"* ]]
	[[ "$stderr" != *"exits at every start"* ]]
	openshell -q gateway destroy --name cl2 --yes
}

@test "an image without the NVIDIA runtime ends the start at once, naming the cause and the fix" {
	sim_only "needs the stand-in image built without the toolkit"
	run --separate-stderr openshell gateway start --gpu --name ntk --image openshell-cluster:sim-notoolkit \
		--port "$(free_port)" --timeout 5m
	# Exit 1, not a timeout: nothing waited out the five minutes.
	assert_failure 1
	[ "${stderr_lines[-1]}" = "openshell: error: k3s configured no nvidia runtime in containerd (/var/lib/rancher/k3s/agent/etc/containerd/config.toml has none), so no GPU pod can start in gateway container openshell-cluster-ntk: its image lacks the NVIDIA Container Toolkit's nvidia-container-runtime; build one with it ('openshell image build') or name one with --image, then rerun with --recreate" ]
	run --separate-stderr openshell gateway status --name ntk
	assert_line '  Runtime:     no nvidia runtime in containerd: the image lacks nvidia-container-runtime'
	openshell -q gateway destroy --name ntk --yes
}

@test "a broken nvidia runtime ends the start at once with the runtime's own error" {
	sim_only "needs the stand-in's broken-runtime switch"
	run --separate-stderr openshell gateway start --gpu --name rb --image openshell-cluster:sim-runtime-broken \
		--port "$(free_port)" --timeout 5m
	assert_failure 1
	[[ "${stderr_lines[-1]}" == "openshell: error: the nvidia runtime in gateway container openshell-cluster-rb cannot start pods: pod nvidia-device-plugin/nvidia-device-plugin-"*": FailedCreatePodSandBox: "*"nvidia-container-runtime did not terminate successfully"*"check the image's toolkit ('openshell image info') and the host's driver ('nvidia-smi'), then rerun with --recreate" ]]
	openshell -q gateway destroy --name rb --yes
}

@test "an image without its bundle fails offline, naming the chart it lacks" {
	sim_only "needs the stand-in image built without its bundle"
	# The install fails first, however slow the machine; then the start's deadline.
	port=$(free_port)
	background_start --gpu --name nob --image openshell-cluster:sim-nobundle --port "$port"
	eventually gw_kubectl_says nob '404 Not Found' logs -n kube-system -l job-name=helm-install-nvidia-device-plugin
	stop_background_start
	run --separate-stderr openshell gateway start --gpu --name nob --image openshell-cluster:sim-nobundle \
		--port "$port" --timeout 15s
	assert_failure 4
	chart=nvidia-device-plugin-$(sed -n 's/^DEVICE_PLUGIN_CHART_VERSION=//p' "$OPENSHELL_SRCDIR/deploy/versions.env").tgz
	err_line=$(grep '^openshell: error:' <<<"$stderr")
	[[ "$err_line" == *"the nvidia-device-plugin DaemonSet does not exist: its Helm install fails: Error: INSTALLATION FAILED: failed to fetch https://10.43.0.1:443/static/charts/$chart : 404 Not Found"* ]]
	openshell -q gateway destroy --name nob --yes
}

@test "a device-plugin image that is not bundled is named, with the kubelet's pull error" {
	sim_only "removes the plugin's image from the stand-in's store"
	port=$(free_port)
	background_start --gpu --name npi --image "$IMAGE" --port "$port"
	eventually gw_kubectl_says npi pod/ get pods -n nvidia-device-plugin -o name
	stop_background_start
	# As if the tarball had never been there: k3s has not imported the image.
	image=$(sed -n 's/^DEVICE_PLUGIN_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	docker exec openshell-cluster-npi sh -c 'rm /var/lib/rancher/k3s/agent/images/nvcr.io_nvidia_k8s-device-plugin_*
		crictl rmi '"$image"' >/dev/null
		for p in $(kubectl get pods -n nvidia-device-plugin -o jsonpath="{.items[*].metadata.name}"); do
			kubectl delete pod "$p" -n nvidia-device-plugin >/dev/null
		done'
	run --separate-stderr openshell gateway start --gpu --name npi --image "$IMAGE" --port "$port" --timeout 8s
	assert_failure 4
	err_line=$(grep '^openshell: error:' <<<"$stderr")
	[[ "$err_line" == *"pods ready: pod nvidia-device-plugin/nvidia-device-plugin-"*": "*"Back-off pulling image \"$image\""* ||
		"$err_line" == *"pods ready: pod nvidia-device-plugin/nvidia-device-plugin-"*": ErrImagePull: "*"failed to pull and unpack image \"$image\""* ]]
	openshell -q gateway destroy --name npi --yes
}

@test "a failing chart install names the missing DaemonSet and shows the helm job's logs" {
	sim_only "needs the stand-in's chart-failure switch"
	port=$(free_port)
	background_start --gpu --name cf --image openshell-cluster:sim-chart-fail --port "$port"
	eventually gw_kubectl_says cf Error logs -n kube-system -l job-name=helm-install-nvidia-device-plugin
	stop_background_start
	run --separate-stderr openshell gateway start --gpu --name cf --image openshell-cluster:sim-chart-fail \
		--port "$port" --timeout 8s
	assert_failure 4
	[[ "$stderr" == *"the nvidia-device-plugin DaemonSet does not exist"* ]]
	[[ "$stderr" == *"helm-install-nvidia-device-plugin logs:"* ]]
	openshell -q gateway destroy --name cf --yes
}

@test "--no-wait returns once the container runs and its kubeconfig is written, waiting for nothing else" {
	sim_only "needs a stand-in whose device plugin arrives late"
	cid=$(docker create "$IMAGE")
	docker commit --change 'ENV SIM_HELM_DELAY=30' "$cid" openshell-cluster:sim-late-plugin >/dev/null
	docker rm "$cid" >/dev/null
	run --separate-stderr openshell gateway start --gpu --name nw --image openshell-cluster:sim-late-plugin \
		--port "$(free_port)" --no-wait --json
	assert_success
	doc=$output
	run jq -c '[.outcome, .gpus_allocatable, .mig_allocatable]' <<<"$doc"
	assert_output '["created",null,null]'
	assert_schema start "$doc"
	run docker inspect openshell-cluster-nw --format '{{.State.Running}}'
	assert_output true
	grep -q '^    server: https://127.0.0.1:' "$XDG_CONFIG_HOME/openshell/gateways/nw/kubeconfig"
	# The device plugin is 30 s away (and the API may not even answer yet):
	# start did not wait for the GPUs.
	eventually gw_kubectl nw get --raw /readyz
	run gw_kubectl nw get nodes -o jsonpath='{.items[*].status.allocatable.nvidia\.com/gpu}'
	assert_output ''
	openshell -q gateway destroy --name nw --yes
}

@test "a non-loopback --bind warns that the API is exposed, and certifies this host's addresses" {
	run --separate-stderr openshell gateway start --name bw --image "$IMAGE" --port "$(free_port)" --bind 0.0.0.0 --no-wait
	assert_success
	[[ "$stderr" == *"warning: the k3s API will be published on 0.0.0.0"* ]]
	# Remote clients come by this host's addresses: k3s's certificate names them.
	run docker inspect openshell-cluster-bw --format '{{json .Args}}'
	for addr in $(ip -4 -o addr show up scope global | awk '$2 !~ /^(docker|br-|veth|cni|flannel|virbr)/ { split($4, a, "/"); print a[1] }'); do
		assert_output --partial "\"--tls-san=$addr\""
	done
	refute_output --partial '"--tls-san=172.17.0.1"' # docker0: no remote client comes by it
	openshell -q gateway destroy --name bw --yes
}

@test "--tls-san names go into the certificate; with a wildcard bind the first is the kubeconfig's server" {
	port=$(free_port)
	run --separate-stderr openshell gateway start --name ts --image "$IMAGE" --port "$port" --bind 0.0.0.0 \
		--tls-san gw.example.test --tls-san 10.9.8.7 --no-wait
	assert_success
	run docker inspect openshell-cluster-ts --format '{{json .Args}}'
	assert_output --partial '"--tls-san=gw.example.test","--tls-san=10.9.8.7"'
	grep -q "server: https://gw.example.test:$port" "$XDG_CONFIG_HOME/openshell/gateways/ts/kubeconfig"
	# An existing gateway's certificate is what it was made with.
	run --separate-stderr openshell gateway start --name ts --image "$IMAGE" --tls-san other.example.test
	assert_failure 6
	[[ "$stderr" == *"rerun with --recreate to give it --tls-san"* ]]
	run --separate-stderr openshell gateway start --name tz --tls-san 'bad name'
	assert_failure 2
	[[ "${stderr_lines[0]}" == "openshell: error: invalid --tls-san 'bad name': give a DNS name or an IP address" ]]
	openshell -q gateway destroy --name ts --yes
}

@test "--bind 127.0.0.2: the kubeconfig names it, and so does the API's certificate, which the real kubectl checks" {
	sim_only "publishes on the test machine's loopback"
	kubectl=$("$OPENSHELL_SRCDIR/scripts/real-kubectl")
	port=$(free_port)
	run --separate-stderr openshell gateway start --name lb --image "$IMAGE" --port "$port" --bind 127.0.0.2
	assert_success
	kc=$XDG_CONFIG_HOME/openshell/gateways/lb/kubeconfig
	grep -q "server: https://127.0.0.2:$port" "$kc"
	run --separate-stderr "$kubectl" --kubeconfig "$kc" --request-timeout=20s get nodes -o name
	assert_success
	assert_output node/openshell-lb
	openshell -q gateway destroy --name lb --yes
}

@test "--update-kubeconfig merges into ~/.kube/config, keeping a backup" {
	home=$BATS_TEST_TMPDIR/home
	mkdir -p "$home/.kube"
	printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://prod.example:6443\n  name: prod\ncontexts: []\ncurrent-context: ""\nusers: []\n' >"$home/.kube/config"
	cp "$home/.kube/config" "$BATS_TEST_TMPDIR/orig"
	HOME=$home KUBECONFIG='' run --separate-stderr openshell gateway start --name uk --image "$IMAGE" \
		--port "$(free_port)" --update-kubeconfig
	assert_success
	assert_output --partial "Merged into: $home/.kube/config (current context openshell-uk)"
	cmp "$home/.kube/config.openshell-backup" "$BATS_TEST_TMPDIR/orig"
	grep -q 'server: https://prod.example:6443' "$home/.kube/config"
	grep -q 'current-context: openshell-uk' "$home/.kube/config"
	[ "$(stat -c %a "$home/.kube/config")" = 600 ]
	# Without the flag the user's file is never touched.
	cp "$home/.kube/config" "$BATS_TEST_TMPDIR/after"
	HOME=$home KUBECONFIG='' run openshell gateway start --name uk --image "$IMAGE"
	assert_success
	cmp "$home/.kube/config" "$BATS_TEST_TMPDIR/after"
	# destroy takes exactly its entries out again, keeping a backup.
	HOME=$home KUBECONFIG='' run --separate-stderr openshell gateway destroy --name uk --yes
	assert_success
	[[ "$stderr" == *"removed 'openshell-uk' from $home/.kube/config (the previous file is $home/.kube/config.openshell-backup)"* ]]
	run grep -c openshell-uk "$home/.kube/config"
	assert_output 0
	grep -q 'server: https://prod.example:6443' "$home/.kube/config"
	cmp "$home/.kube/config.openshell-backup" "$BATS_TEST_TMPDIR/after"
	[ ! -e "$home/.kube/config.lock" ]
}

@test "two starts merging into one kubeconfig at once keep both; a stale lock is named" {
	home=$BATS_TEST_TMPDIR/home
	mkdir -p "$home/.kube"
	HOME=$home KUBECONFIG='' openshell -q gateway start --name m1 --image "$IMAGE" --port "$(free_port)" \
		--update-kubeconfig --no-wait >/dev/null &
	HOME=$home KUBECONFIG='' openshell -q gateway start --name m2 --image "$IMAGE" --port "$(free_port)" \
		--update-kubeconfig --no-wait >/dev/null
	wait $!
	run grep -c 'name: openshell-m[12]$' "$home/.kube/config"
	assert_output 6
	# A lock left by a killed kubectl: waited for, then named with the fix.
	touch "$home/.kube/config.lock"
	HOME=$home KUBECONFIG='' run --separate-stderr openshell gateway start --name m1 --image "$IMAGE" --update-kubeconfig
	assert_failure 1
	[[ "$stderr" == *"$home/.kube/config is locked ($home/.kube/config.lock exists): another kubectl or openshell is changing it; if none is, remove the stale $home/.kube/config.lock"* ]]
	[ -e "$home/.kube/config.lock" ] # not ours to remove
	rm "$home/.kube/config.lock"
	openshell -q gateway destroy --name m1 --yes
	openshell -q gateway destroy --name m2 --yes
}

@test "a resumed gateway keeps its own port; the kubeconfig says so" {
	port=$(free_port)
	run openshell gateway start --name rp --image "$IMAGE" --port "$port"
	assert_success
	docker stop openshell-cluster-rp >/dev/null
	# No --port this time: the gateway's own port wins over the default.
	run --separate-stderr openshell gateway start --name rp --image "$IMAGE" --json
	assert_success
	run jq -r '[.outcome, .server] | @tsv' <<<"$output"
	assert_output "$(printf 'resumed\thttps://127.0.0.1:%s' "$port")"
	run jq -r .port "$XDG_CONFIG_HOME/openshell/gateways/rp/metadata.json"
	assert_output "$port"
	grep -q "server: https://127.0.0.1:$port" "$XDG_CONFIG_HOME/openshell/gateways/rp/kubeconfig"
}

@test "a stopped gateway whose port was taken says what works, not --port" {
	sim_only "takes a port on the sim host's loopback"
	port=$(free_port)
	openshell -q gateway start --name pt --image "$IMAGE" --port "$port" --no-wait
	docker stop openshell-cluster-pt >/dev/null
	/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(60)' "$port" &
	holder=$!
	eventually sh -c "ss -Hltn 'sport = :$port' | grep -q ."
	run --separate-stderr openshell gateway start --name pt --image "$IMAGE"
	kill "$holder"
	assert_failure 1
	[[ "$stderr" == *"port $port on 127.0.0.1, which gateway 'pt' keeps, is in use by something else now; free it and rerun 'openshell gateway start --name pt', or rebuild the gateway on another port with --recreate --port N"* ]]
	openshell -q gateway destroy --name pt --yes
}

@test "an explicit --port or --image that contradicts the gateway is refused" {
	run --separate-stderr openshell gateway start --name rp --image "$IMAGE" --port "$(free_port)"
	assert_failure 6
	[[ "$stderr" == *"gateway 'rp' exists with another --port than asked for; rerun with --recreate"* ]]
	run --separate-stderr openshell gateway start --name rp --image openshell-cluster:sim-never-ready
	assert_failure 6
	[[ "$stderr" == *"exists with another --image than asked for"* ]]
}

@test "without --port, a taken default moves to the next free port" {
	sim_only "publishes on the default port, which a real host may use"
	run --separate-stderr openshell gateway start --name d1 --image "$IMAGE" --json
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	first=$(jq -r .server <<<"$output")
	run --separate-stderr openshell gateway start --name d2 --image "$IMAGE" --json
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	second=$(jq -r .server <<<"$output")
	[ "$first" != "$second" ]
	[[ "$second" == https://127.0.0.1:* ]]
	openshell -q gateway destroy --name d1 --yes
	openshell -q gateway destroy --name d2 --yes
}

@test "--recreate with an image that cannot be had keeps the old gateway" {
	before=$(docker inspect openshell-cluster-rp --format '{{.Id}}')
	run --separate-stderr openshell gateway start --name rp --image openshell-cluster:nosuch --recreate
	assert_failure 1
	[[ "$stderr" == *"cannot get image openshell-cluster:nosuch"* ]]
	[ "$(docker inspect openshell-cluster-rp --format '{{.Id}}')" = "$before" ]
}

@test "--recreate works on a gateway whose container had restarted" {
	# Killed from the host (a container's init ignores signals from inside),
	# the container exits unexpectedly and its restart policy restarts it.
	kill -KILL "$(docker inspect openshell-cluster-rp --format '{{.State.Pid}}')"
	eventually sh -c '[ "$(docker inspect openshell-cluster-rp --format "{{.RestartCount}}")" -gt 0 ]'
	run --separate-stderr openshell gateway start --name rp --image "$IMAGE" --recreate --port "$(free_port)"
	assert_success
}
