/* docker/client.h - calling the Docker CLI.
 *
 * openshell drives the docker command-line client, never the Engine API, so
 * DOCKER_HOST, DOCKER_CONTEXT and the user's CLI config apply exactly as
 * they do for the user's own docker commands (the environment is passed
 * through, with the target's entries below over it). The executable is resolved once: $OPENSHELL_DOCKER if
 * set, else `docker` on PATH. Every call has a deadline: the per-call
 * default is 60s, settable with $OPENSHELL_CALL_TIMEOUT (a duration).
 */
#ifndef OPENSHELL_DOCKER_CLIENT_H
#define OPENSHELL_DOCKER_CLIENT_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/runner.h"

#define DOCKER_DEFAULT_CALL_TIMEOUT_MS 60000

/* The process's target: the daemon the user's environment and --context
 * name, which a call gets when it names none (ON NULL, below): entries as
 * run_spec's env takes them ("NAME=VALUE", a bare "NAME" unset), over the
 * process's environment, which openshell never changes. Set once, by
 * docker_daemon_choose() (main's --context) before any call; NULL or
 * empty: the environment's. A gateway's calls name its own daemon
 * instead. */
void docker_process_target_set(const char *const *env);
const char *const *docker_process_target(void);

/* The value of NAME (DOCKER_HOST, DOCKER_CONTEXT, DOCKER_TLS…) a docker
 * call sees: the environment's, as the target leaves it. */
const char *docker_env(const char *name);

/* Resolve the executable and the per-call deadline; idempotent. Fails with
 * OS_EXIT_DOCKER when docker cannot be found, OS_EXIT_USAGE for a bad
 * OPENSHELL_CALL_TIMEOUT. */
int docker_init(os_error *err);

const char *docker_path(void);
int docker_call_timeout_ms(void);

/* Every call names its daemon, ON: a target (docker/target.h), whose
 * entries go over the process's target; NULL is the process's target
 * itself, the daemon the user's environment and --context name. A
 * command on two daemons (node add: the server's and the node's) names
 * each in each call to it; a gateway's calls name the daemon it was made
 * on (gateway/state/lookup.h). */
struct docker_target;

/* Run `docker ARGS…` (args NULL-terminated, without "docker") on ON,
 * capturing output, with stdin from input (may be NULL), under timeout_ms
 * (0: the per-call default). Same contract as run_command(). */
int docker_run(const struct docker_target *on, const char *const *args, const char *input, size_t input_len,
	       int timeout_ms, struct run_result *res, os_error *err);

/* As docker_run(), but a non-zero exit status is an error as well. */
int docker_run_ok(const struct docker_target *on, const char *const *args, const char *input, size_t input_len,
		  int timeout_ms, struct run_result *res, os_error *err);

/* As docker_run_ok(), where success alone matters: the output is dropped
 * (a failure's stderr is the error's detail all the same). */
int docker_ok(const struct docker_target *on, const char *const *args, int timeout_ms, os_error *err);

/* As docker_run(), for a call whose work the daemon completes even once
 * its client is gone (docker run goes on creating the container): an
 * interrupt lets the call finish, for up to DOCKER_INTERRUPT_GRACE_MS, so
 * that the caller knows what was made and can undo it. */
#define DOCKER_INTERRUPT_GRACE_MS 5000
int docker_run_finishing(const struct docker_target *on, const char *const *args, int timeout_ms,
			 struct run_result *res, os_error *err);

/* A long command read as it comes: stderr merged into stdout, each line
 * handed to on_line (the fields of struct run_spec). */
struct docker_stream_opts {
	const char *const *env;   /* "NAME=VALUE" for docker alone, or NULL */
	int timeout_ms;           /* 0: the per-call default */
	int (*on_line)(void *ctx, const char *line);
	void *ctx;
};

/* As docker_run(), for a stream (see struct docker_stream_opts). */
int docker_stream(const struct docker_target *on, const char *const *args, const struct docker_stream_opts *o,
		  struct run_result *res, os_error *err);

/* A docker call that runs beside others (base/runner.h), on ON: SPEC's
 * fields but argv (docker's executable and ARGS make it; timeout_ms 0 is
 * the per-call default). docker_await() waits for its end, docker_finish()
 * stops it if it still runs; both reap it as run_await()/run_finish() do
 * and report a daemon that was lost, as every call does, naming the one
 * the call was pointed at. */
struct run_child *docker_start(const struct docker_target *on, const char *const *args, const struct run_spec *spec,
			       os_error *err);
int docker_await(struct run_child *c, struct run_result *res, os_error *err);
int docker_finish(struct run_child *c, struct run_result *res, os_error *err);

/* `docker ARGS` detached (run_detached): for cleanup that nobody should
 * wait on; it ends within timeout_ms (0: the per-call default) even
 * after openshell has exited. 0 once it is on its way. */
int docker_detached(const struct docker_target *on, const char *const *args, int timeout_ms, os_error *err);

/* Tell a call it is no longer wanted (run_stop()), before docker_drop()
 * reaps it: several dropped at once end side by side. NULL is fine. */
void docker_stop(struct run_child *c);

/* A call whose answer is no longer wanted (the command ends early):
 * stopped if it runs, reaped, and *c set to NULL. NULL is fine. */
void docker_drop(struct run_child **c);

/* Does stderr from docker say the object does not exist? */
int docker_says_missing(const char *stderr_text);

/* `docker ARGS` that inspects one object: 1 with res->out holding its
 * JSON, 0 when docker says there is no such object, -1 on failure, the
 * message "WHAT failed: …". res must be released either way. */
int docker_inspect(const struct docker_target *on, const char *const *args, const char *what, int timeout_ms,
		   struct run_result *res, os_error *err);

/* Check that the daemon answers (`docker info`), explaining how to fix it
 * when it does not; its answer (parsed into *info, owned by the caller)
 * holds the daemon's ServerVersion and what it offers for GPUs. */
int docker_info(const struct docker_target *on, cJSON **info, os_error *err);

#endif
