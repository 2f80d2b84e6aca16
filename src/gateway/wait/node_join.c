/* gateway/wait/node_join.c - the wait for an agent's node (see gateway/wait/node_join.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/allocation.h"
#include "gateway/wait/node_join.h"
#include "kube/objects.h"
#include "kube/watch.h"

/* A watch lasts at most this long, then starts again. */
#define JOIN_WATCH_MAX_MS 60000
#define JOIN_LOG_TAIL 20

struct join_state {
	struct node_join *j;
	struct kube_watch nodes;
	struct kube_watch slices;    /* under DRA */
	struct run_child *log;       /* docker logs --follow of the agent */
	char *cause;                 /* the agent's latest cause, and how often in a row */
	int said;
	char *fatal;                 /* a cause the agent ends on */
	char *last_said;             /* its latest warning or error, as it said it */
	int registered, ready;       /* as the watch last said */
	struct backoff b;
};

/* k3s logs with logrus: KEY="…" with Go's quoting, or KEY=word when the
 * value needs none; the value of field KEY, unquoted, or NULL. */
static char *log_field(const char *line, const char *key)
{
	size_t n = strlen(key);
	const char *p;
	char *out, *o;

	for (p = line; (p = strstr(p, key)); p += n)
		if ((p == line || p[-1] == ' ') && p[n] == '=')
			break;
	if (!p)
		return NULL;
	p += n + 1;
	if (*p != '"')
		return xstrndup(p, strcspn(p, " "));
	o = out = xmalloc(strlen(p));
	for (p++; *p && *p != '"'; p++)
		*o++ = *p == '\\' && p[1] ? *++p : *p;
	*o = '\0';
	return out;
}

/* remotedialer's dial of the server's advertised address, which the agent
 * retries every second while its kubelet waits (k3s pkg/agent/tunnel). */
static char *tunnel_cause(const char *line, const char *gateway)
{
	cleanup_free char *url = log_field(line, "url");
	cleanup_free char *why = log_field(line, "error");
	const char *addr = url && strncmp(url, "wss://", 6) == 0 ? url + 6 : url;
	size_t n = addr ? strcspn(addr, "/") : 0;

	return xasprintf("its agent cannot open its tunnel to %.*s, the address the server advertises to its agents: %s; "
			 "start the gateway with --advertise-address set to an address that host reaches "
			 "('openshell gateway start --name %s --recreate --advertise-address ADDR')",
			 (int)n, addr ? addr : "?", why ? why : "?", gateway);
}

char *node_join_said(const char *line)
{
	char *msg, *why, *out;

	if (!strstr(line, "level=warning") && !strstr(line, "level=error") && !strstr(line, "level=fatal"))
		return NULL;
	if (!(msg = log_field(line, "msg")))
		return NULL;
	if (!(why = log_field(line, "error")))
		return msg;
	out = xasprintf("%s: %s", msg, why);
	free(msg);
	free(why);
	return out;
}

char *node_join_cause(const char *line, const char *server, const char *gateway)
{
	cleanup_free char *msg = log_field(line, "msg");
	const char *rest;

	if (!msg)
		return NULL;
	/* pkg/agent/config: the server's CA, fetched and checked against the
	 * token's hash, then the node's configuration with the token. */
	if (strstr(msg, "Failed to validate connection to cluster at ") == msg) {
		rest = strstr(msg, ": ");
		return xasprintf("its agent cannot reach or trust the server at %s: %s", server,
				 rest ? rest + 2 : msg);
	}
	if (strstr(msg, "Waiting to retrieve agent configuration") && strstr(msg, "401 Unauthorized"))
		return xasprintf("the server at %s refuses the node's token (401 Unauthorized): is it the gateway's?",
				 server);
	if (strcmp(msg, "Remotedialer proxy error; reconnecting...") == 0)
		return tunnel_cause(line, gateway);
	if (strstr(line, "level=fatal"))
		return xasprintf("its agent stopped: %s", msg);
	return NULL;
}

static int log_line(void *ctx, const char *line)
{
	struct join_state *s = ctx;
	char *cause = node_join_cause(line, s->j->server, s->j->gateway);
	char *said = node_join_said(line);

	if (said) {
		free(s->last_said);
		s->last_said = said;
	}

	/* Joined and tunnelled: earlier causes are past. */
	if (strstr(line, "Remotedialer connected to proxy") || strstr(line, "Running kubelet")) {
		free(s->cause);
		free(s->last_said);
		s->cause = s->last_said = NULL;
		s->said = 0;
	}
	if (!cause)
		return 0;
	if (strstr(line, "level=fatal")) {
		free(s->fatal);
		s->fatal = cause;
		return RUN_WAKE;
	}
	s->said = s->cause && strcmp(s->cause, cause) == 0 ? s->said + 1 : 1;
	free(s->cause);
	s->cause = cause;
	return s->said >= NODE_JOIN_PATIENCE ? RUN_WAKE : 0;
}

/* The log is followed until the deadline; a watch (of the nodes, or the
 * slices) lasts JOIN_WATCH_MAX_MS at most, then starts again. */
static struct deadline log_by(const struct node_join *j)
{
	return deadline_capped(&j->by, 0);
}

static struct deadline watch_by(const struct node_join *j)
{
	return deadline_capped(&j->by, JOIN_WATCH_MAX_MS);
}

static int follow_log(struct join_state *s, os_error *err)
{
	const char *args[] = { "logs", "--follow", "--tail", "0", s->j->agent.name, NULL };
	struct deadline by = log_by(s->j);
	struct run_spec spec = { .timeout_ms = deadline_call_ms(&by), .merge_stderr = 1,
				 .on_line = log_line, .discard_lines = 1, .ctx = s };

	return (s->log = docker_start(s->j->agent.on, args, &spec, err)) ? 0 : -1;
}

static int start_watch(struct join_state *s, struct kube_watch *w, os_error *err)
{
	struct deadline by = watch_by(s->j);

	return kube_watch_start(w, s->j->server_ctr, deadline_call_ms(&by), err);
}

/* The node's GPUs: its allocatable nvidia.com/gpu, or under DRA those its
 * slices publish, but the last run's (-1: none). */
static long long node_gpus(struct join_state *s, const cJSON *node)
{
	if (!s->j->dra)
		return node ? kube_nodes_allocatable_gpus(node) : -1;
	return dra_node_gpus(s->slices.list, s->j->node, s->j->since);
}

/* What the watch says of the node: 1 once it is Ready with its GPUs. */
static int node_ready(struct join_state *s)
{
	const cJSON *node = kube_find(s->nodes.list, "Node", s->j->node);
	const cJSON *c = kube_node_ready_condition(s->nodes.list, s->j->node);
	const char *ready = kube_node_ready(s->nodes.list, s->j->node);

	s->registered = node != NULL;
	/* The kubelet posts Ready with its own clock, the one the agent's
	 * start was stamped by. */
	s->ready = ready && strcmp(ready, "Ready") == 0 &&
		   !kube_status_predates(json_str(c, "lastHeartbeatTime"), s->j->since);
	s->j->gpus = node_gpus(s, node);
	if (!s->ready)
		return 0;
	return !s->j->gpu || (s->j->want_gpus > 0 ? s->j->gpus == s->j->want_gpus : s->j->gpus > 0);
}

/* The agent's last lines, for a failure's detail. */
static char *agent_tail(const struct node_join *j)
{
	cleanup_free char *n = xasprintf("%d", JOIN_LOG_TAIL);
	const char *args[] = { "logs", "--tail", n, j->agent.name, NULL };
	struct run_spec spec = { .timeout_ms = docker_call_timeout_ms(), .merge_stderr = 1 };
	struct run_result res = { 0 };
	os_error e = { 0 };
	char *text = NULL;
	struct run_child *c = docker_start(j->agent.on, args, &spec, &e);

	if (c && docker_await(c, &res, &e) == 0)
		text = xstrdup(res.out);
	os_error_clear(&e);
	run_result_free(&res);
	return text;
}

static int fail(struct join_state *s, int code, const char *why, os_error *err)
{
	cleanup_free char *tail = agent_tail(s->j);

	os_error_set(err, code, "node '%s' on %s did not join: %s", s->j->node, s->j->host, why);
	if (tail)
		os_error_set_detail(err, tail);
	return -1;
}

static int timed_out(struct join_state *s, os_error *err)
{
	cleanup_free char *dur = clock_format_ms(s->j->timeout_ms);
	cleanup_free char *said = s->last_said ? xasprintf("; its agent said last: %s", s->last_said) : xstrdup("");
	cleanup_free char *why = s->cause ? xasprintf("%s (still so after %s)", s->cause, dur)
			       : !s->registered ? xasprintf("it did not register with the server within %s%s", dur, said)
			       : !s->ready ? xasprintf("it registered but was not Ready within %s%s", dur, said)
			       : s->j->dra ? xasprintf("it is Ready but its ResourceSlices publish %lld GPUs of this run, not the %lld of its GPUs the driver publishes, within %s",
						       s->j->gpus < 0 ? 0 : s->j->gpus, s->j->want_gpus, dur)
					   : xasprintf("it is Ready but advertised %lld nvidia.com/gpu, not %s, within %s",
						       s->j->gpus < 0 ? 0 : s->j->gpus,
						       s->j->want_gpus > 0 ? "all it was given" : "any", dur);

	return fail(s, OS_EXIT_TIMEOUT, why, err);
}

/* A stream ended: the log (the agent stopped) or a watch, the nodes' (1)
 * or the slices' (2): again. */
static int stream_ended(struct join_state *s, int which, os_error *err)
{
	struct run_result res = { 0 };
	struct deadline log = log_by(s->j), watch = watch_by(s->j);
	struct kube_watch *w = which == 1 ? &s->nodes : &s->slices;

	if (which == 0) {
		/* The follow has the join's deadline: ended by it, the agent
		 * still runs, and the answer is the timeout's. */
		int cut = docker_await(s->log, &res, err) < 0 && deadline_cut(&log, err);

		s->log = NULL;
		run_result_free(&res);
		os_error_clear(err);
		if (cut || deadline_passed(&s->j->by))
			return timed_out(s, err);
		return fail(s, OS_EXIT_FAILURE, s->fatal ? s->fatal : "its agent's container stopped", err);
	}
	if (kube_watch_end(w, err) < 0) {
		if (deadline_cut(&watch, err))
			return -1;
		log_verbose("will watch again: %s", err->msg);
		os_error_clear(err);
		if (!backoff_wait(&s->b, s->j->by.at_ms))
			return 0;
	}
	return start_watch(s, w, err);
}

static int serve(struct join_state *s, os_error *err)
{
	for (;;) {
		struct run_child *kids[] = { s->log, s->nodes.c, s->slices.c };
		int i;

		if (node_ready(s))
			return 0;
		if (s->fatal || (s->cause && s->said >= NODE_JOIN_PATIENCE))
			return fail(s, OS_EXIT_FAILURE, s->fatal ? s->fatal : s->cause, err);
		if (deadline_passed(&s->j->by))
			return timed_out(s, err);
		i = run_wait_until(kids, 3, s->j->by.at_ms);
		if (i >= 0 && run_ended(kids[i]) && stream_ended(s, i, err) < 0)
			return -1;
		if (i == -1)   /* the log always runs until it ends the wait: a bug */
			return os_error_set(err, OS_EXIT_FAILURE, "the node's wait has nothing left to wait on");
	}
}

/* Under DRA, how many GPUs to wait for: those of the agent's container
 * that the driver publishes (container_dra_gpus(): none is a failure). */
static int dra_want(struct node_join *j, os_error *err)
{
	cleanup_free char *what = xasprintf("node '%s'", j->node);
	struct strv uuids = { 0 };
	int rc = container_dra_gpus(&j->agent, what, deadline_call_ms(&j->by), &uuids, err);

	/* nvidia-smi's own failure: say whose host it was on. */
	if (rc < 0 && err->code != OS_EXIT_NOGPU)
		os_error_wrap(err, "cannot list the GPUs of %s's agent on %s", what, j->host);
	j->want_gpus = (long long)uuids.n;
	strv_free(&uuids);
	return rc;
}

int node_join_wait(struct node_join *j, os_error *err)
{
	struct join_state s = { .j = j, .nodes = { .resource = "nodes" },
				.slices = { .resource = "resourceslices.resource.k8s.io" } };
	struct deadline watch = watch_by(j);   /* a cut log is timed_out() already */
	int rc;

	j->gpus = -1;
	if (j->gpu && j->dra && dra_want(j, err) < 0)
		return -1;
	rc = follow_log(&s, err) < 0 || start_watch(&s, &s.nodes, err) < 0 ||
		     (j->gpu && j->dra && start_watch(&s, &s.slices, err) < 0)
		     ? -1
		     : serve(&s, err);
	if (rc < 0 && deadline_cut(&watch, err)) {
		os_error_clear(err);
		rc = timed_out(&s, err);
	}
	docker_stop(s.log);
	docker_stop(s.nodes.c);
	docker_stop(s.slices.c);
	docker_drop(&s.log);
	kube_watch_free(&s.nodes);
	kube_watch_free(&s.slices);
	free(s.cause);
	free(s.fatal);
	free(s.last_said);
	return rc;
}
