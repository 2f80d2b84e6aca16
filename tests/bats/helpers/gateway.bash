# shellcheck shell=bash
# gateway.bash - what the gateway suites share: a Docker engine with GPUs
# (a sim host, or the real one with OPENSHELL_TEST_REAL_HOST=1), the
# cluster image, a private config dir, and free ports.
#
#   load helpers/gateway
#   setup_file()    { gateway_suite_start [sim-host start args…]; }
#   teardown_file() { gateway_suite_stop; }
#
# IMAGE is the cluster image: the simulated openshell-cluster:sim built by
# tests/testbed/sim-image, or on a real runner $OPENSHELL_CLUSTER_IMAGE.
# In a remote lane (tests/run-lane) the suite's tests tagged `lane` run on
# the lane's host, reached through ssh or tcp+TLS (helpers/lane.bash).
load helpers/common
load helpers/sim-host
load helpers/lane

gateway_suite_start() {
	if lane_active; then
		lane_suite_start "$@"
		return
	fi
	if sim_real_host; then
		sim_host_start "$@" || return 1
		export IMAGE=${OPENSHELL_CLUSTER_IMAGE:?set OPENSHELL_CLUSTER_IMAGE to the real cluster image}
	else
		sim_host_start --cluster-images "$@" || return 1
		export IMAGE=openshell-cluster:sim
	fi
	export XDG_CONFIG_HOME=$BATS_FILE_TMPDIR/config
}

gateway_suite_stop() {
	if lane_active; then
		lane_suite_stop
		return
	fi
	# On a real host the suite's gateways must go; a sim host takes them along.
	if sim_real_host; then
		local c
		for c in $(docker ps -aq --filter label=org.openshell.test-suite="$BATS_TEST_FILENAME"); do
			docker rm -f "$c" >/dev/null 2>&1 || true
		done
	fi
	sim_host_stop
}

# A copy of the recipe whose pins name the stand-ins (tests/testbed/sim-image),
# as the default image's build by `gateway start` takes no --build-arg; $1:
# another bundle stage. For OPENSHELL_IMAGE_CONTEXT.
standin_recipe() {
	local dir=$BATS_TEST_TMPDIR/recipe loaded=$BATS_FILE_TMPDIR/testbed-stages
	# The stand-in's stages, which a suite's set leaves out (sim-image --testbed): loaded
	# into the suite's daemon once, as no test removes them (a load of what is there
	# still costs some 3 s of CPU: the set's key, two archives read again).
	if [[ ! -e $loaded ]]; then
		"$OPENSHELL_SRCDIR/tests/testbed/sim-image" --testbed >/dev/null || return 1
		: >"$loaded"
	fi
	rm -rf "$dir"
	cp -r "$OPENSHELL_SRCDIR/deploy" "$dir"
	sed -i 's|^BASE_IMAGE=.*|BASE_IMAGE=openshell-testbed/base:sim|' "$dir/versions.env"
	printf '%s\n' SYSTEM_SOURCE=openshell-testbed/system:sim K3S_SOURCE=openshell-testbed/k3s:sim \
		"BUNDLE_SOURCE=${1:-openshell-testbed/bundle:sim}" >>"$dir/versions.env"
	echo "$dir"
}

# The image a start without --image uses, which it builds when absent.
default_image() {
	echo "openshell-cluster:$("$OPENSHELL_BIN" --version | cut -d' ' -f2)"
}

# A TCP port nothing listens on, from a random start so that suites running
# side by side rarely meet, below the kernel's ephemeral ports (32768 on):
# ss lists no connection's own port, and a listener cannot take one.
free_port() {
	local p
	for ((p = 20000 + RANDOM % 12000; p < 32768; p++)); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# Nothing named openshell-cluster-$1 is left: container, volume, network.
assert_no_gateway_resources() {
	local res=openshell-cluster-$1
	run docker ps -a --filter "name=^${res}\$" --format '{{.Names}}'
	assert_output ''
	run docker volume ls --filter "name=^${res}\$" --format '{{.Name}}'
	assert_output ''
	run docker network ls --filter "name=^${res}\$" --format '{{.Name}}'
	assert_output ''
}

# kubectl against gateway NAME, for the suites' own looks. In the simulation
# the host's real kubectl through the kubeconfig the start wrote (the API the
# same, its certificate checked): a `docker exec` costs the test machine a
# fifth of a second of CPU beyond the kubectl it runs, and the suites make
# hundreds. Elsewhere, or for a gateway with no kubeconfig here, kubectl
# inside the gateway, as openshell reaches it.
gw_kubectl() {
	local name=$1 cfg stdin=()
	shift
	cfg=${XDG_CONFIG_HOME:-$HOME/.config}/openshell/gateways/$name/kubeconfig
	if [[ -x $HOST_KUBECTL && -r $cfg ]] && declare -F sim_real_host >/dev/null && ! sim_real_host; then
		"$HOST_KUBECTL" --kubeconfig "$cfg" --cache-dir "$BATS_FILE_TMPDIR/kube-cache" "$@"
	else
		# The exec takes the caller's input only for a manifest read from it,
		# written `-f -` (as every caller here does).
		[[ " $* " != *" -f - "* ]] || stdin=(-i)
		docker exec "${stdin[@]}" "openshell-cluster-$name" kubectl "$@"
	fi
}

# gw_kubectl_says NAME TEXT KUBECTL-ARGS...: kubectl's output has TEXT (a
# grep pattern), for eventually.
gw_kubectl_says() {
	local name=$1 text=$2
	shift 2
	gw_kubectl "$name" "$@" | grep -q -- "$text"
}

# gw_kubectl_is NAME VALUE KUBECTL-ARGS...: kubectl succeeds and prints
# VALUE (a failing kubectl is no "", whatever VALUE is).
gw_kubectl_is() {
	local name=$1 value=$2 out
	shift 2
	out=$(gw_kubectl "$name" "$@") && [ "$out" = "$value" ]
}

# Poll (up to ~60 s) until a command succeeds: the stand-in's state under
# a loaded CI machine arrives when it arrives. A poll is often a docker exec
# and a kubectl, a fifth of a second of CPU: the wait between polls grows to
# half a second, so that the poller does not hold the CPU the stand-in needs.
eventually() {
	local deadline=$((SECONDS + 60)) delay=0.1
	while ((SECONDS < deadline)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep "$delay"
		case $delay in 0.1) delay=0.2 ;; 0.2) delay=0.3 ;; *) delay=0.5 ;; esac
	done
	"$@"
}

# A start that a fault keeps from finishing, in the background, so that the
# gateway exists while the test waits for the fault itself; the start is
# then interrupted (which keeps the gateway). Sets BG_START_PID.
background_start() {
	# Not the openshell function: the pid must be openshell's own, so
	# that the interrupt reaches it (a background subshell ignores SIGINT).
	"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" -q gateway start "$@" --timeout 300s \
		${LANE_BIND:+--bind "$LANE_BIND"} \
		>/dev/null 2>"$BATS_TEST_TMPDIR/background-start.err" 3>&- &
	BG_START_PID=$!
}

# fake_docker_on WORDS ACTION: a docker at $FAKE_DOCKER that, on each
# `docker exec` whose arguments hold WORDS, counts the call (in
# $BATS_TEST_TMPDIR/calls; the calls before this one in $n) and runs the
# bash ACTION, which may exit or exec instead of the real docker after it.
fake_docker_on() {
	FAKE_DOCKER=$BATS_TEST_TMPDIR/fake/docker
	mkdir -p "${FAKE_DOCKER%/*}"
	cat >"$FAKE_DOCKER" <<-EOF
	#!/bin/bash
	if [ "\$1" = exec ] && [[ " \$* " == *"$1"* ]]; then
		n=\$(cat "$BATS_TEST_TMPDIR/calls" 2>/dev/null || echo 0)
		echo \$((n + 1)) >"$BATS_TEST_TMPDIR/calls"
		$2
	fi
	exec $(command -v docker) "\$@"
	EOF
	chmod +x "$FAKE_DOCKER"
}

stop_background_start() {
	kill -INT "$BG_START_PID" 2>/dev/null || true
	wait "$BG_START_PID" || true
}

# The device plugin's pod in gateway $1 has restarted at least once.
plugin_crashlooping() {
	local n
	n=$(gw_kubectl "$1" get pods -n nvidia-device-plugin -o json 2>/dev/null |
		jq '.items[0].status.containerStatuses[0].restartCount // 0')
	[ "${n:-0}" -gt 0 ] 2>/dev/null
}

# A pod of gateway $1 named $2 that sleeps holding one of resource $3
# (default nvidia.com/gpu), running once this returns.
holding_pod() {
	local smoke
	smoke=$(docker inspect "$IMAGE" --format '{{index .Config.Labels "org.openshell.smoke-image"}}')
	gw_kubectl "$1" apply -f - >/dev/null <<-JSON
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"},"spec":{"restartPolicy":"Never",
	 "runtimeClassName":"nvidia","containers":[{"name":"work","image":"$smoke","command":["sleep","3600"],
	 "resources":{"limits":{"${3:-nvidia.com/gpu}":1}}}]}}
	JSON
	eventually pod_phase_is "$1" "$2" Running
}

# A pod of gateway $1 named $2 holding one nvidia.com/gpu and using it: the
# test bed's cuda-sim (a SIMULATED CUDA program) with $3 MiB at $4 %, its
# contexts open once this returns (it says so after).
cuda_pod() {
	local smoke
	smoke=$(docker inspect "$IMAGE" --format '{{index .Config.Labels "org.openshell.smoke-image"}}')
	gw_kubectl "$1" apply -f - >/dev/null <<-JSON
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"},"spec":{"restartPolicy":"Never",
	 "runtimeClassName":"nvidia","containers":[{"name":"work","image":"$smoke",
	 "command":["cuda-sim","--memory","$3","--utilization","$4"],"resources":{"limits":{"nvidia.com/gpu":1}}}]}}
	JSON
	eventually cuda_opened "$1" "$2"
}

# Has cuda-sim in pod $2 of gateway $1 opened its contexts?
cuda_opened() {
	gw_kubectl "$1" logs "$2" 2>/dev/null | grep -q '^cuda-sim: a context on '
}

# Pod $2 of gateway $1 is in phase $3.
pod_phase_is() {
	[ "$(gw_kubectl "$1" get pod "$2" -o jsonpath='{.status.phase}')" = "$3" ]
}

# Node allocatable nvidia.com/gpu in gateway $1 reads exactly $2.
node_allocatable_is() {
	[ "$(gw_kubectl "$1" get nodes -o json 2>/dev/null |
		jq -r '.items[0].status.allocatable["nvidia.com/gpu"] // "absent"')" = "$2" ]
}

# Pods on the stand-in's pod network (the REF-podnet image), through the
# suite's `kx` (kubectl in its server). podnet_web NODE TEXT: a pod "web"
# on NODE serving TEXT on 8080, once it runs; prints its pod IP.
podnet_web() {
	local image
	image=$(sed -n 's/^SMOKE_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	kx apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"'"$1"'","containers":[{"name":"c","image":"'"$image"'","command":["sh","-c","d=$(mktemp -d) && echo '"$2"' >$d/index.html && exec httpd -f -p 8080 -h $d"]}]}}' >/dev/null
	web_running() { [[ $(kx get pod web -o jsonpath='{.status.phase}') == Running ]]; }
	eventually web_running >/dev/null
	kx get pod web -o jsonpath='{.status.podIP}'
}

# podnet_client NAME NODE IP: a pod NAME on NODE that fetches IP:8080's
# page, then asks the API at its ClusterIP (no credentials: k3s answers
# 401); its log once it ended.
podnet_client() {
	local image
	image=$(sed -n 's/^SMOKE_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	kx apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"'"$1"'"},"spec":{"nodeName":"'"$2"'","restartPolicy":"Never","containers":[{"name":"c","image":"'"$image"'","command":["sh","-c","printf \"GET /index.html HTTP/1.0\\r\\n\\r\\n\" | nc -w 10 '"$3"' 8080 | tail -n 1; KUBECONFIG=/dev/null /usr/lib/k3s-sim/bin/kubectl --server=https://10.43.0.1 --insecure-skip-tls-verify=true --token=none --request-timeout=10s get --raw /version"]}]}}' >/dev/null
	client_ended() { [[ $(kx get pod "$1" -o jsonpath='{.status.phase}') =~ Succeeded|Failed ]]; }
	eventually client_ended "$1" >/dev/null
	kx logs "$1"
}
