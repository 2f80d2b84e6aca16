/* gateway/gpu/gpu_errors.c - Docker's errors about a gateway's GPUs, explained. */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/gpu_errors.h"
#include "gateway/gpu/host_probe.h"

int gpu_errors_explain(const char *text, int kept, os_error *err)
{
	const char *why = NULL;
	int legacy = 1;   /* the legacy path is a way out, as well */

	if (strstr(text, "could not select device driver \"cdi\"") || strstr(text, "no CDI device driver registered")) {
		why = "the Docker daemon has CDI turned off: enable it (\"features\": {\"cdi\": true} in /etc/docker/daemon.json, then restart docker)";
	} else if (strstr(text, "unresolvable CDI devices") || strstr(text, "CDI device injection failed")) {
		why = "Docker cannot resolve the gateway's CDI devices: the NVIDIA CDI spec is missing or out of date; regenerate it with '" CDI_SPEC_GENERATE "' (or 'systemctl restart nvidia-cdi-refresh.service', which writes /var/run/cdi/nvidia.yaml)";
	} else if (strstr(text, "error mounting \"") && strstr(text, "no such file or directory") &&
		   (strstr(text, "libcuda.so.") || strstr(text, "libnvidia-"))) {
		/* A spec written for an older driver mounts that driver's
		 * libraries, which the upgrade removed. */
		why = "the NVIDIA CDI spec names driver files that are gone (it is older than the driver); regenerate it with '" CDI_SPEC_GENERATE "' (or 'systemctl restart nvidia-cdi-refresh.service'), then rerun";
		legacy = 0;
	}
	if (!why)
		return 0;
	os_error_set(err, OS_EXIT_NOGPU, "%s%s", why,
		     !legacy ? "" : kept ? ", or rebuild the gateway with --recreate --gpu-mode legacy (its cluster state is lost)"
					 : ", or use --gpu-mode legacy");
	return 1;
}

int gpu_errors_no_toolkit(const struct docker_target *on, const char *image, os_error *err)
{
	static const char fix[] = "run 'nvidia-ctk runtime configure --runtime=docker' and restart docker";
	struct host_facts f;
	os_error e = { 0 };
	int read = host_probe(on, image, docker_call_timeout_ms(), &f, &e) == 0;

	os_error_clear(&e);
	if (read && f.hook)
		os_error_set(err, OS_EXIT_NOGPU,
			     "Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is on the Docker host (%s), but dockerd has not taken it up (it does when it finds the hook on its PATH as it starts): %s",
			     f.hook, fix);
	else if (read)
		os_error_set(err, OS_EXIT_NOGPU,
			     "Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is not on the Docker host (no nvidia-container-runtime-hook in /usr/bin, /usr/local/bin, /usr/sbin, /usr/local/sbin, /bin or /sbin there); install it, %s",
			     fix);
	else
		os_error_set(err, OS_EXIT_NOGPU,
			     "Docker cannot give the gateway GPUs: the NVIDIA Container Toolkit is missing or not configured for Docker; install it, %s",
			     fix);
	if (read)
		host_facts_free(&f);
	return -1;
}
