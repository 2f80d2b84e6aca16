/* gateway/node/node_add.c - the `gateway node add` flow (see gateway/node/node_add.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/daemon.h"
#include "docker/image.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/start_failure.h"
#include "gateway/deploy/start_gpus.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/wsl2.h"
#include "gateway/node/node_add.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"
#include "gateway/wait/node_join.h"
#include "gateway/wait/wait.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define SERVER_TOKEN_FILE K3S_DATA_DIR "/server/token"

/* Writes stdin to the token file, readable by root alone; a fixed script,
 * no user text in it. */
#define TOKEN_SCRIPT "umask 077 && mkdir -p \"${1%/*}\" && cat >\"$1\""

struct add {
	const struct node_add_opts *o;
	struct node_add_result *r;
	struct gateway gw;
	struct gateway_request rq;     /* the agent's request: the gateway's name, the node's GPUs */
	struct deploy_plan d;          /* its plan: the gateway's image and MIG strategy, the GPUs' mode */
	struct docker_daemon nd;       /* the node's daemon; each call names it or the server's
	                                * (gw.ctr.on; docker/client.h's ON) */
	struct daemon_gpus dg;         /* what the node's daemon offers for GPUs */
	char *res;                     /* openshell-node-GATEWAY */
	char *host;                    /* the node's Docker host, for messages */
	char *token;
	char *image_id;
	struct sharing sharing;        /* the gateway's GPU sharing */
	char *daemon_id;               /* the server's daemon's ID and host name */
	char *daemon_name;
	struct deadline by;   /* --timeout, each call within docker's per-call cap */
	int made_volume, made_container;
};

char *node_server_host(const char *server)
{
	const char *h = strncmp(server, "https://", 8) == 0 ? server + 8 : NULL;
	const char *end;

	if (!h)
		return NULL;
	if (*h == '[')
		return (end = strchr(h, ']')) ? xstrndup(h + 1, (size_t)(end - h - 1)) : NULL;
	return xstrndup(h, strcspn(h, ":/"));
}

/* --- on the server's daemon ---------------------------------------------- */

/* The server must be published where another host reaches it: its
 * kubeconfig's address is the one its certificate names. */
static int check_server_address(struct add *a, os_error *err)
{
	cleanup_free char *host = node_server_host(a->gw.md.server);

	if (!host)
		return os_error_set(err, OS_EXIT_FAILURE, "gateway '%s' records no https server URL ('%s')",
				    a->o->gateway, a->gw.md.server);
	if (!bind_is_loopback(host) && strcmp(host, "localhost") != 0)
		return 0;
	return os_error_set(err, OS_EXIT_CONFLICT,
			    "gateway '%s' publishes its API on %s only, which node '%s' on another host cannot reach; start it on an address that host reaches: 'openshell gateway start --name %s --recreate --bind 0.0.0.0 --tls-san ADDR' (ADDR: this host's address as the node sees it; its cluster state is lost)",
			    a->o->gateway, a->gw.md.bind, a->o->node, a->o->gateway);
}

static int check_name_free(struct add *a, os_error *err)
{
	struct node_records rs;
	const struct node_record *old;
	cleanup_free char *own = gateway_hostname(a->o->gateway);
	cJSON *node = NULL;
	int found;

	if (strcmp(a->o->node, own) == 0)
		return os_error_set(err, OS_EXIT_CONFLICT, "node name '%s' is the gateway's own node; choose another",
				    a->o->node);
	if (node_records_load(a->gw.state_dir, &rs, err) < 0)
		return -1;
	if ((old = node_records_find(&rs, a->o->node)))
		os_error_set(err, OS_EXIT_CONFLICT,
			     "gateway '%s' already has a node '%s' (on %s); remove it first with 'openshell gateway node remove %s --name %s'",
			     a->o->gateway, a->o->node, old->docker.endpoint, a->o->node, a->o->gateway);
	node_records_free(&rs);
	if (err->msg)
		return -1;
	found = kube_get(&a->gw.ctr, "node", a->o->node, NULL, 0, deadline_call_ms(&a->by), &node, err);
	cJSON_Delete(node);
	if (found > 0)
		return os_error_set(err, OS_EXIT_CONFLICT, "gateway '%s''s cluster already has a node named '%s'; choose another name",
				    a->o->gateway, a->o->node);
	return found < 0 ? -1 : 0;
}

/* The GPU chart's configuration is the cluster's: a node's request must
 * be what the gateway has. */
static int check_plugin_config(struct add *a, os_error *err)
{
	cleanup_free char *has = NULL, *asked = NULL;
	int dra = a->gw.allocation == GPU_ALLOCATION_DRA;
	const char *why = gpu_allocation_sharing_refused(a->gw.allocation, &a->o->sharing);

	/* Under DRA no device plugin splits the GPUs: the gateway refused the
	 * option, and so does a node of it; nor its form of sharing. */
	if (dra && a->o->mig != MIG_UNSET)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' allocates its GPUs by DRA (--gpu-allocation dra), where --mig-strategy has no place (it configures the device plugin): add node '%s' without it",
				    a->o->gateway, a->o->node);
	if (why)
		return os_error_set(err, OS_EXIT_CONFLICT, "gateway '%s' allocates its GPUs by %s: %s", a->o->gateway,
				    gpu_allocation_name(a->gw.allocation), why);
	if (!dra && a->o->mig != MIG_UNSET && a->o->mig != a->gw.mig)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' has --mig-strategy %s, and the device plugin has one for every node: add node '%s' without --mig-strategy, or remake the gateway with 'openshell gateway start --name %s --recreate --gpu --mig-strategy %s'",
				    a->o->gateway, mig_strategy_name(a->gw.mig), a->o->node, a->o->gateway,
				    mig_strategy_name(a->o->mig));
	if (!a->rq.gpu || sharing_read(&a->gw.ctr, dra ? DRA_DRIVER_RELEASE : DEVICE_PLUGIN_RELEASE,
				       deadline_call_ms(&a->by), &a->sharing, err) < 0)
		return a->rq.gpu ? -1 : 0;
	if (!sharing_asked(&a->o->sharing) ||
	    (a->o->sharing.replicas == a->sharing.replicas && a->o->sharing.per_claim == a->sharing.per_claim &&
	     ((a->sharing.replicas == 1 && !a->sharing.per_claim) || a->o->sharing.mps == a->sharing.mps)))
		return 0;
	has = sharing_string(&a->sharing);
	asked = sharing_string(&a->o->sharing);
	return os_error_set(err, OS_EXIT_CONFLICT,
			    "gateway '%s' shares its GPUs as %s, and the %s's sharing is one for every node: add node '%s' without --gpu-sharing, or change the gateway's with 'openshell gateway start --name %s --gpu --gpu-sharing %s'",
			    a->o->gateway, has, dra ? "DRA driver" : "device plugin", a->o->node, a->o->gateway, asked);
}

/* The server's daemon's ID (to tell its host from the node's), the
 * image's ID, and the token the agent joins with. */
static int server_facts(struct add *a, os_error *err)
{
	const char *cat[] = { "exec", a->gw.container, "cat", SERVER_TOKEN_FILE, NULL };
	struct docker_image img = { 0 };
	struct run_result res = { 0 };
	cJSON *info = NULL;
	int rc = -1;

	if (docker_info(a->gw.ctr.on, &info, err) < 0)
		goto out;
	a->daemon_id = json_str(info, "ID") ? xstrdup(json_str(info, "ID")) : NULL;
	a->daemon_name = json_str(info, "Name") ? xstrdup(json_str(info, "Name")) : NULL;
	if (image_inspect(a->gw.ctr.on, a->gw.c.image, deadline_call_ms(&a->by), &img, err) < 0)
		goto out;
	if (!img.exists) {
		os_error_set(err, OS_EXIT_FAILURE, "the gateway's image %s is no longer on its Docker host", a->gw.c.image);
		goto out;
	}
	a->image_id = xstrdup(img.id);
	if (docker_run_ok(a->gw.ctr.on, cat, NULL, 0, deadline_call_ms(&a->by), &res, err) < 0) {
		os_error_wrap(err, "cannot read the server's node token");
		goto out;
	}
	res.out[strcspn(res.out, "\n")] = '\0';
	a->token = xstrdup(res.out);
	rc = 0;
out:
	explicit_bzero(res.out, res.out_len);
	run_result_free(&res);
	docker_image_free(&img);
	cJSON_Delete(info);
	return rc;
}

/* --- on the node's daemon -------------------------------------------------- */

/* The node's daemon, as the calls to it name it. */
static const struct docker_target *on_node(const struct add *a)
{
	return &a->nd.at;
}

static int node_daemon(struct add *a, os_error *err)
{
	cJSON *info = NULL;
	const char *id, *name;
	int rc = -1;

	if (docker_info(on_node(a), &info, err) < 0) {
		os_error_wrap(err, "cannot reach node '%s''s Docker daemon at %s", a->o->node, a->nd.at.endpoint);
		goto out;
	}
	/* One daemon reached two ways has one ID and one host name; hosts
	 * cloned from one disk image may share the ID (dockerd keeps it in
	 * its files), never the name. */
	id = json_str(info, "ID");
	name = json_str(info, "Name");
	if (id && name && a->daemon_id && a->daemon_name && strcmp(id, a->daemon_id) == 0 &&
	    strcmp(name, a->daemon_name) == 0) {
		os_error_set(err, OS_EXIT_CONFLICT,
			     "%s is gateway '%s''s own Docker host; a node runs on another host (an agent takes the host's network, where the server's kubelet is)",
			     a->nd.at.endpoint, a->o->gateway);
		goto out;
	}
	if (a->rq.gpu)
		daemon_gpus_from_info(info, &a->dg);
	rc = 0;
out:
	cJSON_Delete(info);
	return rc;
}

/* One agent of a gateway per host: its container's name is taken. */
static int check_host_free(struct add *a, os_error *err)
{
	struct gw_container c;
	enum owner vol;
	int rc = 0;

	if (container_inspect(&(struct docker_ctr){ on_node(a), a->res }, &c, err) < 0 ||
	    docker_object_owner(on_node(a), "volume", a->res, a->o->gateway, deadline_call_ms(&a->by), &vol, err) < 0)
		return -1;
	if (c.exists && container_owner(&c, a->o->gateway) == OWNER_OURS)
		rc = os_error_set(err, OS_EXIT_CONFLICT,
				  "gateway '%s' already has an agent on %s (container %s); one node of a gateway per host",
				  a->o->gateway, a->host, a->res);
	else if (c.exists || vol == OWNER_FOREIGN) {
		cleanup_free char *why = labels_foreign_reason(c.exists ? "container" : "volume", a->res, a->o->gateway);
		rc = os_error_set(err, OS_EXIT_CONFLICT, "on %s: %s; remove or rename it first", a->host, why);
	} else if (vol == OWNER_OURS) {
		rc = os_error_set(err, OS_EXIT_CONFLICT,
				  "on %s, volume %s of an earlier agent of gateway '%s' is left; remove it with 'docker volume rm %s' there",
				  a->host, a->res, a->o->gateway, a->res);
	}
	container_free(&c);
	return rc;
}

/* The image by its ID: sent when the node's daemon lacks it. */
static int image_there(struct add *a, os_error *err)
{
	struct docker_image img = { 0 };
	struct deadline whole;
	cleanup_free char *id = NULL;
	int rc;

	if (image_inspect(on_node(a), a->gw.c.image, deadline_call_ms(&a->by), &img, err) < 0)
		return -1;
	rc = img.exists && strcmp(img.id, a->image_id) == 0;
	docker_image_free(&img);
	if (rc)
		return 0;
	log_step("sending image %s to %s (docker save | docker load)", a->gw.c.image, a->host);

	/* A send takes long: it may last until the deadline. */
	whole = deadline_capped(&a->by, 0);
	rc = docker_image_send(a->gw.c.image, a->gw.ctr.on, on_node(a), deadline_call_ms(&whole), &id, err);
	if (rc < 0)
		return os_error_wrap(err, "cannot send image %s to %s", a->gw.c.image, a->host);
	a->r->image_sent = 1;
	log_step_done(1);
	return 0;
}

/* The token into the agent's volume, from stdin, by a throwaway
 * container of the image: the volume is made here, labelled as ours. */
static int put_token(struct add *a, os_error *err)
{
	cleanup_free char *mount = deploy_volume_mount(a->res, a->o->gateway);
	const char *args[] = { "run", "--rm", "--interactive", "--network=none", mount, "--entrypoint=/bin/sh",
			       a->gw.c.image, "-c", TOKEN_SCRIPT, "sh", DEPLOY_AGENT_TOKEN_FILE, NULL };
	struct run_result res = { 0 };
	int rc;

	a->made_volume = 1;
	rc = docker_run_ok(on_node(a), args, a->token, strlen(a->token), deadline_call_ms(&a->by), &res, err);
	run_result_free(&res);
	return rc < 0 ? os_error_wrap(err, "cannot give the agent its token on %s", a->host) : 0;
}

static int run_agent(struct add *a, os_error *err)
{
	struct strv argv = { 0 };
	struct run_result res = { 0 };
	int rc;

	deploy_agent_argv(&a->d, a->o->node, a->gw.md.server, &argv);
	a->made_container = 1;
	rc = docker_run_finishing(on_node(a), strv_argv(&argv), deadline_call_ms(&a->by), &res, err);
	if (rc == 0 && res.status != 0)
		rc = start_explain_failure(&a->d, a->res, &res, "run", err);
	run_result_free(&res);
	strv_free(&argv);
	return rc < 0 ? os_error_wrap(err, "cannot start node '%s''s agent on %s", a->o->node, a->host) : 0;
}

/* Everything on the node's host, up to a running agent. */
static int make_agent(struct add *a, os_error *err)
{
	log_step("preparing node '%s' on %s", a->o->node, a->host);
	if (node_daemon(a, err) < 0 || check_host_free(a, err) < 0 ||
	    start_gpus_wsl2(&a->d, &a->sharing, a->o->gateway, a->dg.wsl2, err) < 0 ||
	    (a->rq.gpu && start_gpus_mode(&a->d, &a->dg, err) < 0))
		return -1;
	log_step_done(1);
	if (image_there(a, err) < 0 || start_gpus_check(&a->d, &a->dg, 0, deadline_call_ms(&a->by), err) < 0)
		return -1;
	log_step("starting node '%s''s agent on %s", a->o->node, a->host);
	if (put_token(a, err) < 0 || run_agent(a, err) < 0)
		return -1;
	log_step_done(1);
	return 0;
}

/* --- joined ----------------------------------------------------------------- */

static int join(struct add *a, os_error *err)
{
	struct node_join j = { .server_ctr = &a->gw.ctr, .agent = { on_node(a), a->res },
			       .node = a->o->node, .server = a->gw.md.server,
			       .gateway = a->o->gateway, .host = a->host, .gpu = a->rq.gpu,
			       .dra = a->d.allocation == GPU_ALLOCATION_DRA, .by = a->by,
			       .timeout_ms = a->o->timeout_ms };

	/* A count or a list is that many GPUs, each as many times as they are
	 * shared; MIG makes its own devices; under DRA node_join_wait() counts
	 * what the driver publishes. */
	if (!j.dra && a->d.mig == MIG_NONE)
		j.want_gpus = (a->rq.gpus.kind == GPUS_COUNT     ? a->rq.gpus.count
			       : a->rq.gpus.kind == GPUS_DEVICES ? (long long)a->rq.gpus.ids.n
								: 0) *
			      (a->sharing.replicas > 1 ? a->sharing.replicas : 1);
	log_step("waiting for node '%s' to be Ready%s", a->o->node,
		 !a->rq.gpu ? "" : j.dra ? " with its GPUs in ResourceSlices" : " with its nvidia.com/gpu");
	if (node_join_wait(&j, err) < 0)
		return -1;
	log_step_done(1);
	a->r->gpus = j.gpus;
	a->r->dra = j.dra;
	return 0;
}

static int record(struct add *a, os_error *err)
{
	cleanup_free char *now = metadata_now();
	/* Borrowed for the write: r is not freed. */
	struct node_record r = { .name = (char *)a->o->node, .gateway = (char *)a->o->gateway, .container = a->res,
				 .image = a->gw.c.image, .image_id = a->image_id, .server = a->gw.md.server,
				 .gpu = a->rq.gpu, .gpus = a->rq.gpus, .created = now, .docker = a->nd.at };

	return node_record_write(a->gw.state_dir, &r, err);
}

/* Undo what this run made, the node's side first; failures only warn. */
static void rollback(struct add *a)
{
	const char *rm[] = { DOCKER_RM, a->res, NULL };
	const char *rmvol[] = { "volume", "rm", "--force", a->res, NULL };
	const char *del[] = { "delete", "node", a->o->node, "--ignore-not-found", NULL };
	struct run_result res = { 0 };
	os_error e = { 0 };
	int t = cleanup_budget_ms();

	if (!a->made_volume && !a->made_container)
		return;
	signals_shield();   /* a second ^C must not cut the rollback short */
	if (a->made_container && docker_ok(on_node(a), rm, t, &e) < 0 && !docker_says_missing(e.msg))
		log_warn("could not remove container %s on %s: %s", a->res, a->host, e.msg);
	os_error_clear(&e);
	if (docker_ok(on_node(a), rmvol, t, &e) < 0)
		log_warn("could not remove volume %s on %s: %s", a->res, a->host, e.msg);
	os_error_clear(&e);
	if (a->made_container && kube_exec(&a->gw.ctr, del, NULL, t, &res, &e) < 0)
		log_warn("could not delete node '%s' from the cluster: %s", a->o->node, e.msg);
	os_error_clear(&e);
	run_result_free(&res);
	log_info("removed what this run made of node '%s' on %s", a->o->node, a->host);
	signals_unshield();
}

/* Which daemon the node's is, before anything is asked of it. */
static int name_node_daemon(struct add *a, os_error *err)
{
	if (docker_daemon_named(a->o->docker_host, a->o->context, &a->nd, err) < 0)
		return -1;
	a->d.docker_on = on_node(a);
	a->host = xstrdup(a->nd.host ? a->nd.host : a->nd.at.endpoint);
	return 0;
}

static int add_locked(struct add *a, os_error *err)
{
	if (gateway_lookup(a->o->gateway, &a->gw, err) < 0)
		return -1;
	if (gateway_require_running(&a->gw, err) < 0)
		return -1;
	if (!a->gw.has_metadata)
		return os_error_set(err, OS_EXIT_FAILURE, "gateway '%s' has no metadata.json: %s", a->o->gateway,
				    a->gw.metadata_error ? a->gw.metadata_error : "start it again to write it");
	a->d.image = a->gw.c.image;
	a->d.mig = a->gw.mig;
	/* The agent's k3s and its node serve the gateway's allocation: under
	 * DRA its pods run under the nvidia runtime and the driver's kubelet
	 * plugin publishes its GPUs. */
	a->d.allocation = a->gw.allocation;
	a->d.node = a->o->node;
	if (check_server_address(a, err) < 0 || check_name_free(a, err) < 0 || check_plugin_config(a, err) < 0 ||
	    server_facts(a, err) < 0 || name_node_daemon(a, err) < 0)
		return -1;
	if (make_agent(a, err) < 0 || join(a, err) < 0 || record(a, err) < 0) {
		if (signals_pending())
			os_error_set(err, 128 + signals_pending(), "interrupted; node '%s' was not added", a->o->node);
		rollback(a);
		return -1;
	}
	a->r->endpoint = xstrdup(a->nd.at.endpoint);
	a->r->server = xstrdup(a->gw.md.server);
	return 0;
}

int gateway_node_add(const struct node_add_opts *o, struct node_add_result *r, os_error *err)
{
	struct add a = { .o = o, .r = r, .by = deadline_in(o->timeout_ms, docker_call_timeout_ms()) };
	int lock, rc = -1;

	memset(r, 0, sizeof(*r));
	r->gpus = -1;
	if (node_name_check(o->node, err) < 0 || gateway_name_check(o->gateway, err) < 0)
		return -1;
	gateway_request_init(&a.rq);
	a.rq.name = o->gateway;
	a.rq.gpu = o->gpu;
	gpus_copy(&a.rq.gpus, &o->gpus);
	deploy_plan_init(&a.d, &a.rq);
	a.res = node_resource_name(o->gateway);
	if ((lock = gateway_lock_for_change(o->gateway, err)) >= 0) {
		rc = add_locked(&a, err);
		gateway_unlock(lock);
	}
	deploy_plan_free(&a.d);
	gateway_request_free(&a.rq);
	gateway_free(&a.gw);
	docker_daemon_free(&a.nd);
	daemon_gpus_free(&a.dg);
	if (a.token)
		explicit_bzero(a.token, strlen(a.token));
	free(a.token);
	free(a.res);
	free(a.host);
	free(a.image_id);
	free(a.daemon_id);
	free(a.daemon_name);
	return rc;
}

void node_add_result_free(struct node_add_result *r)
{
	free(r->endpoint);
	free(r->server);
	memset(r, 0, sizeof(*r));
}
