/* gateway/start/start.c - the `gateway start` flow (see gateway/start/start.h). */
#include "config.h"

#include <stdio.h>
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
#include "gateway/deploy/image.h"
#include "gateway/deploy/image_fit.h"
#include "gateway/deploy/node_lifecycle.h"
#include "gateway/deploy/start_failure.h"
#include "gateway/deploy/start_gpus.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/sharing.h"
#include "gateway/gpu/wsl2.h"
#include "gateway/start/files.h"
#include "gateway/start/reach.h"
#include "gateway/start/start.h"
#include "gateway/start/start_look.h"
#include "gateway/start/start_ready.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_network.h"
#include "gateway/wait/wait.h"
#include "kube/objects.h"

/* When --port was not given and the default is taken, try the next ports. */
#define PORT_TRIES 20

struct start {
	struct deploy_plan p;      /* the plan of p.req, what was asked: a reused gateway's own
	                            * values in place of defaults */
	struct start_result *r;
	char *res;                 /* openshell-cluster-NAME */
	struct docker_target *on;  /* an existing gateway's daemon, every call's (owned), or NULL */
	char *reused_image;        /* owned copy behind p.image when adopted */
	char *reused_bind;         /* owned copy behind p.bind when adopted */
	char *reused_api_host;     /* owned copy behind p.api_host when adopted */
	char *reused_advertise;    /* and behind p.advertise */
	struct wait_ctx w;         /* deadline, restart count for the waits */
	int created_network, created_volume, created_container;
	int have_container;        /* a gateway container exists and is kept */
	int rolled_back;           /* this run removed what it had created */
	int removed_old;           /* --recreate removed the old gateway */
	struct strv host_sans;     /* this host's addresses, for a wildcard bind */
	int prepared;              /* prepare_new() succeeded */
	struct daemon_gpus dg;     /* the daemon's GPU paths, with --gpu */
	struct docker_daemon daemon;   /* which daemon docker talks to, and where */
	struct start_look look;    /* what the first look found beside the container */
};

/* --- a: preflight ------------------------------------------------------ */

static int preflight(struct start *st, os_error *err)
{
	cJSON *info = NULL;

	/* An existing gateway's calls go to the daemon it lives on. */
	if (gateway_follow_daemon(st->p.req->name, &st->on, err) < 0)
		return -1;
	st->w.ctr.on = st->p.docker_on = st->on;
	log_step("checking Docker");
	if (docker_daemon_of(st->on, &st->daemon, err) < 0 || docker_info(st->on, &info, err) < 0)
		return -1;
	st->p.docker = &st->daemon.at;
	log_verbose("docker daemon %s", json_str(info, "ServerVersion"));
	/* Docker 25 probes at --health-start-interval during the start
	 * period, so that its own verdict follows the facts within a second.
	 * (docker_info() answers with a ServerVersion or fails.) */
	st->p.health_start_interval = atoi(json_str(info, "ServerVersion")) >= 25;
	/* What the daemon offers for GPUs decides --gpu-mode auto. */
	if (st->p.req->gpu)
		daemon_gpus_from_info(info, &st->dg);
	cJSON_Delete(info);
	log_step_done(1);
	reach_sans(&st->p, &st->daemon, &st->host_sans);
	return 0;
}

/* --- c: what a new gateway needs, before anything of it is made -------- */

/* Its GPU mode, image and GPUs, each refused before anything is built,
 * created or (--recreate) removed: a build or pull takes minutes, so the
 * GPU checks that can do without the image come first. A build's
 * downloads are nothing --timeout (a wait for readiness) foresees: after
 * one, the deadline starts afresh. */
static int prepare_new(struct start *st, os_error *err)
{
	int present, looked = 0;
	const cJSON *labels;

	if (reach_check(&st->p, &st->daemon, err) < 0 ||
	    start_gpus_wsl2(&st->p, sharing_asked(&st->p.req->sharing), NULL, st->dg.wsl2, err) < 0 ||
	    start_gpus_mode(&st->p, &st->dg, err) < 0)
		return -1;
	if ((present = start_look_image(&st->look, st->p.image)) == LOOK_NOT_KNOWN &&
	    image_present(st->on, st->p.image, &st->w.by, &present, err) < 0)
		return -1;
	if (!present && (start_gpus_precheck(&st->p, &st->dg, deadline_call_ms(&st->w.by), &looked, err) < 0 ||
			 image_fetch(st->on, st->p.image, st->p.image_named, st->p.req->no_build, &st->w.by, err) < 0))
		return -1;
	if (!present && !st->p.image_named)
		st->w.by = deadline_in(st->p.req->timeout_ms, docker_call_timeout_ms());
	/* A build or pull takes minutes: what the first look found is old. */
	if (!present)
		start_look_forget(&st->look);
	phases_mark(&st->r->phases, PHASE_IMAGE);
	/* DRA needs a k3s that serves it and a bundle with the driver: the look's labels tell. */
	labels = present ? start_look_image_labels(&st->look, st->p.image) : NULL;
	if (st->p.req->gpu &&
	    image_check_allocation(st->on, st->p.image, labels, st->p.allocation, deadline_call_ms(&st->w.by), err) < 0)
		return -1;
	st->prepared = start_gpus_check(&st->p, &st->dg, looked, deadline_call_ms(&st->w.by), err) == 0;
	return st->prepared ? 0 : -1;
}

/* --- b: an existing gateway --------------------------------------------- */

static int refuse_foreign(const char *type, const struct start *st, os_error *err)
{
	cleanup_free char *why = labels_foreign_reason(type, st->res, st->p.req->name);
	return os_error_set(err, OS_EXIT_CONFLICT, "%s; remove or rename it first", why);
}

/* --recreate: remove what is there of the old gateway, its container if
 * any, then its volume and network, so that nothing of its state is reused.
 * Each must be ours: a foreign one of the name stops it. */
static int remove_gateway(struct start *st, int container_exists, os_error *err)
{
	const char *rm[] = { DOCKER_RM, st->res, NULL };
	const char *rmvol[] = { "volume", "rm", st->res, NULL };
	const char *rmnet[] = { "network", "rm", st->res, NULL };
	enum owner vol, net;

	if (start_look_owner(&st->look, "volume", deadline_call_ms(&st->w.by), &vol, err) < 0 ||
	    start_look_owner(&st->look, "network", deadline_call_ms(&st->w.by), &net, err) < 0)
		return -1;
	if (vol == OWNER_FOREIGN)
		return refuse_foreign("volume", st, err);
	if (net == OWNER_FOREIGN)
		return refuse_foreign("network", st, err);
	if (!container_exists && vol == OWNER_ABSENT && net == OWNER_ABSENT)
		return 0;
	log_step("removing gateway '%s' (--recreate)", st->p.req->name);
	if (container_exists && docker_ok(st->on, rm, deadline_call_ms(&st->w.by), err) < 0)
		return os_error_wrap(err, "cannot remove the old container");
	/* Only now that the container is gone can its volume go. */
	if (vol == OWNER_OURS && docker_ok(st->on, rmvol, deadline_call_ms(&st->w.by), err) < 0)
		return os_error_wrap(err, "cannot remove the old volume");
	if (net == OWNER_OURS && docker_ok(st->on, rmnet, deadline_call_ms(&st->w.by), err) < 0)
		return os_error_wrap(err, "cannot remove the old network");
	st->removed_old = 1;
	start_look_forget(&st->look);
	log_step_done(1);
	return 0;
}

/* A reused gateway is what its container is: options the user gave that
 * contradict it are refused; defaults give way to its own values, so the
 * kubeconfig and metadata describe the gateway as it runs. */
static int adopt_existing(struct start *st, const struct gw_container *c, os_error *err)
{
	const struct gateway_request *rq = st->p.req;
	const char *what = NULL;

	if (start_gpus_adopt(&st->p, c, err) < 0 || start_gpus_adopt_mode(&st->p, c, err) < 0 ||
	    deploy_adopt_node_network(&st->p, c, err) < 0)
		return -1;
	if (rq->n_tls_san > 0 || rq->advertise)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists, and its API certificate's names and advertised address were set when it was made; rerun with --recreate to give it %s (its cluster state is lost)",
				    rq->name, rq->advertise ? "--advertise-address" : "--tls-san");
	if (rq->port && c->api_host_port && c->api_host_port != rq->port)
		what = "--port";
	else if (rq->bind && c->api_host_ip && strcmp(c->api_host_ip, rq->bind) != 0)
		what = "--bind";
	else if (rq->image && c->image && strcmp(c->image, rq->image) != 0)
		what = "--image";
	if (what)
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' exists with another %s than asked for; rerun with --recreate to rebuild it (its cluster state is lost)",
				    rq->name, what);
	if (c->api_host_port)
		st->p.port = c->api_host_port;
	if (c->api_host_ip && *c->api_host_ip)
		st->p.bind = st->reused_bind = xstrdup(c->api_host_ip);
	if (c->image)
		st->p.image = st->reused_image = xstrdup(c->image);
	if (c->api_host)
		st->p.api_host = st->reused_api_host = xstrdup(c->api_host);
	/* What it advertises decides flannel's port, which a failure names. */
	if (c->advertise)
		st->p.advertise = st->reused_advertise = xstrdup(c->advertise);
	return 0;
}

static int resume(struct start *st, os_error *err)
{
	const char *start[] = { "start", st->res, NULL };
	struct run_result res = { 0 };
	int rc;

	log_step("resuming stopped gateway '%s'", st->p.req->name);
	rc = docker_run(st->on, start, NULL, 0, deadline_call_ms(&st->w.by), &res, err);
	if (rc == 0 && res.status != 0)
		rc = start_explain_failure(&st->p, st->res, &res, "start", err);
	run_result_free(&res);
	if (rc < 0)
		return -1;
	/* A user's `docker start` resets the count of the restart policy's
	 * restarts (moby daemon/start.go: containerStart with
	 * resetRestartManager, container.ResetRestartManager(true)): from
	 * here a restart is a count above 0, whatever it was before. */
	st->w.restarts = 0;
	st->r->outcome = "resumed";
	log_step_done(1);
	return 0;
}

/* 1: reuse (running or resumed), 0: create anew, -1: error. */
static int reconcile_existing(struct start *st, os_error *err)
{
	struct gw_container c = { 0 };
	int rc = -1;

	if ((st->p.req->recreate && nodes_refuse_recreate(st->p.req->name, err) < 0) ||
	    start_look(&st->w.ctr, st->p.req->name, st->p.image, deadline_call_ms(&st->w.by), &st->look, &c, err) < 0) {
		container_free(&c);
		return -1;
	}
	if (!c.exists) {
		/* A volume or network left without its container is old state too. */
		rc = st->p.req->recreate && (prepare_new(st, err) < 0 || remove_gateway(st, 0, err) < 0) ? -1 : 0;
	} else if (container_owner(&c, st->p.req->name) == OWNER_FOREIGN) {
		refuse_foreign("container", st, err);
	} else if (st->p.req->recreate) {
		/* The new image must be at hand, and the GPUs there, before the old gateway goes. */
		rc = prepare_new(st, err) < 0 || remove_gateway(st, 1, err) < 0 ? -1 : 0;
	} else if (adopt_existing(st, &c, err) == 0) {
		st->w.restarts = c.restart_count;
		st->have_container = 1;
		if (c.restarting) {
			/* After a crash: Docker brings it back, this run waits. */
			st->r->outcome = "running";
			log_info("gateway '%s' is restarting (its container exited, and Docker's restart policy starts it again); waiting for it",
				 st->p.req->name);
			rc = wait_pending_restart(&st->w, err) < 0 ? -1 : 1;
		} else if (c.running) {
			st->r->outcome = "running";
			log_info("gateway '%s' is already running; checking that it is ready", st->p.req->name);
			rc = 1;
		} else {
			rc = resume(st, err) < 0 ? -1 : 1;
		}
	}
	container_free(&c);
	return rc;
}

/* --- d/e: network, volume, container ------------------------------------ */

/* Undo what this run created, newest first; failures only warn, since the
 * error that led here is the one to report. Past the deadline too: the
 * calls get a budget of their own. */
static void rollback(struct start *st)
{
	const char *rm[] = { DOCKER_RM, st->res, NULL };
	const char *rmvol[] = { "volume", "rm", "--force", st->res, NULL };
	const char *rmnet[] = { "network", "rm", st->res, NULL };
	int t = cleanup_budget_ms();
	os_error err = { 0 };

	signals_shield();   /* a second ^C must not cut the rollback short */
	st->rolled_back = st->created_container || st->created_volume || st->created_network;
	if (st->created_container && docker_ok(st->on, rm, t, &err) < 0)
		log_warn("could not remove container %s: %s", st->res, err.msg);
	os_error_clear(&err);
	if (st->created_volume && docker_ok(st->on, rmvol, t, &err) < 0)
		log_warn("could not remove volume %s: %s", st->res, err.msg);
	os_error_clear(&err);
	if (st->created_network && docker_ok(st->on, rmnet, t, &err) < 0)
		log_warn("could not remove network %s: %s", st->res, err.msg);
	os_error_clear(&err);
	st->created_container = st->created_volume = st->created_network = 0;
	signals_unshield();
}

/* Is the gateway's volume ours, or absent? docker run makes an absent
 * one (deploy_run_argv's --mount labels it): *created records that this
 * run makes it, for rollback. */
static int check_volume(struct start *st, os_error *err)
{
	enum owner owner;

	if (start_look_owner(&st->look, "volume", deadline_call_ms(&st->w.by), &owner, err) < 0)
		return -1;
	if (owner == OWNER_FOREIGN)
		return refuse_foreign("volume", st, err);
	st->created_volume = owner == OWNER_ABSENT;
	return 0;
}

/* `docker network create` of the gateway's name; only when one exists
 * already is it looked at (ours is used, a foreign one refused), so that
 * a fresh start makes one call. */
static int ensure_network(struct start *st, os_error *err)
{
	cleanup_free char *l1 = xasprintf("--label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	cleanup_free char *l2 = xasprintf("--label=%s=%s", LABEL_GATEWAY, st->p.req->name);
	const char *create[] = { "network", "create", l1, l2, st->res, NULL };
	struct run_result res = { 0 };
	enum owner owner;
	int rc = docker_run(st->on, create, NULL, 0, deadline_call_ms(&st->w.by), &res, err);

	if (rc == 0 && res.status == 0) {
		st->created_network = 1;
	} else if (rc == 0 && strstr(res.err, "already exists")) {
		rc = docker_object_owner(st->on, "network", st->res, st->p.req->name, deadline_call_ms(&st->w.by), &owner, err);
		if (rc == 0 && owner == OWNER_FOREIGN)
			rc = refuse_foreign("network", st, err);
		else if (rc == 0 && owner == OWNER_ABSENT)
			rc = os_error_set(err, OS_EXIT_FAILURE, "network %s was removed while this start made it; rerun",
					  st->res);
	} else if (rc == 0) {
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "cannot create network %s", st->res);
	}
	run_result_free(&res);
	return rc;
}

/* Did the failed docker run leave a container of ours behind (docker
 * leaves a Created one when the start fails)? Only then is it this run's
 * to roll back: a container of the name that someone else made in the
 * meantime (a name conflict) carries no labels of ours and is left alone. */
static int left_behind(const struct start *st)
{
	struct gw_container c;
	os_error err = { 0 };
	int ours = 0;

	signals_shield();   /* asked on the way out of an interrupt too */
	if (container_inspect(&st->w.ctr, &c, &err) == 0)
		ours = container_owner(&c, st->p.req->name) == OWNER_OURS;
	signals_unshield();
	container_free(&c);
	os_error_clear(&err);
	return ours;
}

/* One docker run. 1: the port was taken and may be moved on; 0: created;
 * -1: error (the Created container, if any, is left for rollback). */
static int run_once(struct start *st, os_error *err)
{
	struct strv argv = { 0 };
	struct run_result res = { 0 };
	int rc = -1;

	deploy_run_argv(&st->p, &argv);
	/* An interrupt lets the run finish: the daemon goes on creating a
	 * container whose client is gone, after a rollback would have looked
	 * for it (and taken its network from under it). */
	if (docker_run_finishing(st->on, strv_argv(&argv), deadline_call_ms(&st->w.by), &res, err) < 0) {
		st->created_container = left_behind(st);   /* cut short all the same */
		goto out;
	}
	st->created_container = res.status == 0 || left_behind(st);
	if (res.status == 0) {
		rc = 0;
	} else if (!st->p.req->port && start_port_taken(res.err) &&
		   !start_node_port_taken(&st->p, res.err)) {   /* flannel's port is every node's: it stays */
		const char *rm[] = { DOCKER_RM, st->res, NULL };
		rc = docker_ok(st->on, rm, deadline_call_ms(&st->w.by), err) < 0 ? -1 : 1;
		st->created_container = rc < 0;
	} else {
		start_explain_failure(&st->p, st->res, &res, "run", err);
	}
out:
	run_result_free(&res);
	strv_free(&argv);
	return rc;
}

static int create_container(struct start *st, os_error *err)
{
	int rc = -1;

	cleanup_free char *which = st->p.req->gpu ? gpus_words(&st->p.req->gpus) : NULL;

	log_step("creating gateway '%s'%s%s", st->p.req->name, which ? " with " : "", which ? which : "");
	if (log_verbosity() > 0) {
		cleanup_free char *plan = deploy_plan_describe(&st->p);
		log_verbose("plan: %s", plan);
	}
	if (ensure_network(st, err) < 0 || check_volume(st, err) < 0)
		goto out;
	/* Without --port, a taken default moves to the next free port rather
	 * than failing: two gateways can start side by side. */
	for (int tries = 0; (rc = run_once(st, err)) == 1 && tries < PORT_TRIES; tries++) {
		log_verbose("port %d on %s is taken: the plan takes %d", st->p.port, st->p.bind, st->p.port + 1);
		st->p.port++;
	}
	if (rc == 1)
		rc = os_error_set(err, OS_EXIT_FAILURE, "ports %d to %d on %s are all in use; choose one with --port",
				  st->p.port - PORT_TRIES, st->p.port, st->p.bind);
	/* An interrupt during the run: what it made is undone, as before it. */
	if (rc == 0 && signals_pending())
		rc = os_error_set(err, 128 + signals_pending(), "interrupted while creating gateway '%s'", st->p.req->name);
	if (rc == 0) {
		st->r->outcome = "created";
		st->have_container = 1;
		log_step_done(1);
	}
out:
	if (rc < 0)
		rollback(st);
	return rc;
}

/* A new gateway: what it needs (--recreate got it already), then its container. */
static int create_new(struct start *st, os_error *err)
{
	return !st->prepared && prepare_new(st, err) < 0 ? -1 : create_container(st, err);
}

int gateway_start(const struct gateway_request *rq, struct start_result *r, os_error *err)
{
	struct start st = { .r = r };
	int existing, lock = -1, rc = -1;

	*r = (struct start_result){ .gpus = -1 };
	deploy_plan_init(&st.p, rq);
	phases_begin(&r->phases);
	st.res = gateway_resource_name(rq->name);
	st.w = (struct wait_ctx){ .ctr = { .name = st.res }, .by = deadline_in(rq->timeout_ms, docker_call_timeout_ms()),
				  .timeout_ms = rq->timeout_ms, .phases = &r->phases };
	r->container = xstrdup(st.res);

	/* One command at a time per gateway: a second start waits here, then
	 * finds the gateway the first one made. */
	if ((lock = gateway_lock(rq->name, st.w.by.at_ms, err)) < 0 || preflight(&st, err) < 0 ||
	    (existing = reconcile_existing(&st, err)) < 0 || (!existing && create_new(&st, err) < 0))
		goto out;
	phases_mark(&r->phases, PHASE_CONTAINER);
	st.w.fresh = st.created_container;
	st.w.new_volume = st.created_container && st.created_volume;
	if ((existing && nodes_start_gateway(rq->name, err) < 0) ||
	    start_ready(&st.p, &st.w, st.created_volume, r, err) < 0 ||
	    (existing && !rq->no_wait &&
	     nodes_wait_gateway(rq->name, &st.w.ctr, st.p.allocation, &st.w.by, rq->timeout_ms, err) < 0))
		goto out;
	r->image = xstrdup(st.p.image);
	r->gpu_mode = rq->gpu ? (st.p.cdi ? "cdi" : "legacy") : NULL;
	r->gpu_injection = rq->gpu ? (st.p.cdi || st.dg.gpus_by_cdi ? "cdi" : "hook") : NULL;
	r->mig_strategy = rq->gpu ? mig_strategy_name(st.p.mig) : NULL;
	r->gpu_allocation = rq->gpu ? gpu_allocation_name(st.p.allocation) : NULL;
	rc = 0;
out:
	if (rc < 0 && signals_pending())
		start_explain_interrupt(&st.p, st.have_container, st.removed_old, st.rolled_back, err);
	wait_release(&st.w);
	start_look_free(&st.look);
	gateway_unlock(lock);
	free(st.res);
	free(st.reused_image);
	free(st.reused_bind);
	free(st.reused_api_host);
	free(st.reused_advertise);
	strv_free(&st.host_sans);
	deploy_plan_free(&st.p);
	daemon_gpus_free(&st.dg);
	docker_daemon_free(&st.daemon);
	docker_target_destroy(st.on);
	return rc;
}

void start_result_free(struct start_result *r)
{
	free(r->container);
	free(r->image);
	free(r->server);
	free(r->kubeconfig);
	free(r->user_kubeconfig);
	free(r->user_backup);
	strv_free(&r->mig);
	memset(r, 0, sizeof(*r));
}
