/* gateway_start.c - the `gateway start` flow (see gateway_start.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "container.h"
#include "docker.h"
#include "exitcode.h"
#include "fsutil.h"
#include "gateway_start.h"
#include "json.h"
#include "kube.h"
#include "kubeconfig.h"
#include "log.h"
#include "metadata.h"
#include "names.h"
#include "signals.h"
#include "strv.h"
#include "wait.h"
#include "xalloc.h"

#define LOG_TAIL_LINES 20

struct start {
	const struct deploy_opts *o;
	struct start_result *r;
	char *res;                 /* openshell-cluster-NAME */
	long long deadline;
	long long restarts;        /* RestartCount when the waits began */
	int created_network, created_volume, created_container;
	int have_container;        /* a gateway container exists and is kept */
	int rolled_back;           /* this run removed what it had created */
};

static int budget(const struct start *st)
{
	return call_budget_ms(st->deadline, docker_call_timeout_ms());
}

/* docker ARGS... with the start's deadline; non-zero exit is an error. */
static int docker_ok(const struct start *st, const char *const *args, os_error *err)
{
	struct run_result res;
	int rc = docker_run_ok(args, NULL, 0, budget(st), &res, err);

	run_result_free(&res);
	return rc;
}

static char *docker_logs_tail(const struct start *st)
{
	char tail[16];
	struct run_result res;
	os_error err = { 0 };
	char *text;

	snprintf(tail, sizeof(tail), "%d", LOG_TAIL_LINES);
	const char *args[] = { "logs", "--tail", tail, st->res, NULL };
	if (docker_run(args, NULL, 0, budget(st), &res, &err) < 0)
		text = xasprintf("(logs unavailable: %s)", err.msg);
	else
		text = xasprintf("%s%s", res.out, res.err);
	run_result_free(&res);
	os_error_clear(&err);
	return text;
}

/* --- a: preflight ------------------------------------------------------ */

static void gpu_preflight(const struct start *st)
{
	static const char *const args[] = { "info", "--format", "{{json .Runtimes}}", NULL };
	struct run_result res;
	os_error err = { 0 };
	cJSON *rt = NULL;

	/* Docker's nvidia device driver (the toolkit's hook) is invisible to
	 * the client; only a registered runtime is. Its absence is therefore a
	 * hint, not a verdict: the container start gives the verdict. */
	if (docker_run_ok(args, NULL, 0, budget(st), &res, &err) == 0 &&
	    (rt = json_parse(res.out, res.out_len, "docker info output", &err)) &&
	    !cJSON_GetObjectItemCaseSensitive(rt, "nvidia"))
		log_verbose("docker info lists no 'nvidia' runtime; relying on Docker's nvidia device driver");
	cJSON_Delete(rt);
	run_result_free(&res);
	os_error_clear(&err);
}

static int preflight(struct start *st, os_error *err)
{
	cleanup_free char *version = NULL;

	log_step("checking Docker");
	if (docker_ping(&version, err) < 0)
		return -1;
	log_verbose("docker daemon %s", version);
	if (st->o->gpu)
		gpu_preflight(st);
	log_step_done(1);
	return 0;
}

/* --- b: an existing gateway --------------------------------------------- */

static int remove_gateway(struct start *st, os_error *err)
{
	const char *rm[] = { "rm", "--force", "--volumes", st->res, NULL };
	const char *rmvol[] = { "volume", "rm", st->res, NULL };
	struct run_result res;

	log_step("removing gateway '%s' (--recreate)", st->o->name);
	if (docker_ok(st, rm, err) < 0)
		return os_error_wrap(err, "cannot remove the old container");
	/* Only now that the container is gone can its volume go. */
	if (docker_run(rmvol, NULL, 0, budget(st), &res, err) < 0 ||
	    (res.status != 0 && !docker_says_missing(res.err))) {
		if (!err->msg)
			os_error_set(err, OS_EXIT_FAILURE, "docker volume rm %s failed: %.*s", st->res,
				     (int)strcspn(res.err, "\n"), res.err);
		run_result_free(&res);
		return -1;
	}
	run_result_free(&res);
	log_step_done(1);
	return 0;
}

static int refuse_mismatch(const struct start *st, const struct gw_container *c, os_error *err)
{
	return os_error_set(err, OS_EXIT_CONFLICT,
			    "gateway '%s' exists %s GPUs but %s asked for; rerun with --recreate to rebuild it%s (its cluster state is lost)",
			    st->o->name, c->gpu_request ? "with" : "without",
			    st->o->gpu ? "--gpu was" : "no GPUs were", st->o->gpu ? " with --gpu" : "");
}

/* 1: reuse (running or resumed), 0: create anew, -1: error. */
static int reconcile_existing(struct start *st, os_error *err)
{
	struct gw_container c;
	int rc = -1;

	if (container_inspect(st->res, &c, err) < 0)
		return -1;
	if (!c.exists) {
		rc = 0;
	} else if (!c.managed_by || strcmp(c.managed_by, LABEL_MANAGED_VALUE) != 0) {
		os_error_set(err, OS_EXIT_CONFLICT,
			     "container %s exists but was not created by openshell (no %s label); remove or rename it first",
			     st->res, LABEL_MANAGED);
	} else if (st->o->recreate) {
		rc = remove_gateway(st, err) < 0 ? -1 : 0;
	} else if (c.gpu_request != st->o->gpu) {
		refuse_mismatch(st, &c, err);
	} else if (c.running || c.restarting) {
		st->r->outcome = "running";
		log_info("gateway '%s' is already running; checking that it is ready", st->o->name);
		rc = 1;
	} else {
		const char *start[] = { "start", st->res, NULL };
		log_step("resuming stopped gateway '%s'", st->o->name);
		rc = docker_ok(st, start, err) < 0 ? -1 : 1;
		if (rc > 0) {
			st->r->outcome = "resumed";
			log_step_done(1);
		}
	}
	if (c.exists)
		st->restarts = c.restart_count;
	st->have_container = rc > 0;
	container_free(&c);
	return rc;
}

/* --- c: the image -------------------------------------------------------- */

static int ensure_image(struct start *st, os_error *err)
{
	const char *inspect[] = { "image", "inspect", "--format", "{{.Id}}", st->o->image, NULL };
	const char *pull[] = { "pull", st->o->image, NULL };
	struct run_result res;
	int rc;

	if (docker_run(inspect, NULL, 0, budget(st), &res, err) < 0)
		goto fail;
	rc = res.status;
	run_result_free(&res);
	if (rc == 0)
		return 0;
	if (!image_ref_has_registry(st->o->image))
		return os_error_set(err, OS_EXIT_FAILURE,
				    "image %s is not present and names no registry to pull it from; build or load it first (docker build, docker load)",
				    st->o->image);
	log_step("pulling %s", st->o->image);
	/* A pull legitimately takes long: it gets what is left of the overall
	 * deadline rather than the per-call one. */
	if (docker_run_ok(pull, NULL, 0, call_budget_ms(st->deadline, st->o->timeout_ms), &res, err) < 0)
		goto fail;
	run_result_free(&res);
	log_step_done(1);
	return 0;
fail:
	run_result_free(&res);
	return os_error_wrap(err, "cannot get image %s", st->o->image);
}

/* --- d/e: network, volume, container ------------------------------------ */

/* Undo what this run created, newest first; failures only warn, since the
 * error that led here is the one to report. */
static void rollback(struct start *st)
{
	const char *rm[] = { "rm", "--force", st->res, NULL };
	const char *rmvol[] = { "volume", "rm", "--force", st->res, NULL };
	const char *rmnet[] = { "network", "rm", st->res, NULL };
	os_error err = { 0 };

	signals_shield();   /* a second ^C must not cut the rollback short */
	st->rolled_back = st->created_container || st->created_volume || st->created_network;
	if (st->created_container && docker_ok(st, rm, &err) < 0)
		log_warn("could not remove container %s: %s", st->res, err.msg);
	os_error_clear(&err);
	if (st->created_volume && docker_ok(st, rmvol, &err) < 0)
		log_warn("could not remove volume %s: %s", st->res, err.msg);
	os_error_clear(&err);
	if (st->created_network && docker_ok(st, rmnet, &err) < 0)
		log_warn("could not remove network %s: %s", st->res, err.msg);
	os_error_clear(&err);
	st->created_container = st->created_volume = st->created_network = 0;
	signals_unshield();
}

static int ensure_network(struct start *st, os_error *err)
{
	const char *inspect[] = { "network", "inspect", "--format", "{{.Id}}", st->res, NULL };
	cleanup_free char *l1 = xasprintf("--label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	cleanup_free char *l2 = xasprintf("--label=%s=%s", LABEL_GATEWAY, st->o->name);
	const char *create[] = { "network", "create", l1, l2, st->res, NULL };
	struct run_result res;
	int exists;

	if (docker_run(inspect, NULL, 0, budget(st), &res, err) < 0) {
		run_result_free(&res);
		return -1;
	}
	exists = res.status == 0;
	run_result_free(&res);
	if (exists)
		return 0;
	if (docker_ok(st, create, err) < 0)
		return os_error_wrap(err, "cannot create network %s", st->res);
	st->created_network = 1;
	return 0;
}

static int ensure_volume(struct start *st, os_error *err)
{
	const char *inspect[] = { "volume", "inspect", "--format", "{{.Name}}", st->res, NULL };
	cleanup_free char *l1 = xasprintf("--label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	cleanup_free char *l2 = xasprintf("--label=%s=%s", LABEL_GATEWAY, st->o->name);
	const char *create[] = { "volume", "create", l1, l2, st->res, NULL };
	struct run_result res;
	int exists;

	if (docker_run(inspect, NULL, 0, budget(st), &res, err) < 0) {
		run_result_free(&res);
		return -1;
	}
	exists = res.status == 0;
	run_result_free(&res);
	if (exists)
		return 0;
	if (docker_ok(st, create, err) < 0)
		return os_error_wrap(err, "cannot create volume %s", st->res);
	st->created_volume = 1;
	return 0;
}

/* Turn docker run's failure into the one line that names the fix. */
static int explain_run_failure(const struct start *st, const struct run_result *res, os_error *err)
{
	int n = (int)strcspn(res->err, "\n");

	if (strstr(res->err, "could not select device driver")) {
		os_error_set(err, OS_EXIT_NOGPU,
			     "Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is missing or not configured for Docker; install it, run 'nvidia-ctk runtime configure --runtime=docker' and restart docker");
	} else if (strstr(res->err, "port is already allocated") ||
		   strstr(res->err, "address already in use")) {
		os_error_set(err, OS_EXIT_FAILURE, "port %d on %s is already in use; choose another with --port",
			     st->o->port, st->o->bind);
	} else {
		os_error_set(err, OS_EXIT_FAILURE, "docker run failed (exit status %d): %.*s",
			     res->status, n, res->err);
	}
	os_error_set_detail(err, res->err);
	return -1;
}

static int create_container(struct start *st, os_error *err)
{
	struct strv argv = { 0 };
	struct run_result res;
	int rc = -1;

	log_step("creating gateway '%s'%s", st->o->name, st->o->gpu ? " with all GPUs" : "");
	if (ensure_network(st, err) < 0 || ensure_volume(st, err) < 0)
		goto out;
	deploy_run_argv(st->o, &argv);
	if (docker_run(strv_argv(&argv), NULL, 0, budget(st), &res, err) < 0) {
		st->created_container = 1;   /* it may exist: the call was cut short */
		goto out;
	}
	/* docker run leaves a Created container behind when the start fails. */
	st->created_container = 1;
	if (res.status != 0) {
		explain_run_failure(st, &res, err);
		goto out;
	}
	st->r->outcome = "created";
	st->have_container = 1;
	log_step_done(1);
	rc = 0;
out:
	if (rc < 0)
		rollback(st);
	run_result_free(&res);
	strv_free(&argv);
	return rc;
}

/* --- f/g: the container lives and k3s answers ---------------------------- */

/* Fail if the container has stopped or restarted since the waits began. */
static int check_alive(struct start *st, struct gw_container *c, os_error *err)
{
	if (container_inspect(st->res, c, err) < 0)
		return -1;
	if (!c->exists)
		return os_error_set(err, OS_EXIT_FAILURE, "container %s disappeared while starting",
				    st->res);
	if (c->running && !c->restarting && c->restart_count == st->restarts)
		return 0;
	cleanup_free char *logs = docker_logs_tail(st);
	if (c->restarting || c->restart_count > st->restarts)
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s restarted (last exit code %lld); the gateway was kept for inspection, its last log lines follow",
			     st->res, c->exit_code);
	else
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s is %s (exit code %lld%s%s); the gateway was kept for inspection, its last log lines follow",
			     st->res, c->status, c->exit_code, c->state_error && *c->state_error ? ": " : "",
			     c->state_error ? c->state_error : "");
	os_error_set_detail(err, logs);
	return -1;
}

/* A call cut short because the overall deadline came: not the call's
 * failure but the wait's, which the caller reports with its diagnostics. */
static int deadline_hit(const struct start *st, os_error *err)
{
	if (err->code != OS_EXIT_TIMEOUT || clock_ms() < st->deadline)
		return 0;
	os_error_clear(err);
	return 1;
}

static int timeout_error(const struct start *st, const char *what, const char *health,
			 os_error *err)
{
	cleanup_free char *dur = run_format_ms(st->o->timeout_ms);

	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for %s; the gateway was kept for inspection (--timeout sets the limit)",
		     dur, what);
	if (health)
		os_error_set_detail(err, health);
	return -1;
}

static int wait_api(struct start *st, os_error *err)
{
	struct backoff b = { 0 };
	cleanup_free char *health = NULL;

	log_step("waiting for the k3s API");
	for (;;) {
		struct gw_container c;
		int ready;

		if (check_alive(st, &c, err) < 0) {
			container_free(&c);
			if (deadline_hit(st, err))
				return timeout_error(st, "the k3s API (kubectl get --raw /readyz)", health, err);
			return -1;
		}
		free(health);
		health = c.health_output ? xstrdup(c.health_output) : NULL;
		container_free(&c);
		if ((ready = kube_readyz(st->res, budget(st), err)) < 0 && !deadline_hit(st, err))
			return -1;
		if (ready > 0)
			break;
		if (!backoff_wait(&b, st->deadline))
			return timeout_error(st, "the k3s API (kubectl get --raw /readyz)", health, err);
	}
	log_step_done(1);
	return 0;
}

/* --no-wait: the container's own healthcheck is the judge. */
static int wait_healthy(struct start *st, os_error *err)
{
	struct backoff b = { 0 };

	log_step("waiting for the container to be healthy");
	for (;;) {
		struct gw_container c;
		int healthy;

		if (check_alive(st, &c, err) < 0) {
			container_free(&c);
			if (deadline_hit(st, err))
				return timeout_error(st, "the container's healthcheck", NULL, err);
			return -1;
		}
		healthy = !c.health || strcmp(c.health, "healthy") == 0;
		if (!healthy && !backoff_wait(&b, st->deadline)) {
			timeout_error(st, "the container's healthcheck", c.health_output, err);
			container_free(&c);
			return -1;
		}
		container_free(&c);
		if (healthy)
			break;
	}
	log_step_done(1);
	return 0;
}

/* --- h: kubeconfig and metadata ------------------------------------------ */

static int write_metadata(struct start *st, const char *dir, os_error *err)
{
	cleanup_free char *path = xasprintf("%s/metadata.json", dir);
	cleanup_free char *created = metadata_now();
	cleanup_free char *json = NULL;
	struct gw_metadata md = {
		.name = (char *)st->o->name, .container = st->res, .image = (char *)st->o->image,
		.bind = (char *)st->o->bind, .port = st->o->port, .gpu = st->o->gpu,
		.server = st->r->server, .kubeconfig = st->r->kubeconfig, .created = created,
	};

	json = metadata_to_json(&md);
	return write_file_atomic(path, json, strlen(json), 0600, err);
}

static int write_files(struct start *st, os_error *err)
{
	static const char *const cat[] = { "cat", K3S_KUBECONFIG_PATH, NULL };
	cleanup_free char *dir = NULL;
	cleanup_free char *ctx = gateway_hostname(st->o->name);
	cleanup_free char *text = NULL;
	cleanup_free char *addr = deploy_api_address(st->o);
	struct strv args = { 0 };
	struct run_result res;
	size_t len;
	int rc = -1;

	strv_pushv(&args, (const char *const[]){ "exec", st->res, NULL });
	strv_pushv(&args, cat);
	st->r->server = xasprintf("https://%s", addr);
	if (gateway_state_dir(st->o->name, &dir, err) < 0 || mkdir_p(dir, 0700, err) < 0)
		goto out;
	st->r->kubeconfig = xasprintf("%s/kubeconfig", dir);
	if (docker_run_ok(strv_argv(&args), NULL, 0, budget(st), &res, err) < 0) {
		if (deadline_hit(st, err))
			timeout_error(st, "the kubeconfig (" K3S_KUBECONFIG_PATH ")", NULL, err);
		else
			os_error_wrap(err, "cannot read %s from the gateway", K3S_KUBECONFIG_PATH);
		goto out;
	}
	if (kubeconfig_rewrite(res.out, res.out_len, st->r->server, ctx, &text, &len, err) < 0 ||
	    write_file_atomic(st->r->kubeconfig, text, len, 0600, err) < 0 ||
	    write_metadata(st, dir, err) < 0)
		goto out;
	if (st->o->update_kubeconfig &&
	    kubeconfig_update_user(text, len, &st->r->user_kubeconfig, &st->r->user_backup, err) < 0) {
		os_error_wrap(err, "cannot update your kubeconfig");
		goto out;
	}
	rc = 0;
out:
	run_result_free(&res);
	strv_free(&args);
	return rc;
}

/* --- i: GPUs allocatable --------------------------------------------------- */

struct gpu_state {
	int runtime_class;        /* RuntimeClass nvidia exists */
	int plugin_found;
	struct ds_status ds;
	long long allocatable;    /* -1: absent */
};

static int gpu_ready(const struct gpu_state *g)
{
	return g->runtime_class && g->plugin_found && g->ds.desired > 0 &&
	       g->ds.ready == g->ds.desired && g->allocatable > 0;
}

static int read_gpu_state(struct start *st, struct gpu_state *g, os_error *err)
{
	cJSON *obj = NULL;
	int found;

	if (!g->runtime_class) {
		found = kube_get(st->res, "runtimeclasses", NVIDIA_RUNTIME_CLASS, NULL, 0, budget(st), &obj, err);
		cJSON_Delete(obj);
		if (found < 0)
			return -1;
		g->runtime_class = found;
	}
	if (kube_get(st->res, "daemonsets", NULL, NULL, 1, budget(st), &obj, err) < 0)
		return -1;
	const cJSON *ds = kube_find_device_plugin(obj);
	g->plugin_found = ds != NULL;
	kube_daemonset_status(ds, &g->ds);
	cJSON_Delete(obj);
	if (kube_get(st->res, "nodes", NULL, NULL, 0, budget(st), &obj, err) < 0)
		return -1;
	g->allocatable = kube_nodes_allocatable_gpus(obj);
	cJSON_Delete(obj);
	return 0;
}

static char *gpu_missing(const struct gpu_state *g)
{
	if (!g->runtime_class)
		return xstrdup("RuntimeClass 'nvidia' does not exist (k3s found no nvidia-container-runtime)");
	if (!g->plugin_found)
		return xstrdup("the nvidia-device-plugin DaemonSet does not exist (did the Helm install run?)");
	if (g->ds.desired == 0)
		return xstrdup("the nvidia-device-plugin DaemonSet schedules no pod (desired 0: check its node affinity)");
	if (g->ds.ready < g->ds.desired)
		return xasprintf("the nvidia-device-plugin DaemonSet has %lld of %lld pods ready",
				 g->ds.ready, g->ds.desired);
	if (g->allocatable < 0)
		return xstrdup("the node has no allocatable nvidia.com/gpu (the plugin has not registered)");
	return xstrdup("the node's allocatable nvidia.com/gpu is 0 (the plugin found no GPU)");
}

static int gpu_timeout(struct start *st, const struct gpu_state *g, os_error *err)
{
	cleanup_free char *what = gpu_missing(g);
	cleanup_free char *dur = run_format_ms(st->o->timeout_ms);
	cleanup_free char *plugin = NULL, *helm = NULL, *detail = NULL;
	/* The deadline has passed; the diagnostics get a short budget of their own. */
	int t = docker_call_timeout_ms() < 10000 ? docker_call_timeout_ms() : 10000;

	plugin = kube_logs_tail(st->res, DEVICE_PLUGIN_NAMESPACE,
				DEVICE_PLUGIN_LABEL "=" DEVICE_PLUGIN_NAME, LOG_TAIL_LINES, t);
	helm = kube_logs_tail(st->res, "kube-system", "job-name=" DEVICE_PLUGIN_HELM_JOB, LOG_TAIL_LINES, t);
	detail = xasprintf("device plugin logs:\n%s\n%s logs:\n%s", *plugin ? plugin : "(none)\n",
			   DEVICE_PLUGIN_HELM_JOB, *helm ? helm : "(none)\n");
	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for GPUs: %s; the gateway was kept for inspection", dur, what);
	os_error_set_detail(err, detail);
	return -1;
}

static int wait_gpus(struct start *st, os_error *err)
{
	struct backoff b = { 0 };
	struct gpu_state g = { .allocatable = -1 };

	log_step("waiting for allocatable nvidia.com/gpu");
	for (;;) {
		struct gw_container c;
		int alive = check_alive(st, &c, err);

		container_free(&c);
		if (alive < 0 || read_gpu_state(st, &g, err) < 0) {
			if (deadline_hit(st, err))
				return gpu_timeout(st, &g, err);
			return -1;
		}
		if (gpu_ready(&g))
			break;
		if (!backoff_wait(&b, st->deadline))
			return gpu_timeout(st, &g, err);
	}
	st->r->gpus = g.allocatable;
	log_step_done(1);
	return 0;
}

/* --- the flow ------------------------------------------------------------- */

/* After SIGINT/SIGTERM: say what state the gateway was left in. What this
 * run created before the container ran is already rolled back. */
static int interrupted(const struct start *st, os_error *err)
{
	int code = 128 + signals_pending();

	if (st->have_container)
		return os_error_set(err, code,
				    "interrupted; gateway '%s' was kept and goes on starting: run 'openshell gateway start --name %s%s' to wait for it again, or destroy it with 'openshell gateway destroy --name %s'",
				    st->o->name, st->o->name, st->o->gpu ? " --gpu" : "", st->o->name);
	if (st->rolled_back)
		return os_error_set(err, code, "interrupted; removed what this run had created for gateway '%s'",
				    st->o->name);
	return os_error_set(err, code, "interrupted; gateway '%s' was not changed", st->o->name);
}

int gateway_start(const struct deploy_opts *o, struct start_result *r, os_error *err)
{
	struct start st = { .o = o, .r = r };
	int existing, lock = -1, rc = -1;

	memset(r, 0, sizeof(*r));
	r->gpus = -1;
	st.res = gateway_resource_name(o->name);
	st.deadline = clock_ms() + o->timeout_ms;
	r->container = xstrdup(st.res);

	/* One command at a time per gateway: a second start waits here, then
	 * finds the gateway the first one made. */
	if ((lock = gateway_lock(o->name, st.deadline, err)) < 0 || preflight(&st, err) < 0 ||
	    (existing = reconcile_existing(&st, err)) < 0)
		goto out;
	if (!existing && (ensure_image(&st, err) < 0 || create_container(&st, err) < 0))
		goto out;
	if (o->no_wait) {
		if (wait_healthy(&st, err) < 0 || write_files(&st, err) < 0)
			goto out;
	} else if (wait_api(&st, err) < 0 || write_files(&st, err) < 0 ||
		   (o->gpu && wait_gpus(&st, err) < 0)) {
		goto out;
	}
	rc = 0;
out:
	if (rc < 0 && signals_pending())
		interrupted(&st, err);
	gateway_unlock(lock);
	free(st.res);
	return rc;
}

void start_result_free(struct start_result *r)
{
	free(r->container);
	free(r->server);
	free(r->kubeconfig);
	free(r->user_kubeconfig);
	free(r->user_backup);
	memset(r, 0, sizeof(*r));
}
