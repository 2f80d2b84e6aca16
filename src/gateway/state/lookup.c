/* gateway/state/lookup.c - gateway lookup (docker inspect plus metadata.json) and the
 * lock taken to change one. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/daemon.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/lookup.h"

#define METADATA_MAX (64u << 10)

static void load_metadata(struct gateway *gw)
{
	cleanup_free char *path = xasprintf("%s/metadata.json", gw->state_dir);
	cleanup_free char *text = NULL;
	os_error err = { 0 };
	size_t len;

	if (read_file(path, METADATA_MAX, &text, &len, &err) == 0 &&
	    metadata_parse(text, len, &gw->md, &err) == 0 && strcmp(gw->md.name, gw->name) == 0) {
		gw->has_metadata = 1;
	} else if (err.code != OS_EXIT_NOTFOUND) {
		gw->metadata_error = err.msg ? xasprintf("%s", err.msg)
					     : xasprintf("%s names another gateway", path);
		if (!err.msg)
			metadata_free(&gw->md);
	}
	os_error_clear(&err);
}

/* Followed to a daemon that is gone: say how to forget the gateway. */
static void add_lost_fix(const struct gateway *gw, os_error *err)
{
	if (err->code != OS_EXIT_DOCKER || !gw->has_metadata || !gw->md.docker.context)
		return;
	cleanup_free char *fix = xasprintf(
		"gateway '%s' lives on that daemon (context %s, %s); if it is gone for good, remove %s to forget the gateway here",
		gw->name, gw->md.docker.context, gw->md.docker.endpoint, gw->state_dir);
	os_error_add_fix(err, fix);
}

/* The daemon of GW's calls: its recorded one, unless the process's
 * target serves (docker_daemon_follow()). */
static int follow(struct gateway *gw, os_error *err)
{
	const struct docker_target *on = NULL;

	if (gw->has_metadata && docker_daemon_follow(gw->name, &gw->md.docker, &on, err) < 0)
		return -1;
	docker_target_destroy(gw->daemon);
	gw->daemon = docker_target_dup(on);
	gw->ctr.on = gw->daemon;
	return 0;
}

static void files_init(struct gateway *gw, const char *name)
{
	memset(gw, 0, sizeof(*gw));
	gw->name = xstrdup(name);
	gw->container = gateway_resource_name(name);
	gw->ctr.name = gw->container;
}

int gateway_load_files(const char *name, struct gateway *gw, os_error *err)
{
	files_init(gw, name);
	if (gateway_state_dir(name, &gw->state_dir, err) < 0)
		return -1;
	load_metadata(gw);
	return 0;
}

int gateway_follow_daemon(const char *name, struct docker_target **on, os_error *err)
{
	struct gateway gw;
	int rc = gateway_load_files(name, &gw, err) < 0 ? -1 : follow(&gw, err);

	*on = rc == 0 ? steal_pointer(&gw.daemon) : NULL;
	gateway_free(&gw);
	return rc;
}

int gateway_inspect_followed(const char *name, struct gw_container *c, struct docker_target **on, os_error *err)
{
	struct gateway gw;
	int rc = -1;

	*on = NULL;
	if (gateway_load_files(name, &gw, err) == 0 && follow(&gw, err) == 0) {
		rc = container_inspect(&gw.ctr, c, err);
		if (rc < 0)
			add_lost_fix(&gw, err);
	}
	if (rc == 0)
		*on = steal_pointer(&gw.daemon);
	gateway_free(&gw);
	return rc;
}

int gateway_lookup_files(const char *name, struct gateway *gw, os_error *err)
{
	memset(gw, 0, sizeof(*gw));
	if (gateway_name_check(name, err) < 0)
		return -1;
	files_init(gw, name);
	if (gateway_state_dir(name, &gw->state_dir, err) < 0)
		goto fail;
	/* The daemon it was made on, before anything asks Docker. */
	load_metadata(gw);
	if (follow(gw, err) < 0)
		goto fail;
	return 0;
fail:
	gateway_free(gw);
	return -1;
}

int gateway_lookup_container(struct gateway *gw, os_error *err)
{
	if (container_inspect(&gw->ctr, &gw->c, err) < 0) {
		add_lost_fix(gw, err);
		goto fail;
	}
	if (container_owner(&gw->c, gw->name) == OWNER_FOREIGN) {
		cleanup_free char *why = labels_foreign_reason("container", gw->container, gw->name);
		os_error_set(err, OS_EXIT_CONFLICT, "%s; openshell will not manage it", why);
		goto fail;
	}
	gateway_read_container(gw);
	if (!gw->c.exists && !gw->has_metadata && !gw->metadata_error) {
		os_error_set(err, OS_EXIT_NOTFOUND, "no gateway named '%s' (see 'openshell gateway list')", gw->name);
		goto fail;
	}
	return 0;
fail:
	gateway_free(gw);
	return -1;
}

int gateway_lookup(const char *name, struct gateway *gw, os_error *err)
{
	if (gateway_lookup_files(name, gw, err) < 0)
		return -1;
	return gateway_lookup_container(gw, err);
}

int gateway_wants_gpu(const struct gateway *gw)
{
	return gw->c.exists ? gw->c.gpu_request : gw->has_metadata && gw->md.gpu;
}

void gateway_read_container(struct gateway *gw)
{
	os_error e = { 0 };

	gw->mig = mig_strategy_of_env(gw->c.mig_strategy);
	gw->allocation = gpu_allocation_of_env(gw->c.gpu_allocation);
	gpus_free(&gw->gpus);
	free(gw->gpus_error);
	gw->gpus_error = NULL;
	gw->has_gpus = 0;
	if (!gw->c.exists || !gw->c.gpu_request)
		return;
	if (gpus_of_container(&gw->c, &gw->gpus, &e) == 0)
		gw->has_gpus = 1;
	else
		gw->gpus_error = xstrdup(e.msg);
	os_error_clear(&e);
}

char *gateway_gpus_named(const struct gateway *gw)
{
	return gw->has_gpus && gw->gpus.kind != GPUS_ALL ? gpus_string(&gw->gpus) : NULL;
}

int gateway_require_running(const struct gateway *gw, os_error *err)
{
	cleanup_free char *gpus = NULL, *opt = NULL;

	if (gw->c.exists && gw->c.running)
		return 0;
	/* The same GPUs again: another request is refused for a kept gateway. */
	gpus = gateway_gpus_named(gw);
	opt = gpus ? xasprintf(" --gpus %s", gpus) : xstrdup(gateway_wants_gpu(gw) ? " --gpu" : "");
	return os_error_set(err, OS_EXIT_FAILURE,
			    "gateway '%s' is not running (%s); start it with 'openshell gateway start --name %s%s'",
			    gw->name, gw->c.exists ? gw->c.status : "no container", gw->name, opt);
}

void gateway_free(struct gateway *gw)
{
	free(gw->name);
	free(gw->container);
	docker_target_destroy(gw->daemon);
	free(gw->state_dir);
	free(gw->metadata_error);
	free(gw->daemon_error);
	free(gw->gpus_error);
	gpus_free(&gw->gpus);
	container_free(&gw->c);
	metadata_free(&gw->md);
	memset(gw, 0, sizeof(*gw));
}

int gateway_lookup_or_report(const char *name, struct gateway *gw)
{
	os_error err = { 0 };
	int rc = OS_EXIT_OK;

	if (gateway_lookup(name, gw, &err) < 0)
		rc = log_error_report(&err);
	os_error_clear(&err);
	return rc;
}

int gateway_lock_for_change(const char *name, os_error *err)
{
	/* The name becomes a file name under locks/: it must be checked first. */
	if (gateway_name_check(name, err) < 0)
		return -1;
	return gateway_lock(name, clock_ms() + GATEWAY_LOCK_WAIT_MS, err);
}
