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
	return strstr(text, "No such container") || strstr(text, "No such object") ||
	       strstr(text, "No such image") || strstr(text, "No such network") ||
	       strstr(text, "no such volume") || strstr(text, "No such volume");
}

/* A request asks for GPUs when it goes to the nvidia driver or names the
 * "gpu" capability (Docker's default for --gpus). */
static int wants_gpu(const cJSON *requests)
{
	const cJSON *req, *set, *cap;
	const char *driver;

	cJSON_ArrayForEach(req, requests) {
		driver = json_str(req, "Driver");
		if (driver && strcmp(driver, "nvidia") == 0)
			return 1;
		cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(req, "Capabilities"))
			cJSON_ArrayForEach(cap, set)
				if (cJSON_IsString(cap) && strcmp(cap->valuestring, "gpu") == 0)
					return 1;
	}
	return 0;
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
	c->gpu_request = wants_gpu(json_get(obj, "HostConfig", "DeviceRequests", NULL));
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
	free(c->managed_by);
	free(c->gateway);
	free(c->image);
	memset(c, 0, sizeof(*c));
}
