#!/usr/bin/env bats
# The kubeconfig openshell writes, used as its users use it: the real
# kubectl 1.35 (scripts/real-kubectl) on the host, through the published
# port, with the client's own TLS checks; the README's sample GPU pod as
# written there. Inside the gateway the same real kubectl answers openshell,
# as k3s's does.

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	KUBECTL=$("$OPENSHELL_SRCDIR/scripts/real-kubectl") || return 1
	export KUBECTL
	gateway_suite_start --gpus 2
	# A docker that records the manifest fed to verify's `kubectl create -f -`.
	export APPLIED=$BATS_FILE_TMPDIR/applied.json
	mkdir -p "$BATS_FILE_TMPDIR/bin"
	cat >"$BATS_FILE_TMPDIR/bin/docker" <<-EOS
		#!/bin/bash
		case " \$* " in
		*" create --validate=false -f - "*) tee "$APPLIED" | $(command -v docker) "\$@"; exit "\${PIPESTATUS[1]}" ;;
		esac
		exec $(command -v docker) "\$@"
	EOS
	chmod +x "$BATS_FILE_TMPDIR/bin/docker"
	openshell -q gateway start --gpu --name kr --image "$IMAGE" --port "$(free_port)" >/dev/null
	OPENSHELL_DOCKER=$BATS_FILE_TMPDIR/bin/docker openshell -q gateway verify --name kr >/dev/null
	# Published on every address of this host, with a name for the certificate.
	openshell -q gateway start --gpu --name kw --image "$IMAGE" --port "$(free_port)" --bind 0.0.0.0 \
		--tls-san gw.example.test >/dev/null
	export HOME=$BATS_FILE_TMPDIR/home
	mkdir -p "$HOME"
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	KC=$XDG_CONFIG_HOME/openshell/gateways/kr/kubeconfig
}

# kc ARGS...: the real kubectl on the host with gateway kr's kubeconfig.
kc() {
	"$KUBECTL" --kubeconfig "$KC" --request-timeout=20s "$@"
}

@test "kubectl in the gateway is the real client, as k3s's multi-call kubectl" {
	want=$("$KUBECTL" version --client -o json | jq -r .clientVersion.gitVersion)
	[[ $want == v1.35.* ]]
	run docker exec openshell-cluster-kr kubectl version --client -o json
	assert_success
	assert_equal "$(jq -r .clientVersion.gitVersion <<<"$output")" "$want"
	run docker exec openshell-cluster-kr k3s kubectl version --client -o json
	assert_equal "$(jq -r .clientVersion.gitVersion <<<"$output")" "$want"
	# Without KUBECONFIG it finds k3s's own, as k3s's kubectl does.
	run docker exec openshell-cluster-kr env -u KUBECONFIG kubectl get --raw /readyz
	assert_output ok
}

@test "the kubeconfig reaches the API through the published port, and the client verifies its certificate" {
	run jq -r .server "$XDG_CONFIG_HOME/openshell/gateways/kr/metadata.json"
	server=$output
	run "$KUBECTL" --kubeconfig "$KC" config view --minify -o jsonpath='{.clusters[0].cluster.server} {.current-context}'
	assert_output "$server openshell-kr"
	run kc get nodes -o json
	assert_success
	assert_equal "$(jq -r '.items[0].status.conditions[] | select(.type == "Ready") | .status' <<<"$output")" True
	assert_equal "$(jq -r '.items[0].status.allocatable["nvidia.com/gpu"]' <<<"$output")" "$(sim_gpu_count)"
	# A name the certificate does not hold is refused by the client.
	run kc --tls-server-name not-in-the-certificate.example get nodes
	assert_failure
	assert_output --partial "x509: certificate is valid for"
	assert_output --partial "not not-in-the-certificate.example"
}

# The README's sample GPU pod, exactly as written there: the yaml block after
# its <!-- sample-gpu-pod --> marker.
readme_sample_pod() {
	awk '/<!-- sample-gpu-pod -->/ { marked = 1; next }
	     marked && /^```yaml$/ { on = 1; next }
	     on && /^```$/ { exit }
	     on' "$OPENSHELL_SRCDIR/README.md"
}

@test "the README's sample GPU pod, applied from the host as written, runs under the nvidia runtime and logs its one GPU" {
	pin() { sed -n "s/^$1=//p" "$OPENSHELL_SRCDIR/deploy/versions.env"; }
	pod=$BATS_TEST_TMPDIR/gpu-pod.yaml
	readme_sample_pod >"$pod"
	run kc apply --dry-run=client -o json -f "$pod"
	assert_success
	sample=$output
	assert_equal "$(jq -r .kind <<<"$sample")" Pod
	assert_equal "$(jq -r .spec.runtimeClassName <<<"$sample")" nvidia
	assert_equal "$(jq -r '.spec.containers[0].resources.limits["nvidia.com/gpu"]' <<<"$sample")" 1
	# The image the cluster image bundles, so that the sample runs offline
	# (and here, where nothing can be pulled, at all).
	assert_equal "$(jq -r '.spec.containers[0].image' <<<"$sample")" "$(pin SMOKE_IMAGE)"
	name=$(jq -r .metadata.name <<<"$sample")
	run kc apply -f "$pod"
	assert_success
	assert_output "pod/$name created"
	run kc wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$name" --timeout=60s
	assert_success
	assert_output "pod/$name condition met"
	run kc logs "$name"
	assert_success
	assert_equal "${#lines[@]}" 1
	uuid=$(sed -n 's/^GPU 0: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$output")
	run grep -cxF "$uuid" <(sim_gpu_uuids)
	assert_output 1
	# What the README reads it with says the same.
	logged=$(kc logs "$name")
	run openshell gateway kubectl --name kr -- logs "$name"
	assert_success
	assert_output "$logged"
	run kc delete pod "$name"
	assert_output "pod \"$name\" deleted from default namespace"
}

@test "the README's sample without runtimeClassName: nvidia gets no GPU: runc gives it no nvidia-smi" {
	readme_sample_pod | sed '/^  runtimeClassName: nvidia$/d; s/^  name: .*/  name: no-runtime-class/' \
		>"$BATS_TEST_TMPDIR/pod.yaml"
	run grep -c runtimeClassName "$BATS_TEST_TMPDIR/pod.yaml"
	assert_output 0
	# Applied as the README applies it: through openshell, from stdin.
	run openshell gateway kubectl --name kr -- apply -f - <"$BATS_TEST_TMPDIR/pod.yaml"
	assert_success
	assert_output "pod/no-runtime-class created"
	run kc wait --for=jsonpath='{.status.phase}'=Failed pod/no-runtime-class --timeout=60s
	assert_success
	run kc get pod no-runtime-class -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}'
	assert_output StartError
	run kc get pod no-runtime-class -o jsonpath='{.status.containerStatuses[0].state.terminated.message}'
	assert_output --partial 'exec: "nvidia-smi": executable file not found in $PATH'
	kc delete pod no-runtime-class
}

@test "verify created a JSON List: a Pod limited to one GPU, one with no GPU asking for all, a privileged one limited to one GPU, under the nvidia runtime" {
	run jq -r '.kind, (.items[] | [.kind, .spec.runtimeClassName, .spec.restartPolicy,
		(.spec.containers[0].resources.limits["nvidia.com/gpu"] // "-"),
		((.spec.containers[0].env // [])[] | select(.name == "NVIDIA_VISIBLE_DEVICES") | .value) // "-",
		(.spec.containers[0].securityContext.privileged // false)] | @tsv)' "$APPLIED"
	assert_equal "${#lines[@]}" 4
	assert_line --index 0 List
	assert_line --index 1 "$(printf 'Pod\tnvidia\tNever\t1\t-\tfalse')"
	assert_line --index 2 "$(printf 'Pod\tnvidia\tNever\t-\tall\tfalse')"
	assert_line --index 3 "$(printf 'Pod\tnvidia\tNever\t1\t-\ttrue')"
}

@test "kubectl exec from the host: the streams, stdin, the exit code, and the API's refusals" {
	SMOKE=$(sed -n 's/^SMOKE_IMAGE=//p' "$OPENSHELL_SRCDIR/deploy/versions.env")
	kc apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ex"},"spec":{"containers":[{"name":"c","image":"'"$SMOKE"'","command":["sleep","3600"],"env":[{"name":"GREETING","value":"hi"}]}]}}' >/dev/null
	kc wait --for=condition=Ready pod/ex --timeout=60s >/dev/null
	# The real client speaks the websocket protocol first (v5.channel.k8s.io).
	run --separate-stderr kc exec ex -- sh -c 'echo "out $GREETING"; echo err >&2; exit 3'
	assert_failure 3
	assert_output "out hi"
	[[ $stderr == *err*"command terminated with exit code 3"* ]]
	run --separate-stderr kc exec -i ex -- tr a-z A-Z <<<"through stdin"
	assert_success
	assert_output "THROUGH STDIN"
	# More than the client's write buffer: one message in several frames.
	run --separate-stderr bash -c "head -c 100000 /dev/zero | $(printf '%q ' "$KUBECTL" --kubeconfig "$KC") exec -i ex -- wc -c"
	assert_success
	assert_equal "${output//[[:space:]]/}" 100000
	run --separate-stderr kc exec ex -c nope -- true
	assert_failure 1
	[[ $stderr == *"container nope is not valid for pod ex"* ]]
	kc apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ex-done"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"'"$SMOKE"'","command":["true"]}]}}' >/dev/null
	kc wait --for=jsonpath='{.status.phase}'=Succeeded pod/ex-done --timeout=60s >/dev/null
	# kubectl's own refusal, from the pod's phase the API gives it.
	run --separate-stderr kc exec ex-done -- true
	assert_failure 1
	[[ $stderr == *"cannot exec into a container in a completed pod; current phase is Succeeded"* ]]
	kc delete pod ex ex-done --wait=false >/dev/null
}

@test "a merged user kubeconfig reaches the gateway under its context, other contexts kept" {
	mkdir -p "$HOME/.kube"
	cat >"$HOME/.kube/config" <<-EOS
		apiVersion: v1
		kind: Config
		clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
		users: [{name: u, user: {token: t}}]
		contexts: [{name: x, context: {cluster: c, user: u}}]
		current-context: x
	EOS
	KUBECONFIG='' run openshell gateway start --gpu --name kr --image "$IMAGE" --update-kubeconfig
	assert_success
	run "$KUBECTL" --kubeconfig "$HOME/.kube/config" config get-contexts -o name
	assert_line openshell-kr
	assert_line x
	run "$KUBECTL" --kubeconfig "$HOME/.kube/config" config current-context
	assert_output openshell-kr
	run "$KUBECTL" --kubeconfig "$HOME/.kube/config" --request-timeout=20s get nodes -o name
	assert_success
	assert_output node/openshell-kr
}

@test "--bind 0.0.0.0: the client reaches the API on this host's own address, which the certificate names" {
	sim_only "publishes on the test machine's addresses"
	kw=$XDG_CONFIG_HOME/openshell/gateways/kw/kubeconfig
	port=$(jq -r '.server | sub(".*:"; "")' "$XDG_CONFIG_HOME/openshell/gateways/kw/metadata.json")
	addr=$(ip -4 -o addr show scope global | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	[ -n "$addr" ]
	run "$KUBECTL" --kubeconfig "$kw" --request-timeout=20s --server "https://$addr:$port" get nodes -o name
	assert_success
	assert_output node/openshell-kw
	# --tls-san's name is in the certificate too, and the kubeconfig's server.
	run "$KUBECTL" --kubeconfig "$kw" --request-timeout=20s --server "https://127.0.0.1:$port" \
		--tls-server-name gw.example.test get nodes -o name
	assert_success
	run "$KUBECTL" --kubeconfig "$kw" config view --minify -o jsonpath='{.clusters[0].cluster.server}'
	assert_output "https://gw.example.test:$port"
}
