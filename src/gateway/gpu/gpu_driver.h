/* gateway/gpu/gpu_driver.h - the host's GPUs as the NVIDIA driver lists them, read in a container.
 *
 * /proc/driver/nvidia is the kernel's: every container of a host sees the
 * driver's own list of its GPUs, gpus/BUS/information (moby masks no
 * /proc/driver path), unless a mount covers it: libnvidia-container's
 * tmpfs (src/nvc_mount.c, mount_procfs and mount_procfs_gpu), which lists
 * only the GPUs the toolkit gave that container. The gateway's entrypoint
 * undoes that tmpfs whenever it keeps a selection (deploy/docker/
 * gpu-isolate.sh), so the gateway's own container can say what GPUs the
 * Docker host has: verify's look at the host costs no container of its
 * own. NVML numbers GPUs in PCI bus order, and Docker's --gpus indices are
 * NVML's, so the list is sorted by bus.
 */
#ifndef OPENSHELL_GATEWAY_GPU_DRIVER_H
#define OPENSHELL_GATEWAY_GPU_DRIVER_H

#include "base/strv.h"

/* A part of the GPU look script (gateway/gpu/gpus.h): the mark and whether a
 * mount covers /proc/driver/nvidia ("toolkit") or not ("own"), then
 * "BUS uuid GPU-…" and "BUS model NAME" for each GPU the driver lists.
 * A constant: nothing of the user's is in it. */
#define GPU_DRIVER_MARK "#openshell-gpu-driver"
/* Then "GPU_CAPS_MARK N MINOR..." for each GPU of device minor N with MIG
 * capabilities (capabilities/gpuN/mig/ ** /access, each naming the minor of
 * its /dev/nvidia-caps/nvidia-capMINOR), and "GPU_NODES_MARK NODE...",
 * the GPU device nodes the container has (nvidia0, nvidia-caps/nvidia-cap12). */
#define GPU_CAPS_MARK "#openshell-gpu-caps"
#define GPU_NODES_MARK "#openshell-gpu-nodes"
#define GPU_DRIVER_SCRIPT                                                                                       \
	"echo \"" GPU_DRIVER_MARK " $(awk '$5 == \"/proc/driver/nvidia\" { m = 1 } "                           \
	"END { print m ? \"toolkit\" : \"own\" }' /proc/self/mountinfo 2>/dev/null)\"; "                        \
	"set -- /proc/driver/nvidia/gpus/*/information; [ ! -f \"$1\" ] || awk '"                               \
	"FNR == 1 { b = FILENAME; sub(\"/information$\", \"\", b); sub(\".*/\", \"\", b) } "                    \
	"{ v = $0; sub(/^[^:]*:[ \\t]*/, \"\", v) } /^Model:/ { print b, \"model\", v } "                       \
	"/^GPU UUID:/ { print b, \"uuid\", v }' \"$@\"; "                                                 \
	"for d in /proc/driver/nvidia/capabilities/gpu*/mig; do [ -d \"$d\" ] || continue; g=${d%/mig}; "        \
	"echo \"" GPU_CAPS_MARK " ${g##*/gpu} $(find \"$d\" -name access -exec sed -n "                            \
	"'s/^DeviceFileMinor:[[:space:]]*//p' {} + | tr '\\n' ' ')\"; done; "                                    \
	"echo \"" GPU_NODES_MARK " $(cd /dev && ls -d nvidia[0-9]* nvidia-caps/nvidia-cap[0-9]* 2>/dev/null | "   \
	"tr '\\n' ' ')\""

enum gpu_driver_view {
	GPU_DRIVER_UNREAD,    /* no such part, or the mounts could not be read */
	GPU_DRIVER_OWN,       /* the driver's whole list: the host's GPUs */
	GPU_DRIVER_TOOLKIT,   /* the toolkit's tmpfs: the GPUs it gave the container */
};

/* A MIG capability: the minor of /dev/nvidia-caps/nvidia-capMINOR, the
 * device minor of its GPU, and whether the container has the node. */
struct gpu_cap {
	int minor, gpu, held;
};

struct gpu_driver {
	enum gpu_driver_view view;
	struct strv uuids;   /* in PCI bus order */
	struct strv names;   /* each one's model, in the same order */
	struct gpu_cap *caps;     /* every MIG capability the driver lists */
	size_t n_caps;
	struct strv gpu_nodes;    /* the container's /dev/nvidiaN, as "N" */
};

/* The part of a look's output that follows GPU_DRIVER_MARK, into D
 * (zeroed first); a GPU without a UUID is left out. */
void gpu_driver_parse(const char *text, struct gpu_driver *d);

/* The kernel module's version in the first line of
 * /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel
 * Module  550.54.15  Tue Mar 5 ...", or of the open modules "NVRM
 * version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release
 * Build ..." -> "550.54.15", owned), or NULL. The
 * toolkit's tmpfs over /proc/driver/nvidia keeps that file, as CDI leaves
 * the driver's own. */
char *gpu_driver_module_version(const char *line);
void gpu_driver_free(struct gpu_driver *d);

#endif
