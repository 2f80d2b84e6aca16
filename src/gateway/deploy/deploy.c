/* gateway/deploy/deploy.c - a start's request (defaults, validation) and plan, and the docker run argv. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_network.h"
#include "gateway/state/node_record.h"
#include "kube/objects.h"

const char *gateway_default_image(void)
{
	const char *image = getenv("OPENSHELL_CLUSTER_IMAGE");

	return image && *image ? image : IMAGE_DEFAULT_TAG;
}

void gateway_request_init(struct gateway_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->name = GATEWAY_DEFAULT_NAME;
	rq->timeout_ms = DEPLOY_DEFAULT_TIMEOUT_MS;
	rq->sharing.replicas = SHARING_UNSET;
	rq->mig = MIG_UNSET;
	rq->allocation = GPU_ALLOCATION_UNSET;
	rq->node_network = NODE_NETWORK_UNSET;
}

void gateway_request_free(struct gateway_request *rq)
{
	gpus_free(&rq->gpus);
}

void deploy_plan_init(struct deploy_plan *p, const struct gateway_request *rq)
{
	memset(p, 0, sizeof(*p));
	p->req = rq;
	p->port = rq->port ? rq->port : DEPLOY_DEFAULT_PORT;
	p->bind = rq->bind ? rq->bind : DEPLOY_DEFAULT_BIND;
	p->image = rq->image ? rq->image : gateway_default_image();
	p->image_named = image_named(p->image);
	p->advertise = rq->advertise;
	p->mig = rq->mig == MIG_UNSET ? MIG_NONE : rq->mig;
	p->allocation = rq->allocation == GPU_ALLOCATION_UNSET ? GPU_ALLOCATION_DEVICE_PLUGIN : rq->allocation;
	p->node_network = rq->node_network == NODE_NETWORK_UNSET ? NODE_NETWORK_VXLAN : rq->node_network;
}

void deploy_plan_free(struct deploy_plan *p)
{
	strv_free(&p->gpu_uuids);
	strv_free(&p->gpu_caps);
}

static int is_ipv6(const char *addr)
{
	struct in6_addr a6;

	return inet_pton(AF_INET6, addr, &a6) == 1;
}

static int ip_literal(const char *addr)
{
	struct in_addr a4;

	return inet_pton(AF_INET, addr, &a4) == 1 || is_ipv6(addr);
}

int bind_is_loopback(const char *addr)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return strcmp(addr, "::1") == 0;
}

int image_ref_check(const char *ref, os_error *err)
{
	size_t n = strlen(ref);
	int ok = n > 0 && n <= 255 &&
		 strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ref[0]) &&
		 strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@-") == n;

	if (!ok) {
		cleanup_free char *shown = printable(ref, 64);
		return os_error_set(err, OS_EXIT_USAGE,
				    "invalid image reference '%s': use [registry/]repository[:tag][@digest] of letters, digits and ._/:@-",
				    shown);
	}
	return 0;
}

/* A name for the API certificate: an IP address, or a DNS name of labels of
 * letters, digits and '-'. */
static int san_ok(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (ip_literal(s))
		return 1;
	if (n == 0 || n > 253 || s[0] == '-' || s[0] == '.' || s[n - 1] == '.' || s[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
		} else if (isalnum((unsigned char)s[i]) || (s[i] == '-' && label > 0)) {
			if (++label > 63)
				return 0;
		} else {
			return 0;
		}
	}
	return 1;
}

int gateway_request_check(const struct gateway_request *rq, os_error *err)
{
	if (gateway_name_check(rq->name, err) < 0)
		return -1;
	if (rq->bind && !ip_literal(rq->bind)) {
		cleanup_free char *shown = printable(rq->bind, 64);
		return os_error_set(err, OS_EXIT_USAGE,
				    "invalid --bind address '%s': give an IPv4 or IPv6 address such as 127.0.0.1",
				    shown);
	}
	if (rq->sharing.replicas != SHARING_UNSET) {
		if (!rq->gpu)
			return os_error_set(err, OS_EXIT_USAGE, "--gpu-sharing shares GPUs, and none were asked for: add --gpu or --gpus");
		if (rq->no_wait)
			return os_error_set(err, OS_EXIT_USAGE,
					    "--gpu-sharing is set through the k3s API, which --no-wait does not wait for: leave out --no-wait");
	}
	if ((rq->gpu_mode != GPU_MODE_AUTO || rq->mig != MIG_UNSET || rq->allocation != GPU_ALLOCATION_UNSET) && !rq->gpu)
		return os_error_set(err, OS_EXIT_USAGE, "--%s says how GPUs are given, and none were asked for: add --gpu or --gpus",
				    rq->gpu_mode != GPU_MODE_AUTO ? "gpu-mode"
				    : rq->mig != MIG_UNSET      ? "mig-strategy"
								: "gpu-allocation");
	if (gpu_allocation_check(rq->allocation, &rq->sharing, rq->mig, err) < 0)
		return -1;
	if (mps_with_mixed(&rq->sharing, rq->mig))
		return os_error_set(err, OS_EXIT_USAGE, "%s", MPS_MIXED_REFUSED);
	if (rq->advertise && (!ip_literal(rq->advertise) || bind_is_loopback(rq->advertise) || bind_is_wildcard(rq->advertise))) {
		cleanup_free char *shown = printable(rq->advertise, 64);
		return os_error_set(err, OS_EXIT_USAGE,
				    "invalid --advertise-address '%s': give the IP address other hosts reach this one at (not loopback, not 0.0.0.0 or ::)",
				    shown);
	}
	for (int i = 0; i < rq->n_tls_san; i++)
		if (!san_ok(rq->tls_san[i])) {
			cleanup_free char *shown = printable(rq->tls_san[i], 64);
			return os_error_set(err, OS_EXIT_USAGE,
					    "invalid --tls-san '%s': give a DNS name or an IP address", shown);
		}
	return image_ref_check(rq->image ? rq->image : gateway_default_image(), err);
}

int bind_is_wildcard(const char *addr)
{
	return strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0;
}

/* Docker's and the CNI's own bridges and veths: no remote client comes by
 * them. */
static int container_bridge(const char *ifname)
{
	static const char *const prefixes[] = { "docker", "br-", "veth", "cni", "flannel", "virbr", NULL };

	for (size_t i = 0; ifname && prefixes[i]; i++)
		if (strncmp(ifname, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

void deploy_host_addresses(const char *bind, struct strv *out)
{
	struct ifaddrs *ifs = NULL;
	int want6 = strcmp(bind, "::") == 0;

	if (getifaddrs(&ifs) < 0)
		return;
	for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		char buf[INET6_ADDRSTRLEN];
		const void *a;

		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) || container_bridge(i->ifa_name))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
		else if (want6 && i->ifa_addr->sa_family == AF_INET6 &&
			 !IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr))
			a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(i->ifa_addr->sa_family, a, buf, sizeof(buf)))
			strv_push(out, buf);
	}
	freeifaddrs(ifs);
}


/* Where clients reach the API. A wildcard bind is reached by the name
 * promised to remote clients, else at the Docker daemon's host when it is
 * another machine, else locally through loopback. */
static const char *api_host(const struct deploy_plan *p)
{
	int wild = bind_is_wildcard(p->bind);

	return p->api_host                     ? p->api_host
	     : wild && p->req->n_tls_san > 0 ? p->req->tls_san[0]
	     : wild && p->daemon_host          ? p->daemon_host
	     : strcmp(p->bind, "0.0.0.0") == 0 ? "127.0.0.1"
	     : strcmp(p->bind, "::") == 0      ? "::1"
					       : p->bind;
}

char *deploy_api_address(const struct deploy_plan *p)
{
	const char *host = api_host(p);

	return is_ipv6(host) ? xasprintf("[%s]:%d", host, p->port)
			     : xasprintf("%s:%d", host, p->port);
}

char *deploy_advertise_address(const struct deploy_plan *p)
{
	const char *host = p->advertise ? p->advertise : api_host(p);

	return ip_literal(host) && !bind_is_loopback(host) ? xstrdup(host) : NULL;
}

int deploy_node_port(const struct deploy_plan *p)
{
	cleanup_free char *advertise = deploy_advertise_address(p);

	/* flannel listens by the family of its public IP, the advertised address. */
	return advertise ? node_network_port(p->node_network, is_ipv6(advertise)) : 0;
}

/* PREFIX and LIST joined by commas, when LIST has any. */
static void push_joined(struct strv *out, const char *prefix, const struct strv *list)
{
	cleanup_free char *joined = list->n ? strv_join(list, ",") : NULL;

	if (joined)
		strv_pushf(out, "%s%s", prefix, joined);
}

/* What the plan gives of the GPUs: which, how, and what the entrypoint keeps. */
static void describe_gpus(const struct deploy_plan *p, struct strv *parts)
{
	cleanup_free char *sel = gpus_string(&p->req->gpus);

	strv_pushf(parts, "GPUs %s by %s", sel, p->cdi ? "CDI devices" : "--gpus");
	strv_pushf(parts, "allocated by %s", gpu_allocation_name(p->allocation));
	strv_pushf(parts, "MIG strategy %s", mig_strategy_name(p->mig));
	push_joined(parts, "kept ", &p->gpu_uuids);
	push_joined(parts, "MIG capabilities ", &p->gpu_caps);
}

char *deploy_plan_describe(const struct deploy_plan *p)
{
	cleanup_free char *addr = deploy_api_address(p);
	cleanup_free char *advertise = deploy_advertise_address(p);
	struct strv parts = { 0 };
	char *line;

	strv_pushf(&parts, "image %s", p->image);
	strv_pushf(&parts, "API on %s%s%s:%d reached at %s", is_ipv6(p->bind) ? "[" : "", p->bind,
		   is_ipv6(p->bind) ? "]" : "", p->port, addr);
	strv_pushf(&parts, "node network %s%s%s", node_network_name(p->node_network), advertise ? ", advertised at " : "",
		   advertise ? advertise : "");
	if (p->req->gpu)
		describe_gpus(p, &parts);
	else
		strv_push(&parts, "no GPUs");
	line = strv_join(&parts, ", ");
	strv_free(&parts);
	return line;
}

/* --publish=BIND:PORT:TO[/udp]; an IPv6 bind in brackets. */
static void publish_argv(const char *bind, int port, int to, const char *proto, struct strv *argv)
{
	int v6 = is_ipv6(bind);

	strv_pushf(argv, "--publish=%s%s%s:%d:%d%s", v6 ? "[" : "", bind, v6 ? "]" : "", port, to, proto);
}

/* The GPU request: CDI device names or Docker's --gpus, and what the
 * entrypoint needs to know (cluster-entrypoint.sh: GPU_ENABLED, the mode
 * for the device plugin's deviceListStrategy, its MIG strategy). */
static void gpu_argv(const struct deploy_plan *p, struct strv *argv)
{
	if (p->cdi) {
		struct strv devs = { 0 };
		cleanup_free char *sel = gpus_string(&p->req->gpus);

		gpu_mode_cdi_devices(&p->req->gpus, &devs);
		for (size_t i = 0; i < devs.n; i++)
			strv_pushf(argv, "--device=%s", devs.v[i]);
		strv_free(&devs);
		strv_pushf(argv, "--label=%s=%s", LABEL_GPUS, sel);
	} else {
		cleanup_free char *req = gpus_docker_request(&p->req->gpus);
		strv_pushf(argv, "--gpus=%s", req);
	}
	strv_push(argv, "--env=GPU_ENABLED=true");
	if (p->cdi)
		strv_push(argv, "--env=OPENSHELL_GPU_MODE=cdi");
	if (p->mig != MIG_NONE)
		strv_pushf(argv, "--env=OPENSHELL_MIG_STRATEGY=%s", mig_strategy_name(p->mig));
	if (p->allocation != GPU_ALLOCATION_DEVICE_PLUGIN)
		strv_pushf(argv, "--env=OPENSHELL_GPU_ALLOCATION=%s", gpu_allocation_name(p->allocation));
	/* A privileged container has every GPU of the host: the entrypoint
	 * hides the others (deploy/docker/gpu-isolate.sh). */
	push_joined(argv, "--env=OPENSHELL_GPU_CAPS=", &p->gpu_caps);
	push_joined(argv, "--env=OPENSHELL_GPU_UUIDS=", &p->gpu_uuids);
}

/* k3s's own flags for the GPU allocation: with DRA, pods that name no
 * RuntimeClass run under the nvidia runtime (the DRA chart's kubelet plugin
 * names none, and must see the GPUs: its manifest says how), and the node
 * carries the label the plugin's affinity requires. */
static void allocation_k3s_argv(const struct deploy_plan *p, struct strv *argv)
{
	if (!p->req->gpu || p->allocation != GPU_ALLOCATION_DRA)
		return;
	strv_push(argv, "--default-runtime=" NVIDIA_RUNTIME_CLASS);
	strv_push(argv, "--node-label=" DRA_NODE_LABEL);
}

char *deploy_volume_mount(const char *volume, const char *gateway)
{
	return xasprintf("--mount=type=volume,src=%s,dst=%s,volume-label=%s=%s,volume-label=%s=%s", volume, K3S_DATA_DIR,
			 LABEL_MANAGED, LABEL_MANAGED_VALUE, LABEL_GATEWAY, gateway);
}

/* What the server and its agents share: ours, for gateway NAME, privileged
 * (k3s runs containerd, mounts cgroups and manages iptables itself) and
 * brought back with the daemon. A cgroup namespace of its own: the kubelet
 * makes its kubepods at the root of the hierarchy it sees, and k3s as PID 1
 * moves the processes of that root into init (k3s pkg/cli/cmds
 * EvacuateCgroup2), so with the host's namespace on cgroup v2 every
 * gateway's pods would share the host's /kubepods. */
static void common_argv(const struct deploy_plan *p, const char *res, const char *host, struct strv *argv)
{
	strv_push(argv, "run");
	strv_push(argv, "--detach");
	strv_pushf(argv, "--name=%s", res);
	strv_pushf(argv, "--hostname=%s", host);
	strv_pushf(argv, "--label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	strv_pushf(argv, "--label=%s=%s", LABEL_GATEWAY, p->req->name);
	strv_pushf(argv, "--label=%s=%s", LABEL_GPU, p->req->gpu ? "true" : "false");
	strv_push(argv, "--privileged");
	strv_push(argv, "--cgroupns=private");
	strv_push(argv, "--restart=unless-stopped");
}

void deploy_agent_argv(const struct deploy_plan *p, const char *node, const char *server, struct strv *argv)
{
	cleanup_free char *res = node_resource_name(p->req->name);
	cleanup_free char *mount = deploy_volume_mount(res, p->req->name);

	common_argv(p, res, node, argv);
	strv_pushf(argv, "--label=%s=%s", LABEL_NODE, node);
	/* As k3s agents run: the kubelet and flannel on the host's own
	 * addresses, where the server reaches them. */
	strv_push(argv, "--network=host");
	strv_push(argv, mount);
	if (p->req->gpu)
		gpu_argv(p, argv);
	strv_push(argv, p->image);
	strv_push(argv, "agent");
	strv_pushf(argv, "--server=%s", server);
	/* The token is a file in the volume, never an argument or a variable
	 * that ps or docker inspect would show. */
	strv_push(argv, "--token-file=" DEPLOY_AGENT_TOKEN_FILE);
	strv_pushf(argv, "--node-name=%s", node);
	allocation_k3s_argv(p, argv);
}

void deploy_run_argv(const struct deploy_plan *p, struct strv *argv)
{
	cleanup_free char *res = gateway_resource_name(p->req->name);
	cleanup_free char *host = gateway_hostname(p->req->name);
	cleanup_free char *mount = deploy_volume_mount(res, p->req->name);
	cleanup_free char *advertise = deploy_advertise_address(p);
	const char *backend = node_network_backend(p->node_network);
	int node_port = deploy_node_port(p);

	common_argv(p, res, host, argv);
	/* A resume must hand out the address it was made with, and keep the
	 * network its nodes meet on. */
	strv_pushf(argv, "--label=%s=%s", LABEL_API_HOST, api_host(p));
	strv_pushf(argv, "--label=%s=%s", LABEL_NODE_NETWORK, node_network_name(p->node_network));
	if (p->health_start_interval)
		strv_pushf(argv, "--health-start-interval=%s", DEPLOY_HEALTH_START_INTERVAL);
	strv_pushf(argv, "--network=%s", res);
	/* The run makes the volume when it is not there, labelled as ours
	 * (start has looked that a volume of the name is ours, or none). */
	strv_push(argv, mount);
	publish_argv(p->bind, p->port, K3S_API_PORT, "", argv);
	/* The nodes on other hosts send its pods' traffic to the advertised
	 * address at flannel's own port, which is the same on every node:
	 * published as it is. */
	if (node_port)
		publish_argv(p->bind, node_port, node_port, "/udp", argv);
	if (p->req->gpu)
		gpu_argv(p, argv);
	strv_push(argv, p->image);
	strv_push(argv, "server");
	strv_push(argv, "--disable=traefik");
	/* The API certificate must name the address clients will use: the
	 * kubeconfig's server is the bind address, loopback ones other than
	 * 127.0.0.1 (127.0.0.2, ::1) included. */
	strv_push(argv, "--tls-san=127.0.0.1");
	strv_push(argv, "--tls-san=localhost");
	if (!bind_is_wildcard(p->bind) && strcmp(p->bind, "127.0.0.1") != 0)
		strv_pushf(argv, "--tls-san=%s", p->bind);
	for (int i = 0; i < p->req->n_tls_san; i++)
		strv_pushf(argv, "--tls-san=%s", p->req->tls_san[i]);
	for (size_t i = 0; p->host_sans && i < p->host_sans->n; i++)
		strv_pushf(argv, "--tls-san=%s", p->host_sans->v[i]);
	if (backend)
		strv_pushf(argv, "--flannel-backend=%s", backend);
	allocation_k3s_argv(p, argv);
	/* The agents' tunnels dial what the server advertises, at the port
	 * published for it (k3s puts the address in the certificate too).
	 * Flannel would give the other nodes the container's bridge address,
	 * which they cannot reach; told the external IP and
	 * --flannel-external-ip, it gives them that (k3s
	 * pkg/agent/flannel/setup.go, the public-ip annotations). The agents
	 * need neither: on their host's network, flannel's own address is
	 * their host's. */
	if (advertise) {
		strv_pushf(argv, "--advertise-address=%s", advertise);
		strv_pushf(argv, "--advertise-port=%d", p->port);
		strv_pushf(argv, "--node-external-ip=%s", advertise);
		strv_push(argv, "--flannel-external-ip");
	}
}

int deploy_adopt_node_network(struct deploy_plan *p, const struct gw_container *c, os_error *err)
{
	enum node_network had = node_network_of_label(c->node_network);

	if (p->req->node_network != NODE_NETWORK_UNSET && p->req->node_network != had)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with --node-network %s but --node-network %s was asked for; rerun with --recreate to rebuild it (its cluster state is lost)",
				    p->req->name, node_network_name(had), node_network_name(p->req->node_network));
	p->node_network = had;
	return 0;
}
