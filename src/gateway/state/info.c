/* gateway/state/info.c - known gateway names, and the words status and list print. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/target.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/info.h"
#include "gateway/state/node_network.h"

void gateway_names_add_lines(struct strv *names, const char *text)
{
	os_error err = { 0 };

	while (*text) {
		size_t n = strcspn(text, "\n");
		cleanup_free char *line = xstrndup(text, n);

		/* A container with the managed-by label but no gateway label
		 * prints an empty line; a hand-made label may hold anything. */
		if (*line && gateway_name_check(line, &err) == 0)
			strv_push(names, line);
		os_error_clear(&err);
		text += n;
		if (*text == '\n')
			text++;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void gateway_names_sort_unique(struct strv *names)
{
	size_t out = 0;

	if (names->n == 0)
		return;
	qsort(names->v, names->n, sizeof(*names->v), cmp_str);
	for (size_t i = 0; i < names->n; i++) {
		if (out > 0 && strcmp(names->v[out - 1], names->v[i]) == 0)
			free(names->v[i]);
		else
			names->v[out++] = names->v[i];
	}
	names->n = out;
	names->v[out] = NULL;
}

void gateway_labelled_ps(struct strv *args)
{
	strv_pushv(args, (const char *const[]){ "ps", "--all", "--filter", NULL });
	strv_pushf(args, "label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	strv_push(args, "--format");
	strv_pushf(args, "{{.Label \"%s\"}}", LABEL_GATEWAY);
}

static int add_labelled(const struct docker_target *on, int within_ms, struct strv *names, os_error *err)
{
	struct strv args = { 0 };
	struct run_result res;

	gateway_labelled_ps(&args);
	if (docker_run_ok(on, strv_argv(&args), NULL, 0, within_ms, &res, err) < 0) {
		run_result_free(&res);
		strv_free(&args);
		return os_error_wrap(err, "cannot list openshell's containers");
	}
	gateway_names_add_lines(names, res.out);
	run_result_free(&res);
	strv_free(&args);
	return 0;
}

/* The directory that holds one directory per gateway. */
static int gateways_dir(char **dir, os_error *err)
{
	cleanup_free char *one = NULL;

	/* fsutil knows the per-gateway path only; its parent is the one. */
	if (gateway_state_dir(GATEWAY_DEFAULT_NAME, &one, err) < 0)
		return -1;
	*dir = xstrndup(one, (size_t)(strrchr(one, '/') - one));
	return 0;
}

int gateway_metadata_names(struct strv *names, os_error *err)
{
	cleanup_free char *dir = NULL;
	os_error name_err = { 0 };
	struct dirent *e;
	DIR *d;

	if (gateways_dir(&dir, err) < 0)
		return -1;
	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : os_error_set(err, OS_EXIT_FAILURE, "cannot read %s: %s",
							 dir, strerror(errno));
	while ((e = readdir(d))) {
		cleanup_free char *md = xasprintf("%s/%s/metadata.json", dir, e->d_name);

		if (gateway_name_check(e->d_name, &name_err) == 0 && access(md, F_OK) == 0)
			strv_push(names, e->d_name);
		os_error_clear(&name_err);
	}
	closedir(d);
	return 0;
}

int gateway_known_names(const char *context, int within_ms, struct strv *names, os_error *err)
{
	/* The context as typed, as docker's --context takes it: no call to
	 * resolve it, whose time no one caps. */
	struct docker_target typed = { .context = (char *)context };

	if (add_labelled(context ? &typed : NULL, within_ms, names, err) < 0 || gateway_metadata_names(names, err) < 0)
		return -1;
	gateway_names_sort_unique(names);
	return 0;
}

int gateway_docker_contexts(int within_ms, struct strv *names, os_error *err)
{
	static const char *const args[] = { "context", "ls", "--format", "{{.Name}}", NULL };
	struct run_result res = { 0 };
	char *save = NULL;
	int rc = docker_run_ok(NULL, args, NULL, 0, within_ms, &res, err);

	for (char *line = rc == 0 ? strtok_r(res.out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		strv_push(names, line);
	run_result_free(&res);
	return rc;
}

const char *gateway_state_word(const struct gateway *gw)
{
	return gw->daemon_error ? "unknown" : gw->c.exists ? gw->c.status : "missing";
}

const char *gateway_metadata_problem(const struct gateway *gw)
{
	if (gw->metadata_error)
		return gw->metadata_error;
	return gw->has_metadata ? NULL : "metadata.json is missing";
}

const struct gpus *gateway_gpus(const struct gateway *gw)
{
	return gw->has_gpus ? &gw->gpus : NULL;
}

void gateway_json_common(cJSON *obj, const struct gateway *gw)
{
	const struct gpus *gpus = gateway_gpus(gw);
	int asks = gw->c.exists && gw->c.gpu_request;

	cJSON_AddStringToObject(obj, "name", gw->name);
	cJSON_AddStringToObject(obj, "container", gw->container);
	cJSON_AddStringToObject(obj, "state", gateway_state_word(gw));
	cJSON_AddBoolToObject(obj, "gpu", gateway_wants_gpu(gw));
	cJSON_AddItemToObject(obj, "gpus", gpus ? gpus_json(gpus) : cJSON_CreateNull());
	json_add_string_or_null(obj, "gpu_mode", asks ? (gw->c.gpu_cdi ? "cdi" : "legacy") : NULL);
	json_add_string_or_null(obj, "mig_strategy", asks ? mig_strategy_name(gw->mig) : NULL);
	json_add_string_or_null(obj, "gpu_allocation", asks ? gpu_allocation_name(gw->allocation) : NULL);
	json_add_string_or_null(obj, "node_network",
				gw->c.exists ? node_network_name(node_network_of_label(gw->c.node_network)) : NULL);
	json_add_string_or_null(obj, "server", gw->has_metadata ? gw->md.server : NULL);
	json_add_string_or_null(obj, "kubeconfig", gw->has_metadata ? gw->md.kubeconfig : NULL);
	json_add_string_or_null(obj, "metadata_error", gateway_metadata_problem(gw));
}
