#!/usr/bin/env bats
# The k3s in the test bed is a stand-in, so a real kubectl (1.35, fetched
# by scripts/real-kubectl) checks what the stand-in cannot vouch for:
# every kubectl argv openshell emits parses, and every kubeconfig it writes
# loads. Each argv is replayed against an address where nothing listens:
# a valid command gets as far as connecting; an invalid one never does.

setup_file() {
	load helpers/gateway
	KUBECTL=$("$OPENSHELL_SRCDIR/scripts/real-kubectl") || return 1
	export KUBECTL
	gateway_suite_start --gpus 2
	# A docker that records each argv (one shell-quoted line per call) and
	# the manifests fed to `kubectl apply -f -`.
	export ARGV_LOG=$BATS_FILE_TMPDIR/argv.log APPLIED=$BATS_FILE_TMPDIR/applied.json
	mkdir -p "$BATS_FILE_TMPDIR/bin"
	cat >"$BATS_FILE_TMPDIR/bin/docker" <<-EOS
		#!/bin/bash
		printf '%q ' "\$@" >>"$ARGV_LOG"; echo >>"$ARGV_LOG"
		case " \$* " in
		*" apply "*) tee "$APPLIED" | $(command -v docker) "\$@"; exit "\${PIPESTATUS[1]}" ;;
		esac
		exec $(command -v docker) "\$@"
	EOS
	chmod +x "$BATS_FILE_TMPDIR/bin/docker"
	export OPENSHELL_DOCKER=$BATS_FILE_TMPDIR/bin/docker
	port=$(free_port)
	openshell -q gateway start --gpu --name kr --image "$IMAGE" --port "$port" >/dev/null
	openshell -q gateway verify --name kr >/dev/null
	openshell -q gateway status --name kr >/dev/null
	if ! sim_real_host; then
		# The timeout path, whose diagnostics read logs by label.
		openshell -q gateway start --gpu --name krc --image openshell-cluster:sim-plugin-crashloop \
			--port "$(free_port)" --timeout 5s >/dev/null 2>&1 || true
	fi
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	# Nothing listens on port 1: kubectl fails on connecting, after parsing.
	cat >"$BATS_TEST_TMPDIR/nowhere" <<-EOS
		apiVersion: v1
		kind: Config
		clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
		users: [{name: u, user: {token: t}}]
		contexts: [{name: x, context: {cluster: c, user: u}}]
		current-context: x
	EOS
}

@test "openshell emitted kubectl calls through docker exec" {
	run grep -c ' kubectl ' "$ARGV_LOG"
	assert_success
	[ "$output" -ge 5 ]
}

@test "every kubectl argv openshell emits is accepted by the real kubectl 1.35" {
	n=0
	while IFS= read -r line; do
		eval "argv=($line)"
		# exec [--interactive] CTR kubectl ARGS...
		for ((i = 0; i < ${#argv[@]}; i++)); do
			[ "${argv[i]}" = kubectl ] && break
		done
		[ "${argv[0]}" = exec ] && [ "$i" -lt "${#argv[@]}" ] || continue
		args=("${argv[@]:i+1}")
		# apply reads and decodes its manifest before it connects.
		input=/dev/null
		[[ " ${args[*]} " != *" apply "* ]] || input=$APPLIED
		run "$KUBECTL" --kubeconfig "$BATS_TEST_TMPDIR/nowhere" --request-timeout=2s "${args[@]}" <"$input"
		if [[ "$output" != *"refused"* && "$output" != *"Unable to connect"* ]]; then
			echo "kubectl ${args[*]}: $output" >&2
			false
		fi
		n=$((n + 1))
	done <"$ARGV_LOG"
	[ "$n" -ge 5 ]
}

@test "openshell applied a manifest, and it is a JSON Pod limited to one GPU" {
	run jq -r '[.kind, .spec.runtimeClassName, .spec.restartPolicy, .spec.containers[0].resources.limits["nvidia.com/gpu"]] | @tsv' "$APPLIED"
	assert_output "$(printf 'Pod\tnvidia\tNever\t1')"
}

@test "the kubeconfig openshell writes loads in the real kubectl, pointing at the published port" {
	kc=$XDG_CONFIG_HOME/openshell/gateways/kr/kubeconfig
	run "$KUBECTL" --kubeconfig "$kc" config view --minify -o jsonpath='{.clusters[0].cluster.server} {.current-context}'
	assert_success
	assert_output "$(jq -r .server "$XDG_CONFIG_HOME/openshell/gateways/kr/metadata.json") openshell-kr"
}

@test "a merged user kubeconfig loads in the real kubectl, other contexts kept" {
	home=$BATS_TEST_TMPDIR/home
	mkdir -p "$home/.kube"
	cp "$BATS_TEST_TMPDIR/nowhere" "$home/.kube/config"
	HOME=$home KUBECONFIG='' run openshell gateway start --gpu --name kr --image "$IMAGE" --update-kubeconfig
	assert_success
	run "$KUBECTL" --kubeconfig "$home/.kube/config" config get-contexts -o name
	assert_success
	assert_line openshell-kr
	assert_line x
	run "$KUBECTL" --kubeconfig "$home/.kube/config" config current-context
	assert_output openshell-kr
}
