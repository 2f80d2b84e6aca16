/* gateway/manage/attach.c - a gateway's container on the user's terminal (see gateway/manage/attach.h). */
#include "config.h"

#include <unistd.h>

#include "base/exitcode.h"
#include "base/strv.h"
#include "docker/attach.h"
#include "gateway/manage/attach.h"

int gateway_exec_attached(const struct gateway *gw, const char *prefix, char *const *cmd, int *status,
			  os_error *err)
{
	struct strv args = { 0 };
	int rc;

	if (gateway_require_running(gw, err) < 0)
		return -1;
	strv_push(&args, "exec");
	strv_push(&args, "--interactive");
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		strv_push(&args, "--tty");
	strv_pushf(&args, "--env=KUBECONFIG=%s", GATEWAY_EXEC_KUBECONFIG);
	strv_push(&args, gw->container);
	if (prefix)
		strv_push(&args, prefix);
	strv_pushv(&args, (const char *const *)cmd);
	rc = docker_attach(gw->ctr.on, strv_argv(&args), 0, status, err);
	strv_free(&args);
	return rc;
}

int gateway_logs_attached(const struct gateway *gw, int follow, int tail, int *status, os_error *err)
{
	struct strv args = { 0 };
	int rc;

	if (!gw->c.exists)
		return os_error_set(err, OS_EXIT_NOTFOUND, "gateway '%s' has no container (%s is gone)",
				    gw->name, gw->container);
	strv_push(&args, "logs");
	if (follow)
		strv_push(&args, "--follow");
	if (tail >= 0)
		strv_pushf(&args, "--tail=%d", tail);
	strv_push(&args, gw->container);
	/* No deadline: a slow reader (| less) makes docker wait as long as the
	 * reader likes, as does --follow by design; the user ends it. */
	rc = docker_attach(gw->ctr.on, strv_argv(&args), 0, status, err);
	strv_free(&args);
	return rc;
}
