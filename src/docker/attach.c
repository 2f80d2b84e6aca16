/* docker/attach.c - docker run through the runner's interactive mode. */
#include "config.h"

#include "base/runner.h"
#include "base/strv.h"
#include "docker/attach.h"
#include "docker/client.h"
#include "docker/target.h"

int docker_attach(const struct docker_target *on, const char *const *args, int timeout_ms, int *status, os_error *err)
{
	struct strv argv = { 0 }, env = { 0 };
	struct run_result res;
	int rc;

	if (docker_init(err) < 0)
		return -1;
	strv_push(&argv, docker_path());
	strv_pushv(&argv, args);
	if (on)
		docker_target_env(on, &env);
	/* timeout_ms 0 stays 0: no deadline, unlike docker_start()'s calls. */
	struct run_spec spec = { .argv = strv_argv(&argv), .env_base = docker_process_target(), .env = strv_argv(&env),
				 .timeout_ms = timeout_ms, .interactive = 1 };
	rc = run_command(&spec, &res, err);
	*status = res.status;
	run_result_free(&res);
	strv_free(&argv);
	strv_free(&env);
	return rc;
}
