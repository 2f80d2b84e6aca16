/* gateway/gpu/gpu_mode.c - CDI or the legacy hook (see gateway/gpu/gpu_mode.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"

static const char *const mode_names[] = { [GPU_MODE_AUTO] = "auto", [GPU_MODE_CDI] = "cdi", [GPU_MODE_LEGACY] = "legacy" };

int gpu_mode_parse(const char *text, enum gpu_mode *m, os_error *err)
{
	int i;

	if (parse_option_word("--gpu-mode", text, mode_names,
			      (int)(sizeof(mode_names) / sizeof(mode_names[0])), &i, err) < 0)
		return -1;
	*m = (enum gpu_mode)i;
	return 0;
}

const char *gpu_mode_name(enum gpu_mode m)
{
	return mode_names[m];
}

/* Is the daemon's ServerVersion ("29.2.0") at least MAJOR.MINOR? */
static int version_at_least(const char *v, long major, long minor)
{
	char *end = NULL;
	long ma = v ? strtol(v, &end, 10) : 0, mi = end && *end == '.' ? strtol(end + 1, NULL, 10) : 0;

	return ma > major || (ma == major && mi >= minor);
}

void daemon_gpus_from_info(const cJSON *info, struct daemon_gpus *d)
{
	const cJSON *dev;

	memset(d, 0, sizeof(*d));
	d->nvidia_runtime = cJSON_GetObjectItemCaseSensitive(json_get(info, "Runtimes", NULL), "nvidia") != NULL;
	cJSON_ArrayForEach(dev, json_get(info, "DiscoveredDevices", NULL)) {
		const char *id = json_str(dev, "ID"), *source = json_str(dev, "Source");

		if (id && source && strcmp(source, "cdi") == 0 && strncmp(id, CDI_GPU_PREFIX, strlen(CDI_GPU_PREFIX)) == 0)
			strv_push(&d->cdi, id);
	}
	d->gpus_by_cdi = d->cdi.n > 0 && version_at_least(json_str(info, "ServerVersion"), 29, 2);
	d->wsl2 = wsl2_of_info(info);
}

int daemon_gpus_parse(const char *json, size_t len, struct daemon_gpus *d, os_error *err)
{
	cJSON *info = json_parse(json, len, "docker info output", err);

	memset(d, 0, sizeof(*d));
	if (!info)
		return -1;
	daemon_gpus_from_info(info, d);
	cJSON_Delete(info);
	return 0;
}

void daemon_gpus_free(struct daemon_gpus *d)
{
	strv_free(&d->cdi);
	memset(d, 0, sizeof(*d));
}

int gpu_mode_resolve(enum gpu_mode asked, const struct daemon_gpus *d, enum gpu_mode *used, os_error *err)
{
	if (asked == GPU_MODE_CDI && d->cdi.n == 0)
		return os_error_set(err, OS_EXIT_NOGPU,
				    "--gpu-mode cdi: the Docker daemon lists no NVIDIA CDI devices (docker info: DiscoveredDevices, Docker >= 28.2); generate the spec with '" CDI_SPEC_GENERATE "' and restart docker, or use --gpu-mode legacy");
	/* On WSL2 only the hook is sure to give libdxcore.so (gateway/gpu/wsl2.h). */
	*used = asked != GPU_MODE_AUTO ? asked : d->cdi.n && d->wsl2 == WSL2_NO ? GPU_MODE_CDI : GPU_MODE_LEGACY;
	return 0;
}

void gpu_mode_cdi_devices(const struct gpus *g, struct strv *out)
{
	if (g->kind == GPUS_ALL)
		strv_push(out, CDI_GPU_PREFIX "all");
	/* CDI has no count: Docker's nvidia driver gives the first N. */
	for (int i = 0; g->kind == GPUS_COUNT && i < g->count; i++)
		strv_pushf(out, CDI_GPU_PREFIX "%d", i);
	for (size_t i = 0; g->kind == GPUS_DEVICES && i < g->ids.n; i++)
		strv_pushf(out, CDI_GPU_PREFIX "%s", g->ids.v[i]);
}

/* The daemon's NAMES for a message, less their common prefix: "0, GPU-…, all" (owned). */
static char *cdi_list(const struct strv *names)
{
	struct strv short_names = { 0 };
	char *list;

	for (size_t k = 0; k < names->n; k++)
		strv_push(&short_names, names->v[k] + strlen(CDI_GPU_PREFIX));
	list = strv_join(&short_names, ", ");
	strv_free(&short_names);
	return list;
}

int gpu_mode_cdi_check(const struct strv *want, const struct daemon_gpus *d, os_error *err)
{
	for (size_t i = 0; i < want->n; i++) {
		if (!strv_has(&d->cdi, want->v[i])) {
			cleanup_free char *has = cdi_list(&d->cdi);

			return os_error_set(err, OS_EXIT_NOGPU,
					    "the Docker daemon's CDI spec has no device %s (it lists " CDI_GPU_PREFIX "%s); if the GPUs changed, regenerate the spec with '" CDI_SPEC_GENERATE "', or use --gpu-mode legacy",
					    want->v[i], *has ? has : "none");
		}
	}
	return 0;
}

int gpu_mode_check_cdi_gpus(const struct gpus *g, const struct daemon_gpus *d, os_error *err)
{
	struct strv known = { 0 };
	int n = 0, gpu_uuids = 0, rc;
	cleanup_free char *names = cdi_list(&d->cdi);
	cleanup_free char *has = xasprintf(", by the Docker daemon's CDI devices (" CDI_GPU_PREFIX "%s)", names);

	for (size_t i = 0; i < d->cdi.n; i++) {
		const char *name = d->cdi.v[i] + strlen(CDI_GPU_PREFIX);

		if (*name && strspn(name, "0123456789") == strlen(name) && strlen(name) <= 4 && atoi(name) >= n)
			n = atoi(name) + 1;
		else if (strncmp(name, "GPU-", 4) == 0 || strncmp(name, "MIG-", 4) == 0)
			strv_push(&known, name);
		gpu_uuids += strncmp(name, "GPU-", 4) == 0;
	}
	/* A spec names GPUs by index, by UUID or both (nvidia-ctk's
	 * --device-name-strategy): an index it lacks below as many GPUs as
	 * its UUIDs count is the spec's lack, which gpu_mode_cdi_check()
	 * refuses, not the host's. */
	if (gpu_uuids > n)
		n = gpu_uuids;
	rc = gpus_check_lacks(g, n ? n : -1, &known, has, err);
	strv_free(&known);
	return rc;
}
