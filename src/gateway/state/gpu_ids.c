/* gateway/state/gpu_ids.c - the device plugin's IDs read against a gateway's GPU rows (see gateway/state/gpu_ids.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "gateway/state/gpu_ids.h"
#include "kube/objects.h"

/* Does the plugin's ID name the row's device: its UUID, a replica of it
 * (UUID::K), under DEVICE_ID_STRATEGY=index its GPU's index (I) or a MIG
 * device's (I:K), or on WSL2 the one device "all" that is every GPU? */
int gpu_id_names(const char *id, const struct gpu_row *r)
{
	size_t len = device_id_base(id);
	int i, k, n = 0;

	if (len == strlen(GPU_ID_WSL2) && strncmp(id, GPU_ID_WSL2, len) == 0)
		return r->mig_index < 0;
	if (sscanf(id, "%d:%d%n", &i, &k, &n) == 2 && (size_t)n == len)
		return r->index == i && r->mig_index == k;
	if (id[0] && strspn(id, "0123456789") == len)
		return r->mig_index < 0 && atoi(id) == r->index;
	return strlen(r->uuid) == len && strncmp(id, r->uuid, len) == 0;
}

/* The row's device among the healthy ones the kubelet recorded, replicas
 * counted. */
int gpu_ids_registered(const struct device_checkpoint *cp, const struct gpu_row *r)
{
	int n = 0;

	for (size_t i = 0; i < cp->n_healthy; i++)
		n += kube_nvidia_resource(cp->healthy[i].resource) && gpu_id_names(cp->healthy[i].id, r);
	return n;
}

/* Is that exact ID (a replica, say) registered healthy? */
static int id_registered(const struct device_checkpoint *cp, const char *id)
{
	for (size_t i = 0; i < cp->n_healthy; i++)
		if (strcmp(cp->healthy[i].id, id) == 0)
			return 1;
	return 0;
}

/* The device ID a plugin's log line names ("… on Device=GPU-…::3;
 * marking device as unhealthy."), or NULL. */
static char *logged_device(const char *line)
{
	const char *at = strstr(line, "Device=");

	return at ? xstrndup(at + 7, strcspn(at + 7, "; ")) : NULL;
}

/* The plugin's last word on the row's device: its log line's message
 * after klog's header; or NULL, also when the device it named is healthy
 * again (a line of an earlier run of the plugin). */
char *gpu_sick_reason(const struct device_checkpoint *cp, const char *lines, const struct gpu_row *r)
{
	cleanup_free char *copy = xstrdup(lines ? lines : "");
	cleanup_free char *dev = NULL;
	char *save = NULL;
	const char *last = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cleanup_free char *id = logged_device(line);
		if (id && gpu_id_names(id, r))
			last = line;
	}
	if (!last || ((dev = logged_device(last)) && id_registered(cp, dev)))
		return NULL;
	return xstrdup(strstr(last, "] ") ? strstr(last, "] ") + 2 : last);
}
