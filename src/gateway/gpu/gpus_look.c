/* gateway/gpu/gpus_look.c - what a look in a container says of the GPUs: the
 * look's output ahead of another's, and the Docker host's GPUs from the
 * driver's list it read (see gateway/gpu/gpus.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "gateway/gpu/gpus.h"

/* Is every MIG device SEL names one that MINE lists? */
static int migs_listed(const struct host_gpus *mine, const struct gpus *sel)
{
	for (size_t k = 0; sel->kind == GPUS_DEVICES && k < sel->ids.n; k++) {
		int i = 0;

		if (strncmp(sel->ids.v[k], "MIG-", 4) != 0)
			continue;
		while (i < mine->n && !strv_has(&mine->v[i].migs, sel->ids.v[k]))
			i++;
		if (i == mine->n)
			return 0;
	}
	return 1;
}

static void copy_gpu(struct host_gpu *to, const char *uuid, const char *name, const struct host_gpus *mine)
{
	memset(to, 0, sizeof(*to));
	to->uuid = xstrdup(uuid);
	to->name = xstrdup(name);
	for (int i = 0; i < mine->n; i++) {
		const struct host_gpu *m = &mine->v[i];

		if (strcmp(m->uuid, uuid) != 0)
			continue;
		for (size_t k = 0; k < m->migs.n; k++)
			strv_push(&to->migs, m->migs.v[k]);
		for (size_t k = 0; k < m->profiles.n; k++)
			strv_push(&to->profiles, m->profiles.v[k]);
		to->mig_enabled = m->mig_enabled;
		to->compute_cap = m->compute_cap;
	}
}

int gpus_host_of_driver(const struct host_gpus *mine, const struct gpus *sel, struct host_gpus *host)
{
	const struct gpu_driver *d = &mine->driver;

	memset(host, 0, sizeof(*host));
	if (mine->dxg)
		return 0;
	/* The toolkit's tmpfs lists the GPUs it gave: for all of them, the
	 * host's; for fewer, no longer the host's (an image before isolation). */
	if (d->view != GPU_DRIVER_OWN && !(d->view == GPU_DRIVER_TOOLKIT && sel->kind == GPUS_ALL))
		return 0;
	if (!migs_listed(mine, sel))
		return 0;
	host->n = (int)d->uuids.n;
	host->v = d->uuids.n ? xcalloc(d->uuids.n, sizeof(*host->v)) : NULL;
	for (size_t i = 0; i < d->uuids.n; i++)
		copy_gpu(&host->v[i], d->uuids.v[i], d->names.v[i], mine);
	return 1;
}

int container_gpus_read(const char *ctr, const char *text, struct host_gpus *h, const char **rest, os_error *err)
{
	static const char mark[] = GPUS_STATUS_MARK " ";
	const char *at = text, *end;
	cleanup_free char *look = NULL;
	int status;

	memset(h, 0, sizeof(*h));
	*rest = text;
	/* The status line: the mark at the start of a line. */
	while (at && (at = strstr(at, mark)) && at != text && at[-1] != '\n')
		at += sizeof(mark) - 1;
	if (!at)
		return os_error_set(err, OS_EXIT_FAILURE, "the look at the GPUs in gateway container %s did not finish (no %s line)",
				    ctr, GPUS_STATUS_MARK);
	status = atoi(at + sizeof(mark) - 1);
	end = strchr(at, '\n');
	*rest = end ? end + 1 : at + strlen(at);
	look = xstrndup(text, (size_t)(at - text));
	if (status != 0 && !(status == 6 && strstr(look, "No devices were found")))
		return os_error_set(err, OS_EXIT_FAILURE, "nvidia-smi -L in gateway container %s failed (exit status %d): %.*s", ctr,
				    status, (int)strcspn(look, "\n"), look);
	host_gpus_parse(look, h);
	return 0;
}
