#!/usr/bin/env bats
# The lifecycle commands end to end: status, list, stop (and start resuming),
# destroy, logs, exec and kubectl, and doctor --json, on a Docker engine with
# GPUs (the SIMULATED toolkit and k3s stand-in unless OPENSHELL_TEST_REAL_HOST=1);
# and every command's --json against doc/openshell.schema.json.

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 2
	LC_PORT=$(free_port)
	export LC_PORT
	openshell gateway start --gpu --name lc --image "$IMAGE" --port "$LC_PORT" >/dev/null
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
}

state_dir() {
	printf '%s/openshell/gateways/%s\n' "$XDG_CONFIG_HOME" "$1"
}

# Hold gateway $1's lock in the background for about two seconds, as a
# `gateway start` of it would; returns once the lock is held. The holder
# creates $BATS_TEST_TMPDIR/released just before it lets go.
# Hold gateway $1's lock until openshell says it waits for it (its stderr
# in $BATS_TEST_TMPDIR/err), however slowly openshell starts (valgrind).
hold_gateway_lock() {
	local dir=$XDG_CONFIG_HOME/openshell/locks
	mkdir -p "$dir"
	: >"$BATS_TEST_TMPDIR/err"
	# shellcheck disable=SC2016 # expanded by the holder's shell
	flock "$dir/$1.lock" sh -c 'touch "$1/held"
		i=0; while [ $i -lt 600 ] && ! grep -q "waiting for another openshell" "$1/err"; do sleep 0.1; i=$((i+1)); done
		touch "$1/released"' sh "$BATS_TEST_TMPDIR" 3>&- &
	while [ ! -e "$BATS_TEST_TMPDIR/held" ]; do
		kill -0 $! 2>/dev/null || return 1
		sleep 0.05
	done
}

# bats test_tags=lane
@test "status of a running GPU gateway: state, health, API ready, GPUs, address, kubeconfig" {
	run --separate-stderr openshell gateway status --name lc
	assert_success
	assert_line --index 0 "Gateway 'lc'"
	assert_line '  Container:   openshell-cluster-lc (running)'
	# Docker's own verdict, or in its first 30 s, start's facts (gateway/manage/status.h).
	assert_line --regexp "^  Health:      healthy: (HEALTHCHECK_OK gpus=$(sim_gpu_count)|start's checks pass; Docker's first probe is still to come)$"
	assert_line '  API ready:   yes'
	assert_line "  GPUs:        requested; $(sim_gpu_count) allocatable (nvidia.com/gpu)"
	assert_line "  Runtime:     /usr/bin/nvidia-container-runtime"
	assert_line "  API:         https://$API_ADDR:$LC_PORT"
	assert_line "  Kubeconfig:  $(state_dir lc)/kubeconfig"
	refute_line --partial 'Metadata:'
}

# bats test_tags=lane
@test "status --json is one object with the stable keys" {
	run --separate-stderr openshell gateway status --name lc --json
	assert_success
	run jq -r 'keys_unsorted | sort | join(",")' <<<"$output"
	assert_output 'api_ready,container,gpu,gpu_allocation,gpu_mode,gpu_use,gpus,gpus_allocatable,gpus_capacity,health,kubeconfig,metadata_error,mig_allocatable,mig_strategy,name,node_network,nodes,nvidia_runtime,schema,server,state'
	# A gateway of one host has no nodes on others.
	run jq -c .nodes <<<"$(openshell gateway status --name lc --json)"
	assert_output '[]'
	run --separate-stderr openshell gateway status --name lc --json
	run jq -c '[.schema, .name, .container, .state, .health, .api_ready, .gpu, .gpus, .gpus_allocatable, .gpus_capacity, .server, .metadata_error, .mig_strategy, .mig_allocatable, .node_network]' <<<"$output"
	assert_output "[1,\"lc\",\"openshell-cluster-lc\",\"running\",\"healthy\",true,true,{\"all\":true},$(sim_gpu_count),$(sim_gpu_count),\"https://$API_ADDR:$LC_PORT\",null,\"none\",{},\"vxlan\"]"
	# The sim host's daemon (20.10) has no CDI; a real one of 28.2 or later may.
	run jq -r .gpu_mode <<<"$(openshell gateway status --name lc --json)"
	if sim_real_host; then assert_output --regexp '^(legacy|cdi)$'; else assert_output legacy; fi
}

@test "status of an unknown gateway exits 5 and says so" {
	run --separate-stderr openshell gateway status --name nosuch
	assert_failure 5
	assert_output ''
	[[ "$stderr" == "openshell: error: no gateway named 'nosuch'"* ]]
	run --separate-stderr openshell gateway status --name Bad_Name
	assert_failure 2
}

# bats test_tags=lane
@test "list shows every gateway, sorted, with state, GPU and API" {
	run openshell gateway start --name lb --image "$IMAGE" --port "$(free_port)" --no-wait
	assert_success
	run --separate-stderr openshell gateway list
	assert_success
	assert_line --index 0 --regexp '^NAME +STATE +GPU +API$'
	assert_line --index 1 --regexp "^lb +running +no +https://${API_ADDR//./\\.}:[0-9]+\$"
	assert_line --index 2 "$(printf 'lc    running  yes  https://%s:%s' "$API_ADDR" "$LC_PORT")"
	[ "${#lines[@]}" -eq 3 ]
}

@test "a gateway whose metadata.json was deleted is still listed" {
	rm "$(state_dir lb)/metadata.json"
	run --separate-stderr openshell gateway list
	assert_success
	assert_line --regexp '^lb +running +no +-$'
	run --separate-stderr openshell gateway status --name lb --json
	assert_success
	run jq -r '[.state, .metadata_error, .server] | map(tostring) | join("|")' <<<"$output"
	assert_output 'running|metadata.json is missing|null'
}

@test "a gateway whose container is gone is listed as missing" {
	mkdir -p "$(state_dir ghost)"
	jq '.name = "ghost" | .container = "openshell-cluster-ghost"' "$(state_dir lc)/metadata.json" \
		>"$(state_dir ghost)/metadata.json"
	run --separate-stderr openshell gateway list --json
	assert_success
	run jq -r '.gateways | map(.name + "=" + .state) | join(" ")' <<<"$output"
	assert_output 'ghost=missing lb=running lc=running'
	run --separate-stderr openshell gateway list --json
	run jq -r '(keys | join(",")), (.gateways[0] | keys | join(","))' <<<"$output"
	assert_output 'gateways,schema
container,daemon_error,docker_context,docker_endpoint,gpu,gpu_allocation,gpu_mode,gpus,kubeconfig,metadata_error,mig_strategy,name,node_network,server,state'
}

# bats test_tags=lane
@test "stop stops, stopping again is a no-op, and start resumes with the state kept" {
	docker exec openshell-cluster-lc touch /var/lib/rancher/k3s/lifecycle-marker
	run --separate-stderr openshell gateway stop --name lc
	assert_success
	run docker inspect openshell-cluster-lc --format '{{.State.Status}}'
	assert_output exited
	run --separate-stderr openshell gateway status --name lc --json
	assert_success
	run jq -r '[.state, .api_ready, .gpus_allocatable, .mig_allocatable] | map(tostring) | join(" ")' <<<"$output"
	assert_output 'exited false null null'
	run --separate-stderr openshell gateway stop --name lc
	assert_success
	[[ "$stderr" == *"gateway 'lc' is already stopped (exited)"* ]]
	run --separate-stderr openshell gateway start --gpu --name lc --image "$IMAGE" --port "$LC_PORT" --json
	assert_success
	run jq -r .outcome <<<"$output"
	assert_output resumed
	docker exec openshell-cluster-lc test -e /var/lib/rancher/k3s/lifecycle-marker
	run --separate-stderr openshell gateway status --name lc --json
	run jq -r '[.state, .api_ready] | map(tostring) | join(" ")' <<<"$output"
	assert_output 'running true'
}

@test "every command's --json fits doc/openshell.schema.json" {
	# In the states this suite has made: lc a running GPU gateway, lb one
	# whose metadata is gone, ghost one whose container is.
	run --separate-stderr openshell gateway start --gpu --name lc --image "$IMAGE" --port "$LC_PORT" --json
	assert_success
	assert_schema start "$output"
	for n in lc lb ghost; do
		run --separate-stderr openshell gateway status --name "$n" --json
		assert_success
		assert_schema status "$output"
	done
	run --separate-stderr openshell gateway list --json
	assert_success
	assert_schema list "$output"
	run --separate-stderr openshell gateway verify --name lc --json
	assert_success
	assert_schema verify "$output"
	run --separate-stderr openshell doctor --json
	assert_success
	assert_schema doctor "$output"
	run --separate-stderr openshell image info --json "$IMAGE"
	assert_success
	assert_schema image_info "$output"
	run --separate-stderr openshell version --json
	assert_success
	assert_schema version "$output"
}

@test "the schema refuses what is not the vocabulary, so its check can fail" {
	run --separate-stderr openshell doctor --json
	assert_success
	doc=$output
	assert_schema doctor "$doc"
	run "$OPENSHELL_SRCDIR/tests/schema-check" "$OPENSHELL_SRCDIR/doc/openshell.schema.json" doctor \
		<<<"$(jq '.checks[0].status = "ok"' <<<"$doc")"
	assert_failure 1
	assert_output --partial "checks/0/status: 'ok' is not one of ['pass', 'warn', 'fail', 'skip']"
	run "$OPENSHELL_SRCDIR/tests/schema-check" "$OPENSHELL_SRCDIR/doc/openshell.schema.json" doctor \
		<<<"$(jq 'del(.schema)' <<<"$doc")"
	assert_failure 1
	run --separate-stderr openshell gateway status --name lc --json
	doc=$output
	run "$OPENSHELL_SRCDIR/tests/schema-check" "$OPENSHELL_SRCDIR/doc/openshell.schema.json" status \
		<<<"$(jq '.gpus = "all"' <<<"$doc")"
	assert_failure 1
	assert_output --partial "gpus: 'all' is not valid"
	run "$OPENSHELL_SRCDIR/tests/schema-check" "$OPENSHELL_SRCDIR/doc/openshell.schema.json" status \
		<<<"$(jq '.gateway = .name' <<<"$doc")"
	assert_failure 1
}

@test "volumes balance: start, stop, start, --recreate, a rolled-back start and destroy leave none behind" {
	# The image's VOLUME lines give each container an anonymous volume for
	# every path no mount covers (moby's own doing, at each run): the
	# container's removal must take them, or each cycle leaves a node's state.
	before=$(docker volume ls -q | sort)
	port=$(free_port)
	openshell -q gateway start --name vb --image "$IMAGE" --port "$port" --no-wait
	anon=$(docker inspect openshell-cluster-vb --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}')
	assert_equal "$(wc -w <<<"$anon")" 4
	openshell -q gateway stop --name vb
	openshell -q gateway start --name vb --image "$IMAGE" --port "$port" --no-wait
	openshell -q gateway start --name vb --image "$IMAGE" --port "$port" --no-wait --recreate
	for v in $anon; do
		run docker volume inspect "$v"
		[[ $v == openshell-cluster-vb ]] || assert_failure
	done
	# Refused at its docker run, after the container (and its volumes) were made.
	run --separate-stderr openshell gateway start --name vb2 --image "$IMAGE" --port "$port" --no-wait
	assert_failure 1
	assert_no_gateway_resources vb2
	openshell -q gateway destroy --name vb --yes
	assert_equal "$(docker volume ls -q | sort)" "$before"
}

@test "two gateways on one host: each in a cgroup namespace of its own, so their pods' cgroups stay apart" {
	# The kubelet makes kubepods at the root of the hierarchy it sees: with
	# the host's namespace on cgroup v2 that root is the host's own, shared by
	# every gateway. In a namespace of its own it is the container's cgroup.
	openshell -q gateway start --name cg --image "$IMAGE" --port "$(free_port)" --no-wait
	for g in lc cg; do
		run docker inspect "openshell-cluster-$g" --format '{{.HostConfig.CgroupnsMode}}'
		assert_output private
		run docker exec "openshell-cluster-$g" cat /proc/1/cgroup
		assert_success
		refute_output --partial /docker
		assert_equal "$(grep -cv ':/$' <<<"$output")" 0
	done
	openshell -q gateway destroy --name cg --yes
}

@test "stop of an unknown gateway exits 5" {
	run --separate-stderr openshell gateway stop --name nosuch
	assert_failure 5
}

# bats test_tags=lane
@test "logs shows the entrypoint's lines and --tail limits them" {
	run --separate-stderr openshell gateway logs --name lc
	assert_success
	assert_output --partial 'openshell-entrypoint'
	run --separate-stderr openshell gateway logs --name lc --tail 1
	assert_success
	[ "${#lines[@]}" -le 1 ]
	run --separate-stderr openshell gateway logs --name lc --tail many
	assert_failure 2
	[[ "$stderr" == "openshell: error: invalid --tail 'many'"* ]]
}

@test "logs without --follow has no deadline: a slow reader is not cut off" {
	# docker, but `logs` takes longer than the per-call deadline.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/bash\n[ "$1" = logs ] && sleep 2\nexec %s "$@"\n' "$(command -v docker)" >"$BATS_TEST_TMPDIR/bin/docker"
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker OPENSHELL_CALL_TIMEOUT=1s run --separate-stderr \
		openshell gateway logs --name lc --tail 5
	assert_success
	# k3s logs to stderr (logrus), its entrypoint to stdout: 5 in all.
	[ "$((${#lines[@]} + ${#stderr_lines[@]}))" -eq 5 ]
}

# bats test_tags=lane
@test "exec returns the child's output and exit status, with the k3s kubeconfig set" {
	# shellcheck disable=SC2016 # expanded by the shell in the container
	run --separate-stderr openshell gateway exec --name lc -- sh -c 'echo "kc=$KUBECONFIG"; exit 3'
	assert_failure 3
	assert_output 'kc=/etc/rancher/k3s/k3s.yaml'
	run --separate-stderr openshell gateway exec --name lc -- true
	assert_success
}

# bats test_tags=lane
@test "exec passes stdin through" {
	run --separate-stderr openshell gateway exec --name lc -- cat <<<'through stdin'
	assert_success
	assert_output 'through stdin'
}

@test "exec without '--' or without a command is a usage error" {
	run --separate-stderr openshell gateway exec --name lc sh
	assert_failure 2
	[[ "$stderr" == *"put '--' before the command to run"* ]]
	run --separate-stderr openshell gateway exec --name lc --
	assert_failure 2
	[[ "$stderr" == *"no command after '--'"* ]]
	run --separate-stderr openshell gateway exec --name nosuch -- true
	assert_failure 5
}

# bats test_tags=lane
@test "kubectl -- get nodes shows the node's allocatable GPUs" {
	run --separate-stderr openshell gateway kubectl --name lc -- get nodes -o json
	assert_success
	run jq -r '.items[0].status.allocatable["nvidia.com/gpu"]' <<<"$output"
	assert_output "$(sim_gpu_count)"
}

# bats test_tags=lane
@test "destroy refuses without --yes when stdin is not a terminal" {
	run --separate-stderr openshell gateway destroy --name lb </dev/null
	assert_failure 2
	[[ "$stderr" == *"pass --yes"* ]]
	run docker inspect openshell-cluster-lb --format '{{.State.Status}}'
	assert_output running
}

@test "stop waits while another openshell holds the gateway's lock, then stops it" {
	hold_gateway_lock lb
	# Not `run`: its stderr must reach the file the lock holder watches.
	openshell gateway stop --name lb 2>"$BATS_TEST_TMPDIR/err"
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
	[[ "$stderr" == *"waiting for another openshell working on gateway 'lb'"* ]]
	[ -e "$BATS_TEST_TMPDIR/released" ]
	run docker inspect openshell-cluster-lb --format '{{.State.Status}}'
	assert_output exited
}

@test "destroy waits for the gateway's lock too" {
	hold_gateway_lock locked
	openshell gateway destroy --name locked --yes --ignore-not-found 2>"$BATS_TEST_TMPDIR/err"
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
	[[ "$stderr" == *"waiting for another openshell working on gateway 'locked'"* ]]
	[[ "$stderr" == *"no gateway named 'locked'; nothing to destroy"* ]]
	[ -e "$BATS_TEST_TMPDIR/released" ]
}

# bats test_tags=lane
@test "destroy --yes leaves no container, network, volume or config dir" {
	run docker volume inspect openshell-cluster-lb --format '{{.Name}}'
	assert_success
	run --separate-stderr openshell gateway destroy --name lb --yes
	assert_success
	assert_no_gateway_resources lb
	[ ! -e "$(state_dir lb)" ]
	run --separate-stderr openshell gateway list
	refute_line --regexp '^lb '
}

@test "destroying a gateway that does not exist exits 5, as stop does; --ignore-not-found makes it 0" {
	run --separate-stderr openshell gateway destroy --name lb --yes
	assert_failure 5
	assert_equal "$stderr" "openshell: error: no gateway named 'lb'; nothing to destroy"
	run --separate-stderr openshell gateway stop --name lb
	assert_failure 5
	run --separate-stderr openshell gateway destroy --name lb --yes --ignore-not-found
	assert_success
	[[ "$stderr" == *"no gateway named 'lb'; nothing to destroy"* ]]
	# A gateway of which only its files are left (made by the list test) is one.
	run --separate-stderr openshell gateway destroy --name ghost --yes
	assert_success
	[ ! -e "$(state_dir ghost)" ]
	run --separate-stderr openshell gateway destroy --name ghost --yes
	assert_failure 5
}

@test "destroy --keep-volume keeps the volume; a later destroy removes it" {
	run openshell gateway start --name kv --image "$IMAGE" --port "$(free_port)" --no-wait
	assert_success
	run --separate-stderr openshell gateway destroy --name kv --yes --keep-volume
	assert_success
	run docker volume inspect openshell-cluster-kv --format '{{index .Labels "org.openshell.gateway"}}'
	assert_output kv
	run docker ps -a --filter name=^openshell-cluster-kv\$ --format '{{.Names}}'
	assert_output ''
	run --separate-stderr openshell gateway destroy --name kv --yes
	assert_success
	assert_no_gateway_resources kv
}

@test "GPUs off on a volume a GPU gateway left: the device plugin is uninstalled, no nvidia.com/gpu allocatable remains" {
	run openshell gateway start --gpu --name kg --image "$IMAGE" --port "$(free_port)"
	assert_success
	openshell -q gateway destroy --name kg --yes --keep-volume
	run --separate-stderr openshell gateway start --name kg --image "$IMAGE" --port "$(free_port)"
	assert_success
	[[ "$stderr" == *"removing what an earlier GPU run installed on the volume"* ]]
	run gw_kubectl kg get helmchart nvidia-device-plugin -n kube-system -o json
	assert_failure
	assert_output --partial NotFound
	run gw_kubectl kg get ds -A -o json
	assert_equal "$(jq '[.items[] | select(.metadata.name == "nvidia-device-plugin")] | length' <<<"$output")" 0
	# The node object lives on the volume, and a kubelet without its
	# checkpoint zeroes the extended resources it had
	# (kubelet_node_status.go: reconcileExtendedResource): 0, not absent.
	run gw_kubectl kg get nodes -o json
	assert_equal "$(jq -r '.items[0].status | "\(.allocatable["nvidia.com/gpu"] // "absent") \(.capacity["nvidia.com/gpu"] // "absent")"' <<<"$output")" "0 0"
	openshell -q gateway destroy --name kg --yes
}

@test "destroy never removes an unlabelled container, network or volume of the same name" {
	sim_busybox_image lifecycle-busybox
	docker volume create openshell-cluster-fv >/dev/null
	docker network create openshell-cluster-fv >/dev/null
	docker create --name openshell-cluster-fv lifecycle-busybox >/dev/null
	# A volume labelled for another gateway is not this one's either.
	docker volume create --label org.openshell.managed-by=openshell --label org.openshell.gateway=other \
		openshell-cluster-fw >/dev/null
	# Nothing of this gateway's: no gateway of that name, as for stop.
	run --separate-stderr openshell gateway destroy --name fv --yes
	assert_failure 5
	[[ "$stderr" == *"container openshell-cluster-fv exists but was not created by openshell (it lacks the labels"* ]]
	[[ "$stderr" == *"network openshell-cluster-fv exists but was not created by openshell"*"; left it in place"* ]]
	[[ "$stderr" == *"volume openshell-cluster-fv exists but was not created by openshell"*"; left it in place"* ]]
	run --separate-stderr openshell gateway destroy --name fw --yes
	assert_failure 5
	docker container inspect openshell-cluster-fv >/dev/null
	docker network inspect openshell-cluster-fv >/dev/null
	docker volume inspect openshell-cluster-fv >/dev/null
	docker volume inspect openshell-cluster-fw >/dev/null
	# The other commands refuse to manage it too.
	run --separate-stderr openshell gateway status --name fv
	assert_failure 6
	docker rm openshell-cluster-fv >/dev/null
	docker network rm openshell-cluster-fv >/dev/null
	docker volume rm openshell-cluster-fv openshell-cluster-fw >/dev/null
}

@test "doctor --json is one object with checks and their counts by status" {
	export OPENSHELL_CLUSTER_IMAGE=$IMAGE   # the Docker host is read in a container of it
	run --separate-stderr openshell doctor --json
	assert_success
	run jq -r '[.counts.fail, .counts.skip, (.checks | length > 3),
		(.counts | add) == (.checks | length),
		([.checks[] | select(.status == "warn")] | length) == .counts.warn] | map(tostring) | join(" ")' <<<"$output"
	assert_output '0 0 true true true'
	run --separate-stderr openshell doctor --json
	run jq -r '.checks[] | select(.name == "docker-daemon") | .status' <<<"$output"
	assert_output pass
	run --separate-stderr openshell doctor --json
	run jq -e 'all(.checks[]; (.status | IN("pass", "warn", "fail")) and (.evidence | type == "string")
		and .detail == null and (.status == "pass" or .fix != null or .status == "fail"))' <<<"$output"
	assert_success
	# The human output shows the same checks, one line each, in the same words.
	run --separate-stderr openshell doctor --json
	n=$(jq '.checks | length' <<<"$output")
	run --separate-stderr openshell doctor
	assert_success
	[ "$(grep -cE '^(pass|warn|fail)  ' <<<"$output")" -eq "$n" ]
}

@test "doctor looks for the toolkit's hook on the Docker host, not on this machine's PATH" {
	sim_only "the simulated hook stands in for the real toolkit's"
	# The sim host has its hook in /usr/bin, as a real host with the toolkit has.
	PATH=${PATH//$SIM_HOST_DIR\/host-bin:/} OPENSHELL_CLUSTER_IMAGE=$IMAGE run --separate-stderr openshell doctor --json
	assert_success
	run jq -r '.checks[] | select(.name == "nvidia-container-runtime-hook") | .status + " " + .evidence' <<<"$output"
	assert_output "pass nvidia-container-runtime-hook: /usr/bin/nvidia-container-runtime-hook on the Docker host"
}

# bats test_tags=lane
@test "destroy of the GPU gateway cleans up after it" {
	run --separate-stderr openshell gateway destroy --name lc --yes
	assert_success
	assert_no_gateway_resources lc
	[ ! -e "$(state_dir lc)" ]
	run --separate-stderr openshell gateway list --json
	run jq -c . <<<"$output"
	assert_output '{"schema":1,"gateways":[]}'
}
