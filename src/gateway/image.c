/* gateway/image.c - the cluster image: present, or pulled (see gateway/image.h). */
#include "config.h"

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/log.h"
#include "base/runner.h"
#include "docker/client.h"
#include "gateway/deploy.h"
#include "gateway/image.h"

int image_ensure(const char *ref, long long deadline, int timeout_ms, os_error *err)
{
	const char *inspect[] = { "image", "inspect", "--format", "{{.Id}}", ref, NULL };
	const char *pull[] = { "pull", ref, NULL };
	struct run_result res = { 0 };
	int rc;

	if (docker_run(inspect, NULL, 0, call_budget_ms(deadline, docker_call_timeout_ms()), &res, err) < 0)
		goto fail;
	rc = res.status;
	run_result_free(&res);
	if (rc == 0)
		return 0;
	if (!image_ref_has_registry(ref))
		return os_error_set(err, OS_EXIT_FAILURE,
				    "image %s is not present and names no registry to pull it from; build or load it first (docker build, docker load)",
				    ref);
	log_step("pulling %s", ref);
	/* A pull legitimately takes long: it gets what is left of the overall
	 * deadline rather than the per-call one. */
	if (docker_run_ok(pull, NULL, 0, call_budget_ms(deadline, timeout_ms), &res, err) < 0)
		goto fail;
	run_result_free(&res);
	log_step_done(1);
	return 0;
fail:
	run_result_free(&res);
	return os_error_wrap(err, "cannot get image %s", ref);
}
