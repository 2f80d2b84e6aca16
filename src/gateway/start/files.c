/* gateway/start/files.c - a gateway's files on the host (see gateway/start/files.h). */
#include "config.h"

#include <string.h>

#include "base/files.h"
#include "base/names.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/start/files.h"
#include "gateway/state/metadata.h"
#include "kube/kubeconfig.h"
#include "kube/user_kubeconfig.h"

/* The user's kubeconfig an earlier start merged the gateway into: a later
 * start without --update-kubeconfig must not forget it, or destroy would
 * leave the entries behind. */
static char *earlier_merge(const char *path)
{
	cleanup_free char *text = NULL;
	struct gw_metadata md;
	os_error err = { 0 };
	size_t len;
	char *found = NULL;

	if (read_file(path, 1 << 20, &text, &len, &err) == 0 && metadata_parse(text, len, &md, &err) == 0) {
		found = md.user_kubeconfig ? xstrdup(md.user_kubeconfig) : NULL;
		metadata_free(&md);
	}
	os_error_clear(&err);
	return found;
}

static int write_metadata(const struct deploy_plan *p, const char *container, const struct start_result *r,
			  const char *dir, os_error *err)
{
	cleanup_free char *path = xasprintf("%s/metadata.json", dir);
	cleanup_free char *created = metadata_now();
	cleanup_free char *json = NULL;
	cleanup_free char *merged_into = r->user_kubeconfig ? xstrdup(r->user_kubeconfig) : earlier_merge(path);
	struct gw_metadata md = {
		.name = (char *)p->req->name, .container = (char *)container, .image = (char *)p->image,
		.bind = (char *)p->bind, .port = p->port, .gpu = p->req->gpu,
		.allocation = p->req->gpu ? p->allocation : GPU_ALLOCATION_UNSET,
		.server = r->server, .kubeconfig = r->kubeconfig, .created = created,
		.user_kubeconfig = merged_into,
		.docker = *p->docker,
	};

	json = metadata_to_json(&md);
	return write_file_atomic(path, json, strlen(json), 0600, err);
}

int gateway_write_files(const struct deploy_plan *p, const struct wait_ctx *w, struct start_result *r,
			os_error *err)
{
	const char *args[] = { "exec", w->ctr.name, "cat", K3S_KUBECONFIG_PATH, NULL };
	struct run_result res = { 0 };
	int rc = -1;

	if (docker_run_ok(w->ctr.on, args, NULL, 0, deadline_call_ms(&w->by), &res, err) < 0) {
		if (wait_cut(w, err))
			wait_timeout_error(w, "the kubeconfig (" K3S_KUBECONFIG_PATH ")", NULL, err);
		else
			os_error_wrap(err, "cannot read %s from the gateway", K3S_KUBECONFIG_PATH);
	} else {
		rc = gateway_write_files_from(p, w->ctr.name, res.out, r, err);
	}
	run_result_free(&res);
	return rc;
}

int gateway_write_files_from(const struct deploy_plan *p, const char *container, const char *k3s_yaml,
			     struct start_result *r, os_error *err)
{
	cleanup_free char *dir = NULL;
	cleanup_free char *ctx = gateway_hostname(p->req->name);
	cleanup_free char *text = NULL;
	cleanup_free char *addr = deploy_api_address(p);
	size_t len;
	int rc = -1;

	free(r->server);
	free(r->kubeconfig);
	r->server = xasprintf("https://%s", addr);
	r->kubeconfig = NULL;
	if (gateway_state_dir(p->req->name, &dir, err) < 0 || mkdir_p(dir, 0700, err) < 0)
		goto out;
	r->kubeconfig = xasprintf("%s/kubeconfig", dir);
	if (kubeconfig_rewrite(k3s_yaml, strlen(k3s_yaml), r->server, ctx, &text, &len, err) < 0 ||
	    write_file_atomic(r->kubeconfig, text, len, 0600, err) < 0)
		goto out;
	if (p->req->update_kubeconfig &&
	    kubeconfig_update_user(text, len, &r->user_kubeconfig, &r->user_backup, err) < 0) {
		os_error_wrap(err, "cannot update your kubeconfig");
		goto out;
	}
	rc = write_metadata(p, container, r, dir, err);
out:
	return rc;
}
