"""A node's pod network, as k3s's embedded flannel, its CNI plugins and
kube-proxy make it: SIMULATION built of the kernel's own devices, so that
packets really cross (or fail to cross) the test bed's hosts.

Only with SIM_POD_NETWORK=1 (the image variant REF-podnet): an agent runs
in its host's network namespace, and on a sim host without a network of
its own that is the test machine's.

- flannel (k3s pkg/agent/flannel/setup.go, flannel pkg/subnet/kube and
  pkg/backend/vxlan): the node's public IP is its interface's address (the
  node IP), or with the server's --flannel-external-ip and a
  --node-external-ip that address (the annotation
  flannel.alpha.coreos.com/public-ip-overwrite). The node is annotated
  with its public-ip, backend-type and backend-data (VNI, VtepMAC). The
  VXLAN device flannel.1 (VNI 1, UDP 8472, no learning) sends from the
  interface's address; for every other node with a lease: a route to its
  pod CIDR via flannel.1, a permanent neighbour for its VTEP and an FDB
  entry sending to its public IP. So peers reach a node only at its
  public IP, on 8472/udp. wireguard-native is SIMULATED as the same
  VXLAN on 51820/udp (the test kernel has no wireguard): the ports and
  addresses are what the product looks at, not the encryption.
- flannel's iptables: pod traffic leaving the cluster CIDR is masqueraded,
  and forwarding to and from it accepted (a host's dockerd sets FORWARD
  to DROP).
- the bridge CNI plugin (k3s's 10-flannel.conflist delegates to it): the
  bridge cni0 holds the pod CIDR's first address, the gateway; each pod
  gets a network namespace of its own (containerd: /var/run/netns/cni-…, here /run/netns),
  a veth into cni0, its pod IP and a default route via the gateway.
  hostNetwork pods stay in the node's namespace.
- kube-proxy (pkg/proxy/iptables): the ClusterIP of default/kubernetes
  DNATed to its endpoints (the server's advertised address and port), in
  the nat table's KUBE-SERVICES chain from PREROUTING and OUTPUT. Other
  Services are not proxied.
"""

import json
import os

from .. import config, logs, procs

BIN = os.environ.get("SIM_NET_BIN", "/usr/lib/k3s-sim/bin")
CLUSTER_CIDR = config.CLUSTER_CIDR
KUBERNETES_SERVICE_IP = config.KUBERNETES_SERVICE_IP
VNI = 1
PORTS = {"vxlan": 8472, "wireguard-native": 51820}
DEVICE = "flannel.1"
BRIDGE = "cni0"
NETNS_DIR = "/run/netns"     # iproute2's (and containerd's /var/run/netns on a host)
SYNC_PERIOD = 2.0
# flannel's MTU for VXLAN: the interface's (1500 here) less the 50 bytes of
# the encapsulation; the CNI config gives pods the same (subnet.env FLANNEL_MTU).
MTU = 1450

ANN = "flannel.alpha.coreos.com/"


def enabled():
    return config.switch_on("SIM_POD_NETWORK")


def _tool(name, *args, check=True):
    argv = [os.path.join(BIN, name)] + list(args)
    code, out, err = procs.run(argv)
    if check and code != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv[1:]), err.decode("utf-8", "replace").strip()))
    return code, out.decode("utf-8", "replace")


def ip(*args, check=True):
    return _tool("ip", *args, check=check)


def iptables(*args, check=True):
    return _tool("iptables", "-w", *args, check=check)


def _ensure_rule(table, chain, *rule):
    if iptables("-t", table, "-C", chain, *rule, check=False)[0] != 0:
        iptables("-t", table, "-A", chain, *rule)


def _subnet_base(cidr):
    return cidr.split("/")[0]


def _gateway(cidr):
    a, b, c, _ = _subnet_base(cidr).split(".")
    return "%s.%s.%s.1" % (a, b, c)


def public_ip(node_ip, external_ips, flannel_external_ip):
    """flannel's public IP for the node (setup.go setAnnotations, kube
    subnet manager): the external IP only when both are set."""
    v4 = [a for a in external_ips if ":" not in a]
    if flannel_external_ip and v4:
        return v4[0]
    return node_ip


def peers(nodes, own):
    """{pod CIDR: (VtepMAC, public IP)} of every other node that has a
    lease: a pod CIDR and flannel's annotations."""
    out = {}
    for n in nodes:
        if n["metadata"]["name"] == own:
            continue
        ann = n["metadata"].get("annotations") or {}
        cidr = (n.get("spec") or {}).get("podCIDR")
        try:
            mac = json.loads(ann.get(ANN + "backend-data") or "{}").get("VtepMAC")
        except ValueError:
            mac = None
        pub = ann.get(ANN + "public-ip-overwrite") or ann.get(ANN + "public-ip")
        if cidr and mac and pub:
            out[cidr] = (mac, pub)
    return out


class PodNetwork:
    def __init__(self, kubelet, backend="vxlan", external_ips=(), flannel_external_ip=False):
        self.k = kubelet
        self.backend = backend if backend in PORTS else "vxlan"
        self.external_ips = list(external_ips)
        self.flannel_external_ip = flannel_external_ip
        self.applied = {}
        self.endpoint = None
        self.next_sync = 0.0

    # ---- flannel ------------------------------------------------------

    def start(self):
        """Run before the kubelet's pods: the devices, the node's lease."""
        pub = public_ip(self.k.ip, self.external_ips, self.flannel_external_ip)
        port = PORTS[self.backend]
        with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
            f.write("1")
        if ip("link", "show", DEVICE, check=False)[0] != 0:
            ip("link", "add", DEVICE, "mtu", str(MTU), "type", "vxlan", "id", str(VNI), "local", self.k.ip,
               "dstport", str(port), "nolearning")
        ip("addr", "replace", _subnet_base(self.k.pod_cidr) + "/32", "dev", DEVICE)
        ip("link", "set", DEVICE, "up")
        mac = ip("-j", "link", "show", DEVICE)[1]
        mac = json.loads(mac)[0]["address"]
        ann = {ANN + "backend-type": self.backend if self.backend == "vxlan" else "wireguard",
               ANN + "backend-data": json.dumps({"VNI": VNI, "VtepMAC": mac}),
               ANN + "kube-subnet-manager": "true", ANN + "public-ip": pub}
        if pub != self.k.ip:
            ann[ANN + "public-ip-overwrite"] = pub
        self.k.api.patch(self.k.res("v1", "Node"), None, self.k.node, "merge", {"metadata": {"annotations": ann}})
        _ensure_rule("nat", "POSTROUTING", "-s", CLUSTER_CIDR, "!", "-d", CLUSTER_CIDR, "-m", "comment",
                     "--comment", "flanneld masq", "-j", "MASQUERADE")
        _ensure_rule("filter", "FORWARD", "-s", CLUSTER_CIDR, "-m", "comment", "--comment", "flanneld forward",
                     "-j", "ACCEPT")
        _ensure_rule("filter", "FORWARD", "-d", CLUSTER_CIDR, "-m", "comment", "--comment", "flanneld forward",
                     "-j", "ACCEPT")
        # kube-proxy's chain, empty until the endpoints are read (an agent
        # that ran before left it there).
        if iptables("-t", "nat", "-N", "KUBE-SERVICES", check=False)[0] != 0:
            iptables("-t", "nat", "-F", "KUBE-SERVICES")
        for chain in ("PREROUTING", "OUTPUT"):
            _ensure_rule("nat", chain, "-j", "KUBE-SERVICES")
        logs.info("SIMULATION: flannel: %s on %s, public IP %s, UDP %d" % (self.backend, DEVICE, pub, port))

    def sync(self, now):
        """The other nodes' leases and the API's endpoints, every SYNC_PERIOD."""
        if now < self.next_sync:
            return
        self.next_sync = now + SYNC_PERIOD
        nodes, _ = self.k.api.list(self.k.res("v1", "Node"))
        want = peers(nodes, self.k.node)
        for cidr, (mac, pub) in want.items():
            if self.applied.get(cidr) == (mac, pub):
                continue
            vtep = _subnet_base(cidr)
            ip("neigh", "replace", vtep, "lladdr", mac, "dev", DEVICE, "nud", "permanent")
            _tool("bridge", "fdb", "replace", mac, "dev", DEVICE, "dst", pub, "self", "permanent")
            ip("route", "replace", cidr, "via", vtep, "dev", DEVICE, "onlink")
            self.applied[cidr] = (mac, pub)
        for cidr in [c for c in self.applied if c not in want]:
            ip("route", "del", cidr, check=False)
            self.applied.pop(cidr)
        self._proxy()

    def _proxy(self):
        ep = self.k.api.find(self.k.res("v1", "Endpoints"), "default", "kubernetes")
        target = None
        for s in (ep or {}).get("subsets") or []:
            if s.get("addresses") and s.get("ports"):
                target = "%s:%d" % (s["addresses"][0]["ip"], s["ports"][0]["port"])
                break
        if target == self.endpoint:
            return
        iptables("-t", "nat", "-F", "KUBE-SERVICES")
        if target:
            iptables("-t", "nat", "-A", "KUBE-SERVICES", "-d", KUBERNETES_SERVICE_IP + "/32", "-p", "tcp",
                     "--dport", "443", "-m", "comment", "--comment", "default/kubernetes:https",
                     "-j", "DNAT", "--to-destination", target)
        self.endpoint = target

    # ---- the CNI plugins ------------------------------------------------

    def netns(self, pod):
        return os.path.join(NETNS_DIR, "cni-" + pod["metadata"]["uid"])

    def add(self, pod, pod_ip):
        """CNI ADD: the pod's namespace, veth and address. Raises RuntimeError."""
        name = os.path.basename(self.netns(pod))
        ip("netns", "del", name, check=False)
        ip("netns", "add", name)
        gw = _gateway(self.k.pod_cidr)
        if ip("link", "show", BRIDGE, check=False)[0] != 0:
            ip("link", "add", BRIDGE, "type", "bridge")
        ip("addr", "replace", gw + "/24", "dev", BRIDGE)
        ip("link", "set", BRIDGE, "up")
        host = "veth" + pod["metadata"]["uid"].replace("-", "")[:8]
        ip("link", "del", host, check=False)
        ip("link", "add", host, "mtu", str(MTU), "type", "veth", "peer", "name", "eth0", "mtu", str(MTU), "netns", name)
        ip("link", "set", host, "master", BRIDGE, "up")
        ns = ("-n", name)
        ip(*ns, "addr", "add", pod_ip + "/24", "dev", "eth0")
        ip(*ns, "link", "set", "eth0", "up")
        ip(*ns, "link", "set", "lo", "up")
        ip(*ns, "route", "add", "default", "via", gw)

    def remove(self, pod):
        """CNI DEL: the namespace goes, and its veth with it."""
        ip("netns", "del", os.path.basename(self.netns(pod)), check=False)

    def wrap(self, pod, argv):
        return ["nsenter", "--net=" + self.netns(pod), "--"] + list(argv)
