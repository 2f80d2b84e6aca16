/* gateway/state/gpu_use.c - the GPU use line of `gateway status` (see gateway/state/gpu_use.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/state/gpu_use.h"
#include "kube/objects.h"

/* Each device of the checkpoint once (its replicas are it), with the
 * pods that hold it. */
struct use_count {
	char *base;
	struct strv pods;   /* their UIDs */
};

static struct use_count *use_of(struct use_count **v, size_t *n, const char *id)
{
	size_t len = device_id_base(id);

	for (size_t i = 0; i < *n; i++)
		if (strlen((*v)[i].base) == len && strncmp((*v)[i].base, id, len) == 0)
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n] = (struct use_count){ .base = xstrndup(id, len) };
	return &(*v)[(*n)++];
}

static void count_use(const struct device_checkpoint *cp, const cJSON *list, struct gpu_use *use)
{
	struct use_count *v = NULL;
	struct strv sharing = { 0 };   /* the pods on shared devices, once each */
	size_t n = 0;

	for (size_t i = 0; i < cp->n_healthy; i++)
		if (kube_nvidia_resource(cp->healthy[i].resource))
			use_of(&v, &n, cp->healthy[i].id);
	for (size_t i = 0; i < cp->n; i++) {
		if (!kube_nvidia_resource(cp->v[i].resource) || !kube_live_pod(list, cp->v[i].pod_uid))
			continue;   /* another plugin's; or ended, its entry not yet collected */
		for (size_t k = 0; k < cp->v[i].ids.n; k++) {
			struct use_count *u = use_of(&v, &n, cp->v[i].ids.v[k]);
			if (!strv_has(&u->pods, cp->v[i].pod_uid))
				strv_push(&u->pods, cp->v[i].pod_uid);
		}
	}
	*use = (struct gpu_use){ .devices = (int)n };
	for (size_t i = 0; i < n; i++) {
		use->in_use += v[i].pods.n == 1;
		use->shared += v[i].pods.n > 1;
		use->free += v[i].pods.n == 0;
		for (size_t k = 0; v[i].pods.n > 1 && k < v[i].pods.n; k++)
			if (!strv_has(&sharing, v[i].pods.v[k]))
				strv_push(&sharing, v[i].pods.v[k]);
		free(v[i].base);
		strv_free(&v[i].pods);
	}
	use->shared_by = (int)sharing.n;
	strv_free(&sharing);
	free(v);
}

int gpu_use_read(const char *text, const cJSON *list, struct gpu_use *use, const char **rest)
{
	const char *mark = strstr(text, GPU_USE_MARK "\n");
	struct device_checkpoint cp;
	os_error err = { 0 };
	int rc = 0;

	*rest = mark ? mark + strlen(GPU_USE_MARK "\n") : text;
	if (!mark || !list || strspn(text, " \t\r\n") >= (size_t)(mark - text))
		return 0;   /* no checkpoint, or no pods to say who holds what */
	if (device_checkpoint_parse(text, (size_t)(mark - text), &cp, &err) == 0) {
		count_use(&cp, list, use);
		device_checkpoint_free(&cp);
		rc = 1;
	}
	os_error_clear(&err);
	return rc;
}
