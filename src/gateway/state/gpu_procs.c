/* gateway/state/gpu_procs.c - the processes on a gateway's GPUs (see gateway/state/gpu_procs.h). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "gateway/state/gpu_procs.h"
#include "kube/objects.h"
#include "kube/pod_cgroup.h"

/* The name of the container with ID among a pod's STATUSES, or NULL. */
static const char *container_named(const cJSON *statuses, const char *id)
{
	const cJSON *cs;

	cJSON_ArrayForEach(cs, statuses) {
		const char *cid = json_str(cs, "containerID"), *sep = cid ? strstr(cid, "://") : NULL;
		if (sep && strcmp(sep + 3, id) == 0)
			return json_str(cs, "name");
	}
	return NULL;
}

void gpu_holder_set(struct gpu_holder *h, const char *ns, const char *pod, const char *container)
{
	*h = (struct gpu_holder){ .ns = xstrdup(ns), .pod = xstrdup(pod), .container = xstrdup(container) };
}

char *gpu_holder_text(const struct gpu_holder *h)
{
	return xasprintf("%s/%s/%s", h->ns, h->pod, h->container);
}

int gpu_holder_same(const struct gpu_holder *a, const struct gpu_holder *b)
{
	return strcmp(a->ns, b->ns) == 0 && strcmp(a->pod, b->pod) == 0 && strcmp(a->container, b->container) == 0;
}

void gpu_holder_free(struct gpu_holder *h)
{
	free(h->ns);
	free(h->pod);
	free(h->container);
	*h = (struct gpu_holder){ 0 };
}

/* The live pod with the cgroup's UID whose container (an init container's
 * too) has its ID, into *H; none named when there is none. */
static void holder_of(const struct pod_cgroup *cg, const cJSON *pod_list, struct gpu_holder *h)
{
	const cJSON *pod = kube_live_pod(pod_list, cg->pod_uid), *md = json_get(pod, "metadata", NULL);
	const char *ns = json_str(md, "namespace"), *name = json_str(md, "name"), *ctr;

	if (!ns || !name)
		return;
	ctr = container_named(json_get(pod, "status", "containerStatuses", NULL), cg->container_id);
	if (!ctr)
		ctr = container_named(json_get(pod, "status", "initContainerStatuses", NULL), cg->container_id);
	if (ctr)
		gpu_holder_set(h, ns, name, ctr);
}

/* A count, or -1 for what is not one ("[N/A]"). */
static long long count_of(const char *s)
{
	int v;

	return parse_uint(s, INT_MAX, &v) == 0 ? v : -1;
}

void gpu_procs_read(const char *text, const char *node, const cJSON *pod_list, struct gpu_procs *p)
{
	cleanup_free char *copy = xstrdup(text ? text : "");
	char *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char pid[32], uuid[128], mem[32];
		int used = 0;
		long long n;
		struct pod_cgroup cg;
		struct gpu_proc *g;

		if (sscanf(line, "%31s %127s %31s %n", pid, uuid, mem, &used) < 3 || (n = count_of(pid)) < 0)
			continue;
		p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
		g = &p->v[p->n++];
		*g = (struct gpu_proc){ .node = node, .index = -1, .uuid = xstrdup(uuid), .pid = n,
					.mem_mib = count_of(mem) };
		if (used && pod_cgroup_parse(line + used, &cg)) {
			g->pod_uid = xstrdup(cg.pod_uid);
			holder_of(&cg, pod_list, &g->holder);
		}
	}
}

void gpu_procs_free(struct gpu_procs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].uuid);
		free(p->v[i].pod_uid);
		gpu_holder_free(&p->v[i].holder);
	}
	free(p->v);
	*p = (struct gpu_procs){ 0 };
}
