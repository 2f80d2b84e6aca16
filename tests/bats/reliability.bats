#!/usr/bin/env bats
# Faults users meet, injected on purpose: interrupts at each step, a hung
# or absent docker, a container killed while openshell waits, unwritable
# config, hostile input, and two starts at once. Each test asserts the
# clear error, the exit status, and that nothing was lost or left behind.

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 2
	# A cluster image whose device plugin arrives late, to interrupt the GPU wait.
	if ! sim_real_host; then
		cid=$(docker create openshell-cluster:sim)
		docker commit --change 'ENV SIM_HELM_DELAY=30' "$cid" openshell-cluster:sim-slow-plugin >/dev/null
		docker rm "$cid" >/dev/null
	fi
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	FAKE=$BATS_TEST_TMPDIR/bin
	mkdir -p "$FAKE"
}

# A docker that hangs on every call; its processes carry a unique marker.
fake_hanging_docker() {
	marker=fakedocker-$BATS_TEST_NUMBER-$$
	printf '#!/bin/bash\nexec -a %s sleep 300\n' "$marker" >"$FAKE/docker"
	chmod +x "$FAKE/docker"
}

# docker, but `run` hangs after touching $BATS_TEST_TMPDIR/in-run: an
# interrupt then lands inside it.
fake_docker_run_hangs() {
	printf '#!/bin/bash\n[ "$1" = run ] && { touch %s/in-run; sleep 300; }\nexec %s "$@"\n' \
		"$BATS_TEST_TMPDIR" "$(command -v docker)" >"$FAKE/docker"
	chmod +x "$FAKE/docker"
}

# Start openshell in the background with stderr to a file; wait until the
# file shows $1 (or, for "file:PATH", until PATH exists), then send signal
# $2; sets $status and $stderr.
interrupt_when() {
	local want=$1 sig=$2 i
	shift 2
	"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" "$@" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		if [[ $want == file:* ]]; then
			[ -e "${want#file:}" ] && break
		else
			grep -qF -- "$want" "$BATS_TEST_TMPDIR/err" && break
		fi
		sleep 0.1
	done
	kill -"$sig" "$pid"
	status=0
	wait "$pid" || status=$?
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
}

@test "SIGINT before the container exists: exit 130, no orphan docker, nothing changed" {
	fake_hanging_docker
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when 'checking Docker' INT gateway start --name i0
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"openshell: error: interrupted; gateway 'i0' was not changed"* ]]
	run pgrep -f "$marker"
	assert_failure
}

@test "SIGTERM exits 143" {
	fake_hanging_docker
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when 'checking Docker' TERM gateway start --name i1
	[ "$status" -eq 143 ]
}

@test "SIGINT during docker run removes the network and volume this run made" {
	# docker, but `run` hangs first: the interrupt lands inside it.
	fake_docker_run_hangs
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when "file:$BATS_TEST_TMPDIR/in-run" INT \
		gateway start --name ir --image "$IMAGE" --port "$(free_port)"
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"openshell: error: interrupted; removed what this run had created for gateway 'ir'"* ]]
	assert_no_gateway_resources ir
}

@test "SIGINT during docker run lets the daemon finish the container, then removes it" {
	# The daemon goes on creating a container whose client was killed
	# (scripts/soak --seed 3: the rollback looked before it existed, took
	# its network, and left a container that could never start). Here the
	# "daemon" side runs in a session of its own and creates the container
	# a second after the call began, whatever happens to the client.
	real=$(command -v docker)
	cat >"$FAKE/docker" <<-EOF
	#!/bin/bash
	if [ "\$1" = run ]; then
		setsid sh -c 'sleep 1; exec "\$0" "\$@"' "$real" "\$@" >"$BATS_TEST_TMPDIR/run.out" 2>&1 </dev/null &
		touch "$BATS_TEST_TMPDIR/in-run"
		wait \$!
		st=\$?
		cat "$BATS_TEST_TMPDIR/run.out"
		exit \$st
	fi
	exec "$real" "\$@"
	EOF
	chmod +x "$FAKE/docker"
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when "file:$BATS_TEST_TMPDIR/in-run" INT \
		gateway start --name id --image "$IMAGE" --port "$(free_port)"
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"openshell: error: interrupted; removed what this run had created for gateway 'id'"* ]]
	sleep 2   # whatever the daemon was still to do is done
	assert_no_gateway_resources id
}

@test "a start while Docker's restart policy brings a crashed gateway back waits for that restart" {
	# Crashes in quick succession double Docker's delay before each restart
	# (moby restartmanager: 100 ms, doubled while a run lasts under 10 s),
	# so after the seventh the restart is seen pending for seconds.
	port=$(free_port)
	openshell -q gateway start --gpu --name rp --image "$IMAGE" --port "$port" >/dev/null
	last=0
	for i in 1 2 3 4 5 6 7; do
		# Running again, as a new process (a pid of 0 would make kill
		# signal this test's own process group).
		eventually sh -c 'p=$(docker inspect openshell-cluster-rp --format "{{.State.Pid}}"); [ "$p" -gt 1 ] && [ "$p" != "$0" ]' "$last"
		last=$(docker inspect openshell-cluster-rp --format '{{.State.Pid}}')
		[ "$last" -gt 1 ]
		kill -KILL "$last"
	done
	eventually sh -c '[ "$(docker inspect openshell-cluster-rp --format "{{.State.Restarting}}")" = true ]'
	run --separate-stderr openshell gateway start --gpu --name rp --json
	assert_success
	[[ "$stderr" == *"gateway 'rp' is restarting (its container exited, and Docker's restart policy starts it again); waiting for it"* ]]
	assert_equal "$(jq -r '[.outcome, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$output")" "running $(sim_gpu_count)"
	assert_equal "$(docker inspect openshell-cluster-rp --format '{{.RestartCount}}')" 7
	openshell -q gateway destroy --name rp --yes
}

@test "an API that refuses connections while a start without --gpu looks for a GPU release is waited for" {
	# scripts/soak --seed 5: the first kubectl of a start on a kept
	# gateway met k3s still opening its port after a restart.
	port=$(free_port)
	openshell -q gateway start --name ar --image "$IMAGE" --port "$port" >/dev/null
	fake_docker_on " delete helmchart,helmchartconfig nvidia-device-plugin " \
		'[ "$n" -ge 3 ] || { echo "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?" >&2; exit 1; }'
	OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell -v gateway start --name ar
	assert_success
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -ge 3 ]
	[[ "$stderr" == *"will retry: kubectl delete helmchart nvidia-device-plugin dra-driver-nvidia-gpu failed: The connection to the server 127.0.0.1:6443 was refused"* ]]
	openshell -q gateway destroy --name ar --yes
}

@test "transient API errors during the GPU wait are retried, not the end of the start" {
	# docker, but the first three watches of the GPU state (the nodes, the
	# plugin's DaemonSets) fail as while the API server restarts (k3s
	# answers 503 "apiserver not ready").
	fake_docker_on " --watch " \
		'[ "$n" -ge 3 ] || { echo "Error from server (ServiceUnavailable): apiserver not ready" >&2; exit 1; }'
	OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell -v gateway start --gpu --name tr --image "$IMAGE" --port "$(free_port)"
	assert_success
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" -gt 3 ]
	[[ "$stderr" == *"will retry: kubectl get nodes --watch failed (exit status 1): Error from server (ServiceUnavailable): apiserver not ready"* ]]
	# Every kubectl call carries a request timeout, so a deadline ends it inside the container too.
	run grep -E '^openshell: \+ .* kubectl ' <<<"$stderr"
	refute_line --regexp ' kubectl get '
	assert_line --regexp ' kubectl --request-timeout=[0-9]+s get nodes .*--watch '
	assert_line --regexp ' kubectl --request-timeout=[0-9]+s get daemonsets .*--watch '
	openshell -q gateway destroy --name tr --yes
}

@test "a hung docker times out by itself, naming the command and the deadline" {
	fake_hanging_docker
	OPENSHELL_DOCKER=$FAKE/docker OPENSHELL_CALL_TIMEOUT=1s run --separate-stderr openshell gateway start --name h1
	assert_failure 4
	[[ "$stderr" == *"openshell: error: cannot reach the Docker daemon: docker info timed out after 1s and was stopped"* ]]
	run pgrep -f "$marker"
	assert_failure
}

@test "a Docker daemon that is not running is named with DOCKER_HOST and the fix" {
	DOCKER_HOST=unix://$BATS_TEST_TMPDIR/nosuch.sock run --separate-stderr openshell gateway start --name d1
	assert_failure 3
	[[ "$stderr" == *"openshell: error: cannot reach the Docker daemon (DOCKER_HOST=unix://$BATS_TEST_TMPDIR/nosuch.sock): "*"check that the daemon runs and 'docker info' works" ]]
}

@test "SIGINT while waiting for the k3s API keeps the gateway and says how to resume" {
	sim_only "needs the stand-in's never-ready switch"
	interrupt_when 'waiting for the k3s API' INT gateway start --name i2 --image openshell-cluster:sim-never-ready --port "$(free_port)"
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"interrupted; gateway 'i2' was kept and goes on starting: run 'openshell gateway start --name i2' to wait for it again"* ]]
	run docker inspect openshell-cluster-i2 --format '{{.State.Running}}'
	assert_output true
}

@test "SIGHUP (a closed SSH session) during docker run rolls back as SIGINT does, exit 129" {
	fake_docker_run_hangs
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when "file:$BATS_TEST_TMPDIR/in-run" HUP \
		gateway start --name ih --image "$IMAGE" --port "$(free_port)"
	[ "$status" -eq 129 ]
	[[ "$stderr" == *"openshell: error: interrupted; removed what this run had created for gateway 'ih'"* ]]
	assert_no_gateway_resources ih
	# The docker child, in its own process group, was stopped too.
	run pgrep -f "$BATS_TEST_TMPDIR/in-run"
	assert_failure
}

@test "SIGQUIT while waiting for the k3s API keeps the gateway as SIGINT does, exit 131" {
	sim_only "needs the stand-in's never-ready switch"
	interrupt_when 'waiting for the k3s API' QUIT gateway start --name iq --image openshell-cluster:sim-never-ready --port "$(free_port)"
	[ "$status" -eq 131 ]
	[[ "$stderr" == *"interrupted; gateway 'iq' was kept and goes on starting"* ]]
	openshell -q gateway destroy --name iq --yes
}

@test "SIGINT while waiting for GPUs keeps the gateway and a complete kubeconfig" {
	sim_only "needs a stand-in with a slow device plugin"
	port=$(free_port)
	interrupt_when 'waiting for allocatable nvidia.com/gpu' INT gateway start --gpu --name i3 --image openshell-cluster:sim-slow-plugin --port "$port"
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"gateway 'i3' was kept"* ]]
	# The kubeconfig was already complete when the interrupt came.
	[ "$(stat -c %a "$XDG_CONFIG_HOME/openshell/gateways/i3/kubeconfig")" = 600 ]
	run ls "$XDG_CONFIG_HOME/openshell/gateways/i3"
	refute_output --partial '.tmp.'
}

@test "the container dying during the wait is reported with its exit code and logs" {
	sim_only "needs the stand-in's never-ready switch"
	port=$(free_port)
	openshell -q gateway start --name k1 --image openshell-cluster:sim-never-ready --port "$port" --timeout 60s 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	# Killed once its entrypoint has said something, so that there are
	# log lines to report (before that, a kill leaves none).
	for ((i = 0; i < 100; i++)); do
		docker logs openshell-cluster-k1 2>&1 | grep 'openshell-entrypoint' >/dev/null && break
		sleep 0.1
	done
	docker kill openshell-cluster-k1 >/dev/null
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 1 ]
	grep -q "openshell: error: container openshell-cluster-k1 is exited (exit code 137); the gateway was kept for inspection, its last log lines follow" "$BATS_TEST_TMPDIR/err"
	grep -q 'openshell-entrypoint' "$BATS_TEST_TMPDIR/err"
}

@test "right after a restart, a start does not trust the node's status from before it" {
	# A restarted container keeps its node object: its allocatable GPUs
	# and the plugin's readiness are the last run's until the kubelet posts
	# the node's status again (found by scripts/soak after a daemon restart).
	port=$(free_port)
	openshell -q gateway start --gpu --name rs --image "$IMAGE" --port "$port" >/dev/null
	# Killed from the host, the container's restart policy starts it again.
	kill -KILL "$(docker inspect openshell-cluster-rs --format '{{.State.Pid}}')"
	eventually sh -c '[ "$(docker inspect openshell-cluster-rs --format "{{.RestartCount}} {{.State.Running}}")" = "1 true" ]'
	run --separate-stderr openshell gateway start --gpu --name rs --json
	assert_success
	assert_equal "$(jq -r .gpus_allocatable <<<"$output")" "$(sim_gpu_count)"
	# The node's status that start judged was posted after the restart.
	started=$(docker inspect openshell-cluster-rs --format '{{.State.StartedAt}}')
	beat=$(gw_kubectl rs get nodes -o json | jq -r '[.items[].status.conditions[] | select(.type == "Ready") | .lastHeartbeatTime] | min')
	[[ ! "$beat" < "${started:0:19}" ]]
	assert_equal "$(gw_kubectl rs get nodes -o jsonpath='{.items[0].status.allocatable.nvidia\.com/gpu}')" "$(sim_gpu_count)"
	openshell -q gateway destroy --name rs --yes
}

@test "a container that crashes as its kubeconfig is read is reported as restarted, not as files not saved" {
	port=$(free_port)
	openshell -q gateway start --name kr --image "$IMAGE" --port "$port"
	# The read of the kubeconfig meets a container that its init's crash
	# (a kill from the host) has Docker's restart policy restarting: docker
	# exec says "is restarting", as scripts/soak --seed 5 found.
	fake_docker_on " cat /etc/rancher/k3s/k3s.yaml " \
		'pid=$(docker inspect --format "{{.State.Pid}}" openshell-cluster-kr); [ "$pid" -gt 1 ] && kill -KILL "$pid"; sleep 0.3; echo "Error response from daemon: Container x is restarting, wait until the container is running" >&2; exit 1'
	OPENSHELL_DOCKER=$FAKE_DOCKER run --separate-stderr openshell gateway start --name kr
	assert_failure 1
	[[ "$stderr" == *"openshell: error: container openshell-cluster-kr restarted (last exit code "*"); the gateway was kept for inspection"* ]]
	[[ "$stderr" != *"its files were not saved"* ]]
	openshell -q gateway destroy --name kr --yes
}

@test "a gateway that crashed once and was then stopped resumes: docker start resets the restart count" {
	# scripts/soak --seed 4242: a crash (a restart by Docker's policy), a
	# stop, then the start that resumes it was judged a restart.
	port=$(free_port)
	openshell -q gateway start --gpu --name rr --image "$IMAGE" --port "$port" >/dev/null
	kill -KILL "$(docker inspect openshell-cluster-rr --format '{{.State.Pid}}')"
	eventually sh -c '[ "$(docker inspect openshell-cluster-rr --format "{{.RestartCount}} {{.State.Running}}")" = "1 true" ]'
	openshell -q gateway stop --name rr
	run --separate-stderr openshell gateway start --gpu --name rr --json
	assert_success
	assert_equal "$(jq -r '[.outcome, .gpus_allocatable] | map(tostring) | join(" ")' <<<"$output")" "resumed $(sim_gpu_count)"
	# Docker counts the restarts of its policy since the last `docker start`.
	assert_equal "$(docker inspect openshell-cluster-rr --format '{{.RestartCount}}')" 0
	openshell -q gateway destroy --name rr --yes
}

@test "a read-only config directory fails clearly and loses nothing" {
	port=$(free_port)
	mkdir -p "$BATS_TEST_TMPDIR/ro/openshell"
	chmod 0555 "$BATS_TEST_TMPDIR/ro/openshell"
	# root ignores permissions: drop CAP_DAC_OVERRIDE (setpriv, util-linux).
	drop=()
	[ "$(id -u)" != 0 ] || drop=(setpriv --inh-caps=-dac_override,-dac_read_search
		--bounding-set=-dac_override,-dac_read_search)
	XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/ro run --separate-stderr \
		"${drop[@]}" "$OPENSHELL_BIN" gateway start --name ro --image "$IMAGE" --port "$port"
	assert_failure 1
	[[ "$stderr" == *"openshell: error: cannot create directory $BATS_TEST_TMPDIR/ro/openshell/locks: Permission denied"* ]]
}

# full_config NAME [start args...]: a start whose config file system has
# no room for a kubeconfig.
full_config() {
	local name=$1 full=$BATS_TEST_TMPDIR/full
	shift
	mkdir -p "$full"
	mount -t tmpfs -o size=64k tmpfs "$full"
	mkdir -p "$full/openshell/locks" "$full/openshell/gateways/$name"
	# Fill it, leaving no room for a kubeconfig.
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true
	XDG_CONFIG_HOME=$full run --separate-stderr openshell gateway start --name "$name" --image "$IMAGE" \
		--port "$(free_port)" "$@"
	status_was=$status
	left=$(ls -A "$full/openshell/gateways/$name")
	umount "$full"
	[ "$status_was" -eq 1 ]
	[[ "$stderr" == *"gateway '$name' runs, but its files were not saved"*"cannot write $full/openshell/gateways/$name/"*"No space left on device"* ]]
	[ -z "$left" ]
}

@test "a full config file system fails clearly and leaves no partial file" {
	sim_only "mounts a tiny tmpfs on the test machine"
	full_config fu
}

@test "so it does with --gpu, where k3s.yaml comes with the GPU wait's watch" {
	sim_only "mounts a tiny tmpfs on the test machine"
	full_config fg --gpu
	docker rm -f openshell-cluster-fg >/dev/null
}

@test "a corrupt metadata.json is not trusted, and the next start rewrites it whole" {
	port=$(free_port)
	openshell -q gateway start --name cm --image "$IMAGE" --port "$port" >/dev/null
	md=$XDG_CONFIG_HOME/openshell/gateways/cm/metadata.json
	echo '{"schema": 1, "name": 42' >"$md"
	# The container is still found and judged; the metadata is not used.
	run --separate-stderr openshell gateway verify --name cm
	assert_failure 9
	run --separate-stderr openshell gateway start --name cm --image "$IMAGE" --port "$port"
	assert_success
	run jq -r '[.schema, .name, .port] | @tsv' "$md"
	assert_output "$(printf '1\tcm\t%s' "$port")"
}

@test "a container of the same name that openshell did not make is never touched" {
	sim_busybox_image rel-bb
	docker run -d --name openshell-cluster-foreign rel-bb sleep 600 >/dev/null
	run --separate-stderr openshell gateway start --name foreign --image "$IMAGE" --recreate
	assert_failure 6
	[[ "$stderr" == *"container openshell-cluster-foreign exists but was not created by openshell"* ]]
	run docker inspect openshell-cluster-foreign --format '{{.State.Running}}'
	assert_output true
	docker rm -f openshell-cluster-foreign >/dev/null
}

# What start's first look (one untyped docker inspect) found stands in for
# the typed inspects: each answer docker can give for the gateway's name.
@test "a volume or network of the name that openshell did not make is refused by start and left as it was" {
	ours=(--label org.openshell.managed-by=openshell)
	# A foreign volume alone: the look's answer is the volume.
	docker volume create openshell-cluster-fx >/dev/null
	run --separate-stderr openshell gateway start --name fx --image "$IMAGE" --port "$(free_port)"
	assert_failure 6
	[[ "$stderr" == *"volume openshell-cluster-fx exists but was not created by openshell"*"; remove or rename it first"* ]]
	docker volume inspect openshell-cluster-fx >/dev/null
	run docker network ls -q --filter name=^openshell-cluster-fx$
	assert_output ''
	# With a network of ours beside it, the look sees the network first: the volume is asked after.
	docker network create "${ours[@]}" --label org.openshell.gateway=fx openshell-cluster-fx >/dev/null
	run --separate-stderr openshell gateway start --name fx --image "$IMAGE" --port "$(free_port)"
	assert_failure 6
	[[ "$stderr" == *"volume openshell-cluster-fx exists but was not created by openshell"* ]]
	docker network inspect openshell-cluster-fx >/dev/null   # not this run's: kept
	run docker ps -aq --filter name=^openshell-cluster-fx$
	assert_output ''
	docker volume rm openshell-cluster-fx >/dev/null
	docker network rm openshell-cluster-fx >/dev/null
	# Another gateway's network: refused, and no volume made.
	docker network create "${ours[@]}" --label org.openshell.gateway=other openshell-cluster-fn >/dev/null
	run --separate-stderr openshell gateway start --name fn --image "$IMAGE" --port "$(free_port)"
	assert_failure 6
	[[ "$stderr" == *"network openshell-cluster-fn exists but was not created by openshell"* ]]
	run docker volume ls -q --filter name=^openshell-cluster-fn$
	assert_output ''
	docker network rm openshell-cluster-fn >/dev/null
	assert_no_gateway_resources fn
}

@test "an image named as the gateway's container does not hide that there is none" {
	docker tag "$IMAGE" openshell-cluster-fi
	run --separate-stderr openshell gateway start --name fi --image "$IMAGE" --port "$(free_port)" --no-wait
	docker image rm openshell-cluster-fi >/dev/null
	assert_success
	[[ "$stderr" == *"creating gateway 'fi'"* ]]
	openshell -q gateway destroy --name fi --yes
	assert_no_gateway_resources fi
}

@test "--recreate with only the volume or the network left starts fresh, reusing neither" {
	sim_busybox_image rel-bb
	labels=(--label org.openshell.managed-by=openshell --label org.openshell.gateway=ov)
	docker volume create "${labels[@]}" openshell-cluster-ov >/dev/null
	docker network create "${labels[@]}" openshell-cluster-ov >/dev/null
	docker run --rm -v openshell-cluster-ov:/v rel-bb touch /v/old-state
	old_net=$(docker network inspect openshell-cluster-ov --format '{{.Id}}')
	run --separate-stderr openshell gateway start --name ov --image "$IMAGE" --port "$(free_port)" --recreate --no-wait
	assert_success
	[[ "$stderr" == *"removing gateway 'ov' (--recreate)"* ]]
	run docker exec openshell-cluster-ov test -e /var/lib/rancher/k3s/old-state
	assert_failure
	[ "$(docker network inspect openshell-cluster-ov --format '{{.Id}}')" != "$old_net" ]
	openshell -q gateway destroy --name ov --yes
}

@test "a container of the name made by someone else while docker run starts is never rolled back" {
	sim_busybox_image rel-bb
	# docker, but just before `run` another tool takes the name.
	cat >"$FAKE/docker" <<-EOF
	#!/bin/bash
	if [ "\$1" = run ]; then
		$(command -v docker) create --name openshell-cluster-nc rel-bb sleep 600 >/dev/null
	fi
	exec $(command -v docker) "\$@"
	EOF
	chmod +x "$FAKE/docker"
	OPENSHELL_DOCKER=$FAKE/docker run --separate-stderr openshell gateway start --name nc --image "$IMAGE" --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"is already in use"* ]]
	# Still there, unlabelled: not this run's to remove.
	run docker inspect openshell-cluster-nc --format '{{index .Config.Labels "org.openshell.managed-by"}}'
	assert_success
	assert_output ''
	docker rm -f openshell-cluster-nc >/dev/null
	docker network rm openshell-cluster-nc >/dev/null 2>&1 || true
	docker volume rm openshell-cluster-nc >/dev/null 2>&1 || true
}

@test "an interrupt after --recreate removed the old gateway says so, not 'was not changed'" {
	openshell -q gateway start --name ri --image "$IMAGE" --port "$(free_port)" --no-wait
	fake_docker_run_hangs
	OPENSHELL_DOCKER=$FAKE/docker interrupt_when "file:$BATS_TEST_TMPDIR/in-run" INT \
		gateway start --name ri --image "$IMAGE" --port "$(free_port)" --recreate
	[ "$status" -eq 130 ]
	[[ "$stderr" == *"openshell: error: interrupted; gateway 'ri' was removed (--recreate), and what this run had begun was removed too and not created again: run 'openshell gateway start --name ri' to create it"* ]]
	assert_no_gateway_resources ri
}

@test "two starts of one gateway at once: one creates, the other waits and reuses it" {
	port=$(free_port)
	openshell gateway start --name cc --image "$IMAGE" --port "$port" --json >"$BATS_TEST_TMPDIR/a" 2>"$BATS_TEST_TMPDIR/ea" &
	a=$!
	openshell gateway start --name cc --image "$IMAGE" --port "$port" --json >"$BATS_TEST_TMPDIR/b" 2>"$BATS_TEST_TMPDIR/eb" &
	b=$!
	wait "$a"
	wait "$b"
	run jq -rs '[.[].outcome] | sort | join(",")' "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	assert_output 'created,running'
	run docker ps -a --filter name=openshell-cluster-cc --format '{{.Names}}'
	assert_output openshell-cluster-cc
}

@test "two different gateways start side by side" {
	openshell -q gateway start --name s1 --image "$IMAGE" --port "$(free_port)" >/dev/null &
	a=$!
	openshell -q gateway start --name s2 --image "$IMAGE" --port "$(free_port)" >/dev/null &
	b=$!
	wait "$a"
	wait "$b"
	[ "$(docker inspect openshell-cluster-s1 --format '{{.State.Running}}')" = true ]
	[ "$(docker inspect openshell-cluster-s2 --format '{{.State.Running}}')" = true ]
}

@test "hostile option values are refused before any docker call, with the rule" {
	printf '#!/bin/sh\necho called >>%s/calls\nexit 1\n' "$BATS_TEST_TMPDIR" >"$FAKE/docker"
	chmod +x "$FAKE/docker"
	long=$(printf 'a%.0s' {1..300})
	while IFS='|' read -r opt value rule; do
		OPENSHELL_DOCKER=$FAKE/docker run --separate-stderr openshell gateway start "$opt" "$value"
		assert_failure 2
		[ "${#stderr_lines[@]}" -eq 2 ]
		[[ "${stderr_lines[0]}" == "openshell: error: "*"$rule"* ]]
		[ "${stderr_lines[1]}" = "Try 'openshell gateway start --help' for more information." ]
	done <<EOT
--port|0|invalid --port '0': give a number from 1 to 65535
--port|6443;reboot|invalid --port '6443;reboot'
--port|99999999999999|invalid --port
--bind|\$(reboot)|invalid --bind address '\$(reboot)'
--bind|127.0.0.1 -p 1:1|invalid --bind address
--bind|localhost|invalid --bind address 'localhost': give an IPv4 or IPv6 address
--image|--privileged|invalid image reference '--privileged'
--image|img\`id\`|invalid image reference
--image|$long|invalid image reference
--name|../../etc|invalid gateway name '../../etc'
--timeout|-1|invalid --timeout '-1'
--timeout|1y|invalid --timeout '1y'
EOT
	OPENSHELL_DOCKER=$FAKE/docker run --separate-stderr openshell gateway start --name "$(printf 'a\033[31mred')"
	assert_failure 2
	[[ "$stderr" == *'\x1b[31mred'* ]]
	OPENSHELL_DOCKER=$FAKE/docker run --separate-stderr openshell gateway start --name "$(printf 'caf\xc3\xa9')"
	assert_failure 2
	[[ "$stderr" == *'caf\xc3\xa9'* ]]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "the Docker daemon dying mid-start is reported as such, exit 3" {
	sim_only "needs a second, killable sim host"
	sim_host_extra --cluster-images --gpus 1
	DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST openshell gateway start --name dd --image openshell-cluster:sim-never-ready \
		--port "$(free_port)" --timeout 60s 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q 'waiting for the k3s API' "$BATS_TEST_TMPDIR/err" && break
		sleep 0.1
	done
	kill -KILL "$(cat "$SIM_HOST_EXTRA_DIR/docker.pid")"
	status=0
	wait "$pid" || status=$?
	[ "$status" -eq 3 ]
	grep -q "openshell: error: lost the Docker daemon (DOCKER_HOST=$SIM_HOST_EXTRA_DOCKER_HOST): " "$BATS_TEST_TMPDIR/err"
}

@test "no secret from the kubeconfig is printed, at any verbosity" {
	run openshell -v -v gateway start --name sec --image "$IMAGE" --port "$(free_port)" --json
	assert_success
	key=$(awk '/client-key-data/ {print $2}' "$XDG_CONFIG_HOME/openshell/gateways/sec/kubeconfig")
	[ -n "$key" ]
	refute_output --partial "$key"
	refute_output --partial 'client-key-data'
	refute_output --partial 'BEGIN'
}
