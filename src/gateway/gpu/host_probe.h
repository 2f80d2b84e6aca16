/* gateway/gpu/host_probe.h - the GPU host's own facts, read on the daemon's host.
 *
 * The Docker daemon may run on another machine (ssh://, tcp://, a
 * context), or in a VM behind a local socket: the client's files say
 * nothing of it. So the facts come from a throwaway container of the
 * cluster image on that daemon: the host's /, /dev, /sys and /run bound
 * read-only and without their submounts, no capabilities, a read-only
 * root, removed on exit. A fixed script (no user text) lists what it finds
 * as one line a fact; host_facts_parse() reads that into the typed value
 * below. The host's network namespace (--network=host) is the one whose
 * net.core sysctls the kernel shows (bpf_jit_harden only to CAP_SYS_ADMIN,
 * which the probe lacks: then it says nothing of it); the driver's
 * /proc/driver/nvidia is the kernel's, the same in every container.
 */
#ifndef OPENSHELL_GATEWAY_HOST_PROBE_H
#define OPENSHELL_GATEWAY_HOST_PROBE_H

#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"
#include "docker/target.h"

/* An NVIDIA CDI spec in /etc/cdi or /var/run/cdi. */
struct host_cdi_spec {
	char *path;      /* as the host names it: /etc/cdi/nvidia.yaml */
	char *driver;    /* the driver its library mounts name, or NULL */
};

struct host_facts {
	char *driver;            /* the loaded NVIDIA driver's version, or NULL */
	struct strv gpus;        /* each GPU the driver knows, by its model */
	int nvidia0;             /* /dev/nvidia0 is a character device ... */
	unsigned major, minor;   /* ... with this number ... */
	int nvidia0_char_link;   /* ... and /dev/char/MAJOR:MINOR names it */
	int dxg;                 /* /dev/dxg (WSL2's GPU paravirtualisation) */
	int tegra;               /* /etc/nv_tegra_release, or a Tegra SoC family */
	char *hook;              /* nvidia-container-runtime-hook's path, or NULL */
	char *ctk;               /* nvidia-ctk's path, or NULL */
	int bpf_jit_harden;      /* net.core.bpf_jit_harden, -1 unread */
	struct host_cdi_spec *specs;
	size_t n_specs;
};

/* Run the probe in IMAGE (present on the daemon ON names, docker/client.h;
 * NULL: the process's) and read its facts; timeout_ms 0 is the per-call
 * default. */
int host_probe(const struct docker_target *on, const char *image, int timeout_ms, struct host_facts *f, os_error *err);

/* The probe's output, one fact a line, into F (zeroed first). Output
 * without the closing "end" line is an error: the probe did not finish. */
int host_facts_parse(const char *text, struct host_facts *f, os_error *err);

/* Do the host's GPUs come through WSL2's /dev/dxg alone (it is there, and
 * none of the driver's /dev/nvidiaN)? F may be NULL: not read, no. */
int host_facts_wsl2(const struct host_facts *f);

void host_facts_free(struct host_facts *f);

#endif
