/* cmd/gateway_gpus.c - `openshell gateway gpus`: every GPU of a gateway, who
 * holds it, and how busy it is (gateway/state/gpu_view.h). */
#include "config.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/state/gpu_view.h"

/* --watch's period: each look is a docker exec per node and a kubectl. */
#define WATCH_PERIOD_MS 2000

enum { OPT_NAME = 256, OPT_JSON, OPT_WATCH };

static const struct cli_opt gpus_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "json", .key = OPT_JSON, .help = "print one JSON object on stdout" },
	{ .name = "watch", .key = OPT_WATCH, .help = "look again every 2 s, in place, until interrupted" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_gpus_spec = {
	.name = "gpus",
	.summary = "show every GPU of a gateway, who holds it, and how busy it is",
	.about = "One row per GPU device on every node of the gateway (a MIG device under\n"
		 "its GPU): its index and UUID, model, memory used and total, utilisation,\n"
		 "how it is shared (the device plugin's replicas, or under DRA the GpuConfig\n"
		 "of the claim that holds it), its health, and the containers that hold\n"
		 "it (namespace/pod/container), or free; below them the processes on the\n"
		 "GPUs, each with the container it runs in. Holders come from each node's\n"
		 "kubelet device checkpoint, use and processes from its nvidia-smi and\n"
		 "/proc; a node that does not answer gets one row, unknown, with the reason.\n",
	.opts = gpus_opts,
	.after = "Exit status 0 when the gateway runs (--watch: until interrupted); 1 when it\n"
		 "does not; 5 when it does not exist.\n",
	.run = run,
};

static char *share_words(const struct gpu_row *r)
{
	if (r->share == SHARE_MIG)
		return xstrdup(r->mig_index >= 0 ? "MIG" : "MIG GPU");
	if (r->share == SHARE_EXCLUSIVE)
		return xstrdup("exclusive");
	/* Under DRA a claim's GpuConfig shares it: no count of replicas. */
	if (r->replicas < 2)
		return xstrdup(r->share == SHARE_MPS ? "MPS" : "time-slicing");
	return xasprintf("%s %d", r->share == SHARE_MPS ? "MPS" : "time-slicing", r->replicas);
}

/* A holder's three keys, null where none is named. */
static cJSON *holder_json(const struct gpu_holder *holder)
{
	cJSON *h = cJSON_CreateObject();

	json_add_string_or_null(h, "namespace", holder->ns);
	json_add_string_or_null(h, "pod", holder->pod);
	json_add_string_or_null(h, "container", holder->container);
	return h;
}

static cJSON *row_json(const struct gpu_row *r)
{
	cJSON *o = cJSON_CreateObject(), *share, *holders;

	cJSON_AddStringToObject(o, "node", r->node);
	json_add_string_or_null(o, "docker_endpoint", r->host);
	json_add_count_or_null(o, "index", r->index);
	json_add_count_or_null(o, "mig_index", r->mig_index);
	json_add_string_or_null(o, "uuid", r->uuid);
	json_add_string_or_null(o, "model", r->model);
	json_add_count_or_null(o, "memory_used_mib", r->mem_used);
	json_add_count_or_null(o, "memory_total_mib", r->mem_total);
	json_add_count_or_null(o, "utilization_percent", r->util);
	if (r->uuid) {
		share = cJSON_AddObjectToObject(o, "sharing");
		cJSON_AddStringToObject(share, "mode", gpu_share_name(r->share));
		json_add_count_or_null(share, "replicas", r->replicas > 1 ? r->replicas : -1);
	} else {   /* a node that did not answer */
		cJSON_AddNullToObject(o, "sharing");
	}
	json_add_string_or_null(o, "health", r->health);
	json_add_string_or_null(o, "reason", r->why);
	holders = cJSON_AddArrayToObject(o, "holders");
	for (size_t i = 0; i < r->n_holders; i++)
		cJSON_AddItemToArray(holders, holder_json(&r->holders[i]));
	return o;
}

/* A process on a GPU, its pod's container split as a holder's. */
static cJSON *proc_json(const struct gpu_proc *p)
{
	cJSON *o = holder_json(&p->holder);

	cJSON_AddStringToObject(o, "node", p->node);
	json_add_count_or_null(o, "index", p->index);
	cJSON_AddStringToObject(o, "uuid", p->uuid);
	json_add_string_or_null(o, "pod_uid", p->pod_uid);
	json_add_count_or_null(o, "pid", p->pid);
	json_add_count_or_null(o, "memory_used_mib", p->mem_mib);
	return o;
}

static void print_json(const char *name, const struct gpu_view *v)
{
	cJSON *j = json_document(), *arr, *procs;

	cJSON_AddStringToObject(j, "gateway", name);
	cJSON_AddStringToObject(j, "assignment_source", "kubelet-device-checkpoint");
	json_add_string_or_null(j, "holders_error", v->holders_why);
	arr = cJSON_AddArrayToObject(j, "gpus");
	for (size_t i = 0; i < v->n; i++)
		cJSON_AddItemToArray(arr, row_json(&v->v[i]));
	procs = cJSON_AddArrayToObject(j, "processes");
	for (size_t i = 0; i < v->procs.n; i++)
		cJSON_AddItemToArray(procs, proc_json(&v->procs.v[i]));
	json_print_stdout(j);
}

static char *count_or_dash(long long n, const char *unit)
{
	return n >= 0 ? xasprintf("%lld%s", n, unit) : xstrdup("-");
}

#define ROW_FORMAT "%-20s %-5s %-41s %-22s %-17s %-5s %-15s %-9s %s\n"

/* NODE, or "NODE (HOST)" where nodes are on several hosts. */
static char *node_words(const struct gpu_row *r, int hosts)
{
	return hosts && r->host ? xasprintf("%s (%s)", r->node, r->host) : xstrdup(r->node);
}

/* The row's holders, comma-separated, or NULL for none (owned). */
static char *holders_text(const struct gpu_row *r)
{
	struct strv texts = { 0 };
	char *joined;

	if (!r->n_holders)
		return NULL;
	for (size_t i = 0; i < r->n_holders; i++) {
		char *t = gpu_holder_text(&r->holders[i]);
		strv_push(&texts, t);
		free(t);
	}
	joined = strv_join(&texts, ",");
	strv_free(&texts);
	return joined;
}

static void print_row(const struct gpu_row *r, int hosts, int holders_known)
{
	cleanup_free char *node = node_words(r, hosts);
	cleanup_free char *idx = r->index < 0 ? xstrdup("-")
				: r->mig_index >= 0 ? xasprintf("%d:%d", r->index, r->mig_index) : xasprintf("%d", r->index);
	cleanup_free char *used = count_or_dash(r->mem_used, "");
	cleanup_free char *mem = r->mem_total >= 0 ? xasprintf("%s/%lld MiB", used, r->mem_total) : xstrdup("-");
	cleanup_free char *util = count_or_dash(r->util, "%");
	cleanup_free char *share = r->uuid ? share_words(r) : xstrdup("-");
	cleanup_free char *pods = holders_text(r);
	int known = holders_known && !(r->health && strcmp(r->health, "unknown") == 0);

	printf(ROW_FORMAT, node, idx, r->uuid ? r->uuid : "-", r->model ? r->model : "-", mem, util, share,
	       r->health ? r->health : "-", pods ? pods : known ? "free" : "?");
}

#define PROC_FORMAT "%-20s %-5s %-10s %-10s %s\n"

/* The processes on the GPUs, as nvidia-smi's own table lists them, each
 * with its pod's container: "-" for a process of no pod's, "?" for one of
 * a pod that cannot be named (as the rows' holders). */
static void print_procs(const struct gpu_view *v)
{
	if (!v->procs.n)
		return;
	printf("\n" PROC_FORMAT, "NODE", "INDEX", "PID", "MEMORY", "POD");
	for (size_t i = 0; i < v->procs.n; i++) {
		const struct gpu_proc *p = &v->procs.v[i];
		cleanup_free char *idx = count_or_dash(p->index, "");
		cleanup_free char *pid = count_or_dash(p->pid, "");
		cleanup_free char *mem = count_or_dash(p->mem_mib, " MiB");

		cleanup_free char *who = p->holder.pod ? gpu_holder_text(&p->holder) : xstrdup(p->pod_uid ? "?" : "-");

		printf(PROC_FORMAT, p->node, idx, pid, mem, who);
	}
}

/* The rows and the processes, then why: each unknown or unhealthy row's
 * reason, once for a node when its rows share it. */
static void print_table(const struct gpu_view *v)
{
	struct strv said = { 0 };
	int hosts = v->nodes > 1;

	printf(ROW_FORMAT, "NODE", "INDEX", "UUID", "MODEL", "MEMORY", "UTIL", "SHARING", "HEALTH", "PODS");
	for (size_t i = 0; i < v->n; i++)
		print_row(&v->v[i], hosts, !v->holders_why);
	print_procs(v);
	for (size_t i = 0; i < v->n; i++) {
		const struct gpu_row *r = &v->v[i];
		int shared = 0;
		cleanup_free char *key = NULL;

		if (!r->why)
			continue;
		for (size_t k = 0; k < v->n; k++)
			shared += k != i && v->v[k].why && strcmp(v->v[k].node, r->node) == 0 && strcmp(v->v[k].why, r->why) == 0;
		key = xasprintf("%s\n%s", r->node, r->why);
		if (strv_has(&said, key))
			continue;
		strv_push(&said, key);
		if (shared || !r->uuid)
			printf("%s: %s\n", r->node, r->why);
		else
			printf("%s %s: %s\n", r->node, r->uuid, r->why);
	}
	if (v->holders_why)
		printf("holders unknown: %s\n", v->holders_why);
	strv_free(&said);
}

/* One look, printed; an interrupt while it ran prints nothing of it. */
static int look(const char *name, int json, os_error *err)
{
	struct gpu_view v;

	if (gateway_gpu_view(name, &v, err) < 0)
		return -1;
	if (signals_pending()) {
		gpu_view_free(&v);
		return os_error_set(err, 128 + signals_pending(), "interrupted while looking at gateway '%s''s GPUs",
				    name);
	}
	if (json)
		print_json(name, &v);
	else if (v.nodes == 0)
		printf("gateway '%s' has no GPUs (start it with --gpu)\n", name);
	else
		print_table(&v);
	gpu_view_free(&v);
	return 0;
}

/* Until interrupted, the way a watch ends (exit 0): the screen cleared
 * where it is a terminal, as `watch` does; a blank line between looks
 * elsewhere. */
static int watch(const char *name, int json, os_error *err)
{
	int tty = isatty(STDOUT_FILENO);

	for (;;) {
		struct pollfd p = { .fd = signals_wake_fd(), .events = POLLIN };

		if (tty)
			fputs("\033[H\033[2J", stdout);
		if (look(name, json, err) < 0) {
			if (!signals_pending())
				return -1;
			os_error_clear(err);
			return 0;
		}
		if (!tty)
			putchar('\n');
		fflush(stdout);
		if (poll(&p, p.fd >= 0 ? 1 : 0, WATCH_PERIOD_MS) != 0 || signals_pending())
			return 0;
	}
}

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_gpus_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	os_error err = { 0 };
	int c, json = 0, watching = 0, rc;

	while ((c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: name = optarg; break;
		case OPT_JSON: json = 1; break;
		case OPT_WATCH: watching = 1; break;
		}
	}
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway gpus", argc, argv)) >= 0)
		return rc;
	rc = (watching ? watch : look)(name, json, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	os_error_clear(&err);
	return rc;
}
