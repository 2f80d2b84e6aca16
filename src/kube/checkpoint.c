/* kube/checkpoint.c - the kubelet's device-manager checkpoint (see kube/checkpoint.h). */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"
#include "kube/checkpoint.h"

static int bad(os_error *err, const char *what)
{
	return os_error_set(err, OS_EXIT_FAILURE, "the kubelet's device checkpoint (%s) %s",
			    KUBELET_DEVICE_CHECKPOINT, what);
}

/* DeviceIDs: NUMA node -> IDs ({"0": [...], "-1": [...]}). */
static int read_ids(const cJSON *per_numa, struct strv *ids)
{
	const cJSON *node, *id;

	if (!cJSON_IsObject(per_numa))
		return -1;
	cJSON_ArrayForEach(node, per_numa) {
		if (!cJSON_IsArray(node))
			return -1;
		cJSON_ArrayForEach(id, node) {
			if (!cJSON_IsString(id))
				return -1;
			strv_push(ids, id->valuestring);
		}
	}
	return 0;
}

static int read_entry(const cJSON *e, struct checkpoint_entry *out)
{
	const char *uid = json_str(e, "PodUID"), *ctr = json_str(e, "ContainerName"),
		   *res = json_str(e, "ResourceName");

	if (!uid || !ctr || !res)
		return -1;
	out->pod_uid = xstrdup(uid);
	out->container = xstrdup(ctr);
	out->resource = xstrdup(res);
	return read_ids(json_get(e, "DeviceIDs", NULL), &out->ids);
}

static int read_registered(const cJSON *reg, struct device_checkpoint *cp)
{
	const cJSON *res, *id;

	if (cJSON_IsNull(reg) || !reg)
		return 0;
	if (!cJSON_IsObject(reg))
		return -1;
	cJSON_ArrayForEach(res, reg) {
		if (!cJSON_IsArray(res) && !cJSON_IsNull(res))
			return -1;
		cJSON_ArrayForEach(id, res) {
			if (!cJSON_IsString(id))
				return -1;
			cp->healthy = xrealloc(cp->healthy, (cp->n_healthy + 1) * sizeof(*cp->healthy));
			cp->healthy[cp->n_healthy++] = (struct checkpoint_device){ .resource = xstrdup(res->string),
										    .id = xstrdup(id->valuestring) };
		}
	}
	return 0;
}

int device_checkpoint_parse(const char *text, size_t len, struct device_checkpoint *cp, os_error *err)
{
	cJSON *j = json_parse(text, len, "the kubelet's device checkpoint", err);
	const cJSON *data = json_get(j, "Data", NULL), *entries, *e;
	int rc = -1;

	memset(cp, 0, sizeof(*cp));
	if (!j)
		return -1;
	if (!cJSON_IsObject(data)) {
		bad(err, "has no Data object");
		goto out;
	}
	entries = json_get(data, "PodDeviceEntries", NULL);
	if (entries && !cJSON_IsNull(entries) && !cJSON_IsArray(entries)) {
		bad(err, "has a PodDeviceEntries that is not a list");
		goto out;
	}
	cp->v = xcalloc((size_t)cJSON_GetArraySize(entries) + 1, sizeof(*cp->v));
	cJSON_ArrayForEach(e, entries) {
		if (read_entry(e, &cp->v[cp->n++]) < 0) {
			bad(err, "has a pod entry without PodUID, ContainerName, ResourceName or DeviceIDs");
			goto out;
		}
	}
	if (read_registered(json_get(data, "RegisteredDevices", NULL), cp) < 0) {
		bad(err, "has RegisteredDevices that are not lists of IDs by resource");
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		device_checkpoint_free(cp);
	cJSON_Delete(j);
	return rc;
}

void device_checkpoint_free(struct device_checkpoint *cp)
{
	for (size_t i = 0; i < cp->n; i++) {
		free(cp->v[i].pod_uid);
		free(cp->v[i].container);
		free(cp->v[i].resource);
		strv_free(&cp->v[i].ids);
	}
	free(cp->v);
	for (size_t i = 0; i < cp->n_healthy; i++) {
		free(cp->healthy[i].resource);
		free(cp->healthy[i].id);
	}
	free(cp->healthy);
	memset(cp, 0, sizeof(*cp));
}

size_t device_id_base(const char *id)
{
	const char *sep = strstr(id, "::");

	return sep ? (size_t)(sep - id) : strlen(id);
}
