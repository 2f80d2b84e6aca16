/* docker/container.c - docker inspect of the gateway container, parsed. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/target.h"

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

/* A request asks for GPUs when it goes to the nvidia driver or names the
 * "gpu" capability (Docker's default for --gpus). */
static const cJSON *gpu_request(const cJSON *requests)
{
	const cJSON *req, *set, *cap;
	const char *driver;

	cJSON_ArrayForEach(req, requests) {
		driver = json_str(req, "Driver");
		if (driver && strcmp(driver, "nvidia") == 0)
			return req;
		cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(req, "Capabilities"))
			cJSON_ArrayForEach(cap, set)
				if (cJSON_IsString(cap) && strcmp(cap->valuestring, "gpu") == 0)
					return req;
	}
	return NULL;
}

/* The CDI names of NVIDIA GPUs the requests of driver "cdi" hold (the
 * docker CLI puts every --device of a CDI name into one), without the
 * kind: "all", "0", "GPU-…"; NULL when there are none (owned). */
static char *cdi_gpus(const cJSON *requests)
{
	const cJSON *req, *id;
	struct strv names = { 0 };
	char *out;

	cJSON_ArrayForEach(req, requests) {
		const char *driver = json_str(req, "Driver");
		if (!driver || strcmp(driver, "cdi") != 0)
			continue;
		cJSON_ArrayForEach(id, cJSON_GetObjectItemCaseSensitive(req, "DeviceIDs"))
			if (cJSON_IsString(id) && strncmp(id->valuestring, CDI_GPU_PREFIX, strlen(CDI_GPU_PREFIX)) == 0)
				strv_push(&names, id->valuestring + strlen(CDI_GPU_PREFIX));
	}
	out = names.n ? strv_join(&names, ",") : NULL;
	strv_free(&names);
	return out;
}

static void read_cdi_request(char *devices, struct gw_container *c)
{
	c->gpu_request = c->gpu_cdi = 1;
	c->gpu_driver = xstrdup("cdi");
	c->gpu_caps = xstrdup("");
	c->gpu_count = strcmp(devices, "all") == 0 ? -1 : 0;
	c->gpu_devices = c->gpu_count < 0 ? xstrdup("") : xstrdup(devices);
	c->gpu_request_desc = xasprintf("driver=cdi devices=nvidia.com/gpu=%s", devices);
	free(devices);
}

/* OPENSHELL_… in Config.Env: what the entrypoint was told (owned). */
/* The value of NAME in a list of "NAME=value" strings (an Env, or the
 * container's Args for a --flag=value), or NULL. */
static char *list_value(const cJSON *list, const char *name)
{
	const cJSON *e;
	size_t n = strlen(name);

	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e) && strncmp(e->valuestring, name, n) == 0 && e->valuestring[n] == '=')
			return xstrdup(e->valuestring + n + 1);
	return NULL;
}

/* Is COMPONENT one of LIST's, comma-separated, spaces around each
 * trimmed (as k3s trims them)? */
static int list_names(const char *list, const char *component)
{
	size_t n = strlen(component), len;

	for (const char *p = list; *p; p += len + (p[len] == ',')) {
		p += strspn(p, " ");
		len = strcspn(p, ",");
		if (len >= n && !strncmp(p, component, n) && n + strspn(p + n, " ") == len)
			return 1;
	}
	return 0;
}

/* Does k3s's --disable, in ARGS, name COMPONENT? urfave/cli takes the
 * flag as --disable=a,b or --disable a,b, once or more, with one dash or
 * two. */
static int args_disable(const cJSON *args, const char *component)
{
	const cJSON *e;
	int value_next = 0;

	cJSON_ArrayForEach(e, args) {
		const char *a = cJSON_IsString(e) ? e->valuestring : "";
		const char *flag = a[0] == '-' ? a + 1 + (a[1] == '-') : "";

		if (value_next && list_names(a, component))
			return 1;
		value_next = !strcmp(flag, "disable");
		if (!strncmp(flag, "disable=", 8) && list_names(flag + 8, component))
			return 1;
	}
	return 0;
}

static char *env_value(const cJSON *config, const char *name)
{
	return list_value(json_get(config, "Env", NULL), name);
}

/* Keep the request's facts, and say them as evidence:
 * "driver=nvidia count=all capabilities=…". */
static void read_request(const cJSON *req, struct gw_container *c)
{
	const char *driver = json_str(req, "Driver");
	cleanup_free char *count = NULL;

	c->gpu_driver = xstrdup(driver ? driver : "");
	c->gpu_caps = json_join_strings(cJSON_GetObjectItemCaseSensitive(req, "Capabilities"), ",");
	c->gpu_devices = json_join_strings(cJSON_GetObjectItemCaseSensitive(req, "DeviceIDs"), ",");
	if (json_int(cJSON_GetObjectItemCaseSensitive(req, "Count"), -1, 1 << 20, &c->gpu_count) < 0)
		c->gpu_count = 0;
	if (*c->gpu_devices)
		count = xasprintf("devices=%s", c->gpu_devices);
	else
		count = c->gpu_count < 0 ? xstrdup("count=all") : xasprintf("count=%lld", c->gpu_count);
	c->gpu_request_desc = xasprintf("driver=%s %s capabilities=%s", *c->gpu_driver ? c->gpu_driver : "(default)",
					count, *c->gpu_caps ? c->gpu_caps : "(none)");
}

/* The host side of the k3s API port: HostConfig.PortBindings["6443/tcp"][0]. */
static void read_api_binding(const cJSON *obj, struct gw_container *c)
{
	const cJSON *b = cJSON_GetArrayItem(json_get(obj, "HostConfig", "PortBindings", "6443/tcp", NULL), 0);
	const char *ip = json_str(b, "HostIp"), *port = json_str(b, "HostPort");
	char *end;
	long p = port ? strtol(port, &end, 10) : 0;

	c->api_host_ip = ip ? xstrdup(ip) : NULL;
	c->api_host_port = port && *port && !*end && p > 0 && p <= 65535 ? (int)p : 0;
}

/* The healthcheck ends its output with the marker that matters. */
static char *last_line(const char *text)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	for (start = end; start > text && start[-1] != '\n'; start--)
		;
	return end > start ? xstrndup(start, (size_t)(end - start)) : NULL;
}

static void parse_health(const cJSON *state, struct gw_container *c)
{
	const cJSON *health = json_get(state, "Health", NULL);
	const cJSON *log = json_get(health, "Log", NULL);
	int n = cJSON_IsArray(log) ? cJSON_GetArraySize(log) : 0;
	const char *out = n > 0 ? json_str(cJSON_GetArrayItem(log, n - 1), "Output") : NULL;

	c->health = dup_or_null(json_str(health, "Status"));
	c->health_line = out ? last_line(out) : NULL;
}

/* The probe as Docker runs it (moby's daemon/health.go): ["CMD", argv...]
 * as it is, ["CMD-SHELL", cmd] through /bin/sh -c; NONE or nothing: none. */
static void parse_health_test(const cJSON *config, struct gw_container *c)
{
	const cJSON *test = json_get(config, "Healthcheck", "Test", NULL);
	const cJSON *first = cJSON_GetArrayItem(test, 0);
	const char *kind = cJSON_IsString(first) ? first->valuestring : NULL;
	const cJSON *arg;
	int i = 0;

	if (!kind || (strcmp(kind, "CMD") != 0 && strcmp(kind, "CMD-SHELL") != 0))
		return;
	if (strcmp(kind, "CMD-SHELL") == 0) {
		strv_push(&c->health_test, "/bin/sh");
		strv_push(&c->health_test, "-c");
	}
	cJSON_ArrayForEach(arg, test) {
		if (i++ > 0 && cJSON_IsString(arg))
			strv_push(&c->health_test, arg->valuestring);
	}
}

int container_parse_inspect(const char *json, size_t len, struct gw_container *c, os_error *err)
{
	cJSON *root = json_parse(json, len, "docker inspect output", err);
	const cJSON *obj;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!root)
		return -1;
	obj = cJSON_IsArray(root) ? cJSON_GetArrayItem(root, 0) : NULL;
	if (!cJSON_IsObject(obj))
		os_error_set(err, OS_EXIT_FAILURE, "docker inspect output is not an array of objects");
	else
		rc = container_parse_object(obj, c, err);
	cJSON_Delete(root);
	return rc;
}

int container_parse_object(const cJSON *obj, struct gw_container *c, os_error *err)
{
	const cJSON *state, *labels;

	memset(c, 0, sizeof(*c));
	c->exists = 1;
	c->id = dup_or_null(json_str(obj, "Id"));
	state = json_get(obj, "State", NULL);
	c->status = dup_or_null(json_str(state, "Status"));
	c->running = json_bool(state, "Running") == 1;
	c->restarting = json_bool(state, "Restarting") == 1;
	if (json_int(json_get(state, "ExitCode", NULL), -1, 255, &c->exit_code) < 0)
		c->exit_code = 0;
	if (json_int(json_get(obj, "RestartCount", NULL), 0, 1LL << 40, &c->restart_count) < 0)
		c->restart_count = 0;
	c->state_error = dup_or_null(json_str(state, "Error"));
	parse_health(state, c);
	const cJSON *requests = json_get(obj, "HostConfig", "DeviceRequests", NULL);
	const cJSON *req = gpu_request(requests);
	char *cdi = req ? NULL : cdi_gpus(requests);
	c->gpu_request = req != NULL;
	if (req)
		read_request(req, c);
	else if (cdi)
		read_cdi_request(cdi, c);
	read_api_binding(obj, c);
	labels = json_get(obj, "Config", "Labels", NULL);
	c->managed_by = dup_or_null(json_str(labels, LABEL_MANAGED));
	c->gateway = dup_or_null(json_str(labels, LABEL_GATEWAY));
	c->image = dup_or_null(json_str(json_get(obj, "Config", NULL), "Image"));
	c->smoke_image = dup_or_null(json_str(labels, "org.openshell.smoke-image"));
	c->gpus_label = dup_or_null(json_str(labels, LABEL_GPUS));
	c->api_host = dup_or_null(json_str(labels, LABEL_API_HOST));
	c->node_network = dup_or_null(json_str(labels, LABEL_NODE_NETWORK));
	c->advertise = list_value(json_get(obj, "Args", NULL), "--advertise-address");
	/* k3s skips a packaged file its --disable names with or without the
	 * extension (pkg/deploy/stage.go). */
	c->runtimes_disabled = args_disable(json_get(obj, "Args", NULL), "runtimes") ||
			       args_disable(json_get(obj, "Args", NULL), "runtimes.yaml");
	c->mig_strategy = env_value(json_get(obj, "Config", NULL), "OPENSHELL_MIG_STRATEGY");
	c->gpu_allocation = env_value(json_get(obj, "Config", NULL), "OPENSHELL_GPU_ALLOCATION");
	c->started_at = dup_or_null(json_str(state, "StartedAt"));
	parse_health_test(json_get(obj, "Config", NULL), c);
	if (!c->status) {
		container_free(c);
		return os_error_set(err, OS_EXIT_FAILURE, "docker inspect output has no State.Status");
	}
	return 0;
}

enum owner container_owner(const struct gw_container *c, const char *gateway)
{
	return c->exists ? labels_owner(c->managed_by, c->gateway, gateway) : OWNER_ABSENT;
}

enum owner docker_labels_owner(const cJSON *labels, const char *gateway)
{
	return labels_owner(json_str(labels, LABEL_MANAGED), json_str(labels, LABEL_GATEWAY), gateway);
}

int docker_object_owner(const struct docker_target *on, const char *type, const char *object, const char *gateway,
			int timeout_ms, enum owner *out, os_error *err)
{
	const char *args[] = { type, "inspect", "--format", "{{json .Labels}}", object, NULL };
	struct run_result res = { 0 };
	cleanup_free char *what = xasprintf("docker %s inspect %s", type, object);
	cJSON *labels = NULL;
	int rc;

	*out = OWNER_ABSENT;
	if ((rc = docker_inspect(on, args, what, timeout_ms, &res, err)) <= 0)
		goto out;
	rc = -1;
	/* An object without labels prints null: simply not ours. */
	if (!(labels = json_parse(res.out, res.out_len, "docker inspect output", err)))
		goto out;
	*out = docker_labels_owner(labels, gateway);
	rc = 0;
out:
	cJSON_Delete(labels);
	run_result_free(&res);
	return rc;
}

int container_inspect(const struct docker_ctr *ctr, struct gw_container *c, os_error *err)
{
	const char *args[] = { "inspect", "--type=container", ctr->name, NULL };
	struct run_result res = { 0 };
	cleanup_free char *what = xasprintf("docker inspect %s", ctr->name);
	int rc;

	memset(c, 0, sizeof(*c));
	rc = docker_inspect(ctr->on, args, what, 0, &res, err);
	if (rc > 0)   /* rc 0: exists = 0 */
		rc = container_parse_inspect(res.out, res.out_len, c, err);
	run_result_free(&res);
	return rc;
}

void container_free(struct gw_container *c)
{
	free(c->id);
	free(c->status);
	free(c->state_error);
	free(c->health);
	free(c->health_line);
	free(c->gpu_request_desc);
	free(c->gpu_driver);
	free(c->gpu_devices);
	free(c->gpu_caps);
	free(c->gpus_label);
	free(c->api_host);
	free(c->node_network);
	free(c->advertise);
	free(c->mig_strategy);
	free(c->gpu_allocation);
	free(c->api_host_ip);
	free(c->managed_by);
	free(c->gateway);
	free(c->image);
	free(c->smoke_image);
	free(c->started_at);
	strv_free(&c->health_test);
	memset(c, 0, sizeof(*c));
}

int container_probe_health(const struct docker_ctr *ctr, const struct gw_container *c, char **line, os_error *err)
{
	struct strv args = { 0 };
	struct run_result res = { 0 };
	int rc = -1;

	*line = NULL;
	if (!c->running || c->health_test.n == 0)
		return -1;
	strv_pushv(&args, (const char *const[]){ "exec", ctr->name, NULL });
	for (size_t i = 0; i < c->health_test.n; i++)
		strv_push(&args, c->health_test.v[i]);
	if (docker_run(ctr->on, strv_argv(&args), NULL, 0, 0, &res, err) == 0) {
		*line = last_line(res.out);
		rc = res.status == 0;
	}
	run_result_free(&res);
	strv_free(&args);
	return rc;
}
