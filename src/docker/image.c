/* docker/image.c - docker image inspect, parsed (see docker/image.h). */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/image.h"

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

int image_parse_inspect(const char *json, size_t len, struct docker_image *img, os_error *err)
{
	cJSON *root = json_parse(json, len, "docker image inspect output", err);
	const cJSON *obj, *labels;

	memset(img, 0, sizeof(*img));
	img->size = -1;
	if (!root)
		return -1;
	obj = cJSON_GetArrayItem(root, 0);
	if (!cJSON_IsArray(root) || !cJSON_IsObject(obj)) {
		cJSON_Delete(root);
		return os_error_set(err, OS_EXIT_FAILURE, "docker image inspect output is not an array of objects");
	}
	img->exists = 1;
	img->id = dup_or_null(json_str(obj, "Id"));
	img->created = dup_or_null(json_str(obj, "Created"));
	if (json_int(json_get(obj, "Size", NULL), 0, 1LL << 50, &img->size) < 0)
		img->size = -1;
	labels = json_get(obj, "Config", "Labels", NULL);
	img->labels = cJSON_IsObject(labels) ? cJSON_Duplicate(labels, 1) : cJSON_CreateObject();
	cJSON_Delete(root);
	return 0;
}

int image_inspect(const char *ref, int timeout_ms, struct docker_image *img, os_error *err)
{
	const char *args[] = { "image", "inspect", "--", ref, NULL };
	struct run_result res = { 0 };
	int rc;
	cleanup_free char *what = xasprintf("docker image inspect %s", ref);

	memset(img, 0, sizeof(*img));
	rc = docker_inspect(args, what, timeout_ms, &res, err);
	if (rc > 0)   /* rc 0: exists = 0 */
		rc = image_parse_inspect(res.out, res.out_len, img, err);
	run_result_free(&res);
	return rc;
}

void docker_image_free(struct docker_image *img)
{
	free(img->id);
	free(img->created);
	cJSON_Delete(img->labels);
	memset(img, 0, sizeof(*img));
}

const char *image_label(const struct docker_image *img, const char *key)
{
	const char *v = json_str(img->labels, key);

	return v && *v ? v : NULL;
}
