/* gateway/gpu/mig_caps.c - the MIG capabilities the NVIDIA runtime gives a selection (see gateway/gpu/mig_caps.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/child_output.h"
#include "base/exitcode.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/gpu_mode.h"
#include "gateway/gpu/mig_caps.h"

int mig_caps_named(const struct gpus *sel)
{
	for (size_t i = 0; sel->kind == GPUS_DEVICES && i < sel->ids.n; i++)
		if (strncmp(sel->ids.v[i], "MIG-", 4) == 0)
			return 1;
	return 0;
}

struct run_child *mig_caps_probe_start(const struct docker_target *on, const char *image, int cdi, const struct gpus *sel,
				       int timeout_ms, os_error *err)
{
	struct strv args = { 0 };
	struct run_spec spec = { .timeout_ms = timeout_ms };
	struct run_child *c;

	strv_pushv(&args, (const char *const[]){ "run", "--rm", "--network=none", "--entrypoint=sh",
						 "--label=org.openshell.managed-by=openshell-gpu-probe", NULL });
	if (cdi) {
		struct strv devices = { 0 };

		gpu_mode_cdi_devices(sel, &devices);
		for (size_t i = 0; i < devices.n; i++)
			strv_pushf(&args, "--device=%s", devices.v[i]);
		strv_free(&devices);
	} else {
		cleanup_free char *request = gpus_docker_request(sel);
		strv_pushf(&args, "--gpus=%s", request);
	}
	strv_pushv(&args, (const char *const[]){ image, "-c", "ls /dev/nvidia-caps 2>/dev/null; true", NULL });
	c = docker_start(on, strv_argv(&args), &spec, err);
	strv_free(&args);
	return c;
}

int mig_caps_probe_finish(struct run_child *c, const struct gpus *sel, struct strv *minors, os_error *err)
{
	struct run_result res = { 0 };
	cleanup_free char *which = gpus_string(sel);
	int rc = docker_await(c, &res, err);
	char *save = NULL;

	if (rc == 0 && res.status != 0)
		rc = run_failure(err, OS_EXIT_FAILURE, &res,
				 "cannot tell which MIG capabilities a container given --gpus %s gets", which);
	for (char *line = rc == 0 ? strtok_r(res.out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, MIG_CAP_NODE, strlen(MIG_CAP_NODE)) == 0 && line[strlen(MIG_CAP_NODE)])
			strv_push(minors, line + strlen(MIG_CAP_NODE));
	run_result_free(&res);
	return rc;
}
