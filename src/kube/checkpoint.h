/* kube/checkpoint.h - the kubelet's device-manager checkpoint, read.
 *
 * /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint, as
 * pkg/kubelet/cm/devicemanager/checkpoint (Data) writes it: the healthy
 * devices of each registered resource (RegisteredDevices), and each
 * container's devices (PodDeviceEntries: PodUID, ContainerName,
 * ResourceName, DeviceIDs by NUMA node). An entry stays until the
 * kubelet's next allocation after its pod ended: a reader joins the
 * entries with the pods that live. Device IDs are the plugin's: a GPU's
 * or MIG device's UUID, "UUID::K" for a shared GPU's replica K, or an
 * index under DEVICE_ID_STRATEGY=index. The checksum is the kubelet's
 * to check, not a reader's.
 */
#ifndef OPENSHELL_KUBE_CHECKPOINT_H
#define OPENSHELL_KUBE_CHECKPOINT_H

#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"

#define KUBELET_DEVICE_CHECKPOINT "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint"

struct checkpoint_entry {
	char *pod_uid, *container, *resource;
	struct strv ids;          /* every NUMA node's, in the file's order */
};

struct checkpoint_device {
	char *resource, *id;
};

struct device_checkpoint {
	struct checkpoint_entry *v;
	size_t n;
	struct checkpoint_device *healthy;   /* RegisteredDevices: each resource's healthy devices */
	size_t n_healthy;
};

/* Parse TEXT (LEN bytes); a malformed file fails naming what is wrong. */
int device_checkpoint_parse(const char *text, size_t len, struct device_checkpoint *cp, os_error *err);
void device_checkpoint_free(struct device_checkpoint *cp);

/* The device a plugin's ID stands for: "UUID::K" is UUID's replica K.
 * Returns the length of ID's device part. */
size_t device_id_base(const char *id);

#endif
