/* gateway/wait/wait.c - readiness waits (see gateway/wait/wait.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/gpu/allocation.h"
#include "gateway/wait/wait.h"
#include "kube/containerd.h"
#include "kube/kubeconfig.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* Ticks: the fallback looks beside a stream, 5 s in and then every 10 s
 * at most. k3s logs its line within a second of its API answering, so a
 * tick serves only a k3s that words it otherwise (a few seconds late);
 * each is a docker exec and a kubectl, some 0.3 s of CPU on a small host,
 * which an early tick spends while k3s starts, the host's busiest time. */
#define API_TICK_FIRST_MS 5000
#define API_TICK_MAX_MS 10000

/* k3s's line once its API server is ready (pkg/cli/server/server.go). */
#define K3S_API_RUNNING_LOG "Kube API server is now running"

int cleanup_budget_ms(void)
{
	return docker_call_timeout_ms() < 10000 ? docker_call_timeout_ms() : 10000;
}

static char *docker_logs_tail(const struct wait_ctx *w)
{
	char tail[16];
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *text;

	snprintf(tail, sizeof(tail), "%d", WAIT_LOG_TAIL_LINES);
	const char *args[] = { "logs", "--tail", tail, w->ctr.name, NULL };
	if (docker_run(w->ctr.on, args, NULL, 0, cleanup_budget_ms(), &res, &err) < 0)
		text = xasprintf("(logs unavailable: %s)", err.msg);
	else
		text = xasprintf("%s%s", res.out, res.err);
	run_result_free(&res);
	os_error_clear(&err);
	return text;
}

/* Fail if the container has stopped or restarted since the waits began. */
int wait_check_alive(const struct wait_ctx *w, struct gw_container *c, os_error *err)
{
	if (container_inspect(&w->ctr, c, err) < 0)
		return -1;
	if (!c->exists)
		return os_error_set(err, OS_EXIT_FAILURE, "container %s disappeared while starting",
				    w->ctr.name);
	if (c->running && !c->restarting && c->restart_count == w->restarts)
		return 0;
	cleanup_free char *logs = docker_logs_tail(w);
	/* A count that went down was reset by a restarted daemon, which
	 * restarted the container too. */
	if (c->restarting || c->restart_count != w->restarts)
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s restarted (last exit code %lld); the gateway was kept for inspection, its last log lines follow",
			     w->ctr.name, c->exit_code);
	else
		os_error_set(err, OS_EXIT_FAILURE,
			     "container %s is %s (exit code %lld%s%s); the gateway was kept for inspection, its last log lines follow",
			     w->ctr.name, c->status, c->exit_code, c->state_error && *c->state_error ? ": " : "",
			     c->state_error ? c->state_error : "");
	os_error_set_detail(err, logs);
	return -1;
}

/* A call cut short because the overall deadline came: not the call's
 * failure but the wait's, which the caller reports with its diagnostics. */
int wait_cut(const struct wait_ctx *w, os_error *err)
{
	if (!deadline_cut(&w->by, err))
		return 0;
	os_error_clear(err);
	return 1;
}

int wait_timeout_error(const struct wait_ctx *w, const char *what, const char *detail,
		       os_error *err)
{
	cleanup_free char *dur = clock_format_ms(w->timeout_ms);

	os_error_set(err, OS_EXIT_TIMEOUT,
		     "timed out after %s waiting for %s; the gateway was kept for inspection (--timeout sets the limit)",
		     dur, what);
	if (detail)
		os_error_set_detail(err, detail);
	return -1;
}

/* A tick's delay: first, then doubled up to most. */
int wait_next_delay(int *delay, int most)
{
	*delay = *delay * 2 > most ? most : *delay * 2;
	return *delay;
}

/* The container's log, followed from the API wait to the end of the
 * start: k3s's line says when its API runs, and the stream's end that the
 * container stopped (docker logs --follow ends with the container, also
 * when its restart policy starts it again). */
struct wait_follow {
	struct wait_ctx *w;
	struct run_child *c;
	int ready;       /* k3s said its API runs, or a tick's /readyz did */
	int delay_ms;
};

/* k3s logs it once its API server is ready (pkg/cli/server/server.go:
 * "Kube API server is now running"); later lines are only read. */
static int api_line(void *ctx, const char *line)
{
	struct wait_follow *f = ctx;

	if (f->ready || !strstr(line, K3S_API_RUNNING_LOG))
		return 0;
	f->ready = 1;
	return RUN_WAKE;
}

/* The fallback beside the log, for a k3s that words it otherwise. */
static int api_tick(void *ctx)
{
	struct wait_follow *f = ctx;
	os_error e = { 0 };

	if (f->ready)
		return RUN_WAKE;
	f->ready = kube_readyz(&f->w->ctr, deadline_call_ms(&f->w->by), &e) > 0;
	os_error_clear(&e);
	return f->ready ? RUN_WAKE : wait_next_delay(&f->delay_ms, API_TICK_MAX_MS);
}

/* Follow the container's log from SINCE (NULL: its start) until k3s says
 * its API runs: one docker process for the whole wait, where polling
 * /readyz would be one per round. 1: the log or a tick said ready, and
 * the stream goes on as w->follow; 0: the stream ended by itself (the
 * container stopped); -1: error. */
static int follow_api_log(struct wait_ctx *w, const char *since, os_error *err)
{
	struct wait_follow *f = xcalloc(1, sizeof(*f));
	/* k3s logs on stderr, which docker logs keeps apart as it was. */
	struct deadline whole = deadline_capped(&w->by, 0);   /* the stream lasts the wait */
	struct run_spec spec = { .timeout_ms = deadline_call_ms(&whole), .merge_stderr = 1, .on_line = api_line,
				 .discard_lines = 1, .tick_ms = API_TICK_FIRST_MS, .on_tick = api_tick, .ctx = f };
	struct strv args = { 0 };
	struct run_result res = { 0 };
	int rc = -1;

	f->w = w;
	f->delay_ms = API_TICK_FIRST_MS;
	strv_pushv(&args, (const char *const[]){ "logs", "--follow", NULL });
	if (since)
		strv_pushv(&args, (const char *const[]){ "--since", since, NULL });
	strv_push(&args, w->ctr.name);
	f->c = docker_start(w->ctr.on, strv_argv(&args), &spec, err);
	strv_free(&args);
	if (f->c) {
		while (run_wait_any(&f->c, 1) == 0 && !f->ready)
			;   /* woken by the line or a tick, or ended */
		if (f->ready && !run_ended(f->c)) {
			w->follow = f;
			return 1;
		}
		/* Ready as it ended, the next look at the container says more. */
		rc = docker_finish(f->c, &res, err) < 0 ? -1 : f->ready;
		run_result_free(&res);
	}
	free(f);
	return rc;
}

struct run_child *wait_follower(const struct wait_ctx *w)
{
	return w->follow ? w->follow->c : NULL;
}

static void drop_follower(struct wait_ctx *w)
{
	if (!w->follow)
		return;
	docker_drop(&w->follow->c);
	free(w->follow);
	w->follow = NULL;
}

int wait_follower_ended(struct wait_ctx *w, os_error *err)
{
	struct gw_container c;
	int alive;

	drop_follower(w);
	alive = wait_check_alive(w, &c, err);
	container_free(&c);
	return alive;
}

void wait_release(struct wait_ctx *w)
{
	drop_follower(w);
	free(w->started_at);
	w->started_at = NULL;
}

/* The timeout quotes the healthcheck's latest marker: looked up then,
 * with a budget of its own, since the deadline has passed. Before
 * Docker's first probe (one every 30 s, the first 30 s in; every second
 * during the start period on Docker 25 and later) there is none,
 * and the probe runs now, as `gateway status` runs it. */
static int api_timeout(const struct wait_ctx *w, os_error *err)
{
	struct gw_container c;
	cleanup_free char *line = NULL;
	os_error e = { 0 };
	int rc;

	signals_shield();
	if (container_inspect(&w->ctr, &c, &e) == 0 && !c.health_line)
		container_probe_health(&w->ctr, &c, &line, &e);
	signals_unshield();
	rc = wait_timeout_error(w, "the k3s API (kubectl get --raw /readyz)", line ? line : c.health_line, err);
	container_free(&c);
	os_error_clear(&e);
	return rc;
}

/* Ready when k3s says so in its log (it logs the line once its own poll
 * of /readyz said ok: pkg/daemons/control/server.go,
 * waitForAPIServerInBackground), or when a tick's /readyz does; a stream
 * that ended by itself may mean a container that stopped. */
static int follow_until_ready(struct wait_ctx *w, const char *since, os_error *err)
{
	int said = follow_api_log(w, since, err);
	struct deadline whole = deadline_capped(&w->by, 0);   /* follow_api_log's */

	if (said < 0 && deadline_cut(&whole, err))
		return api_timeout(w, err);
	return said;
}

int wait_k3s_api(struct wait_ctx *w, os_error *err)
{
	struct backoff b = { 0 };
	int followed = 0, ready = 0;

	log_step("waiting for the k3s API");
	/* A container just created has no API yet, and all its log is this
	 * run's: follow the log at once. */
	if (w->fresh) {
		followed = 1;
		if ((ready = follow_until_ready(w, NULL, err)) < 0)
			return -1;
	}
	while (ready <= 0) {
		struct gw_container c;
		int alive = wait_check_alive(w, &c, err);

		if (alive == 0 && !w->started_at && c.started_at)
			w->started_at = xstrdup(c.started_at);
		container_free(&c);
		if (alive < 0)
			return wait_cut(w, err) ? api_timeout(w, err) : -1;
		if ((ready = kube_readyz(&w->ctr, deadline_call_ms(&w->by), err)) < 0 && !wait_cut(w, err))
			return -1;
		if (ready > 0)
			break;
		if (!followed++) {   /* the log says when; polling is the fallback */
			if ((ready = follow_until_ready(w, w->started_at, err)) < 0)
				return -1;
		} else if (!backoff_wait(&b, w->by.at_ms)) {
			return api_timeout(w, err);
		}
	}
	phases_mark(w->phases, PHASE_API);
	log_step_done(1);
	return 0;
}

int wait_pending_restart(const struct wait_ctx *w, os_error *err)
{
	struct backoff b = { 0 };

	for (;;) {
		struct gw_container c;
		int pending;

		if (container_inspect(&w->ctr, &c, err) < 0)
			return -1;
		/* Docker counts a restart when it decides on it (moby
		 * daemon/monitor.go: RestartCount++, then SetRestarting), so the
		 * count the waits began with already holds this one. */
		pending = c.exists && c.restarting && c.restart_count == w->restarts;
		container_free(&c);
		if (!pending)
			return 0;   /* it runs; anything else is wait_check_alive's to report */
		if (!backoff_wait(&b, w->by.at_ms))
			return wait_timeout_error(w, "the container's restart (Docker's restart policy)", NULL, err);
	}
}

int wait_running(const struct wait_ctx *w, os_error *err)
{
	struct gw_container c;
	int rc = wait_check_alive(w, &c, err);

	container_free(&c);
	return rc;
}

int wait_kubeconfig_written(const struct wait_ctx *w, os_error *err)
{
	const char *test[] = { "exec", w->ctr.name, "test", "-s", K3S_KUBECONFIG_PATH, NULL };
	struct backoff b = { 0 };

	log_step("waiting for the container to run");
	for (;;) {
		struct run_result res = { 0 };
		int rc;

		if (wait_running(w, err) < 0)
			return -1;
		rc = docker_run(w->ctr.on, test, NULL, 0, deadline_call_ms(&w->by), &res, err);
		int written = rc == 0 && res.status == 0;
		run_result_free(&res);
		if (rc < 0 && !wait_cut(w, err))
			return -1;
		if (written)
			break;
		if (!backoff_wait(&b, w->by.at_ms))
			return wait_timeout_error(w, "the kubeconfig (" K3S_KUBECONFIG_PATH ")", NULL, err);
	}
	log_step_done(1);
	return 0;
}

/* Delete the HelmCharts of BY[0..N-1] in one kubectl; each that kubectl
 * says it deleted sets its bit in *DELETED, even when it then failed on
 * another (a try again finds that one gone, --ignore-not-found). */
static int delete_charts(const struct wait_ctx *w, const struct gpu_allocator *const *by, int n, unsigned *deleted,
			 os_error *err)
{
	struct strv del = { 0 };
	struct run_result res = { 0 };
	int rc;

	/* With its HelmChartConfig (--gpu-sharing's), which would come back
	 * with the chart on this volume otherwise: kubectl deletes each name
	 * of each type. */
	strv_pushv(&del, (const char *const[]){ "delete", "helmchart,helmchartconfig", NULL });
	for (int i = 0; i < n; i++)
		strv_push(&del, by[i]->helmchart);
	strv_pushv(&del, (const char *const[]){ "--namespace", "kube-system", "--ignore-not-found", NULL });
	rc = kube_exec_k3s_type(&w->ctr, "HelmChart", strv_argv(&del), NULL, &w->by, &res, err);
	for (int i = 0; rc == 0 && res.out && i < n; i++) {
		/* kubectl: helmchart.helm.cattle.io "NAME" deleted */
		cleanup_free char *said = xasprintf("helmchart.helm.cattle.io \"%s\" deleted", by[i]->helmchart);
		if (strstr(res.out, said))
			*deleted |= 1u << i;
	}
	if (rc == 0 && res.status != 0) {
		struct strv names = { 0 };
		cleanup_free char *said = NULL;

		for (int i = 0; i < n; i++)
			strv_push(&names, by[i]->helmchart);
		said = strv_join(&names, " ");
		strv_free(&names);
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "kubectl delete helmchart %s failed", said);
	}
	run_result_free(&res);
	strv_free(&del);
	return rc;
}

int wait_container_news(const struct wait_ctx *w, os_error *err)
{
	struct gw_container c;
	os_error e = { 0 };
	int alive = wait_check_alive(w, &c, &e);

	container_free(&c);
	if (alive == 0 || wait_cut(w, &e)) {
		os_error_clear(&e);
		return 0;
	}
	os_error_clear(err);
	*err = e;
	return 1;
}

int wait_retry_api(const struct wait_ctx *w, struct backoff *b, os_error *err)
{
	cleanup_free char *last = NULL;

	if (err->code != OS_EXIT_FAILURE && err->code != OS_EXIT_TIMEOUT)
		return 0;
	last = xstrdup(err->msg ? err->msg : "?");
	if (!deadline_cut(&w->by, err)) {
		/* A container that stopped or restarted is the news, not its API. */
		if (wait_container_news(w, err))
			return 0;
		if (backoff_wait(b, w->by.at_ms)) {
			log_verbose("will retry: %s", last);
			os_error_clear(err);
			return 1;
		}
	}
	os_error_clear(err);
	wait_timeout_error(w, "the k3s API to answer", last, err);
	return 0;
}

int wait_gpu_release_removed(const struct wait_ctx *w, const struct gpu_allocator *const *by, int n, os_error *err)
{
	struct backoff b = { 0 };
	unsigned deleted = 0;
	int gone = 0;

	/* kube_exec_k3s_type's timeouts already say what ran out; its other
	 * failures may be an API that comes back. */
	while (delete_charts(w, by, n, &deleted, err) < 0)
		if (err->code == OS_EXIT_TIMEOUT || !wait_retry_api(w, &b, err))
			return -1;
	if (!deleted)
		return 0;   /* there was none: the usual case */
	log_step("removing what an earlier GPU run installed on the volume");
	while (!gone) {
		cJSON *list = NULL;

		if (kube_get(&w->ctr, "daemonsets", NULL, NULL, 1, deadline_call_ms(&w->by), &list, err) < 0) {
			if (wait_retry_api(w, &b, err))
				continue;
			return -1;
		}
		gone = 1;
		for (int i = 0; i < n; i++)
			if ((deleted & (1u << i)) && gpu_allocator_daemonset(by[i], list))
				gone = 0;
		cJSON_Delete(list);
		if (!gone && !backoff_wait(&b, w->by.at_ms))
			return wait_timeout_error(w, "the release of an earlier GPU run to be uninstalled", NULL, err);
	}
	log_step_done(1);
	return 0;
}

