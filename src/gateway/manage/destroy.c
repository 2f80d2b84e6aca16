/* gateway/manage/destroy.c - a gateway removed (see gateway/manage/destroy.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/manage/destroy.h"
#include "gateway/node/node_remove.h"
#include "gateway/state/lookup.h"
#include "gateway/state/metadata.h"
#include "kube/user_kubeconfig.h"

static int survey(struct destroy_plan *p, os_error *err)
{
	struct gw_container c;

	if (gateway_state_dir(p->name, &p->dir, err) < 0 || gateway_inspect_followed(p->name, &c, &p->on, err) < 0)
		return -1;
	p->container = container_owner(&c, p->name);
	container_free(&c);
	p->has_dir = access(p->dir, F_OK) == 0;
	if (node_records_load(p->dir, &p->nodes, err) < 0)
		return -1;
	if (docker_object_owner(p->on, "network", p->res, p->name, 0, &p->network, err) < 0 ||
	    docker_object_owner(p->on, "volume", p->res, p->name, 0, &p->volume, err) < 0)
		return -1;
	return 0;
}

static void warn_foreign(const char *what, enum owner pr, const struct destroy_plan *p)
{
	if (pr == OWNER_FOREIGN) {
		cleanup_free char *why = labels_foreign_reason(what, p->res, p->name);
		log_warn("%s; left it in place", why);
	}
}

static int remove_object(const char *const *args, const char *what, const struct destroy_plan *p, os_error *err)
{
	return docker_ok(p->on, args, 0, err) < 0 ? os_error_wrap(err, "cannot remove %s %s", what, p->res) : 0;
}

/* The entries --update-kubeconfig merged into the user's kubeconfig, which
 * metadata.json recorded: removed (with a backup), the user's other
 * entries and current-context kept. A failure only warns: the gateway is
 * gone, and the message says what is left. */
static void remove_user_entries(const struct destroy_plan *p)
{
	cleanup_free char *path = xasprintf("%s/metadata.json", p->dir);
	cleanup_free char *text = NULL, *entry = gateway_hostname(p->name), *backup = NULL;
	struct gw_metadata md = { 0 };
	os_error err = { 0 };
	size_t len;
	int changed;

	if (read_file(path, 1 << 20, &text, &len, &err) < 0 || metadata_parse(text, len, &md, &err) < 0 ||
	    !md.user_kubeconfig)
		goto out;
	if (kubeconfig_remove_user(md.user_kubeconfig, entry, &changed, &backup, &err) < 0)
		log_warn("left the entries '%s' in %s: %s", entry, md.user_kubeconfig, err.msg);
	else if (changed)
		log_info("removed '%s' from %s (the previous file is %s)", entry, md.user_kubeconfig, backup);
out:
	metadata_free(&md);
	os_error_clear(&err);
}

/* Only the files openshell writes; anything else keeps the directory. */
static void remove_state(const struct destroy_plan *p)
{
	static const char *const files[] = { "kubeconfig", "metadata.json", NULL };

	for (size_t i = 0; files[i]; i++) {
		cleanup_free char *path = xasprintf("%s/%s", p->dir, files[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			log_warn("cannot remove %s: %s", path, strerror(errno));
	}
	if (rmdir(p->dir) < 0 && errno != ENOENT)
		log_warn("left %s: %s", p->dir,
			 errno == ENOTEMPTY ? "it holds files openshell did not write" : strerror(errno));
}

/* The agents first, each on its own host: the gateway is left whole
 * while one of them cannot go, so that nothing is lost track of. */
static int remove_agents(const struct destroy_plan *p, os_error *err)
{
	for (size_t i = 0; i < p->nodes.n; i++) {
		const struct node_record *r = &p->nodes.v[i];
		int removed;

		log_step("removing node '%s' from %s", r->name, r->docker.endpoint);
		if (node_agent_remove(r, &removed, err) < 0) {
			os_error_wrap(err, "gateway '%s' was left as it is", p->name);
			cleanup_free char *fix = xasprintf("retry once %s answers", r->docker.endpoint);
			return os_error_add_fix(err, fix);
		}
		if (node_record_remove(p->dir, r->name, err) < 0)
			return -1;
		log_step_done(1);
	}
	return 0;
}

/* Container first: the network and volume cannot go while it uses them. */
int gateway_destroy_apply(const struct destroy_plan *p, int keep_volume, os_error *err)
{
	const char *rm[] = { DOCKER_RM, p->res, NULL };
	const char *rmnet[] = { "network", "rm", p->res, NULL };
	const char *rmvol[] = { "volume", "rm", p->res, NULL };

	if (remove_agents(p, err) < 0)
		return -1;
	log_step("destroying gateway '%s'", p->name);
	if ((p->container == OWNER_OURS && remove_object(rm, "container", p, err) < 0) ||
	    (p->network == OWNER_OURS && remove_object(rmnet, "network", p, err) < 0) ||
	    (p->volume == OWNER_OURS && !keep_volume && remove_object(rmvol, "volume", p, err) < 0))
		return -1;
	if (p->has_dir) {
		remove_user_entries(p);
		remove_state(p);
	}
	log_step_done(1);
	if (keep_volume && p->volume == OWNER_OURS)
		log_info("kept volume %s (--keep-volume)", p->res);
	return 0;
}

int gateway_destroy_survey(const char *name, struct destroy_plan *p, int *nothing, os_error *err)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->res = gateway_resource_name(name);
	*nothing = 0;
	if (survey(p, err) < 0)
		return -1;
	warn_foreign("container", p->container, p);
	warn_foreign("network", p->network, p);
	warn_foreign("volume", p->volume, p);
	*nothing = p->container != OWNER_OURS && p->network != OWNER_OURS && p->volume != OWNER_OURS && !p->has_dir &&
		   !p->nodes.n;
	return 0;
}

void destroy_plan_free(struct destroy_plan *p)
{
	node_records_free(&p->nodes);
	free(p->res);
	free(p->dir);
	docker_target_destroy(p->on);
	memset(p, 0, sizeof(*p));
}
