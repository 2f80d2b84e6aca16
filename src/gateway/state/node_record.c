/* gateway/state/node_record.c - a node's file to and from struct node_record (see gateway/state/node_record.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/daemon.h"
#include "gateway/state/node_record.h"

#define NODE_FILE_MAX (1 << 20)

char *node_resource_name(const char *gateway)
{
	return xasprintf("openshell-node-%s", gateway);
}

char *node_record_to_json(const struct node_record *r)
{
	cJSON *o = cJSON_CreateObject();
	cleanup_free char *gpus = r->gpu ? gpus_string(&r->gpus) : NULL;
	char *s;

	cJSON_AddNumberToObject(o, "schema", NODE_RECORD_SCHEMA);
	cJSON_AddStringToObject(o, "name", r->name);
	cJSON_AddStringToObject(o, "gateway", r->gateway);
	cJSON_AddStringToObject(o, "container", r->container);
	cJSON_AddStringToObject(o, "image", r->image);
	cJSON_AddStringToObject(o, "image_id", r->image_id);
	cJSON_AddStringToObject(o, "server", r->server);
	cJSON_AddBoolToObject(o, "gpu", r->gpu);
	json_add_string_or_null(o, "gpus", gpus);
	cJSON_AddStringToObject(o, "created", r->created);
	metadata_docker_to_json(o, &r->docker);
	s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

static int take(const cJSON *o, const char *key, char **out, os_error *err)
{
	const char *v = json_str(o, key);

	if (!v)
		return os_error_set(err, OS_EXIT_FAILURE, "is corrupt or not openshell's: '%s' is missing or not a string",
				    key);
	*out = xstrdup(v);
	return 0;
}

int node_record_parse(const char *json, size_t len, struct node_record *r, os_error *err)
{
	cJSON *o = json_parse(json, len, "the node's file", err);
	os_error e = { 0 };
	long long schema;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!o)
		return -1;
	if (json_int(json_get(o, "schema", NULL), 0, 1000, &schema) < 0 || schema != NODE_RECORD_SCHEMA) {
		os_error_set(err, OS_EXIT_FAILURE, "is corrupt or not openshell's: schema is not %d", NODE_RECORD_SCHEMA);
		goto out;
	}
	if (take(o, "name", &r->name, err) < 0 || take(o, "gateway", &r->gateway, err) < 0 ||
	    take(o, "container", &r->container, err) < 0 || take(o, "image", &r->image, err) < 0 ||
	    take(o, "image_id", &r->image_id, err) < 0 || take(o, "server", &r->server, err) < 0 ||
	    take(o, "created", &r->created, err) < 0)
		goto out;
	if ((r->gpu = json_bool(o, "gpu")) < 0) {
		os_error_set(err, OS_EXIT_FAILURE, "is corrupt: 'gpu' is not a boolean");
		goto out;
	}
	if (r->gpu && json_str(o, "gpus") && gpus_parse(json_str(o, "gpus"), &r->gpus, &e) < 0) {
		os_error_set(err, OS_EXIT_FAILURE, "is corrupt: 'gpus' %s", e.msg);
		os_error_clear(&e);
		goto out;
	}
	metadata_docker_from_json(o, &r->docker);
	if (!docker_target_recorded(&r->docker)) {
		os_error_set(err, OS_EXIT_FAILURE, "is corrupt: it names no Docker daemon");
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(o);
	if (rc < 0)
		node_record_free(r);
	return rc;
}

void node_record_free(struct node_record *r)
{
	free(r->name);
	free(r->gateway);
	free(r->container);
	free(r->image);
	free(r->image_id);
	free(r->server);
	gpus_free(&r->gpus);
	free(r->created);
	docker_target_free(&r->docker);
	memset(r, 0, sizeof(*r));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct node_record *)a)->name, ((const struct node_record *)b)->name);
}

static int load_one(const char *dir, const char *file, struct node_records *out, os_error *err)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, file), *text = NULL;
	struct node_record r;
	size_t len;

	if (read_file(path, NODE_FILE_MAX, &text, &len, err) < 0)
		return -1;
	if (node_record_parse(text, len, &r, err) < 0)
		return os_error_wrap(err, "%s", path);
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = r;
	return 0;
}

static int is_node_file(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && name[0] != '.' && strcmp(name + n - 5, ".json") == 0;
}

int node_records_load(const char *state_dir, struct node_records *out, os_error *err)
{
	cleanup_free char *dir = xasprintf("%s/nodes", state_dir);
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return errno == ENOENT ? 0 : os_error_set(err, OS_EXIT_FAILURE, "cannot read %s: %s", dir, strerror(errno));
	while (rc == 0 && (e = readdir(d)))
		if (is_node_file(e->d_name))
			rc = load_one(dir, e->d_name, out, err);
	closedir(d);
	if (rc < 0)
		node_records_free(out);
	else if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	return rc;
}

void node_records_free(struct node_records *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		node_record_free(&rs->v[i]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

const struct node_record *node_records_find(const struct node_records *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].name, name) == 0)
			return &rs->v[i];
	return NULL;
}

int node_record_write(const char *state_dir, const struct node_record *r, os_error *err)
{
	cleanup_free char *dir = xasprintf("%s/nodes", state_dir);
	cleanup_free char *path = xasprintf("%s/%s.json", dir, r->name);
	cleanup_free char *json = node_record_to_json(r);

	if (mkdir_p(dir, 0700, err) < 0)
		return -1;
	return write_file_atomic(path, json, strlen(json), 0600, err);
}

int node_record_remove(const char *state_dir, const char *name, os_error *err)
{
	cleanup_free char *dir = xasprintf("%s/nodes", state_dir);
	cleanup_free char *path = xasprintf("%s/%s.json", dir, name);

	if (unlink(path) < 0 && errno != ENOENT)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot remove %s: %s", path, strerror(errno));
	/* Other nodes' files keep it. */
	if (rmdir(dir) < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot remove %s: %s", dir, strerror(errno));
	return 0;
}
