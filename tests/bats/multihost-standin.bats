#!/usr/bin/env bats
# Three nodes on three sim hosts (simulation only): the k3s stand-in's server on
# the suite's sim host (this machine's network) and `k3s agent` on two machines
# apart, node-b and node-c (sim hosts with a network, address and hostname of
# their own: sim-host start --own-network), each with simulated GPUs of its own.
# Each agent runs as a k3s agent in Docker on another machine does (--network
# host, privileged, its host's GPUs) and reaches the server only at this
# machine's addresses, where the server's port is published, never at the
# server container's own address; it joins at the address on its own link and
# opens its tunnel to the one the server advertises (node-b's link). The server
# reaches each kubelet at its node address. docs/k3s-standin.md, "`k3s agent`:
# more nodes", says which k3s behaviour each check follows.

bats_require_minimum_version 1.5.0

SMOKE=$(sed -n 's/^SMOKE_IMAGE=//p' "$BATS_TEST_DIRNAME/../../deploy/versions.env")

setup_file() {
	load helpers/gateway
	sim_only "other machines exist only as sim hosts"
	flannel_ports_lock
	gateway_suite_start --gpus 2
	sim_host_machine node-b --gpus 1
	sim_host_machine node-c --gpus 3
	# The image whose stand-in makes a real pod network (flannel's VXLAN,
	# the bridge plugin, kube-proxy's DNAT): every node here has a
	# network namespace of its own.
	NETIMAGE=$IMAGE-podnet
	export NETIMAGE
	sim_image_copy "$NETIMAGE" node-b
	sim_image_copy "$NETIMAGE" node-c
	PORT=$(free_port)
	export PORT
	local b c
	b=$(sim_host_of node-b uplink)
	c=$(sim_host_of node-c uplink)
	ADVERTISED=$b:$PORT
	export ADVERTISED
	# Published where each machine reaches this one, and named so in the
	# server's certificate, which the agents verify. The node controller's
	# grace: k3s passes kube-controller-manager flags on as given.
	docker network create openshell-cluster-mh >/dev/null
	docker run -d --privileged --cgroupns private --name openshell-cluster-mh --hostname openshell-mh \
		--network openshell-cluster-mh -v openshell-cluster-mh:/var/lib/rancher/k3s \
		--gpus all -e GPU_ENABLED=true -p "$b:$PORT:6443" -p "$c:$PORT:6443" -p "$b:8472:8472/udp" "$NETIMAGE" \
		server --disable=traefik --tls-san="$b" --tls-san="$c" --advertise-address="$b" --advertise-port="$PORT" \
		--node-external-ip="$b" --flannel-external-ip \
		--kube-controller-manager-arg=node-monitor-grace-period=20s >/dev/null
	eventually docker exec openshell-cluster-mh kubectl get --raw /readyz
	TOKEN=$(docker exec openshell-cluster-mh cat /var/lib/rancher/k3s/server/token)
	export TOKEN
	agent_start node-b
	agent_start node-c
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
	flannel_ports_unlock
}

setup() {
	load helpers/gateway
}

# agent_start MACHINE: `k3s agent` in Docker on MACHINE, joining the server.
agent_start() {
	sim_docker "$1" run -d --privileged --cgroupns private --network host --name openshell-agent \
		-v openshell-agent:/var/lib/rancher/k3s --gpus all -e GPU_ENABLED=true -e K3S_TOKEN="$TOKEN" \
		"$NETIMAGE" agent --server "https://$(sim_host_of "$1" uplink):$PORT" >/dev/null
}

kx() {
	docker exec -i openshell-cluster-mh kubectl "$@"
}

# node_gpus "NAME=N …": every node, by name, with its allocatable nvidia.com/gpu.
node_gpus() {
	[[ $(kx get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.allocatable.nvidia\.com/gpu} {end}') == "$1 " ]]
}

ready_is() {
	[[ $(kx get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == "$2" ]]
}

@test "three nodes on three hosts: each Ready, at its own address, with its own host's GPUs" {
	eventually node_gpus "node-b=1 node-c=3 openshell-mh=2"
	for n in node-b node-c openshell-mh; do
		eventually ready_is "$n" True
	done
	run kx get node node-b -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'
	assert_output "$(sim_host_of node-b addr)"
	run kx get node node-c -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'
	assert_output "$(sim_host_of node-c addr)"
	# The agents' nodes are workers: no control-plane role.
	run kx get nodes -l node-role.kubernetes.io/control-plane -o name
	assert_output node/openshell-mh
	# The device plugin's DaemonSet runs on every node, each finding its host's GPUs.
	ds() { [[ $(kx get ds nvidia-device-plugin -n nvidia-device-plugin -o 'jsonpath={.status.desiredNumberScheduled}/{.status.numberReady}') == "$1" ]]; }
	eventually ds 3/3
}

@test "each agent opened its tunnel to the address the server advertises, before its kubelet ran" {
	for m in node-b node-c; do
		run sim_docker "$m" logs openshell-agent
		assert_output --partial "msg=\"Got apiserver addresses from supervisor: [$ADVERTISED]\""
		assert_output --partial "msg=\"Remotedialer connected to proxy\" url=\"wss://$ADVERTISED/v1-k3s/connect\""
		# The kubelet waits for the tunnel (pkg/agent/run.go: tunnelSetup, then the agent).
		tunnel=$(grep -n 'Remotedialer connected to proxy' <<<"$output" | head -1 | cut -d: -f1)
		kubelet=$(grep -n 'Running kubelet' <<<"$output" | head -1 | cut -d: -f1)
		((tunnel < kubelet))
	done
}

@test "a server that advertises its container's own address: an agent on another host cannot open its tunnel, and its node never registers" {
	# What k3s does when nothing says otherwise: it advertises the node's own
	# address, here the container's on its bridge network, which no other
	# machine has a route to. The join itself goes through (the URL it was given).
	port=$(free_port)
	b=$(sim_host_of node-b uplink)
	docker network create openshell-cluster-mh2 >/dev/null
	docker run -d --privileged --name openshell-cluster-mh2 --hostname openshell-mh2 --network openshell-cluster-mh2 \
		-v openshell-cluster-mh2:/var/lib/rancher/k3s -p "$b:$port:6443" "$NETIMAGE" server --disable=traefik --tls-san="$b" >/dev/null
	eventually docker exec openshell-cluster-mh2 kubectl get --raw /readyz
	token=$(docker exec openshell-cluster-mh2 cat /var/lib/rancher/k3s/server/token)
	ip=$(docker inspect openshell-cluster-mh2 --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}')
	sim_docker node-b run -d --privileged --network host --name openshell-agent-2 -v openshell-agent-2:/var/lib/rancher/k3s \
		-e K3S_TOKEN="$token" "$NETIMAGE" agent --server "https://$b:$port" --node-name node-b2 >/dev/null
	failing() {
		sim_docker node-b logs openshell-agent-2 2>&1 | grep -qF "level=error msg=\"Remotedialer proxy error; reconnecting...\" error=\"dial tcp $ip:6443: connect: no route to host\" url=\"wss://$ip:6443/v1-k3s/connect\""
	}
	eventually failing
	run sim_docker node-b logs openshell-agent-2
	assert_output --partial "msg=\"Got apiserver addresses from supervisor: [$ip:6443]\""
	refute_output --partial "Running kubelet"
	run docker exec openshell-cluster-mh2 kubectl get nodes -o name
	assert_output node/openshell-mh2
	sim_docker node-b rm -f -v openshell-agent-2 >/dev/null
	sim_docker node-b volume rm openshell-agent-2 >/dev/null
	docker rm -f -v openshell-cluster-mh2 >/dev/null
	docker volume rm openshell-cluster-mh2 >/dev/null
	docker network rm openshell-cluster-mh2 >/dev/null
}

@test "flannel: a pod on another host reaches a pod on the server's node, and the API at its ClusterIP" {
	# flannel sends each node's pod traffic to the others' public IPs on
	# 8472/udp: the server's is the address it was given with
	# --node-external-ip and --flannel-external-ip, where that port is
	# published; an agent's is its host's own. kube-proxy sends
	# 10.43.0.1:443 to the address and port the server advertises.
	run kx get node openshell-mh -o jsonpath='{.metadata.annotations.flannel\.alpha\.coreos\.com/public-ip}'
	assert_output "$(sim_host_of node-b uplink)"
	run kx get node node-b -o jsonpath='{.metadata.annotations.flannel\.alpha\.coreos\.com/public-ip}'
	assert_output "$(sim_host_of node-b addr)"
	web=$(podnet_web openshell-mh from-web)
	[[ $web == 10.42.0.* ]]
	run podnet_client client node-b "$web"
	assert_line from-web
	# The API answers (no credentials: 401, as k3s's kube-apiserver with anonymous-auth off).
	assert_output --partial "error: You must be logged in to the server (Unauthorized)"
	# The ended pod's sandbox is stopped: its network namespace goes (the CNI's DEL).
	uid=$(kx get pod client -o jsonpath='{.metadata.uid}')
	netns_gone() {
		local l
		l=$(sim_docker node-b exec openshell-agent ls /run/netns) && ! grep -qx "cni-$uid" <<<"$l"
	}
	eventually netns_gone
	kx delete pod web client --wait=false >/dev/null
}

@test "kubectl exec into a pod on an agent's node runs there, through its kubelet" {
	kx apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-b"},"spec":{"nodeName":"node-b","containers":[{"name":"c","image":"'"$SMOKE"'","command":["sleep","3600"]}]}}' >/dev/null
	running() { [[ $(kx get pod on-b -o jsonpath='{.status.phase}') == Running ]]; }
	eventually running
	run --separate-stderr kx exec on-b -- sh -c 'hostname; exit 4'
	assert_failure 4
	assert_output node-b
	[[ $stderr == *"command terminated with exit code 4"* ]]
	kx delete pod on-b --wait=false >/dev/null
}

@test "a pod bound to an agent's node sees that host's GPUs; its log comes through the server" {
	kx apply -f - <<<'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"on-c"},"spec":{"nodeName":"node-c","restartPolicy":"Never","runtimeClassName":"nvidia","containers":[{"name":"c","image":"'"$SMOKE"'","command":["nvidia-smi","-L"],"resources":{"limits":{"nvidia.com/gpu":3}}}]}}'
	phase_is() { [[ $(kx get pod on-c -o jsonpath='{.status.phase}') == "$1" ]]; }
	eventually phase_is Succeeded
	run kx logs on-c
	assert_success
	for u in $(sim_gpu_uuids node-c); do
		assert_output --partial "(UUID: $u)"
	done
	for u in $(sim_gpu_uuids node-b) $(sim_gpu_uuids); do
		refute_output --partial "$u"
	done
	assert_equal "$(grep -c '^GPU ' <<<"$output")" 3
	kx delete pod on-c --wait=false >/dev/null
}

@test "each kubelet renews its node's Lease in kube-node-lease, as the real kubelet does" {
	run kx get leases -n kube-node-lease -o json
	assert_success
	assert_equal "$(jq -r '[.items[].spec.holderIdentity] | sort | join(" ")' <<<"$output")" "node-b node-c openshell-mh"
	assert_equal "$(jq -r '[.items[].spec.leaseDurationSeconds] | unique | join(" ")' <<<"$output")" 40
	assert_equal "$(jq -r '.items[] | select(.metadata.name == "node-b") | .metadata.ownerReferences[0].kind' <<<"$output")" Node
	first=$(jq -r '.items[] | select(.metadata.name == "node-b") | .spec.renewTime' <<<"$output")
	renewed() { [[ $(kx get lease node-b -n kube-node-lease -o jsonpath='{.spec.renewTime}') != "$first" ]]; }
	eventually renewed
}

@test "a stopped agent's node goes NotReady after the node controller's grace, and comes back" {
	eventually ready_is node-b True
	sim_docker node-b stop -t 10 openshell-agent >/dev/null
	# The grace is 40 s: a watch, where polls would run a kubectl every half second.
	kx wait --for=condition=Ready=Unknown node/node-b --timeout=90s >/dev/null
	run kx get node node-b -o json
	assert_equal "$(jq -r '[.status.conditions[] | "\(.type)=\(.status):\(.reason)"] | sort | join(" ")' <<<"$output")" \
		"DiskPressure=Unknown:NodeStatusUnknown MemoryPressure=Unknown:NodeStatusUnknown PIDPressure=Unknown:NodeStatusUnknown Ready=Unknown:NodeStatusUnknown"
	assert_equal "$(jq -r '.status.conditions[] | select(.type == "Ready") | .message' <<<"$output")" \
		"Kubelet stopped posting node status."
	assert_equal "$(jq -r '[.spec.taints[] | "\(.key):\(.effect)"] | sort | join(" ")' <<<"$output")" \
		"node.kubernetes.io/unreachable:NoExecute node.kubernetes.io/unreachable:NoSchedule"
	run kx get nodes node-b
	assert_output --partial "node-b   NotReady"
	run kx get events --field-selector reason=NodeNotReady,involvedObject.kind=Node -o jsonpath='{.items[*].message}'
	assert_output --partial "Node node-b status is now: NodeNotReady"
	# The plugin's pod there stays (it tolerates the NoExecute taint) but is not
	# Ready; the node no longer counts as desired.
	ds() { [[ $(kx get ds nvidia-device-plugin -n nvidia-device-plugin -o 'jsonpath={.status.desiredNumberScheduled}/{.status.numberReady}/{.status.numberMisscheduled}') == "$1" ]]; }
	eventually ds 2/2/1
	# The other agent and the server stay Ready.
	ready_is node-c True
	ready_is openshell-mh True
	sim_docker node-b start openshell-agent >/dev/null
	eventually ready_is node-b True
	untainted() { [[ -z $(kx get node node-b -o jsonpath='{.spec.taints}') ]]; }
	eventually untainted
	eventually ds 3/3/0
}

@test "a node deleted through the API leaves with its password; its running kubelet does not bring it back, a restarted agent does" {
	eventually ready_is node-c True
	kx delete node node-c >/dev/null
	run kx get node node-c
	assert_failure
	assert_output --partial 'nodes "node-c" not found'
	run kx get secret node-c.node-password.k3s -n kube-system
	assert_failure
	# The kubelet registers at its start only: it now fails to update the node.
	says() { sim_docker node-c logs openshell-agent 2>&1 | grep -q "Error updating node status"; }
	eventually says
	run kx get node node-c
	assert_failure
	sim_docker node-c restart -t 10 openshell-agent >/dev/null
	eventually node_gpus "node-b=1 node-c=3 openshell-mh=2"
	eventually ready_is node-c True
}
