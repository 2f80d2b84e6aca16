/* cmd/gateway_destroy.c - `openshell gateway destroy`: remove a gateway.
 *
 * The container, network and volume share the name openshell-cluster-NAME,
 * which anyone could also have chosen; each is removed only when its labels
 * say openshell made it for this gateway, and is otherwise left with a
 * warning. In the state directory only the files openshell writes are
 * removed. Destroying what is not there succeeds, so a script can run it
 * twice; without --yes the user is asked, and with no terminal to ask on,
 * nothing is done. All of it happens under the gateway's lock, as in
 * `stop` and `start`, so that it never interleaves with them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "docker/client.h"
#include "docker/container.h"
#include "gateway/lookup.h"
#include "gateway/metadata.h"
#include "gateway/node_record.h"
#include "gateway/node_remove.h"
#include "kube/user_kubeconfig.h"

struct plan {
	const char *name;
	char *res;                 /* openshell-cluster-NAME */
	char *dir;                 /* the state directory */
	enum owner container, network, volume;
	struct node_records nodes; /* its agents on other hosts, from the state directory */
	int has_dir;
	int yes, keep_volume, ignore_not_found;   /* the options */
};


static int survey(struct plan *p, os_error *err)
{
	struct gw_container c;

	if (gateway_state_dir(p->name, &p->dir, err) < 0 || gateway_inspect_followed(p->name, &c, err) < 0)
		return -1;
	p->container = container_owner(&c, p->name);
	container_free(&c);
	p->has_dir = access(p->dir, F_OK) == 0;
	if (node_records_load(p->dir, &p->nodes, err) < 0)
		return -1;
	if (docker_object_owner("network", p->res, p->name, 0, &p->network, err) < 0 ||
	    docker_object_owner("volume", p->res, p->name, 0, &p->volume, err) < 0)
		return -1;
	return 0;
}

static void warn_foreign(const char *what, enum owner pr, const struct plan *p)
{
	if (pr == OWNER_FOREIGN) {
		cleanup_free char *why = labels_foreign_reason(what, p->res, p->name);
		log_warn("%s; left it in place", why);
	}
}

static int confirmed(const struct plan *p)
{
	char answer[16] = "";

	if (p->nodes.n)
		fprintf(stderr, "Destroy gateway '%s', its %zu node%s on other hosts, and its data? [y/N] ", p->name,
			p->nodes.n, p->nodes.n == 1 ? "" : "s");
	else
		fprintf(stderr, "Destroy gateway '%s' and its data? [y/N] ", p->name);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return 0;
	answer[strcspn(answer, "\n")] = '\0';
	return strcmp(answer, "y") == 0 || strcmp(answer, "Y") == 0 || strcmp(answer, "yes") == 0;
}

static int remove_object(const char *const *args, const char *what, const struct plan *p, os_error *err)
{
	return docker_ok(args, 0, err) < 0 ? os_error_wrap(err, "cannot remove %s %s", what, p->res) : 0;
}

/* The entries --update-kubeconfig merged into the user's kubeconfig, which
 * metadata.json recorded: removed (with a backup), the user's other
 * entries and current-context kept. A failure only warns: the gateway is
 * gone, and the message says what is left. */
static void remove_user_entries(const struct plan *p)
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
static void remove_state(const struct plan *p)
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
static int remove_agents(const struct plan *p, os_error *err)
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
static int destroy(const struct plan *p, int keep_volume, os_error *err)
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

static int survey_and_destroy(struct plan *p, os_error *err)
{
	p->res = gateway_resource_name(p->name);
	if (survey(p, err) < 0)
		return -1;
	warn_foreign("container", p->container, p);
	warn_foreign("network", p->network, p);
	warn_foreign("volume", p->volume, p);
	if (p->container != OWNER_OURS && p->network != OWNER_OURS && p->volume != OWNER_OURS && !p->has_dir &&
	    !p->nodes.n) {
		if (!p->ignore_not_found)
			return os_error_set(err, OS_EXIT_NOTFOUND, "no gateway named '%s'; nothing to destroy", p->name);
		log_info("no gateway named '%s'; nothing to destroy", p->name);
		return 0;
	}
	if (!p->yes && !confirmed(p))
		return os_error_set(err, OS_EXIT_FAILURE, "gateway '%s' was not destroyed", p->name);
	return destroy(p, p->keep_volume, err);
}

/* Under the gateway's lock, so a `start` of the same gateway never runs
 * between the survey and the removal; it is held while the user is asked
 * too, as the answer is about what the survey found. */
static int run_destroy(struct plan *p, os_error *err)
{
	int lock, rc;

	if ((lock = gateway_lock_for_change(p->name, err)) < 0)
		return -1;
	rc = survey_and_destroy(p, err);
	gateway_unlock(lock);
	return rc;
}

enum { OPT_NAME = 256, OPT_KEEP_VOLUME, OPT_IGNORE_NOT_FOUND, OPT_YES };

static const struct cli_opt destroy_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "keep-volume", .key = OPT_KEEP_VOLUME,
	  .help = "keep the volume (the cluster's data)" },
	{ .name = "ignore-not-found", .key = OPT_IGNORE_NOT_FOUND,
	  .help = "a gateway that does not exist is not an error (exit 0)" },
	{ .name = "yes", .key = OPT_YES,
	  .help = "do not ask; required when stdin is not a terminal" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_destroy_spec = {
	.name = "destroy",
	.summary = "remove a gateway's container, network, volume and files",
	.about = "Remove a gateway: its container, network and volume (openshell-cluster-NAME)\n"
		 "and its kubeconfig and metadata; first, each node 'gateway node add' made,\n"
		 "from its own Docker host. Only objects labelled\n"
		 LABEL_MANAGED "=" LABEL_MANAGED_VALUE " and " LABEL_GATEWAY "=NAME are\n"
		 "removed; others of the same name are left, with a warning.\n"
		 "A gateway that does not exist is an error (exit 5), as for stop.\n",
	.opts = destroy_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser parser = { .spec = &gateway_destroy_spec };
	struct plan p = { .name = GATEWAY_DEFAULT_NAME };
	os_error err = { 0 };
	int c, rc;

	while ((c = cli_next_option(&parser, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: p.name = optarg; break;
		case OPT_KEEP_VOLUME: p.keep_volume = 1; break;
		case OPT_IGNORE_NOT_FOUND: p.ignore_not_found = 1; break;
		case OPT_YES: p.yes = 1; break;
		}
	}
	if (parser.done >= 0)
		return parser.done;
	if ((rc = cli_no_operands("gateway destroy", argc, argv)) >= 0)
		return rc;
	/* Decided before anything runs, so a script learns it at once. */
	if (!p.yes && !isatty(STDIN_FILENO))
		return log_usage_error("gateway destroy", "stdin is not a terminal to confirm on; pass --yes to destroy without asking");
	rc = run_destroy(&p, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	node_records_free(&p.nodes);
	free(p.res);
	free(p.dir);
	os_error_clear(&err);
	return rc;
}
