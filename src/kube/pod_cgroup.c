/* kube/pod_cgroup.c - which pod's container a process runs in (see kube/pod_cgroup.h). */
#include "config.h"

#include <string.h>

#include "kube/pod_cgroup.h"

/* The pod's UID that path element EL (LEN long) ends with: "pod" and 36
 * characters, then the element's end or the systemd driver's ".slice"
 * ('_' read as '-'). */
static int read_uid(const char *el, size_t len, char *uid)
{
	const char *at;

	if (len > 6 && strncmp(el + len - 6, ".slice", 6) == 0)
		len -= 6;
	if (len < 3 + POD_UID_LEN)
		return 0;
	at = el + len - POD_UID_LEN;
	if (strncmp(at - 3, "pod", 3) != 0 || strspn(at, "0123456789abcdef-_") < POD_UID_LEN)
		return 0;
	for (size_t i = 0; i < POD_UID_LEN; i++)
		uid[i] = at[i] == '_' ? '-' : at[i];
	uid[POD_UID_LEN] = '\0';
	return 1;
}

/* The container's ID that path element EL (LEN long) is: its 64 hex
 * digits, after the systemd driver's "<runtime>-" and before its ".scope". */
static int read_id(const char *el, size_t len, char *id)
{
	if (len > 6 && strncmp(el + len - 6, ".scope", 6) == 0) {
		if (len < 6 + CONTAINER_ID_LEN + 1 || el[len - 6 - CONTAINER_ID_LEN - 1] != '-')
			return 0;
		el += len - 6 - CONTAINER_ID_LEN;
		len = CONTAINER_ID_LEN;
	}
	if (len != CONTAINER_ID_LEN || strspn(el, "0123456789abcdef") < CONTAINER_ID_LEN)
		return 0;
	memcpy(id, el, CONTAINER_ID_LEN);
	id[CONTAINER_ID_LEN] = '\0';
	return 1;
}

int pod_cgroup_parse(const char *line, struct pod_cgroup *out)
{
	const char *path = strchr(line, ':'), *el, *last = NULL, *parent = NULL;
	size_t len = 0, last_len = 0, parent_len = 0;

	path = path ? strchr(path + 1, ':') : NULL;
	if (!path || !strstr(path, "/kubepods"))
		return 0;
	/* The last element is the container's, the one before it its pod's
	 * (a node in another cluster's pod has that pod's further up). */
	for (el = path + 1; *el == '/'; el += len) {
		el++;
		len = strcspn(el, "/\n");
		parent = last, parent_len = last_len;
		last = el, last_len = len;
	}
	return parent && read_uid(parent, parent_len, out->pod_uid) && read_id(last, last_len, out->container_id);
}
