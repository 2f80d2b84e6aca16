/* docker/client.c - the docker executable, its deadline, and reachability. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/command.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/parse.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/target.h"

static char *docker_exe;
static int call_timeout_ms = DOCKER_DEFAULT_CALL_TIMEOUT_MS;

static void docker_fini(void)
{
	if (run_in_child())
		return;
	free(docker_exe);
	docker_exe = NULL;
}

/* OPENSHELL_CALL_TIMEOUT into call_timeout_ms, once, for whichever asks
 * first (a flow sets its deadline's cap before its first docker call):
 * 0, or -1 when it is no duration, which docker_init() reports. */
static int read_call_timeout(void)
{
	static int read, rc;
	const char *t = getenv("OPENSHELL_CALL_TIMEOUT");
	int ms;

	if (read)
		return rc;
	read = 1;
	if (t && *t)
		rc = parse_duration_ms(t, &ms) < 0 ? -1 : (call_timeout_ms = ms, 0);
	return rc;
}

int docker_init(os_error *err)
{
	const char *want = getenv("OPENSHELL_DOCKER");

	if (docker_exe)
		return 0;
	if (read_call_timeout() < 0)
		return os_error_set(err, OS_EXIT_USAGE,
				    "OPENSHELL_CALL_TIMEOUT='%s' is not a duration; use a value like 30s or 2m",
				    getenv("OPENSHELL_CALL_TIMEOUT"));
	if (!want || !*want)
		want = "docker";
	docker_exe = command_find(want);
	if (!docker_exe) {
		if (getenv("OPENSHELL_DOCKER") && *getenv("OPENSHELL_DOCKER"))
			return os_error_set(err, OS_EXIT_DOCKER,
					    "OPENSHELL_DOCKER='%s' is not an executable; point it at the docker CLI",
					    want);
		return os_error_set(err, OS_EXIT_DOCKER,
				    "the docker CLI was not found on PATH; install Docker (Debian: apt-get install docker.io) or set OPENSHELL_DOCKER");
	}
	atexit(docker_fini);
	return 0;
}

const char *docker_path(void) { return docker_exe; }
int docker_call_timeout_ms(void)
{
	read_call_timeout();
	return call_timeout_ms;
}

/* Where a failed docker says it lost its daemon (stderr, or the merged
 * output of a streamed command), or NULL. */
static const char *daemon_lost(const struct run_result *res)
{
	const char *texts[] = { res->err, res->out }, *marks[] = { "Cannot connect to the Docker daemon",
								  "error during connect" };

	for (size_t i = 0; i < 2 && res->status != 0; i++)
		for (size_t j = 0; j < 2 && texts[i]; j++)
			if (strstr(texts[i], marks[j]))
				return strstr(texts[i], marks[j]);
	return NULL;
}

/* The daemon's entries of every docker child's environment (run_spec's
 * env_base), set by docker/daemon.h: the process's own environment is
 * never changed. */
static struct strv target;

void docker_process_target_set(const char *const *env)
{
	strv_free(&target);
	if (env)
		strv_pushv(&target, env);
}

const char *const *docker_process_target(void)
{
	return target.n ? strv_argv(&target) : NULL;
}

/* NAME in ENV (run_spec's list), over VALUE. */
static const char *env_over(const char *value, const char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && (env[i][n] == '=' || env[i][n] == '\0'))
			value = env[i][n] == '=' ? env[i] + n + 1 : NULL;
	return value;
}

const char *docker_env(const char *name)
{
	return env_over(getenv(name), docker_process_target(), name);
}

/* NAME as a docker started with ENV (run_spec's list) sees it. */
static const char *env_value(const char *const *env, const char *name)
{
	return env_over(docker_env(name), env, name);
}

/* Which daemon a message means: DOCKER_HOST's, else the context named
 * (--context, DOCKER_CONTEXT, or a gateway's own), as ENV leaves them
 * for the call (a call may be pointed at another daemon than openshell's). */
static char *daemon_named(const char *const *env)
{
	const char *host = env_value(env, "DOCKER_HOST"), *ctx = env_value(env, "DOCKER_CONTEXT");

	if (!(host && *host) && ctx && *ctx)
		return xasprintf("context %s", ctx);
	return xasprintf("DOCKER_HOST=%s", host && *host ? host : "unset");
}

/* Whatever the command, a daemon that stopped answering is the error to
 * report: every caller would otherwise misread it as its own. ENV: the
 * call's (run_env). */
static int check_daemon(int rc, const struct run_result *res, const char *const *env, os_error *err)
{
	const char *lost = daemon_lost(res);

	if (!lost)
		return rc;
	cleanup_free char *line = run_first_line(lost);
	cleanup_free char *which = daemon_named(env);
	os_error_clear(err);
	os_error_set(err, OS_EXIT_DOCKER, "lost the Docker daemon (%s): %s; check that it runs and 'docker info' works",
		     which, line);
	return -1;
}

/* SPEC for `docker ARGS` on ON, its argv and env kept in ARGV and ENV
 * (the caller frees them once the child is started: it keeps its copy). */
static struct run_spec spec_on(const struct docker_target *on, const char *const *args, const struct run_spec *spec,
			       struct strv *argv, struct strv *env)
{
	struct run_spec s = *spec;

	strv_push(argv, docker_exe);
	strv_pushv(argv, args);
	s.argv = strv_argv(argv);
	s.env_base = docker_process_target();
	/* ON's entries after the spec's own. */
	if (on) {
		if (spec->env)
			strv_pushv(env, spec->env);
		docker_target_env(on, env);
		s.env = strv_argv(env);
	}
	if (s.timeout_ms <= 0)
		s.timeout_ms = call_timeout_ms;
	return s;
}

struct run_child *docker_start(const struct docker_target *on, const char *const *args, const struct run_spec *spec,
			       os_error *err)
{
	struct strv argv = { 0 }, env = { 0 };
	struct run_child *c = NULL;

	if (docker_init(err) == 0) {
		struct run_spec s = spec_on(on, args, spec, &argv, &env);
		c = run_start(&s, err);
	}
	strv_free(&argv);
	strv_free(&env);
	return c;
}

/* Reap C by HOW (run_finish, run_await), its env (its daemon) kept for
 * the message first: the child's copy goes with it. */
static int reap(struct run_child *c, int (*how)(struct run_child *, struct run_result *, os_error *),
		struct run_result *res, os_error *err)
{
	struct strv env = { 0 };
	int rc;

	if (run_env(c))
		strv_pushv(&env, run_env(c));
	rc = check_daemon(how(c, res, err), res, env.n ? strv_argv(&env) : NULL, err);
	strv_free(&env);
	return rc;
}

int docker_finish(struct run_child *c, struct run_result *res, os_error *err)
{
	return reap(c, run_finish, res, err);
}

int docker_await(struct run_child *c, struct run_result *res, os_error *err)
{
	return reap(c, run_await, res, err);
}

int docker_detached(const struct docker_target *on, const char *const *args, int timeout_ms, os_error *err)
{
	struct strv argv = { 0 }, env = { 0 };
	int rc = -1;

	if (docker_init(err) == 0) {
		struct run_spec s = spec_on(on, args, &(struct run_spec){ .timeout_ms = timeout_ms }, &argv, &env);
		rc = run_detached(&s, err);
	}
	strv_free(&argv);
	strv_free(&env);
	return rc;
}

void docker_stop(struct run_child *c)
{
	run_stop(c);
}

void docker_drop(struct run_child **c)
{
	struct run_result res = { 0 };
	os_error e = { 0 };

	if (!*c)
		return;
	run_finish(*c, &res, &e);
	run_result_free(&res);
	os_error_clear(&e);
	*c = NULL;
}

/* Every entry point shares this: start, wait, finish; WANT_OK makes a
 * non-zero exit an error too. */
static int docker_spawn(const struct docker_target *on, struct run_spec spec, const char *const *args, int want_ok,
			struct run_result *res, os_error *err)
{
	struct run_child *c = docker_start(on, args, &spec, err);
	int rc;

	if (!c) {
		*res = (struct run_result){ .out = xstrdup(""), .err = xstrdup("") };
		return -1;
	}
	rc = docker_await(c, res, err);
	if (rc == 0 && want_ok && res->status != 0) {
		cleanup_free char *name = command_short_name((const char *const[]){ docker_exe, args[0], NULL });
		rc = run_failure(err, OS_EXIT_FAILURE, res, "%s failed (exit status %d)", name, res->status);
	}
	return rc;
}

int docker_run(const struct docker_target *on, const char *const *args, const char *input, size_t input_len,
	       int timeout_ms, struct run_result *res, os_error *err)
{
	struct run_spec spec = { .input = input, .input_len = input_len, .timeout_ms = timeout_ms };

	return docker_spawn(on, spec, args, 0, res, err);
}

int docker_run_ok(const struct docker_target *on, const char *const *args, const char *input, size_t input_len,
		  int timeout_ms, struct run_result *res, os_error *err)
{
	struct run_spec spec = { .input = input, .input_len = input_len, .timeout_ms = timeout_ms };

	return docker_spawn(on, spec, args, 1, res, err);
}

int docker_ok(const struct docker_target *on, const char *const *args, int timeout_ms, os_error *err)
{
	struct run_result res = { 0 };
	int rc = docker_run_ok(on, args, NULL, 0, timeout_ms, &res, err);

	run_result_free(&res);
	return rc;
}

int docker_run_finishing(const struct docker_target *on, const char *const *args, int timeout_ms,
			 struct run_result *res, os_error *err)
{
	struct run_spec spec = { .timeout_ms = timeout_ms, .interrupt_grace_ms = DOCKER_INTERRUPT_GRACE_MS };

	return docker_spawn(on, spec, args, 0, res, err);
}

int docker_stream(const struct docker_target *on, const char *const *args, const struct docker_stream_opts *o,
		  struct run_result *res, os_error *err)
{
	struct run_spec spec = { .timeout_ms = o->timeout_ms, .merge_stderr = 1, .env = o->env,
				 .on_line = o->on_line, .ctx = o->ctx };

	return docker_spawn(on, spec, args, 0, res, err);
}

int docker_says_missing(const char *text)
{
	/* Daemons word a missing network "network X not found"; the CLI
	 * words a name no type has "error: no such object" from v29 on. */
	return strstr(text, "No such container") || strcasestr(text, "No such object") ||
	       strstr(text, "No such image") || strstr(text, "No such network") ||
	       strstr(text, "no such volume") || strstr(text, "No such volume") ||
	       (strstr(text, "network ") && strstr(text, " not found"));
}

int docker_inspect(const struct docker_target *on, const char *const *args, const char *what, int timeout_ms,
		   struct run_result *res, os_error *err)
{
	struct run_spec spec = { .timeout_ms = timeout_ms };

	if (docker_spawn(on, spec, args, 0, res, err) < 0)
		return -1;
	if (res->status == 0)
		return 1;
	if (docker_says_missing(res->err))
		return 0;
	return run_failure(err, OS_EXIT_FAILURE, res, "%s failed", what);
}

/* A daemon (ON's) that does not answer, in the words that name the fix. */
static int unreachable(const struct docker_target *on, const char *said, os_error *err)
{
	struct strv env = { 0 };

	if (on)
		docker_target_env(on, &env);
	cleanup_free char *which = daemon_named(env.n ? strv_argv(&env) : NULL);
	strv_free(&env);

	return os_error_set(err, OS_EXIT_DOCKER,
			    "cannot reach the Docker daemon (%s): %s; check that the daemon runs and 'docker info' works",
			    which, said && *said ? said : "no answer");
}

/* docker ARGS as the first contact with the daemon (OS_EXIT_DOCKER when
 * it does not answer). */
static int first_contact(const struct docker_target *on, const char *const *args, struct run_result *res,
			 os_error *err)
{
	struct run_spec spec = { 0 };

	if (docker_spawn(on, spec, args, 0, res, err) < 0) {
		if (err->code != OS_EXIT_DOCKER || !res->err)
			return os_error_wrap(err, "cannot reach the Docker daemon");
		os_error_clear(err);   /* no daemon: said below */
	}
	if (res->status != 0 || res->out_len == 0 || res->out[0] == '\n') {
		cleanup_free char *line = run_first_line(res->err);
		return unreachable(on, line, err);
	}
	return 0;
}

int docker_info(const struct docker_target *on, cJSON **info, os_error *err)
{
	static const char *const args[] = { "info", "--format", "{{json .}}", NULL };
	struct run_result res = { 0 };
	const char *version;
	int rc = first_contact(on, args, &res, err);

	*info = NULL;
	if (rc == 0 && !(*info = json_parse(res.out, res.out_len, "docker info output", err)))
		rc = -1;
	if (rc == 0 && (!(version = json_str(*info, "ServerVersion")) || !*version)) {
		/* A CLI that exits 0 with the daemon's errors in its answer. */
		rc = unreachable(on, cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*info, "ServerErrors"), 0)),
				 err);
		cJSON_Delete(*info);
		*info = NULL;
	}
	run_result_free(&res);
	return rc;
}

