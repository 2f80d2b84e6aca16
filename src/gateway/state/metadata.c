/* gateway/state/metadata.c - metadata.json to and from struct gw_metadata. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"
#include "gateway/state/metadata.h"

char *metadata_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

void metadata_docker_to_json(cJSON *o, const struct docker_target *w)
{
	json_add_string_or_null(o, "docker_context", w->context);
	json_add_string_or_null(o, "docker_endpoint", w->endpoint);
	if (w->tls_recorded) {
		cJSON_AddBoolToObject(o, "docker_tls", w->tls);
		cJSON_AddBoolToObject(o, "docker_tls_verify", w->tls_verify);
	} else {
		cJSON_AddNullToObject(o, "docker_tls");
		cJSON_AddNullToObject(o, "docker_tls_verify");
	}
	json_add_string_or_null(o, "docker_cert_path", w->cert_path);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void metadata_docker_from_json(const cJSON *o, struct docker_target *r)
{
	memset(r, 0, sizeof(*r));
	r->context = dup_or_null(json_str(o, "docker_context"));
	r->endpoint = dup_or_null(json_str(o, "docker_endpoint"));
	/* null (a named context, or older files): the environment's TLS stays */
	if (json_bool(o, "docker_tls") >= 0 && json_bool(o, "docker_tls_verify") >= 0) {
		r->tls_recorded = 1;
		r->tls = json_bool(o, "docker_tls");
		r->tls_verify = json_bool(o, "docker_tls_verify");
		r->cert_path = dup_or_null(json_str(o, "docker_cert_path"));
	}
}

char *metadata_to_json(const struct gw_metadata *md)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddNumberToObject(o, "schema", METADATA_SCHEMA);
	cJSON_AddStringToObject(o, "name", md->name);
	cJSON_AddStringToObject(o, "container", md->container);
	cJSON_AddStringToObject(o, "image", md->image);
	cJSON_AddStringToObject(o, "bind", md->bind);
	cJSON_AddNumberToObject(o, "port", md->port);
	cJSON_AddBoolToObject(o, "gpu", md->gpu);
	if (md->gpu && md->allocation != GPU_ALLOCATION_UNSET)
		cJSON_AddStringToObject(o, "gpu_allocation", gpu_allocation_name(md->allocation));
	cJSON_AddStringToObject(o, "server", md->server);
	cJSON_AddStringToObject(o, "kubeconfig", md->kubeconfig);
	cJSON_AddStringToObject(o, "created", md->created);
	json_add_string_or_null(o, "user_kubeconfig", md->user_kubeconfig);
	metadata_docker_to_json(o, &md->docker);
	s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

static int take_str(const cJSON *o, const char *key, char **out, os_error *err)
{
	const char *v = json_str(o, key);

	if (!v)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "metadata.json is corrupt or not openshell's: '%s' is missing or not a string",
				    key);
	*out = xstrdup(v);
	return 0;
}

/* Optional, and a hint alone (the container says the allocation): absent
 * in older files and without GPUs, and a word no openshell of this one
 * knows is as good as absent. */
static enum gpu_allocation read_allocation(const cJSON *o)
{
	const char *v = json_str(o, "gpu_allocation");
	enum gpu_allocation a = GPU_ALLOCATION_UNSET;
	os_error e = { 0 };

	if (v && gpu_allocation_parse(v, &a, &e) < 0)
		a = GPU_ALLOCATION_UNSET;
	os_error_clear(&e);
	return a;
}

int metadata_parse(const char *json, size_t len, struct gw_metadata *md, os_error *err)
{
	cJSON *o = json_parse(json, len, "metadata.json", err);
	long long schema, port;
	int gpu, rc = -1;

	memset(md, 0, sizeof(*md));
	if (!o)
		return -1;
	if (json_int(json_get(o, "schema", NULL), 0, 1000, &schema) < 0 || schema != METADATA_SCHEMA) {
		os_error_set(err, OS_EXIT_FAILURE,
			     "metadata.json is corrupt or not openshell's: schema is not %d", METADATA_SCHEMA);
		goto out;
	}
	if (take_str(o, "name", &md->name, err) < 0 || take_str(o, "container", &md->container, err) < 0 ||
	    take_str(o, "image", &md->image, err) < 0 || take_str(o, "bind", &md->bind, err) < 0 ||
	    take_str(o, "server", &md->server, err) < 0 ||
	    take_str(o, "kubeconfig", &md->kubeconfig, err) < 0 ||
	    take_str(o, "created", &md->created, err) < 0)
		goto out;
	if (json_int(json_get(o, "port", NULL), 1, 65535, &port) < 0) {
		os_error_set(err, OS_EXIT_FAILURE, "metadata.json is corrupt: 'port' is not a port number");
		goto out;
	}
	if ((gpu = json_bool(o, "gpu")) < 0) {
		os_error_set(err, OS_EXIT_FAILURE, "metadata.json is corrupt: 'gpu' is not a boolean");
		goto out;
	}
	md->port = (int)port;
	md->gpu = gpu;
	md->allocation = read_allocation(o);
	/* Optional: absent before --update-kubeconfig was used, or in older files. */
	md->user_kubeconfig = dup_or_null(json_str(o, "user_kubeconfig"));
	metadata_docker_from_json(o, &md->docker);
	rc = 0;
out:
	cJSON_Delete(o);
	if (rc < 0)
		metadata_free(md);
	return rc;
}

void metadata_free(struct gw_metadata *md)
{
	free(md->name);
	free(md->container);
	free(md->image);
	free(md->bind);
	free(md->server);
	free(md->kubeconfig);
	free(md->created);
	free(md->user_kubeconfig);
	docker_target_free(&md->docker);
	memset(md, 0, sizeof(*md));
}
