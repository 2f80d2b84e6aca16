#!/usr/bin/env bats
# `gateway node add|list|remove`: a gateway over three sim hosts (simulation
# only). The server runs on the suite's sim host, published on every address
# of this machine and named in its certificate by the address node-b's link
# reaches it at; node-b and node-c are machines apart (sim-host start
# --own-network), each with GPUs of its own, reached by their own Docker
# daemons. Every agent reaches the server only through this machine's own
# addresses. The stand-in's agent joins as k3s's does (docs/k3s-standin.md,
# "`k3s agent`: more nodes").

bats_require_minimum_version 1.5.0

setup_file() {
	load helpers/gateway
	sim_only "other machines exist only as sim hosts"
	flannel_ports_lock
	# A driver new enough for NVIDIA's DRA driver where a DRA gateway and its node run.
	gateway_suite_start --gpus 2 --driver 570.172.08
	# The image whose stand-in makes a real pod network (flannel's VXLAN, the
	# bridge plugin, kube-proxy's DNAT; sim-image's REF-podnet): the nodes
	# on other hosts each have a network namespace of their own.
	IMAGE=$IMAGE-podnet
	export IMAGE OPENSHELL_CLUSTER_IMAGE=$IMAGE
	sim_host_machine node-b --gpus 1
	sim_host_machine node-c --gpus 3 --driver 570.172.08
	sim_host_machine node-d --gpus 1 --no-toolkit
	PORT=$(free_port)
	UPLINK=$(sim_host_of node-b uplink)
	export PORT UPLINK
	openshell gateway start --name mh --gpu --bind 0.0.0.0 --tls-san "$UPLINK" --port "$PORT" >/dev/null
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
	flannel_ports_unlock
}

setup() {
	load helpers/gateway
}

kx() {
	gw_kubectl mh "$@"
}

node_add() {
	local node=$1
	shift
	openshell gateway node add "$node" --name mh --docker-host "$(sim_host_of "$node" docker-host)" "$@"
}

# Nothing of gateway mh's agent on NODE's host, nor of the node in the cluster.
assert_nothing_on() {
	assert_nothing_on_for mh "$1"
}

# assert_nothing_on_for GATEWAY NODE
assert_nothing_on_for() {
	local gw=$1
	shift
	run sim_docker "$1" ps -aq --filter label=org.openshell.gateway="$gw"
	assert_output ""
	# Every volume, the image's anonymous ones (its VOLUME lines) too: the
	# node's host runs nothing else.
	run sim_docker "$1" volume ls -q
	assert_output ""
	run gw_kubectl "$gw" get node "$1" --ignore-not-found -o name
	assert_output ""
	[[ ! -e $XDG_CONFIG_HOME/openshell/gateways/$gw/nodes/$1.json ]]
}

@test "node add joins node-b's agent: Ready with its host's one GPU, the image sent there by save | load" {
	run sim_docker node-b image inspect "$IMAGE"
	assert_failure
	run --separate-stderr node_add node-b --gpu --json
	assert_success
	json=$output
	assert_schema node_add "$json"
	assert_equal "$(jq -r .node <<<"$json")" node-b
	assert_equal "$(jq -r .gpus_allocatable <<<"$json")" 1
	assert_equal "$(jq -r .image_sent <<<"$json")" true
	assert_equal "$(jq -r .server <<<"$json")" "https://$UPLINK:$PORT"
	# The same image, by ID, on both daemons.
	assert_equal "$(sim_docker node-b image inspect -f '{{.Id}}' "$IMAGE")" "$(docker image inspect -f '{{.Id}}' "$IMAGE")"
	run kx get node node-b -o jsonpath='{.status.allocatable.nvidia\.com/gpu} {.status.conditions[?(@.type=="Ready")].status}'
	assert_output "1 True"
	# The agent on its host: k3s agent in the host's network, its GPUs by Docker's request.
	run sim_docker node-b inspect openshell-node-mh --format '{{.HostConfig.NetworkMode}} {{index .Config.Labels "org.openshell.node"}} {{.Args}}'
	assert_output "host node-b [agent --server=https://$UPLINK:$PORT --token-file=/var/lib/rancher/k3s/openshell/token --node-name=node-b]"
}

@test "the token is in no argument, no variable and no file others read" {
	token=$(docker exec openshell-cluster-mh cat /var/lib/rancher/k3s/server/token)
	[[ -n $token ]]
	run sim_docker node-b inspect openshell-node-mh
	assert_success
	refute_output --partial "$token"
	refute_output --partial "K3S_TOKEN"
	run sim_docker node-b exec openshell-node-mh stat -c '%a %U' /var/lib/rancher/k3s/openshell/token
	assert_output "600 root"
	run grep -rl -- "$token" "$XDG_CONFIG_HOME/openshell"
	assert_output ""
}

@test "node add node-c through its own daemon, 2 of its 3 GPUs; node list and status show every node with its host" {
	run --separate-stderr node_add node-c --gpus 0,2
	assert_success
	assert_line "Node 'node-c' joined gateway 'mh'."
	assert_line "  GPUs:        2 allocatable (nvidia.com/gpu)"
	# Isolated as the server is: its privileged agent sees the two it was given.
	run sim_docker node-c exec openshell-node-mh nvidia-smi -L
	assert_equal "$(grep -c '^GPU ' <<<"$output")" 2
	assert_output --partial "(UUID: $(sim_gpu_uuids node-c | sed -n 1p))"
	assert_output --partial "(UUID: $(sim_gpu_uuids node-c | sed -n 3p))"
	refute_output --partial "$(sim_gpu_uuids node-c | sed -n 2p)"
	run --separate-stderr openshell gateway node list --name mh --json
	assert_success
	json=$output
	assert_schema node_list "$json"
	assert_equal "$(jq -r '[.nodes[] | "\(.name):\(.role):\(.status):\(.gpus_allocatable)"] | join(" ")' <<<"$json")" \
		"openshell-mh:server:Ready:2 node-b:agent:Ready:1 node-c:agent:Ready:2"
	assert_equal "$(jq -r '.nodes[2].docker_endpoint' <<<"$json")" "$(sim_host_of node-c docker-host)"
	run openshell gateway node list --name mh
	assert_success
	assert_line --regexp "^node-c +agent +Ready +2 +$(sim_host_of node-c docker-host)\$"
	# status: the gateway's own GPUs, and a line a node.
	run --separate-stderr openshell gateway status --name mh
	assert_success
	assert_line "  GPUs:        requested; 2 allocatable (nvidia.com/gpu)"
	assert_line "  Node:        node-c on $(sim_host_of node-c docker-host): Ready, 2 allocatable (nvidia.com/gpu)"
	run --separate-stderr openshell gateway status --name mh --json
	json=$output
	assert_schema status "$json"
	assert_equal "$(jq -r '[.gpus_allocatable] + [.nodes[] | "\(.name)=\(.status):\(.gpus_allocatable)"] | join(" ")' <<<"$json")" \
		"2 node-b=Ready:1 node-c=Ready:2"
}

@test "verify proves each node's GPUs on its own node: node-gpus, a pod on each, naming one of its host's GPUs" {
	run --separate-stderr openshell gateway verify --name mh
	assert_success
	# The gateway's own checks look at its own node alone.
	assert_line "  PASS  allocatable     node allocatable nvidia.com/gpu = 2"
	assert_line --regexp "^  PASS  smoke-pod       pod openshell-verify-[0-9a-f]+ Succeeded: GPU 0: .*\\(UUID: ($(sim_gpu_uuids | paste -sd'|'))\\)"
	line=$(grep '^  PASS  node-gpus ' <<<"$output")
	for n in node-b node-c; do
		re="$n: pod openshell-verify-[0-9a-f]+-$n Succeeded: GPU 0: [^;]*\\(UUID: ($(sim_gpu_uuids "$n" | paste -sd'|'))\\)"
		[[ $line =~ $re ]]
	done
	assert_line '8 passed, 0 failed'
	run --separate-stderr openshell gateway verify --name mh --json
	assert_success
	json=$output
	assert_schema verify "$json"
	assert_equal "$(jq -r '[.checks[].name] | join(" ")' <<<"$json")" \
		"device-request runtime-class device-plugin allocatable smoke-pod pod-isolation privileged-pod node-gpus"
}

@test "gateway gpus: every node's GPUs on its own host, a pod on node-c's and its process; a node that does not answer is unknown, the rest stand" {
	smoke=$(docker inspect "$IMAGE" --format '{{index .Config.Labels "org.openshell.smoke-image"}}')
	kx apply -f - >/dev/null <<-JSON
	{"apiVersion":"v1","kind":"Pod","metadata":{"name":"onc"},"spec":{"restartPolicy":"Never","nodeName":"node-c",
	 "runtimeClassName":"nvidia","containers":[{"name":"work","image":"$smoke","command":["cuda-sim","--memory","300"],
	 "resources":{"limits":{"nvidia.com/gpu":1}}}]}}
	JSON
	eventually cuda_opened mh onc
	run --separate-stderr openshell gateway gpus --name mh --json
	assert_success
	json=$output
	assert_schema gpu_view "$json"
	# Each node's GPUs by UUID, from its own host: node-c has the two it was given.
	assert_equal "$(jq -r '[.gpus[] | "\(.node)=\(.uuid)"] | join(" ")' <<<"$json")" \
		"$( (sim_gpu_uuids | sed 's/^/openshell-mh=/'; sim_gpu_uuids node-b | sed 's/^/node-b=/'
		    sim_gpu_uuids node-c | sed -n '1p;3p' | sed 's/^/node-c=/') | paste -sd' ')"
	assert_equal "$(jq -r '[.gpus[] | select(.node == "node-c") | .docker_endpoint] | unique | join(" ")' <<<"$json")" \
		"$(sim_host_of node-c docker-host)"
	assert_equal "$(jq -r '[.gpus[] | select(.holders | length > 0) | "\(.node):\(.holders[0].pod)"] | join(" ")' <<<"$json")" \
		"node-c:onc"
	# Its process, on node-c's own nvidia-smi, named from the server's pods.
	assert_equal "$(jq -c '[.processes[] | [.node, .memory_used_mib, .pod]]' <<<"$json")" '[["node-c",300,"onc"]]'
	run --separate-stderr openshell gateway gpus --name mh
	assert_line --regexp "^node-c \\($(sim_host_of node-c docker-host)\\) +[01] +GPU-.* +healthy +default/onc/work\$"
	assert_line --regexp "^node-c +[01] +[0-9]+ +300 MiB +default/onc/work\$"
	# node-b's agent paused: its exec cannot run; its row says so, the others print.
	sim_docker node-b pause openshell-node-mh >/dev/null
	run --separate-stderr openshell gateway gpus --name mh
	sim_docker node-b unpause openshell-node-mh >/dev/null
	assert_success
	assert_line --regexp "^node-b \\($(sim_host_of node-b docker-host)\\) +- +- +- +- +- +- +unknown +\\?\$"
	assert_line --regexp "^node-b: .*is paused"
	assert_equal "$(grep -c ' healthy ' <<<"$output")" 4
	kx delete pod onc --wait=false >/dev/null
}

@test "pods on different hosts reach each other, and the API at its ClusterIP, through what the gateway publishes" {
	# flannel sends to each node's public IP on 8472/udp: the server's is the
	# address it advertises (published there by the gateway), an agent's its
	# host's own; kube-proxy sends 10.43.0.1:443 to the advertised API.
	run kx get node node-b -o jsonpath='{.metadata.annotations.flannel\.alpha\.coreos\.com/public-ip}'
	assert_output "$(sim_host_of node-b addr)"
	web=$(podnet_web node-c from-node-c)
	server=$(kx get nodes -l node-role.kubernetes.io/control-plane -o jsonpath='{.items[0].metadata.name}')
	for n in node-b "$server"; do
		run podnet_client "client-$n" "$n" "$web"
		assert_line from-node-c
		assert_output --partial "error: You must be logged in to the server (Unauthorized)"
	done
	kx delete pod web client-node-b "client-$server" --wait=false >/dev/null
}

@test "a name taken is refused: a node of the gateway, the server's own node" {
	run --separate-stderr node_add node-b --gpu
	assert_failure 6
	[[ $stderr == *"gateway 'mh' already has a node 'node-b'"*"openshell gateway node remove node-b --name mh"* ]]
	run --separate-stderr openshell gateway node add openshell-mh --name mh --docker-host "$(sim_host_of node-d docker-host)"
	assert_failure 6
	[[ $stderr == *"node name 'openshell-mh' is the gateway's own node"* ]]
}

@test "the device plugin's configuration is the gateway's: another --gpu-sharing or --mig-strategy is refused" {
	run --separate-stderr node_add node-d --gpu --gpu-sharing time-slicing:2
	assert_failure 6
	[[ $stderr == *"gateway 'mh' shares its GPUs as none"*"openshell gateway start --name mh --gpu --gpu-sharing time-slicing:2"* ]]
	run --separate-stderr node_add node-d --gpu --mig-strategy single
	assert_failure 6
	[[ $stderr == *"gateway 'mh' has --mig-strategy none"* ]]
	run --separate-stderr node_add node-d --mig-strategy single
	assert_failure 2
	run sim_docker node-d ps -aq
	assert_output ""
}

@test "the server's own Docker host is refused, before anything is made" {
	run --separate-stderr openshell gateway node add other --name mh --docker-host "$DOCKER_HOST"
	assert_failure 6
	[[ $stderr == *"$DOCKER_HOST is gateway 'mh''s own Docker host"* ]]
	run docker ps -aq --filter label=org.openshell.node
	assert_output ""
}

@test "a WSL2 host: a count of its GPUs is refused with what works, before anything is made there; with --gpu it joins, its one device every GPU" {
	# SIMULATION: sim-host --wsl2, its docker info through the wrapper on its host-bin.
	sim_host_machine node-w --wsl2 --gpus 2
	# Its wrapper speaks for its own daemon alone: the server's is a Linux host's.
	PATH=$(sim_host_of node-w dir)/host-bin:$PATH run docker info --format '{{json .}}'
	assert_success
	refute_output --partial microsoft
	assert_output --partial "\"ID\":\"$(docker info --format '{{.ID}}')\""
	PATH=$(sim_host_of node-w dir)/host-bin:$PATH DOCKER_HOST=$(sim_host_of node-w docker-host) run docker info --format '{{json .}}'
	assert_output --partial '"KernelVersion":"6.6.87.2-microsoft-standard-WSL2"'
	PATH=$(sim_host_of node-w dir)/host-bin:$PATH run --separate-stderr node_add node-w --gpus 1
	assert_failure 1
	[[ $stderr == *"error: --gpus 1 cannot be served on a WSL2 Docker host: its GPUs come through one device, /dev/dxg"* ]]
	assert_nothing_on node-w
	run kx get node node-w --ignore-not-found -o name
	assert_output ""
	# All its GPUs: the agent gets /dev/dxg, and the device plugin on its
	# node registers the one device that is both.
	PATH=$(sim_host_of node-w dir)/host-bin:$PATH run --separate-stderr node_add node-w --gpu
	assert_success
	assert_line "Node 'node-w' joined gateway 'mh'."
	assert_line "  GPUs:        1 allocatable (nvidia.com/gpu)"
	run kx get node node-w -o jsonpath='{.status.allocatable.nvidia\.com/gpu} {.status.conditions[?(@.type=="Ready")].status}'
	assert_output "1 True"
	run sim_docker node-w exec openshell-node-mh ls /dev
	assert_line dxg
	refute_output --partial nvidia
	# verify's pod on it sees its one device as both GPUs.
	run --separate-stderr openshell gateway verify --name mh
	assert_success
	assert_line --regexp '^  PASS  node-gpus .*node-w: pod openshell-verify-[0-9a-f]+-node-w Succeeded: its one device is all 2 GPUs \(WSL2.s device all\)'
	run --separate-stderr openshell gateway node remove node-w --name mh --yes
	assert_success
	assert_nothing_on node-w
}

@test "a Docker daemon that does not answer is named, and nothing is made" {
	run --separate-stderr openshell gateway node add gone --name mh --docker-host unix:///nonexistent/docker.sock
	assert_failure 3
	[[ $stderr == *"cannot reach node 'gone''s Docker daemon at unix:///nonexistent/docker.sock"* ]]
	run kx get node gone --ignore-not-found -o name
	assert_output ""
}

@test "a host without the NVIDIA toolkit, named by a Docker context: --gpu is refused with the fix, and nothing is left there" {
	# --context names the node's daemon as docker resolves a context.
	export DOCKER_CONFIG=$BATS_TEST_TMPDIR/docker-config
	docker context create node-d --docker "host=$(sim_host_of node-d docker-host)" >/dev/null
	run --separate-stderr openshell gateway node add node-d --name mh --context node-d --gpu
	assert_failure 7
	[[ $stderr == *"NVIDIA Container Toolkit is not on the Docker host"* ]]
	assert_nothing_on node-d
}

@test "a server published on loopback alone is refused, with the fix" {
	openshell gateway start --name lo --port "$(free_port)" >/dev/null
	run --separate-stderr openshell gateway node add node-d --name lo --docker-host "$(sim_host_of node-d docker-host)"
	assert_failure 6
	[[ $stderr == *"gateway 'lo' publishes its API on 127.0.0.1 only"*"--bind 0.0.0.0 --tls-san ADDR"* ]]
	run sim_docker node-d ps -aq
	assert_output ""
	openshell gateway destroy --name lo --yes >/dev/null
}

@test "a wrong token: the server's 401 is the answer, and what was made is removed" {
	docker exec openshell-cluster-mh sh -c 'f=/var/lib/rancher/k3s/server/token; cp $f $f.keep && sed -i "s/:[^:]*\$/:not-the-password/" $f'
	run --separate-stderr node_add node-d --timeout 2m
	docker exec openshell-cluster-mh sh -c 'f=/var/lib/rancher/k3s/server/token; mv $f.keep $f'
	assert_failure 1
	[[ $stderr == *"node 'node-d' on "*" did not join: the server at https://$UPLINK:$PORT refuses the node's token (401 Unauthorized)"* ]]
	[[ $stderr == *"removed what this run made of node 'node-d'"* ]]
	assert_nothing_on node-d
}

@test "an agent that cannot reach the server: the address it tried is named, and nothing is left" {
	openshell gateway start --name far --bind 0.0.0.0 --tls-san gpu-server.invalid --port "$(free_port)" >/dev/null
	run --separate-stderr openshell gateway node add node-d --name far --docker-host "$(sim_host_of node-d docker-host)"
	assert_failure 1
	[[ $stderr == *"node 'node-d' on "*" did not join: its agent cannot reach or trust the server at https://gpu-server.invalid:"* ]]
	run sim_docker node-d ps -aq --filter label=org.openshell.gateway=far
	assert_output ""
	openshell gateway destroy --name far --yes >/dev/null
}

@test "a server that advertises an address the node's host cannot reach: the tunnel's address, why and the fix; nothing is left" {
	# k3s's agent dials every address its server advertises and its kubelet
	# waits for that (pkg/agent/tunnel): here another machine's, where
	# nothing listens on the port. The join at the kubeconfig's URL works.
	port=$(free_port)
	adv=$(sim_host_of node-b addr)
	# Flannel is told the advertised address, and its port is published on
	# the bind: mh has 8472/udp on this host's addresses, so another
	# gateway's VXLAN cannot have it, and that start leaves nothing.
	run docker inspect openshell-cluster-mh --format '{{json .Args}} {{json .HostConfig.PortBindings}}'
	assert_output --partial "\"--node-external-ip=$UPLINK\",\"--flannel-external-ip\""
	assert_output --partial '"8472/udp":[{"HostIp":"0.0.0.0","HostPort":"8472"}]'
	run --separate-stderr openshell gateway start --name adv --bind 0.0.0.0 --tls-san "$UPLINK" --advertise-address "$adv" --port "$port"
	assert_failure 1
	[[ $stderr == *"port 8472/udp on 0.0.0.0, where the nodes on other hosts send pod traffic (--node-network vxlan), is already in use"* ]]
	run docker ps -aq --filter name=openshell-cluster-adv
	assert_output ""
	run docker volume ls -q --filter name=openshell-cluster-adv
	assert_output ""
	# Without --port a taken API port moves to the next free one; a taken
	# flannel port is not the API's, and moving that would end, ports later,
	# in "all in use".
	run --separate-stderr openshell gateway start --name adv --bind 0.0.0.0 --tls-san "$UPLINK" --advertise-address "$adv"
	assert_failure 1
	[[ $stderr == *"port 8472/udp on 0.0.0.0, where the nodes on other hosts send pod traffic (--node-network vxlan), is already in use"* ]]
	[[ $stderr != *"are all in use"* ]]
	run docker ps -aq --filter name=openshell-cluster-adv
	assert_output ""
	run docker volume ls -q --filter name=openshell-cluster-adv
	assert_output ""
	# WireGuard's port is its own.
	openshell gateway start --name adv --bind 0.0.0.0 --tls-san "$UPLINK" --advertise-address "$adv" --port "$port" \
		--node-network wireguard >/dev/null
	run docker inspect openshell-cluster-adv --format '{{json .Args}} {{json .HostConfig.PortBindings}}'
	assert_output --partial "\"--flannel-backend=wireguard-native\",\"--advertise-address=$adv\",\"--advertise-port=$port\",\"--node-external-ip=$adv\",\"--flannel-external-ip\""
	assert_output --partial '"51820/udp":[{"HostIp":"0.0.0.0","HostPort":"51820"}]'
	refute_output --partial '8472/udp'
	run --separate-stderr openshell gateway node add node-d --name adv --docker-host "$(sim_host_of node-d docker-host)"
	assert_failure 1
	[[ $stderr == *"node 'node-d' on "*" did not join: its agent cannot open its tunnel to $adv:$port, the address the server advertises to its agents: dial tcp $adv:$port: connect: connection refused; start the gateway with --advertise-address set to an address that host reaches"* ]]
	assert_nothing_on_for adv node-d
	openshell gateway destroy --name adv --yes >/dev/null
}

@test "node add interrupted: exit 130, and nothing of it is left on either host" {
	# The server's watch of the nodes never answers, so that the add is
	# still waiting for the join when the interrupt comes, however fast
	# the agent joins (on an idle machine it did before the test looked).
	fake_docker_on " --watch " '[[ " $* " == *" get nodes "* ]] && exec sleep 600'
	# Not the openshell function: the pid must be openshell's own, so that
	# the interrupt reaches it (a background subshell ignores SIGINT).
	OPENSHELL_DOCKER=$FAKE_DOCKER "$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" gateway node add node-d \
		--name mh --docker-host "$(sim_host_of node-d docker-host)" >/dev/null 2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	watching() { [[ -s $BATS_TEST_TMPDIR/calls && -n $(sim_docker node-d ps -q --filter name=openshell-node-mh) ]]; }
	eventually watching
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 130
	run cat "$BATS_TEST_TMPDIR/err"
	assert_output --partial "interrupted; node 'node-d' was not added"
	assert_nothing_on node-d
}

@test "stop stops the agents before the server; start resumes them, and returns with every node Ready" {
	run --separate-stderr openshell gateway stop --name mh
	assert_success
	[[ $stderr == *"stopping node 'node-b' on $(sim_host_of node-b docker-host)"* ]]
	for n in node-b node-c; do
		run sim_docker "$n" inspect -f '{{.State.Running}}' openshell-node-mh
		assert_output false
	done
	run --separate-stderr openshell gateway start --name mh --gpu --json
	assert_success
	[[ $stderr == *"waiting for node 'node-c' on "* ]]
	# Resumed where it was made to be reached (--tls-san), which its agents were given.
	assert_equal "$(jq -r .server <<<"$output")" "https://$UPLINK:$PORT"
	run grep -F "server: https://$UPLINK:$PORT" "$XDG_CONFIG_HOME/openshell/gateways/mh/kubeconfig"
	assert_success
	run --separate-stderr openshell gateway node list --name mh --json
	assert_equal "$(jq -r '[.nodes[] | "\(.name):\(.status):\(.gpus_allocatable)"] | join(" ")' <<<"$output")" \
		"openshell-mh:Ready:2 node-b:Ready:1 node-c:Ready:2"
}

@test "--recreate is refused while the gateway has nodes, naming them and the fix; nothing changes" {
	before=$(docker inspect -f '{{.Id}}' openshell-cluster-mh)
	agent=$(sim_docker node-b inspect -f '{{.Id}}' openshell-node-mh)
	run --separate-stderr openshell gateway start --name mh --gpu --recreate --bind 0.0.0.0 --tls-san "$UPLINK" --port "$PORT"
	assert_failure 6
	assert_equal "$(tail -n 1 <<<"$stderr")" "openshell: error: gateway 'mh' has nodes on other hosts (node-b on $(sim_host_of node-b docker-host), node-c on $(sim_host_of node-c docker-host)), whose agents --recreate would leave joined to a cluster it removes; remove them first (openshell gateway node remove NODE --name mh), then recreate the gateway and add them again"
	assert_equal "$(docker inspect -f '{{.Id}}' openshell-cluster-mh)" "$before"
	assert_equal "$(sim_docker node-b inspect -f '{{.Id}}' openshell-node-mh)" "$agent"
}

@test "node remove drains node-c, deletes it, and removes its agent from its host" {
	kx apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-c"},"spec":{"nodeName":"node-c","containers":[{"name":"c","image":"'"$IMAGE"'","command":["sleep","3600"]}]}}' >/dev/null
	run --separate-stderr openshell gateway node remove node-c --name mh --yes
	assert_success
	assert_output "Node 'node-c' removed from gateway 'mh'."
	assert_nothing_on node-c
	run kx get pod on-c --ignore-not-found -o name
	assert_output ""
	run openshell gateway node remove node-c --name mh --yes
	assert_failure 5
}

@test "destroy removes the agents first, each from its own host; one whose host does not answer leaves all whole" {
	rec=$XDG_CONFIG_HOME/openshell/gateways/mh/nodes/node-b.json
	cp "$rec" "$BATS_TEST_TMPDIR/node-b.json"
	# The record names a daemon that does not answer, as a host that is down.
	jq '.docker_endpoint = "unix:///nonexistent/docker.sock"' "$BATS_TEST_TMPDIR/node-b.json" >"$rec"
	run --separate-stderr openshell gateway destroy --name mh --yes
	assert_failure 3
	[[ $stderr == *"cannot remove node 'node-b''s agent from unix:///nonexistent/docker.sock"* ]]
	[[ $stderr == *"gateway 'mh' was left as it is"*"retry once unix:///nonexistent/docker.sock answers"* ]]
	run docker inspect -f '{{.State.Running}}' openshell-cluster-mh
	assert_output true
	[[ -e $rec ]]
	cp "$BATS_TEST_TMPDIR/node-b.json" "$rec"
	run --separate-stderr openshell gateway destroy --name mh --yes
	assert_success
	assert_nothing_on_host() { run sim_docker "$1" ps -aq --filter label=org.openshell.gateway=mh; assert_output ""; }
	assert_nothing_on_host node-b
	run sim_docker node-b volume ls -q --filter label=org.openshell.gateway=mh
	assert_output ""
	[[ ! -e $XDG_CONFIG_HOME/openshell/gateways/mh ]]
}

# Last, once mh and its VXLAN port are gone: a DRA gateway's server and a node.
@test "a DRA gateway joins node-e with the 2 of its GPUs the driver publishes, in its ResourceSlices; verify's pod there sees the GPU its claim was allocated; an MPS claim there gets its daemon there" {
	# node-e's third GPU has MIG enabled and no MIG device: NVIDIA's DRA
	# driver publishes nothing of it, so a join given all three waits for
	# the other two, not for three.
	sim_host_machine node-e --gpus 3 --driver 570.172.08 --mig 2=
	port=$(free_port)
	run --separate-stderr openshell gateway start --name md --gpu --gpu-allocation dra --gpu-sharing mps --bind 0.0.0.0 \
		--tls-san "$UPLINK" --port "$port"
	assert_success
	run --separate-stderr openshell gateway node add node-e --name md --docker-host "$(sim_host_of node-e docker-host)" --gpus 2 \
		--gpu-sharing time-slicing:2
	shared_err=$stderr shared_status=$status
	run --separate-stderr openshell gateway node add node-e --name md --docker-host "$(sim_host_of node-e docker-host)" --gpus 3 \
		--gpu-sharing time-slicing
	other_err=$stderr other_status=$status
	# The gateway's own sharing is accepted; every call on the server's side
	# names the daemon md's metadata records: the shell's names none.
	DOCKER_HOST=unix:///nonexistent.sock run --separate-stderr openshell gateway node add node-e --name md \
		--docker-host "$(sim_host_of node-e docker-host)" --gpus 3 --gpu-sharing mps
	add=$output add_err=$stderr add_status=$status
	# The agent's k3s serves DRA as the server's does: its node labelled for
	# the driver's kubelet plugin, which publishes the two of its three GPUs
	# that are whole.
	label=$(gw_kubectl md get node node-e -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.present}')
	published=$(gw_kubectl md get resourceslices -o json |
		jq -r '.items[] | select(.spec.nodeName == "node-e") | .spec.devices[].attributes.uuid.string' | sort)
	list=$(DOCKER_HOST=unix:///nonexistent.sock openshell gateway node list --name md --json)
	shown=$(openshell gateway status --name md)
	run --separate-stderr openshell gateway verify --name md
	verify=$output verify_status=$status
	# A claim that asks for MPS, its pod on node-e: the driver's kubelet
	# plugin there starts the claim's control daemon there (a Deployment
	# bound to node-e), whose pipe the pod asks for the percentage set.
	gw_kubectl md apply -f - >/dev/null <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: mps-e}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
    config:
    - requests: [gpu]
      opaque:
        driver: gpu.nvidia.com
        parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig,
                     sharing: {strategy: MPS, mpsConfig: {defaultActiveThreadPercentage: 25}}}
---
apiVersion: v1
kind: Pod
metadata: {name: mps-e}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: node-e}
  resourceClaims: [{name: gpu, resourceClaimName: mps-e}]
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04
    command: ["sh", "-c", "echo get_default_active_thread_percentage | nvidia-cuda-mps-control"]
    resources: {claims: [{name: gpu}]}
EOF
	gw_kubectl md wait --for=jsonpath='{.status.phase}'=Succeeded pod/mps-e --timeout=90s >/dev/null || true
	mps_said=$(gw_kubectl md logs mps-e 2>&1)
	mps_events=$(gw_kubectl md get events -n nvidia-dra-driver-gpu -o jsonpath='{range .items[*]}{.reason} {.source.host} {.message}{"\n"}{end}' 2>&1)
	openshell gateway destroy --name md --yes >/dev/null 2>&1
	assert_equal "$shared_status" 6
	[[ $shared_err == *"gateway 'md' allocates its GPUs by dra: under --gpu-allocation dra pods share a GPU by using one ResourceClaim, whose GpuConfig asks the DRA driver for time-slicing, and there is no count of replicas: give --gpu-sharing time-slicing, without :N" ]]
	assert_equal "$other_status" 6
	[[ $other_err == *"gateway 'md' shares its GPUs as mps, and the DRA driver's sharing is one for every node: add node 'node-e' without --gpu-sharing"* ]]
	assert_equal "$add_status" 0
	grep -qxF "  GPUs:        2 published in ResourceSlices (DRA driver gpu.nvidia.com)" <<<"$add"
	[[ $add_err == *"warning: GPU $(sim_gpu_uuids node-e | sed -n 3p) has MIG enabled and no MIG device: NVIDIA's DRA driver publishes nothing of it"* ]]
	[[ $add_err == *"waiting for node 'node-e' to be Ready with its GPUs in ResourceSlices"* ]]
	assert_equal "$label" true
	assert_equal "$published" "$(sim_gpu_uuids node-e | head -2 | sort)"
	assert_equal "$(jq -r '[.nodes[] | "\(.name):\(.gpus_allocatable)"] | join(" ")' <<<"$list")" "openshell-md:2 node-e:2"
	assert_has_line "$shown" "  Node:        node-e on $(sim_host_of node-e docker-host): Ready, 2 published in ResourceSlices"
	assert_equal "$verify_status" 0
	line=$(grep '^  PASS  node-gpus ' <<<"$verify")
	re="node-e: pod openshell-verify-[0-9a-f]+-node-e Succeeded: GPU 0: [^;]*\\(UUID: ($(sim_gpu_uuids node-e | head -2 | paste -sd'|'))\\), the device gpu-[0-9]+ its claim openshell-verify-[0-9a-f]+-node-e-gpu-[a-z0-9]+ was allocated and reserved for it"
	[[ $line =~ $re ]]
	assert_equal "$mps_said" "25.0"
	# The daemon's pod bound to node-e by the template's nodeName, run by
	# that node's kubelet.
	[[ $mps_events == *"Started node-e Started container mps-control-daemon"* ]]
	# The destroy took the agent and its volumes from node-e's host.
	run sim_docker node-e ps -aq --filter label=org.openshell.gateway=md
	assert_output ""
	run sim_docker node-e volume ls -q
	assert_output ""
	[[ ! -e $XDG_CONFIG_HOME/openshell/gateways/md ]]
}
