#!/usr/bin/env bats
# A GPU host elsewhere: the sim host's dockerd reached as a remote daemon
# is, through a real OpenSSH server (tests/testbed/sim-sshd) on a loopback
# address of this machine, by DOCKER_HOST=ssh://root@gpu-box:PORT or a
# docker context of that endpoint. "gpu-box" is the client's ssh alias for
# 127.0.0.2, so openshell sees a daemon on another machine, as a laptop
# driving a GPU server does; every address used is loopback.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	sim_only "a remote daemon made of the sim host and a loopback sshd"
	KUBECTL=$("$OPENSHELL_SRCDIR/scripts/real-kubectl") || return 1
	export KUBECTL
	gateway_suite_start --gpus 2
	export SIM_DOCKER_HOST=$DOCKER_HOST
	SSH_PORT=$(free_port)
	local env
	env=$("$OPENSHELL_SRCDIR/tests/testbed/sim-sshd" start "$SIM_HOST_DIR" 127.0.0.2 "$SSH_PORT" gpu-box) || return 1
	eval "$env"
	[[ $DOCKER_HOST == ssh://* ]] || return 1
	export PATH DOCKER_HOST SSH_PORT
	# The suite's own docker configuration, for its contexts.
	export DOCKER_CONFIG=$BATS_FILE_TMPDIR/docker-config
	mkdir -p "$DOCKER_CONFIG"
	# no --tls-san: the kubeconfig must name what the alias stands for
	openshell -q gateway start --gpu --name rs --image "$IMAGE" --port "$(free_port)" --bind 0.0.0.0 >/dev/null
}

teardown_file() {
	load helpers/gateway
	[[ -n ${SIM_HOST_DIR:-} ]] && "$OPENSHELL_SRCDIR/tests/testbed/sim-sshd" stop "$SIM_HOST_DIR"
	DOCKER_HOST=${SIM_DOCKER_HOST:-$DOCKER_HOST} gateway_suite_stop
}

setup() {
	load helpers/gateway
}

suite_teardown() {
	# a test that failed half-way must not leave the suite on another context
	docker context use default >/dev/null 2>&1 || true
}

@test "the daemon is the sim host's, reached through sshd" {
	run docker info --format '{{.ID}}'
	assert_success
	assert_output "$(DOCKER_HOST=$SIM_DOCKER_HOST docker info --format '{{.ID}}')"
	grep -q "Accepted publickey for root" "$SIM_HOST_DIR/ssh/sshd.log"
}

@test "a daemon on another machine: its loopback, the default --bind, is refused naming --bind; nothing is made" {
	run --separate-stderr openshell gateway start --gpu --name r0 --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"openshell: error: the Docker daemon is on gpu-box (ssh://root@gpu-box:$SSH_PORT), whose loopback, where the API is published by default, this machine cannot reach: give --bind"* ]]
	assert_no_gateway_resources r0
	[ ! -e "$XDG_CONFIG_HOME/openshell/gateways/r0" ]
}

@test "started through ssh: GPUs allocatable, the kubeconfig reaches the API from the client, the metadata names the daemon" {
	md=$XDG_CONFIG_HOME/openshell/gateways/rs/metadata.json
	run jq -r '[.docker_context, .docker_endpoint] | join(" ")' "$md"
	assert_output "default ssh://root@gpu-box:$SSH_PORT"
	kc=$XDG_CONFIG_HOME/openshell/gateways/rs/kubeconfig
	run "$KUBECTL" --kubeconfig "$kc" config view --minify -o jsonpath='{.clusters[0].cluster.server}'
	assert_output --regexp '^https://127\.0\.0\.2:[0-9]+$'
	run --separate-stderr "$KUBECTL" --kubeconfig "$kc" --request-timeout=20s get node openshell-rs \
		-o jsonpath='{.status.allocatable.nvidia\.com/gpu}'
	assert_success
	assert_output 2
	# the address the ssh alias stands for (ssh -G) is the kubeconfig's
	# server and in the API's certificate, and so is the alias
	run docker inspect openshell-cluster-rs --format '{{json .Args}}'
	assert_output --partial '"--tls-san=127.0.0.2","--tls-san=gpu-box"'
}

@test "verify runs its checks and pods through ssh" {
	run --separate-stderr openshell gateway verify --name rs
	assert_success
	assert_line '7 passed, 0 failed'
}

@test "doctor reads the remote host, in a container there, and names it" {
	# This machine has no NVIDIA driver; the sim host behind sshd has 2 GPUs.
	OPENSHELL_CLUSTER_IMAGE=$IMAGE run --separate-stderr openshell doctor --json
	assert_success
	run jq -r '.checks[] | select(.name == "docker-host" or .name == "nvidia-driver") | .status + " " + .evidence' <<<"$output"
	assert_line "pass Docker host $(docker info --format '{{.Name}}') (ssh://root@gpu-box:$SSH_PORT): read in a container of $IMAGE"
	assert_line "pass NVIDIA driver 550.54.15: 2 GPUs (NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3)"
}

@test "a context of the ssh endpoint, chosen by --context or 'docker context use', is the same remote daemon" {
	docker context create gpubox --docker "host=$DOCKER_HOST" >/dev/null
	unset DOCKER_HOST
	# --context: a loopback bind asked for is kept, with the tunnel to use
	run --separate-stderr openshell --context gpubox gateway start --name rc --image "$IMAGE" \
		--port "$(free_port)" --bind 127.0.0.2
	assert_success
	[[ "$stderr" == *"warning: the API is published on the loopback of gpu-box, the Docker daemon's host: reach it through a tunnel (ssh -L PORT:127.0.0.2:PORT gpu-box"* ]]
	run jq -r '[.docker_context, .docker_endpoint] | join(" ")' "$XDG_CONFIG_HOME/openshell/gateways/rc/metadata.json"
	assert_output "gpubox ssh://root@gpu-box:$SSH_PORT"
	run --separate-stderr "$KUBECTL" --kubeconfig "$XDG_CONFIG_HOME/openshell/gateways/rc/kubeconfig" \
		--request-timeout=20s get nodes -o name
	assert_output node/openshell-rc
	# the context pointed at another daemon since: refused, not followed there
	nowhere=unix://$BATS_TEST_TMPDIR/no-daemon.sock
	docker context update gpubox --docker "host=$nowhere" >/dev/null
	run --separate-stderr openshell gateway status --name rc
	assert_failure 6
	[ "$stderr" = "openshell: error: gateway 'rc' was made in Docker context 'gpubox' on ssh://root@gpu-box:$SSH_PORT, but the context now names $nowhere; point it back with 'docker context update gpubox --docker host=ssh://root@gpu-box:$SSH_PORT', or give the other daemon a context of its own" ]
	DOCKER_HOST=$nowhere run --separate-stderr openshell gateway list --json
	assert_failure 6
	run jq -r '.gateways[] | select(.name == "rc") | .state' <<<"$output"
	assert_output unknown
	docker context update gpubox --docker "host=ssh://root@gpu-box:$SSH_PORT" >/dev/null
	# the current context, as `docker context use` sets it: no variable
	# says the daemon is elsewhere, and the default bind is still refused
	docker context use gpubox >/dev/null
	run --separate-stderr openshell gateway start --name rd --image "$IMAGE"
	assert_failure 2
	[[ "$stderr" == *"the Docker daemon is on gpu-box (ssh://root@gpu-box:$SSH_PORT)"* ]]
	run --separate-stderr openshell gateway status --name rc
	assert_success
	run --separate-stderr openshell gateway destroy --name rc --yes
	assert_success
	assert_no_gateway_resources rc
	docker context use default >/dev/null
}

@test "list asks each daemon once, whatever the shell names; one that does not answer leaves its gateways unknown" {
	elsewhere=unix://$BATS_TEST_TMPDIR/no-daemon.sock
	gw=$XDG_CONFIG_HOME/openshell/gateways
	# beside rs: one on its daemon whose container is gone, one on a daemon that is gone
	mkdir -p "$gw/ghost" "$gw/lost"
	jq '.name = "ghost" | .container = "openshell-cluster-ghost"' "$gw/rs/metadata.json" >"$gw/ghost/metadata.json"
	jq --arg e "$elsewhere" '.name = "lost" | .container = "openshell-cluster-lost" | .docker_endpoint = $e' \
		"$gw/rs/metadata.json" >"$gw/lost/metadata.json"
	# a docker that notes each call and the daemon it goes to
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "${DOCKER_HOST-unset} $*" >>%s\nexec %s "$@"\n' "$BATS_TEST_TMPDIR/calls" \
		"$(command -v docker)" >"$BATS_TEST_TMPDIR/bin/docker"
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	DOCKER_HOST=$elsewhere OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker run --separate-stderr \
		openshell gateway list --json
	assert_failure 3
	json=$output
	run jq -r '.gateways | map(.name + "=" + .state) | join(" ")' <<<"$json"
	assert_output "ghost=missing lost=unknown rs=running"
	run jq -r '.gateways[] | select(.name == "rs") | .docker_endpoint' <<<"$json"
	assert_output "ssh://root@gpu-box:$SSH_PORT"
	run jq -r '.gateways[] | select(.name == "lost") | .daemon_error' <<<"$json"
	assert_output --partial "Cannot connect to the Docker daemon at $elsewhere"
	[[ "$stderr" == "openshell: error: cannot ask the Docker daemon ($elsewhere) about lost, listed as unknown: Cannot connect to the Docker daemon"* ]]
	# the shell's daemon: its labelled containers; rs's: one inspect for both of its gateways
	run sort <(cut -d' ' -f1,2 "$BATS_TEST_TMPDIR/calls")
	assert_output "ssh://root@gpu-box:$SSH_PORT inspect"$'\n'"$elsewhere ps"
	grep -q "inspect --type=container openshell-cluster-ghost openshell-cluster-rs$" "$BATS_TEST_TMPDIR/calls"
	assert_schema list "$json"
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway list
	assert_failure 3
	assert_line --regexp '^lost +unknown +yes +https://'
	assert_line --regexp '^rs +running +yes +https://127\.0\.0\.2:[0-9]+$'
	rm -r "$gw/ghost" "$gw/lost"
}

@test "stop, start and destroy find the daemon the gateway was made on, whatever the shell says now" {
	# A shell whose DOCKER_HOST names no daemon at all: the gateway's
	# metadata leads every command to ssh://root@gpu-box.
	elsewhere=unix://$BATS_TEST_TMPDIR/no-daemon.sock
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway stop --name rs
	assert_success
	run docker inspect openshell-cluster-rs --format '{{.State.Running}}'
	assert_output false
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway start --gpu --name rs --image "$IMAGE"
	assert_success
	# --context naming another daemon is a conflict, not a silent switch
	docker context create other --docker "host=$elsewhere" >/dev/null
	run --separate-stderr openshell --context other gateway status --name rs
	assert_failure 6
	[[ "$stderr" == *"gateway 'rs' was made in Docker context 'default' (ssh://root@gpu-box:$SSH_PORT), not 'other'; drop --context to reach it there"* ]]
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway status --name rs --json
	assert_success
	run jq -r '.state' <<<"$output"
	assert_output running
	# every call of verify, gpus, logs, kubectl and exec names the gateway's
	# daemon: one that named none would find no daemon here
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway verify --name rs
	assert_success
	assert_line '7 passed, 0 failed'
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway gpus --name rs
	assert_success
	assert_line --regexp '^openshell-rs +0 +GPU-'
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway logs --name rs --tail 1
	assert_success
	[ -n "$output$stderr" ]   # k3s logs to stderr
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway kubectl --name rs -- get nodes -o name
	assert_success
	assert_output node/openshell-rs
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway exec --name rs -- cat /etc/hostname
	assert_success
	DOCKER_HOST=$elsewhere run --separate-stderr openshell gateway destroy --name rs --yes
	assert_success
	assert_no_gateway_resources rs
	[ ! -e "$XDG_CONFIG_HOME/openshell/gateways/rs" ]
}

@test "a docker context of a tcp+TLS endpoint (a second sim host): start, verify, destroy" {
	tls_port=$(free_port)
	DOCKER_HOST=$SIM_DOCKER_HOST sim_host_extra --cluster-images --gpus 1 --tls-tcp "127.0.0.3:$tls_port"
	t=$SIM_HOST_EXTRA_DIR/tls
	docker context create tlsbox \
		--docker "host=tcp://127.0.0.3:$tls_port,ca=$t/ca.pem,cert=$t/cert.pem,key=$t/key.pem" >/dev/null
	unset DOCKER_HOST
	run --separate-stderr openshell --context tlsbox gateway start --gpu --name rt --image "$IMAGE" \
		--port "$(free_port)"
	assert_success
	run jq -r '[.docker_context, .docker_endpoint] | join(" ")' "$XDG_CONFIG_HOME/openshell/gateways/rt/metadata.json"
	assert_output "tlsbox tcp://127.0.0.3:$tls_port"
	# it is the second host's: one GPU, and its daemon holds the container
	run --separate-stderr "$KUBECTL" --kubeconfig "$XDG_CONFIG_HOME/openshell/gateways/rt/kubeconfig" \
		--request-timeout=20s get node openshell-rt -o jsonpath='{.status.allocatable.nvidia\.com/gpu}'
	assert_output 1
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST run docker inspect openshell-cluster-rt --format '{{.State.Running}}'
	assert_output true
	# later commands find it by its context, from a shell that names none
	run --separate-stderr openshell gateway verify --name rt
	assert_success
	assert_line '7 passed, 0 failed'
	run --separate-stderr openshell gateway destroy --name rt --yes
	assert_success
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST assert_no_gateway_resources rt
	# DOCKER_HOST with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH: recorded (the
	# path, never the keys), and set again for every later command
	DOCKER_HOST=tcp://127.0.0.3:$tls_port DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$t \
		run --separate-stderr openshell gateway start --name rv --image "$IMAGE" --port "$(free_port)" --no-wait
	assert_success
	md=$XDG_CONFIG_HOME/openshell/gateways/rv/metadata.json
	run jq -r '[.docker_context, .docker_endpoint, .docker_tls, .docker_tls_verify, .docker_cert_path] | map(tostring) | join(" ")' "$md"
	assert_output "default tcp://127.0.0.3:$tls_port false true $(realpath "$t")"
	run grep -c "PRIVATE KEY" "$md"
	assert_output 0
	run --separate-stderr openshell gateway status --name rv --json
	assert_success
	run jq -r .state <<<"$output"
	assert_output running
	run --separate-stderr openshell gateway destroy --name rv --yes
	assert_success
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST assert_no_gateway_resources rv
}
