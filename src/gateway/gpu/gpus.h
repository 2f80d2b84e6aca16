/* gateway/gpu/gpus.h - which GPUs a gateway gets: `--gpus all|N|LIST`.
 *
 * A selection is all of the host's GPUs, a count N, or a list of GPU
 * indices and UUIDs ("0,2", "GPU-3f…", or Docker's "device=1" for one
 * index alone, which would read as a count), the two forms Docker's --gpus
 * takes (a count or device IDs, never both: Docker refuses both). `--gpu`
 * is `--gpus all`. A selection other than all is checked against the GPUs
 * the Docker host has, which a throwaway container of the cluster image
 * lists (`nvidia-smi -L`, injected by the NVIDIA toolkit as into any GPU
 * container), so that a remote daemon's host is asked too. Nothing of the
 * gateway exists yet when that fails.
 */
#ifndef OPENSHELL_GATEWAY_GPUS_H
#define OPENSHELL_GATEWAY_GPUS_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/strv.h"
#include "docker/target.h"
#include "gateway/gpu/gpu_driver.h"
#include "gateway/gpu/mig.h"

#define GPUS_MAX 1024   /* more GPUs than any host has */

enum gpus_kind { GPUS_ALL, GPUS_COUNT, GPUS_DEVICES };

struct gpus {
	enum gpus_kind kind;
	int count;          /* GPUS_COUNT */
	struct strv ids;    /* GPUS_DEVICES: indices and UUIDs, as given */
};

/* Parse TEXT; a usage error naming the problem and the forms otherwise.
 * Docker's documented form with its CSV quotes, '"device=0,2"', is taken
 * as it is written. */
int gpus_parse(const char *text, struct gpus *g, os_error *err);
void gpus_free(struct gpus *g);

/* *TO becomes a selection of its own equal to FROM (freed with gpus_free()). */
void gpus_copy(struct gpus *to, const struct gpus *from);

/* The selection as --gpus takes it: "all", "2", "0,2", "device=1" (owned). */
char *gpus_string(const struct gpus *g);

/* Are A and B one selection? "device=0,2" and "0,2" are; a count and
 * the same number of indices are not. */
int gpus_equal(const struct gpus *a, const struct gpus *b);

/* The selection as every --json output gives it, one shape a kind:
 * {"all": true}, {"count": 2} or {"devices": ["0", "GPU-3f…"]}. */
cJSON *gpus_json(const struct gpus *g);

/* For people: "all GPUs", "2 GPUs (the first)", "GPUs 0,2" (owned). */
char *gpus_words(const struct gpus *g);

/* The value of docker run's --gpus: Docker's CSV of driver nvidia, the
 * count or the devices, and the capabilities utility and compute (the
 * CLI adds gpu). */
char *gpus_docker_request(const struct gpus *g);

struct gw_container;

/* The selection a gateway's container holds, read into OUT: a CDI
 * gateway's label (its device names cannot say a count), else its
 * DeviceRequest's Count and DeviceIDs (docker/container.h). The text is
 * read here once; everything after compares and prints the value. -1
 * when it does not read (a label edited by hand), naming it. */
int gpus_of_container(const struct gw_container *c, struct gpus *out, os_error *err);

struct host_gpu {
	char *uuid;
	char *name;
	struct strv migs;      /* its MIG devices' UUIDs (MIG-…), when MIG is enabled */
	struct strv profiles;  /* and their profiles (1g.10gb, …), in the same order */
	int mig_enabled;       /* MIG mode on, with or without MIG devices */
	int compute_cap;       /* compute capability x 10 (90: 9.0); 0 unknown */
};

struct host_gpus {
	struct host_gpu *v;   /* by index */
	int n;
	/* How Docker gave the container its GPUs, from the NVIDIA_VISIBLE_DEVICES
	 * of its first process: through CDI (the NVIDIA spec's edits make it
	 * void), or through the toolkit's hook (the devices Docker named). */
	enum { GPUS_INJECTED_UNKNOWN, GPUS_INJECTED_CDI, GPUS_INJECTED_HOOK } injected;
	/* They came through WSL2's /dev/dxg: the device plugin (0.19.1 and
	 * later) advertises them all as one device, "all" (gateway/gpu/wsl2.h). */
	int dxg;
	/* The GPUs the driver lists where the look ran (gateway/gpu/gpu_driver.h),
	 * when it asked (GPUS_LOOK_BEFORE); else unread. */
	struct gpu_driver driver;
	/* The driver's version, "565.57.01" (gpu_driver_module_version()), or NULL. */
	char *driver_version;
};

/* What a look at the GPUs runs: `nvidia-smi -L`, then (when that found
 * GPUs) GPUS_VERSION_MARK and the first line of /proc/driver/nvidia/version
 * (read by the shell, no process), GPUS_QUERY_MARK and `nvidia-smi --query-gpu=uuid,mig.mode.current,
 * compute_cap --format=csv,noheader`, which an old driver may refuse
 * (those facts are then unknown), GPUS_DXG_MARK when the GPUs came through
 * WSL2's /dev/dxg (no /dev/nvidiactl), and GPUS_ENV_MARK and the
 * NVIDIA_VISIBLE_DEVICES of the container's first process. nvidia-smi
 * -L's exit status stands. A constant: nothing of the user's is in it. */
#define GPUS_QUERY_MARK "#openshell-gpu-query"
#define GPUS_DXG_MARK "#openshell-gpu-dxg"
#define GPUS_ENV_MARK "#openshell-gpu-env"
#define GPUS_VERSION_MARK "#openshell-gpu-version"
#define GPUS_LOOK_PARTS(smi_stderr)                                                                             \
	"nvidia-smi -L" smi_stderr "; s=$?; if [ $s = 0 ]; then v=; { read -r v </proc/driver/nvidia/version; } 2>/dev/null; "  \
	"echo \"" GPUS_VERSION_MARK " $v\"; echo '" GPUS_QUERY_MARK "'; "                                          \
	"nvidia-smi --query-gpu=uuid,mig.mode.current,compute_cap --format=csv,noheader 2>/dev/null; "          \
	"if [ -e /dev/dxg ] && [ ! -e /dev/nvidiactl ]; then echo '" GPUS_DXG_MARK "'; fi; "                     \
	"echo '" GPUS_ENV_MARK "'; tr '\\0' '\\n' </proc/1/environ 2>/dev/null | "                            \
	"sed -n 's/^NVIDIA_VISIBLE_DEVICES=//p'; fi"
#define GPUS_LOOK_SCRIPT GPUS_LOOK_PARTS("") "; exit $s"

/* verify's look, ahead of another command's output in one exec: the
 * same, nvidia-smi -L's errors in the output; then, found or not, the
 * driver's list (GPU_DRIVER_SCRIPT), which verify alone reads; and
 * nvidia-smi -L's exit status on a last line, GPUS_STATUS_MARK and the
 * number. */
#define GPUS_STATUS_MARK "#openshell-gpu-status"
#define GPUS_LOOK_BEFORE GPUS_LOOK_PARTS(" 2>&1") "; " GPU_DRIVER_SCRIPT "; echo '" GPUS_STATUS_MARK "' $s"

/* Read that output: `nvidia-smi -L`'s lines ("GPU 0: NAME (UUID: GPU-…)",
 * and under a MIG-enabled GPU "  MIG 1g.10gb     Device  0: (UUID: MIG-…)"),
 * then the query's "UUID, Enabled|Disabled|[N/A], 9.0" lines, and the
 * driver's list where the look has it. */
void host_gpus_parse(const char *text, struct host_gpus *h);
void host_gpus_free(struct host_gpus *h);

/* The Docker host's GPUs as the driver lists them in a container that
 * looked as MINE did, for a container given SEL: 1 with HOST filled (each
 * GPU's MIG devices and facts as MINE knows them), or 0 when that list
 * cannot say (HOST left empty): a mount covers it and is not the
 * toolkit's list of all the GPUs, SEL names a MIG device MINE does not
 * list (the driver's procfs names none), or the GPUs came through WSL2's
 * /dev/dxg (its kernel has no driver procfs to list them). */
int gpus_host_of_driver(const struct host_gpus *mine, const struct gpus *sel, struct host_gpus *host);

/* The UUIDs the selection means on that host, in its order (a MIG device
 * means its GPU, which is what a container given it lists); an error
 * naming what the host lacks and the GPUs it has otherwise. */
int gpus_resolve(const struct gpus *g, const struct host_gpus *h, struct strv *uuids, os_error *err);

/* Refuse what G asks of a host of N GPUs, whose GPUs and MIG devices have
 * the UUIDs in KNOWN, and lacks: more GPUs than N, an index from N, a UUID
 * not known. The error names the N GPUs, then HAS (how they are known:
 * ": 0 GPU-… (NAME), …"). N < 0 judges no count or index, an empty KNOWN
 * no UUID: what a CDI spec does not name (gpu_mode_check_cdi_gpus()). */
int gpus_check_lacks(const struct gpus *g, int n, const struct strv *known, const char *has, os_error *err);

/* What the device plugin advertises as nvidia.com/gpu for these GPUs under
 * a MIG strategy: every GPU (none), every MIG device when all GPUs have
 * MIG (single), the GPUs without MIG (mixed); on WSL2 (h->dxg) one device
 * for all of them. */
int gpus_plugin_devices(const struct host_gpus *h, enum mig_strategy strategy);

/* The GPUs container CTR sees (its nvidia-smi -L). */
int container_gpus(const struct docker_ctr *ctr, int timeout_ms, struct host_gpus *h, os_error *err);
/* The same beside other calls: started, then awaited and read. */
struct run_child *container_gpus_start(const struct docker_ctr *ctr, int timeout_ms, os_error *err);
int container_gpus_finish(struct run_child *c, const char *ctr, struct host_gpus *h, os_error *err);

/* Read TEXT, a GPUS_LOOK_BEFORE's output in container CTR followed by
 * another's, into H (zeroed first), and *REST where the other's begins.
 * -1 naming CTR when the look did not finish (no status line) or
 * nvidia-smi -L failed other than finding no GPU (its first line quoted). */
int container_gpus_read(const char *ctr, const char *text, struct host_gpus *h, const char **rest, os_error *err);

/* List the Docker host's GPUs with a throwaway container of IMAGE, given
 * all of them the way the gateway gets its own: CDI or --gpus; on the
 * daemon ON names (docker/client.h; NULL: the process's). */
int host_gpus_probe(const struct docker_target *on, const char *image, int cdi, int timeout_ms, struct host_gpus *h,
		    os_error *err);
/* The same beside other calls: started, then awaited and read (ON again,
 * for the message when the toolkit is missing there). */
struct run_child *host_gpus_probe_start(const struct docker_target *on, const char *image, int cdi, int timeout_ms,
					os_error *err);
int host_gpus_probe_finish(struct run_child *c, const struct docker_target *on, const char *image, struct host_gpus *h,
			   os_error *err);

#endif
