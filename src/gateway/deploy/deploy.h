/* gateway/deploy/deploy.h - what a gateway is asked to be, and the docker run that makes it.
 *
 * Two values carry a start from the command line to the container
 * (docs/design.md, "The call chain": CLI flag -> request -> plan ->
 * container creation). struct gateway_request is what the user asked,
 * and only that: what was not given is unset (0, NULL, an UNSET value),
 * never a default that looks given. cmd/ sets fields once (node add, its
 * agent's: the gateway's name, the node's GPUs),
 * gateway_request_check() refuses bad values before any docker call, and
 * nothing changes it after. struct deploy_plan is what the flow made of
 * it: the request's values, the defaults where it gave none, or a kept
 * gateway's in their place, the GPU
 * mode, UUIDs and capabilities the host's GPUs decided, where the daemon
 * is. deploy_run_argv() is the one place that turns a plan into the
 * `docker run` argv, so every combination is unit-tested; messages about
 * what was asked quote the request.
 */
#ifndef OPENSHELL_GATEWAY_DEPLOY_H
#define OPENSHELL_GATEWAY_DEPLOY_H

#include "base/error.h"
#include "base/strv.h"
#include "docker/daemon.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/state/node_network.h"

#define DEPLOY_DEFAULT_PORT 6443
#define DEPLOY_DEFAULT_BIND "127.0.0.1"
#define DEPLOY_DEFAULT_TIMEOUT_MS (10 * 60 * 1000)
#define K3S_API_PORT 6443
#define DEPLOY_MAX_TLS_SANS 16
#define K3S_DATA_DIR "/var/lib/rancher/k3s"
#define DEPLOY_HEALTH_START_INTERVAL "1s"   /* probes during the image's start period */

struct gateway_request {
	const char *name;     /* gateway name (base/names.h rules) */
	int gpu;              /* request GPUs, install the device plugin */
	struct gpus gpus;     /* which: --gpus all|N|LIST (gateway/gpu/gpus.h); all for --gpu */
	struct sharing sharing; /* --gpu-sharing; replicas 0 (SHARING_UNSET): not given,
	                         * the plugin's config stays as it is */
	enum gpu_mode gpu_mode; /* --gpu-mode; GPU_MODE_AUTO when not given */
	enum mig_strategy mig; /* --mig-strategy; MIG_UNSET: not given (a kept gateway's stands) */
	enum gpu_allocation allocation; /* --gpu-allocation; GPU_ALLOCATION_UNSET: not given */
	int port;             /* --port, the API's host port; 0: not given */
	const char *bind;     /* --bind, the address it is published on; NULL: not given */
	const char *image;    /* --image; NULL: not given (gateway_default_image()) */
	const char *advertise;  /* --advertise-address: where agents reach the server, or NULL */
	enum node_network node_network; /* --node-network; NODE_NETWORK_UNSET: not given */
	const char *tls_san[DEPLOY_MAX_TLS_SANS]; /* --tls-san: more names for the API certificate */
	int n_tls_san;
	int no_build;         /* refuse to build the default image when absent */
	int recreate;         /* remove an existing gateway first */
	int timeout_ms;       /* overall deadline of the start */
	int no_wait;          /* return once the container runs and k3s wrote its kubeconfig */
	int update_kubeconfig; /* also merge into the user's kubeconfig */
};

/* The image a start uses when --image is not given: $OPENSHELL_CLUSTER_IMAGE,
 * else IMAGE_DEFAULT_TAG. */
const char *gateway_default_image(void);

void gateway_request_init(struct gateway_request *rq);
void gateway_request_free(struct gateway_request *rq);
int gateway_request_check(const struct gateway_request *rq, os_error *err);

struct deploy_plan {
	const struct gateway_request *req; /* what was asked, as it was asked */
	/* The request's, or a kept gateway's own (deploy_plan_init() copies
	 * the request's; the flow puts a kept gateway's in their place). */
	int port;
	const char *bind;
	const char *image;
	int image_named;      /* not the default tag: pulled when absent, never built */
	const char *advertise;
	enum mig_strategy mig;
	enum gpu_allocation allocation;
	enum node_network node_network;
	const char *api_host;   /* a reused gateway's API host, as it was made (its label), or NULL */
	/* What the daemon and the host's GPUs decided. */
	int cdi;              /* the mode start chose: request CDI devices, not --gpus */
	struct strv gpu_uuids; /* a selection other than all on the Docker host, by UUID:
	                        * what the entrypoint keeps (OPENSHELL_GPU_UUIDS) */
	struct strv gpu_caps;  /* with CDI, of a selection naming MIG devices: the minors of
	                        * the capabilities those devices get (gateway/gpu/mig_caps.h),
	                        * the only ones the entrypoint keeps (OPENSHELL_GPU_CAPS) */
	const struct strv *host_sans; /* a wildcard --bind: this host's addresses, or NULL */
	const char *daemon_host;   /* the Docker daemon's host when it is not this machine
	                            * (ssh:// or tcp://), or NULL */
	const struct docker_target *docker; /* where the gateway lives (metadata) */
	const struct docker_target *docker_on; /* the daemon its probes ask (docker/client.h): node
	                                        * add's the node's, start's the existing gateway's;
	                                        * NULL: the process's */
	const char *node;     /* node add's node, whose host the checks are of; NULL: the gateway's */
	int health_start_interval; /* the daemon takes --health-start-interval (Docker >= 25) */
};

void deploy_plan_init(struct deploy_plan *p, const struct gateway_request *rq);
void deploy_plan_free(struct deploy_plan *p);

/* The plan in one line, for -v before the container is made (owned):
 * "image IMG, API on BIND:PORT reached at ADDR, node network NET, GPUs
 * all by --gpus, MIG strategy none, …". */
char *deploy_plan_describe(const struct deploy_plan *p);

/* Append `run -d … IMAGE server …` (without the docker executable). */
void deploy_run_argv(const struct deploy_plan *p, struct strv *argv);

/* The token an agent joins with: a file of its volume, 0600. */
#define DEPLOY_AGENT_TOKEN_FILE K3S_DATA_DIR "/openshell/token"

/* Append `run -d … IMAGE agent …` for node NODE of gateway p->req->name,
 * joining SERVER (https://ADDR:PORT) with DEPLOY_AGENT_TOKEN_FILE, with
 * p's GPU request: the agent's container on its own Docker host. */
void deploy_agent_argv(const struct deploy_plan *p, const char *node, const char *server, struct strv *argv);

/* The --mount of VOLUME at k3s's data dir, made labelled as gateway
 * GATEWAY's when the run creates it (owned). */
char *deploy_volume_mount(const char *volume, const char *gateway);

/* Is the bind address 0.0.0.0 or ::, every address of the host? */
int bind_is_wildcard(const char *addr);

/* This host's addresses a wildcard bind publishes the API on (not loopback,
 * not link-local, not Docker's or a CNI's bridges; IPv6 ones only for "::"),
 * for the API certificate. */
void deploy_host_addresses(const char *bind, struct strv *out);

/* "127.0.0.1:6443", or "[::1]:6443" for IPv6: where the API is reached.
 * A wildcard bind is reached at the first --tls-san when one was given (the
 * name remote clients were promised), else through loopback. */
char *deploy_api_address(const struct deploy_plan *p);

/* The address the server advertises to its agents, which their tunnels
 * dial (k3s pkg/agent/tunnel: every address /v1-k3s/apiservers lists, the
 * kubelet waiting for them): --advertise-address, else the host of the API
 * address (deploy_api_address) when it is an IP address other than
 * loopback, else NULL, and k3s advertises the container's own address,
 * which no other host reaches. Owned. */
char *deploy_advertise_address(const struct deploy_plan *p);

/* The UDP port the server's container publishes for flannel, on the API's
 * bind address: where the nodes on other hosts send its pods' traffic
 * (node_network_port()); 0 when it advertises no address, so that no
 * other host is meant to reach it. */
int deploy_node_port(const struct deploy_plan *p);

/* Reject references Docker would refuse or misread as an option. */
int image_ref_check(const char *ref, os_error *err);

/* Is the bind address a loopback address? */
int bind_is_loopback(const char *addr);

struct gw_container;
/* For a kept gateway: its choice stands; a --node-network that
 * contradicts it is a conflict. */
int deploy_adopt_node_network(struct deploy_plan *p, const struct gw_container *c, os_error *err);

#endif
