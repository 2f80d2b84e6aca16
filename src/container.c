/* container.c - docker inspect of the gateway container, parsed. */
#include "config.h"

#include <string.h>

#include "container.h"
#include "docker.h"
#include "exitcode.h"
#include "json.h"
#include "names.h"
#include "xalloc.h"

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

int docker_says_missing(const char *text)
{
	/* Daemons word a missing network "network X not found". */
	return strstr(text, "No such container") || strstr(text, "No such object") ||
	       strstr(text, "No such image") || strstr(text, "No such network") ||
	       strstr(text, "no such volume") || strstr(text, "No such volume") ||
	       (strstr(text, "network ") && strstr(text, " not found"));
}

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

/* Join the strings of a JSON array (nested arrays flattened) with sep. */
static char *join_strings(const cJSON *arr, const char *sep)
{
	const cJSON *v;
	char *out = xstrdup("");

	cJSON_ArrayForEach(v, arr) {
		cleanup_free char *part = cJSON_IsArray(v) ? join_strings(v, sep)
				       : xstrdup(cJSON_IsString(v) ? v->valuestring : "");
		char *next = *part ? xasprintf("%s%s%s", out, *out ? sep : "", part) : xstrdup(out);
		free(out);
		out = next;
	}
	return out;
}

/* The request as evidence: "driver=nvidia count=all capabilities=…". */
static char *describe_request(const cJSON *req)
{
	const char *driver = json_str(req, "Driver");
	cleanup_free char *caps = join_strings(cJSON_GetObjectItemCaseSensitive(req, "Capabilities"), ",");
	cleanup_free char *ids = join_strings(cJSON_GetObjectItemCaseSensitive(req, "DeviceIDs"), ",");
	cleanup_free char *count = NULL;
	long long n;

	if (*ids)
		count = xasprintf("devices=%s", ids);
	else if (json_int(cJSON_GetObjectItemCaseSensitive(req, "Count"), -1, 1 << 20, &n) == 0)
		count = n < 0 ? xstrdup("count=all") : xasprintf("count=%lld", n);
	else
		count = xstrdup("count=?");
	return xasprintf("driver=%s %s capabilities=%s", driver && *driver ? driver : "(default)",
			 count, *caps ? caps : "(none)");
}

static void parse_health(const cJSON *state, struct gw_container *c)
{
	const cJSON *health = json_get(state, "Health", NULL);
	const cJSON *log = json_get(health, "Log", NULL);
	int n = cJSON_IsArray(log) ? cJSON_GetArraySize(log) : 0;

	c->health = dup_or_null(json_str(health, "Status"));
	if (n > 0)
		c->health_output = dup_or_null(json_str(cJSON_GetArrayItem(log, n - 1), "Output"));
}

int container_parse_inspect(const char *json, size_t len, struct gw_container *c, os_error *err)
{
	cJSON *root = json_parse(json, len, "docker inspect output", err);
	const cJSON *obj, *state, *labels;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!root)
		return -1;
	obj = cJSON_IsArray(root) ? cJSON_GetArrayItem(root, 0) : NULL;
	if (!cJSON_IsObject(obj)) {
		os_error_set(err, OS_EXIT_FAILURE, "docker inspect output is not an array of objects");
		goto out;
	}
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
	const cJSON *req = gpu_request(json_get(obj, "HostConfig", "DeviceRequests", NULL));
	c->gpu_request = req != NULL;
	c->gpu_request_desc = req ? describe_request(req) : NULL;
	labels = json_get(obj, "Config", "Labels", NULL);
	c->managed_by = dup_or_null(json_str(labels, LABEL_MANAGED));
	c->gateway = dup_or_null(json_str(labels, LABEL_GATEWAY));
	c->image = dup_or_null(json_str(json_get(obj, "Config", NULL), "Image"));
	if (!c->status) {
		os_error_set(err, OS_EXIT_FAILURE, "docker inspect output has no State.Status");
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc < 0)
		container_free(c);
	return rc;
}

int container_inspect(const char *name, struct gw_container *c, os_error *err)
{
	const char *args[] = { "inspect", "--type=container", name, NULL };
	struct run_result res;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (docker_run(args, NULL, 0, 0, &res, err) < 0)
		goto out;
	if (res.status != 0) {
		if (docker_says_missing(res.err)) {
			rc = 0;   /* exists = 0 */
			goto out;
		}
		size_t n = strcspn(res.err, "\n");
		os_error_set(err, OS_EXIT_FAILURE, "docker inspect %s failed: %.*s", name, (int)n, res.err);
		goto out;
	}
	rc = container_parse_inspect(res.out, res.out_len, c, err);
out:
	run_result_free(&res);
	return rc;
}

void container_free(struct gw_container *c)
{
	free(c->id);
	free(c->status);
	free(c->state_error);
	free(c->health);
	free(c->health_output);
	free(c->gpu_request_desc);
	free(c->managed_by);
	free(c->gateway);
	free(c->image);
	memset(c, 0, sizeof(*c));
}
