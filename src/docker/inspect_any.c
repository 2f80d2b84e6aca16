/* docker/inspect_any.c - an untyped docker inspect of several names (see docker/inspect_any.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/child_output.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/inspect_any.h"

/* How the CLI words a name it found nothing for, either case. */
#define NO_SUCH_OBJECT "no such object: "

/* Each type's own part of its inspect answer (the Engine API's
 * ContainerJSON, ImageInspect, network.Inspect, volume.Volume). */
static enum docker_kind kind_of(const cJSON *obj)
{
	if (cJSON_IsObject(json_get(obj, "State", NULL)) && cJSON_IsObject(json_get(obj, "HostConfig", NULL)))
		return DOCKER_CONTAINER;
	if (cJSON_IsObject(json_get(obj, "RootFS", NULL)))
		return DOCKER_IMAGE;
	if (cJSON_IsObject(json_get(obj, "IPAM", NULL)))
		return DOCKER_NETWORK;
	if (json_str(obj, "Mountpoint"))
		return DOCKER_VOLUME;
	return DOCKER_OTHER;
}

/* The names stderr says no object has, one a line. */
static void missing_names(const char *errtext, struct strv *missing)
{
	cleanup_free char *text = xstrdup(errtext ? errtext : "");
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *at = strcasestr(line, NO_SUCH_OBJECT);
		size_t len;

		if (!at)
			continue;
		at += strlen(NO_SUCH_OBJECT);
		for (len = strlen(at); len > 0 && (at[len - 1] == '\r' || at[len - 1] == ' '); len--)
			;
		at[len] = '\0';
		strv_push(missing, at);
	}
}

/* Each name the answer holds an object for takes the next one, in order. */
int docker_found_parse(const char *const *names, size_t n, const char *out, size_t out_len, const char *errtext,
		       struct docker_found *found, os_error *err)
{
	struct strv missing = { 0 };
	cJSON *root = NULL;
	size_t want = 0;
	int rc = -1;

	memset(found, 0, n * sizeof(*found));
	missing_names(errtext, &missing);
	for (size_t i = 0; i < n; i++)
		want += !strv_has(&missing, names[i]);
	/* Nothing found prints an empty array (docker/cli cli/command/inspect/
	 * inspector.go, Flush); no output at all reads the same. */
	if (want == 0 && out_len == 0) {
		rc = 0;
		goto out;
	}
	if (!(root = json_parse(out, out_len, "docker inspect output", err)))
		goto out;
	if (!cJSON_IsArray(root) || (size_t)cJSON_GetArraySize(root) != want) {
		os_error_set(err, OS_EXIT_FAILURE, "docker inspect answered with %d object(s) for %zu name(s) it found",
			     cJSON_IsArray(root) ? cJSON_GetArraySize(root) : -1, want);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (strv_has(&missing, names[i]))
			continue;
		found[i].obj = cJSON_DetachItemFromArray(root, 0);
		found[i].kind = kind_of(found[i].obj);
	}
	rc = 0;
out:
	cJSON_Delete(root);
	strv_free(&missing);
	return rc;
}

int docker_inspect_any(const struct docker_target *on, const char *const *names, size_t n, int timeout_ms,
		       struct docker_found *found, os_error *err)
{
	struct strv args = { 0 };
	struct run_result res = { 0 };
	int rc = -1;

	memset(found, 0, n * sizeof(*found));
	strv_pushv(&args, (const char *const[]){ "inspect", "--", NULL });
	for (size_t i = 0; i < n; i++)
		strv_push(&args, names[i]);
	if (docker_run(on, strv_argv(&args), NULL, 0, timeout_ms, &res, err) < 0)
		goto out;
	/* Some name missing is exit status 1; any other failure of its own. */
	if (res.status != 0 && !strcasestr(res.err, NO_SUCH_OBJECT)) {
		run_failure(err, OS_EXIT_FAILURE, &res, "docker inspect %s failed", names[0]);
		goto out;
	}
	rc = docker_found_parse(names, n, res.out, res.out_len, res.err, found, err);
	if (rc < 0)
		os_error_set_detail(err, res.err);
out:
	run_result_free(&res);
	strv_free(&args);
	return rc;
}

void docker_found_free(struct docker_found *found, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cJSON_Delete(found[i].obj);
		found[i].obj = NULL;
		found[i].kind = DOCKER_MISSING;
	}
}
