/* gateway/gpu/gpus.c - GPU selections (see gateway/gpu/gpus.h). */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/gpu/gpu_errors.h"
#include "gateway/gpu/gpus.h"

#define GPUS_FORMS "give all, a count such as 2, or GPU indices or UUIDs such as 0,2, device=1 or GPU-3f2a…"

static int all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* GPU-… or MIG-…: the prefix, then hex digits and dashes (nvidia-smi -L). */
static int is_uuid(const char *s)
{
	if (strncmp(s, "GPU-", 4) != 0 && strncmp(s, "MIG-", 4) != 0)
		return 0;
	s += 4;
	return *s && strspn(s, "0123456789abcdefABCDEF-") == strlen(s);
}

static int bad(const char *text, const char *why, os_error *err)
{
	cleanup_free char *shown = printable(text, 64);

	return os_error_set(err, OS_EXIT_USAGE, "invalid --gpus '%s': %s; " GPUS_FORMS, shown, why);
}

static int parse_list(const char *text, struct gpus *g, os_error *err)
{
	cleanup_free char *copy = xstrdup(text);
	char *save = NULL;

	if (text[0] == ',' || text[strlen(text) - 1] == ',' || strstr(text, ",,"))
		return bad(text, "an empty item", err);
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (!all_digits(item) && !is_uuid(item))
			return bad(text, "each item must be a GPU index or a UUID", err);
		if (all_digits(item) && (strlen(item) > 4 || atoi(item) >= GPUS_MAX))
			return bad(text, "no host has a GPU of that index", err);
		if (strv_has(&g->ids, item))
			return bad(text, "a GPU named twice", err);
		strv_push(&g->ids, item);
	}
	g->kind = GPUS_DEVICES;
	return 0;
}

int gpus_parse(const char *text, struct gpus *g, os_error *err)
{
	cleanup_free char *unquoted = NULL;
	size_t n = strlen(text);

	memset(g, 0, sizeof(*g));
	/* '"device=0,2"': the quotes Docker's CSV needs around a field with
	 * commas, as its documentation writes --gpus. */
	if (n >= 2 && text[0] == '"' && text[n - 1] == '"')
		text = unquoted = xstrndup(text + 1, n - 2);
	if (!*text)
		return bad(text, "empty", err);
	if (strcmp(text, "all") == 0) {
		g->kind = GPUS_ALL;
		return 0;
	}
	/* One number alone is a count, as Docker reads --gpus 2. */
	if (all_digits(text)) {
		if (strlen(text) > 4 || atoi(text) < 1 || atoi(text) > GPUS_MAX)
			return bad(text, "a count from 1 (to start without GPUs, leave --gpus out)", err);
		g->kind = GPUS_COUNT;
		g->count = atoi(text);
		return 0;
	}
	/* Docker's own form for devices, which also names one index alone. */
	if (strncmp(text, "device=", 7) == 0 && text[7])
		text += 7;
	if (parse_list(text, g, err) < 0) {
		gpus_free(g);
		return -1;
	}
	return 0;
}

void gpus_free(struct gpus *g)
{
	strv_free(&g->ids);
	memset(g, 0, sizeof(*g));
}

void gpus_copy(struct gpus *to, const struct gpus *from)
{
	*to = (struct gpus){ .kind = from->kind, .count = from->count };
	for (size_t i = 0; i < from->ids.n; i++)
		strv_push(&to->ids, from->ids.v[i]);
}

char *gpus_string(const struct gpus *g)
{
	cleanup_free char *ids = NULL;

	switch (g->kind) {
	case GPUS_COUNT: return xasprintf("%d", g->count);
	/* One index alone would read as a count. */
	case GPUS_DEVICES:
		ids = strv_join(&g->ids, ",");
		return g->ids.n == 1 && all_digits(ids) ? xasprintf("device=%s", ids) : xstrdup(ids);
	default: return xstrdup("all");
	}
}

cJSON *gpus_json(const struct gpus *g)
{
	cJSON *o = cJSON_CreateObject();

	if (g->kind == GPUS_COUNT)
		cJSON_AddNumberToObject(o, "count", g->count);
	else if (g->kind == GPUS_DEVICES)
		cJSON_AddItemToObject(o, "devices", cJSON_CreateStringArray((const char *const *)g->ids.v, (int)g->ids.n));
	else
		cJSON_AddTrueToObject(o, "all");
	return o;
}

char *gpus_words(const struct gpus *g)
{
	cleanup_free char *ids = g->kind == GPUS_DEVICES ? strv_join(&g->ids, ",") : NULL;

	if (g->kind == GPUS_COUNT)
		return xasprintf("%d GPU%s (the first)", g->count, g->count == 1 ? "" : "s");
	if (g->kind == GPUS_DEVICES)
		return xasprintf("GPU%s %s", g->ids.n == 1 ? "" : "s", ids);
	return xstrdup("all GPUs");
}

char *gpus_docker_request(const struct gpus *g)
{
	cleanup_free char *ids = g->kind == GPUS_DEVICES ? strv_join(&g->ids, ",") : NULL;

	/* Docker's CSV: a field holding commas is quoted. */
	if (g->kind == GPUS_DEVICES)
		return xasprintf("driver=nvidia,\"device=%s\",\"capabilities=utility,compute\"", ids);
	if (g->kind == GPUS_COUNT)
		return xasprintf("driver=nvidia,count=%d,\"capabilities=utility,compute\"", g->count);
	return xstrdup("driver=nvidia,count=all,\"capabilities=utility,compute\"");
}

int gpus_equal(const struct gpus *a, const struct gpus *b)
{
	if (a->kind != b->kind || (a->kind == GPUS_COUNT && a->count != b->count))
		return 0;
	if (a->kind != GPUS_DEVICES)
		return 1;
	if (a->ids.n != b->ids.n)
		return 0;
	for (size_t i = 0; i < a->ids.n; i++)
		if (strcmp(a->ids.v[i], b->ids.v[i]) != 0)
			return 0;
	return 1;
}

int gpus_of_container(const struct gw_container *c, struct gpus *out, os_error *err)
{
	cleanup_free char *text = NULL;
	int labelled = c->gpu_cdi && c->gpus_label && *c->gpus_label;
	os_error e = { 0 };

	if (labelled)
		text = xstrdup(c->gpus_label);
	else if (c->gpu_devices && *c->gpu_devices)
		text = xasprintf("device=%s", c->gpu_devices);
	else
		text = c->gpu_count < 0 ? xstrdup("all") : xasprintf("%lld", c->gpu_count);
	if (gpus_parse(text, out, &e) == 0)
		return 0;
	os_error_set(err, OS_EXIT_FAILURE, "the container's GPU selection (%s) does not read: %s",
		     labelled ? "its label " LABEL_GPUS ", edited?" : "its DeviceRequest", e.msg);
	os_error_clear(&e);
	return -1;
}

/* "  MIG 1g.10gb     Device  0: (UUID: MIG-…)": the MIG device of the GPU before. */
static void parse_mig(char *line, struct host_gpus *h)
{
	char *u = strstr(line, "(UUID: "), *profile = line + strspn(line, " ") + 4, *close;

	if (h->n == 0 || !u || !(close = strchr(u, ')')))
		return;
	*close = '\0';
	profile[strcspn(profile, " ")] = '\0';
	strv_push(&h->v[h->n - 1].migs, u + strlen("(UUID: "));
	strv_push(&h->v[h->n - 1].profiles, profile);
}

/* "GPU-…, Enabled, 9.0": the query's facts of that GPU. */
static void parse_query(char *line, struct host_gpus *h)
{
	char *save = NULL, *uuid = strtok_r(line, ", ", &save), *mode = strtok_r(NULL, ", ", &save),
	     *cc = strtok_r(NULL, ", ", &save);

	for (int i = 0; uuid && i < h->n; i++) {
		if (strcmp(h->v[i].uuid, uuid) != 0)
			continue;
		h->v[i].mig_enabled = mode && strcmp(mode, "Enabled") == 0;
		if (cc && isdigit((unsigned char)cc[0]) && cc[1] == '.' && isdigit((unsigned char)cc[2]))
			h->v[i].compute_cap = (cc[0] - '0') * 10 + (cc[2] - '0');
	}
}

void host_gpus_parse(const char *text, struct host_gpus *h)
{
	cleanup_free char *copy = xstrdup(text);
	char *save = NULL;
	enum { LIST, QUERY, ENV } part = LIST;

	memset(h, 0, sizeof(*h));
	gpu_driver_parse(text, &h->driver);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *u = strstr(line, " (UUID: "), *close;

		if (strncmp(line, GPU_DRIVER_MARK, strlen(GPU_DRIVER_MARK)) == 0)
			break;   /* the driver's part is the last */
		if (strcmp(line, GPUS_QUERY_MARK) == 0 || strcmp(line, GPUS_ENV_MARK) == 0) {
			part = strcmp(line, GPUS_QUERY_MARK) == 0 ? QUERY : ENV;
			continue;
		}
		if (strncmp(line, GPUS_VERSION_MARK " ", strlen(GPUS_VERSION_MARK) + 1) == 0) {
			free(h->driver_version);
			h->driver_version = gpu_driver_module_version(line + strlen(GPUS_VERSION_MARK) + 1);
			continue;
		}
		if (strcmp(line, GPUS_DXG_MARK) == 0) {
			h->dxg = 1;
			continue;
		}
		if (part == QUERY) {
			parse_query(line, h);
			continue;
		}
		if (part == ENV) {
			h->injected = strcmp(line, "void") == 0 ? GPUS_INJECTED_CDI : GPUS_INJECTED_HOOK;
			continue;
		}

		if (strncmp(line + strspn(line, " "), "MIG ", 4) == 0 && line[0] == ' ') {
			parse_mig(line, h);
			continue;
		}
		if (strncmp(line, "GPU ", 4) != 0 || !colon || !u || u < colon || !(close = strchr(u, ')')))
			continue;
		*u = *close = '\0';
		h->v = xrealloc(h->v, (size_t)(h->n + 1) * sizeof(*h->v));
		memset(&h->v[h->n], 0, sizeof(*h->v));
		h->v[h->n].uuid = xstrdup(u + strlen(" (UUID: "));
		h->v[h->n].name = xstrdup(colon + strspn(colon + 1, " ") + 1);
		h->n++;
	}
}

void host_gpus_free(struct host_gpus *h)
{
	for (int i = 0; i < h->n; i++) {
		free(h->v[i].uuid);
		free(h->v[i].name);
		strv_free(&h->v[i].migs);
		strv_free(&h->v[i].profiles);
	}
	free(h->v);
	gpu_driver_free(&h->driver);
	free(h->driver_version);
	memset(h, 0, sizeof(*h));
}

int gpus_plugin_devices(const struct host_gpus *h, enum mig_strategy strategy)
{
	int whole = 0, migs = 0;

	if (h->dxg)
		return h->n ? 1 : 0;   /* WSL2: one device, "all" (internal/rm/wsl_devices.go) */
	if (strategy == MIG_NONE)
		return h->n;
	/* A GPU with MIG enabled is no whole GPU to the other strategies, not
	 * even without MIG devices: mixed skips it (internal/rm/device_map.go). */
	for (int i = 0; i < h->n; i++) {
		whole += h->v[i].migs.n == 0 && !h->v[i].mig_enabled;
		migs += (int)h->v[i].migs.n;
	}
	if (strategy == MIG_SINGLE && whole == 0)
		return migs;
	if (strategy == MIG_MIXED)
		return whole;
	return h->n;
}

/* ": 0 GPU-… (NAME), 1 …": what the host has, for a message. */
static char *host_list(const struct host_gpus *h)
{
	char *out = xstrdup(h->n ? ":" : "");

	for (int i = 0; i < h->n; i++) {
		char *next = xasprintf("%s%s %d %s (%s)", out, i ? "," : "", i, h->v[i].uuid, h->v[i].name);
		free(out);
		out = next;
	}
	return out;
}

/* The refusal of a selection the host lacks WHAT of: it names the N GPUs
 * the host has, then HAS (how they are known). */
static int lacks(const struct gpus *g, int n, const char *has, const char *what, os_error *err)
{
	cleanup_free char *sel = gpus_string(g);

	return os_error_set(err, OS_EXIT_FAILURE, "--gpus %s: %s; the Docker host has %d GPU%s%s", sel, what, n,
			    n == 1 ? "" : "s", has);
}

int gpus_check_lacks(const struct gpus *g, int n, const struct strv *known, const char *has, os_error *err)
{
	if (n >= 0 && g->kind == GPUS_COUNT && g->count > n)
		return lacks(g, n, has, "more GPUs than the host has", err);
	for (size_t k = 0; g->kind == GPUS_DEVICES && k < g->ids.n; k++) {
		const char *id = g->ids.v[k];

		if (all_digits(id) ? n >= 0 && atoi(id) >= n : known->n > 0 && !strv_has(known, id)) {
			cleanup_free char *what = xasprintf("the host has no GPU %s", id);
			return lacks(g, n, has, what, err);
		}
	}
	return 0;
}

/* Does ID, an index or a UUID, name GPU I of H or one of its MIG devices? */
static int names_gpu(const struct host_gpus *h, int i, const char *id)
{
	return all_digits(id) ? atoi(id) == i : strcmp(id, h->v[i].uuid) == 0 || strv_has(&h->v[i].migs, id);
}

int gpus_resolve(const struct gpus *g, const struct host_gpus *h, struct strv *uuids, os_error *err)
{
	int n = g->kind == GPUS_COUNT ? g->count : g->kind == GPUS_ALL ? h->n : 0, rc;
	struct strv known = { 0 };
	cleanup_free char *has = host_list(h);

	if (h->n == 0)
		return lacks(g, h->n, has, "no GPU to give", err);
	for (int i = 0; i < h->n; i++) {
		strv_push(&known, h->v[i].uuid);
		for (size_t m = 0; m < h->v[i].migs.n; m++)
			strv_push(&known, h->v[i].migs.v[m]);
	}
	rc = gpus_check_lacks(g, h->n, &known, has, err);
	strv_free(&known);
	if (rc < 0)
		return -1;
	/* A count is the first N, as Docker's nvidia driver hands them out. */
	for (int i = 0; i < n; i++)
		strv_push(uuids, h->v[i].uuid);
	for (size_t k = 0; g->kind == GPUS_DEVICES && k < g->ids.n; k++) {
		int i = 0;

		while (i < h->n && !names_gpu(h, i, g->ids.v[k]))
			i++;
		/* Two MIG devices of one GPU, or its index and UUID, mean it once. */
		if (i < h->n && !strv_has(uuids, h->v[i].uuid))
			strv_push(uuids, h->v[i].uuid);
	}
	return 0;
}

/* nvidia-smi's answer when the driver runs but sees no GPU (exit 6). */
static int no_devices(const struct run_result *res)
{
	return res->status == 6 && (strstr(res->out, "No devices were found") || strstr(res->err, "No devices were found"));
}

struct run_child *container_gpus_start(const struct docker_ctr *ctr, int timeout_ms, os_error *err)
{
	const char *args[] = { "exec", ctr->name, "sh", "-c", GPUS_LOOK_SCRIPT, NULL };
	struct run_spec spec = { .timeout_ms = timeout_ms };

	return docker_start(ctr->on, args, &spec, err);
}

int container_gpus_finish(struct run_child *c, const char *ctr, struct host_gpus *h, os_error *err)
{
	struct run_result res = { 0 };
	int rc = docker_await(c, &res, err);

	memset(h, 0, sizeof(*h));
	if (rc == 0 && res.status != 0 && !no_devices(&res))
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "nvidia-smi -L in container %s failed", ctr);
	if (rc == 0)
		host_gpus_parse(res.out, h);
	run_result_free(&res);
	return rc;
}

int container_gpus(const struct docker_ctr *ctr, int timeout_ms, struct host_gpus *h, os_error *err)
{
	struct run_child *c = container_gpus_start(ctr, timeout_ms, err);

	if (!c) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	return container_gpus_finish(c, ctr->name, h, err);
}

struct run_child *host_gpus_probe_start(const struct docker_target *on, const char *image, int cdi, int timeout_ms,
					os_error *err)
{
	const char *args[] = { "run", "--rm", "--network=none",
			       cdi ? "--device=" CDI_GPU_PREFIX "all" : "--gpus=driver=nvidia,count=all,capabilities=utility",
			       "--entrypoint=sh", "--label=org.openshell.managed-by=openshell-gpu-probe",
			       image, "-c", GPUS_LOOK_SCRIPT, NULL };
	struct run_spec spec = { .timeout_ms = timeout_ms };

	return docker_start(on, args, &spec, err);
}

int host_gpus_probe_finish(struct run_child *c, const struct docker_target *on, const char *image, struct host_gpus *h,
			   os_error *err)
{
	struct run_result res = { 0 };
	int rc = docker_await(c, &res, err);

	memset(h, 0, sizeof(*h));
	if (rc == 0 && res.status != 0 && no_devices(&res)) {
		res.status = 0;   /* a host with no GPU: an empty list */
	} else if (rc == 0 && res.status != 0 && gpu_errors_explain(res.err, 0, err)) {
		rc = -1;
		os_error_set_detail(err, res.err);
	} else if (rc == 0 && res.status != 0 && strstr(res.err, "could not select device driver")) {
		rc = gpu_errors_no_toolkit(on, image, err);
		os_error_set_detail(err, res.err);
	} else if (rc == 0 && res.status != 0) {
		/* Where the container ran (docker's own failures are 125 to 127),
		 * nvidia-smi says why on its standard output; a warning of the
		 * docker CLI's on its standard error would hide that. */
		struct run_result said = res;
		if ((res.status < 125 || !res.err[strspn(res.err, " \t\r\n")]) && res.out[strspn(res.out, " \t\r\n")])
			said.err = res.out;
		rc = run_failure(err, OS_EXIT_FAILURE, &said, "cannot list the Docker host's GPUs (nvidia-smi -L in a container of %s)",
				 image);
	}
	if (rc == 0)
		host_gpus_parse(res.out, h);
	run_result_free(&res);
	return rc;
}

int host_gpus_probe(const struct docker_target *on, const char *image, int cdi, int timeout_ms, struct host_gpus *h,
		    os_error *err)
{
	struct run_child *c = host_gpus_probe_start(on, image, cdi, timeout_ms, err);

	if (!c) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	return host_gpus_probe_finish(c, on, image, h, err);
}
