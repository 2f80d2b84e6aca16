/* gateway/verify/verify_nodes.c - verify's node-gpus check: each agent's GPUs proven on its own node (see gateway/verify/verify_checks.h). */
#include "config.h"

#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/daemon.h"
#include "gateway/gpu/gpus.h"
#include "gateway/verify/verify_checks.h"

int verify_nodes_start(const struct gateway *gw, struct verify_nodes *vn, os_error *err)
{
	memset(vn, 0, sizeof(*vn));
	if (node_records_load(gw->state_dir, &vn->rs, err) < 0)
		return -1;
	for (size_t i = 0; i < vn->rs.n && vn->n < VERIFY_MAX_NODES; i++) {
		const struct node_record *r = &vn->rs.v[i];
		size_t k = vn->n++;
		os_error e = { 0 };

		if (!r->gpu) {
			vn->n--;
			continue;
		}
		vn->rec[k] = r;
		vn->pods[k] = (struct verify_node_pod){ .node = r->name, .check = { .name = r->name, .status = CHECK_SKIP } };
		/* What its agent sees, on its host, beside the pods. */
		if (!(vn->looks[k] = container_gpus_start(&(struct docker_ctr){ &r->docker, r->container }, 0, &e)))
			vn->look_error[k] = xstrdup(e.msg);
		os_error_clear(&e);
	}
	return 0;
}

/* The pod's GPU must be one its node's agent sees; on WSL2 (/dev/dxg) its
 * one device is all of them, which its kept answer is judged by again. */
static void judge_one(struct verify_nodes *vn, size_t k)
{
	struct verify_node_pod *np = &vn->pods[k];
	struct check *c = &np->check;
	cleanup_free char *uuid = NULL;
	struct host_gpus h = { 0 };
	struct strv seen = { 0 };
	os_error e = { 0 };

	if (vn->looks[k] && container_gpus_finish(vn->looks[k], vn->rec[k]->container, &h, &e) < 0)
		vn->look_error[k] = xstrdup(e.msg);
	vn->looks[k] = NULL;
	if (h.dxg && h.n > 1 && np->out) {
		verify_judge_smoke(np->pod, NULL, h.n, np->phase, np->code, np->out, c);
		free(c->detail);
		c->detail = c->status == CHECK_FAIL ? xstrdup(np->out) : NULL;
	}
	for (int i = 0; i < h.n; i++)
		strv_push(&seen, h.v[i].uuid);
	uuid = verify_evidence_uuid(c);
	if (vn->look_error[k] && c->evidence)
		check_set(c, CHECK_FAIL, xasprintf("%s, but its agent's GPUs cannot be read: %s", c->evidence,
						   vn->look_error[k]));
	else if (c->status == CHECK_PASS && uuid && !strv_has(&seen, uuid))
		check_set(c, CHECK_FAIL, xasprintf("%s, which is not one of the GPUs of its agent on %s", c->evidence,
						   vn->rec[k]->docker.endpoint));
	host_gpus_free(&h);
	strv_free(&seen);
	os_error_clear(&e);
}

void verify_nodes_judge(struct verify_nodes *vn, struct check *c)
{
	enum check_status worst = CHECK_PASS;
	cleanup_free char *all = xstrdup("");

	for (size_t k = 0; k < vn->n; k++) {
		struct check *p = &vn->pods[k].check;
		char *joined;

		judge_one(vn, k);
		/* A node with GPUs whose pod did not run has not proven them. */
		if (p->status != CHECK_PASS)
			worst = CHECK_FAIL;
		joined = xasprintf("%s%s%s: %s", all, *all ? "; " : "", vn->pods[k].node,
				   p->evidence ? p->evidence : "not run");
		free(all);
		all = joined;
	}
	check_set(c, worst, xstrdup(all));
}

void verify_nodes_free(struct verify_nodes *vn)
{
	for (size_t k = 0; k < vn->n; k++) {
		docker_drop(&vn->looks[k]);
		free(vn->look_error[k]);
		free(vn->pods[k].check.evidence);
		free(vn->pods[k].check.detail);
		free(vn->pods[k].pod);
		free(vn->pods[k].phase);
		free(vn->pods[k].out);
	}
	node_records_free(&vn->rs);
	memset(vn, 0, sizeof(*vn));
}
