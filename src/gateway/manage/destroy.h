/* gateway/manage/destroy.h - a gateway removed: its agents, container, network, volume and files.
 *
 * The container, network and volume share the name openshell-cluster-NAME,
 * which anyone could also have chosen; each is removed only when its labels
 * say openshell made it for this gateway, and is otherwise left with a
 * warning. In the state directory only the files openshell writes are
 * removed. The agents on other hosts go first, each from its own daemon:
 * while one of them cannot, the gateway is left whole. The caller holds
 * the gateway's lock (gateway_lock_for_change()) from the survey to the
 * removal, so that a start never runs between them, and may ask the user
 * in between: the answer is about what the survey found.
 */
#ifndef OPENSHELL_GATEWAY_DESTROY_H
#define OPENSHELL_GATEWAY_DESTROY_H

#include "base/error.h"
#include "base/names.h"
#include "docker/target.h"
#include "gateway/state/node_record.h"

struct destroy_plan {
	const char *name;
	char *res;                 /* openshell-cluster-NAME */
	struct docker_target *on;  /* the daemon it lives on, when not the process's (owned) */
	char *dir;                 /* the state directory */
	enum owner container, network, volume;
	struct node_records nodes; /* its agents on other hosts, from the state directory */
	int has_dir;
};

/* What of gateway NAME there is, into P (foreign objects warned of).
 * *NOTHING is set when none of it is there. */
int gateway_destroy_survey(const char *name, struct destroy_plan *p, int *nothing, os_error *err);

/* Remove what P found; the volume too unless KEEP_VOLUME. */
int gateway_destroy_apply(const struct destroy_plan *p, int keep_volume, os_error *err);

void destroy_plan_free(struct destroy_plan *p);

#endif
