/* gateway/node/node_remove.c - a node out of its cluster and off its host (see gateway/node/node_remove.h). */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/daemon.h"
#include "gateway/node/node_remove.h"
#include "kube/kubectl.h"

int node_drain_delete(const struct docker_ctr *ctr, const char *node, int timeout_ms, os_error *err)
{
	cleanup_free char *t = xasprintf("--timeout=%ds", timeout_ms / 1000);
	const char *drain[] = { "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", t, NULL };
	const char *del[] = { "delete", "node", node, "--ignore-not-found", NULL };
	struct run_result res = { 0 };
	int rc = kube_exec(ctr, drain, NULL, timeout_ms + docker_call_timeout_ms(), &res, err);

	/* A node the cluster no longer has needs no drain. */
	if (rc == 0 && res.status != 0 && !strstr(res.err, "NotFound") && !strstr(res.err, "not found"))
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "cannot drain node '%s'", node);
	run_result_free(&res);
	if (rc == 0 && kube_exec(ctr, del, NULL, 0, &res, err) == 0 && res.status != 0)
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "cannot delete node '%s' from the cluster", node);
	run_result_free(&res);
	return rc;
}

/* The IDs of TYPE ("container" or "volume") named NAME with R's labels. */
static int find_ours(const char *type, const struct node_record *r, char **ids, os_error *err)
{
	cleanup_free char *gw = xasprintf("label=%s=%s", LABEL_GATEWAY, r->gateway);
	cleanup_free char *managed = xasprintf("label=%s=%s", LABEL_MANAGED, LABEL_MANAGED_VALUE);
	cleanup_free char *node = xasprintf("label=%s=%s", LABEL_NODE, r->name);
	cleanup_free char *name = xasprintf("name=%s", r->container);
	const char *ps[] = { "ps", "--all", "--quiet", "--filter", gw, "--filter", managed, "--filter", node,
			     "--filter", name, NULL };
	const char *ls[] = { "volume", "ls", "--quiet", "--filter", gw, "--filter", managed, "--filter", name, NULL };
	struct run_result res = { 0 };
	int rc = docker_run_ok(&r->docker, strcmp(type, "container") == 0 ? ps : ls, NULL, 0, 0, &res, err);

	*ids = rc == 0 ? xstrdup(res.out) : NULL;
	run_result_free(&res);
	return rc;
}

static int remove_each(const char *const *rm, char *ids, const struct docker_target *on, int *removed, os_error *err)
{
	struct run_result res = { 0 };
	int rc = 0;

	for (char *id = strtok(ids, "\n"); id && rc == 0; id = strtok(NULL, "\n")) {
		struct strv argv = { 0 };
		strv_pushv(&argv, rm);
		strv_push(&argv, id);
		rc = docker_run_ok(on, strv_argv(&argv), NULL, 0, 0, &res, err);
		*removed += rc == 0;
		run_result_free(&res);
		strv_free(&argv);
	}
	return rc;
}

int node_agent_remove(const struct node_record *r, int *removed, os_error *err)
{
	static const char *const rm[] = { DOCKER_RM, NULL };
	static const char *const rmvol[] = { "volume", "rm", "--force", NULL };
	cleanup_free char *ctrs = NULL, *vols = NULL;
	int rc;

	*removed = 0;
	/* The container first: its volume cannot go while it is in use. */
	rc = find_ours("container", r, &ctrs, err) < 0 || remove_each(rm, ctrs, &r->docker, removed, err) < 0 ||
		     find_ours("volume", r, &vols, err) < 0 || remove_each(rmvol, vols, &r->docker, removed, err) < 0
	     ? -1 : 0;
	if (rc < 0)
		os_error_wrap(err, "cannot remove node '%s''s agent from %s", r->name, r->docker.endpoint);
	return rc;
}
