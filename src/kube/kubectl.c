/* kube/kubectl.c - kubectl through docker exec. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/child_output.h"
#include "base/clock.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "kube/kubectl.h"

/* A deadline must end the request inside the container too (see
 * kube/kubectl.h). */
int kube_request_s(int timeout_ms)
{
	int t = timeout_ms > 0 ? timeout_ms : docker_call_timeout_ms();

	return t > 2000 ? (t - 1000) / 1000 : 1;
}

/* What may run ahead of kubectl in its exec, as one constant script whose
 * parts each take their operand in turn (nothing of it is parsed by the
 * shell) and end by exec'ing kubectl's argv, the operands that remain.
 * THEN: a script of the caller's whose success kubectl waits for; its
 * failure ends the call with its status and stderr, its success is a line
 * of its own ahead of what follows. BEFORE: a script of the caller's, in
 * a shell of its own, whose output goes ahead of the file's. FILE: read
 * in the same exec; the mark follows its text on a line of its own whether
 * or not the file is there. kubectl's exit status and stderr are the
 * call's. */
#define THEN_PART "sh -c \"$1\" || exit; echo '" KUBE_THEN_MARK "'; shift; "
#define BEFORE_PART "sh -c \"$1\"; shift; "
#define FILE_PART "cat -- \"$1\" 2>/dev/null; printf '\\n%s\\n' '" KUBE_FILE_MARK "'; shift; "

struct ahead {
	const char *then, *before, *file;
	int interactive;   /* keep stdin open: apply -f -, or THEN's input */
};

static void exec_argv_s(const struct docker_ctr *ctr, const struct ahead *a, int request_s, struct strv *argv)
{
	strv_push(argv, "exec");
	if (a->interactive)
		strv_push(argv, "--interactive");
	strv_push(argv, ctr->name);
	if (a->then || a->before || a->file) {
		const char *operands[] = { a->then, a->before, a->file };
		cleanup_free char *script = xasprintf("%s%s%sexec \"$@\"", a->then ? THEN_PART : "",
						      a->before ? BEFORE_PART : "", a->file ? FILE_PART : "");

		strv_pushv(argv, (const char *const[]){ "sh", "-c", script, "openshell", NULL });
		for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++)
			if (operands[i])
				strv_push(argv, operands[i]);
	}
	strv_push(argv, "kubectl");
	strv_pushf(argv, "--request-timeout=%ds", request_s);
}

static void exec_argv(const struct docker_ctr *ctr, const char *file, int interactive, int timeout_ms,
		      struct strv *argv)
{
	exec_argv_s(ctr, &(struct ahead){ .file = file, .interactive = interactive }, kube_request_s(timeout_ms), argv);
}

void kube_exec_argv(const struct docker_ctr *ctr, const char *then, const char *file, int request_s, struct strv *argv)
{
	/* THEN's stdin is the call's: the exec keeps it open. */
	exec_argv_s(ctr, &(struct ahead){ .then = then, .file = file, .interactive = then != NULL }, request_s, argv);
}

const char *kube_file_split(const char *out, char **file)
{
	static const char mark[] = "\n" KUBE_FILE_MARK "\n";
	const char *at = strstr(out, mark);

	*file = NULL;
	if (!at)
		return out;   /* the exec itself failed: neither ran */
	/* Missing, or empty as while k3s rewrites it: not read. */
	if (strspn(out, " \t\r\n") < (size_t)(at - out))
		*file = xstrndup(out, (size_t)(at - out) + 1);
	return at + sizeof(mark) - 1;
}

struct run_child *kube_start(const struct docker_ctr *ctr, const char *const *args, const struct run_spec *spec,
			     os_error *err)
{
	struct strv argv = { 0 };
	struct run_child *c;

	exec_argv(ctr, NULL, spec->input != NULL, spec->timeout_ms, &argv);
	strv_pushv(&argv, args);
	c = docker_start(ctr->on, strv_argv(&argv), spec, err);
	strv_free(&argv);
	return c;
}

int kube_detached(const struct docker_ctr *ctr, const char *const *args, int timeout_ms, os_error *err)
{
	struct strv argv = { 0 };
	int rc;

	exec_argv(ctr, NULL, 0, timeout_ms, &argv);
	strv_pushv(&argv, args);
	rc = docker_detached(ctr->on, strv_argv(&argv), timeout_ms, err);
	strv_free(&argv);
	return rc;
}

int kube_exec(const struct docker_ctr *ctr, const char *const *args, const char *input, int timeout_ms,
	      struct run_result *res, os_error *err)
{
	struct strv argv = { 0 };
	int rc;

	exec_argv(ctr, NULL, input != NULL, timeout_ms, &argv);
	strv_pushv(&argv, args);
	rc = docker_run(ctr->on, strv_argv(&argv), input, input ? strlen(input) : 0, timeout_ms, res, err);
	strv_free(&argv);
	return rc;
}

static int type_unregistered(const struct run_result *res)
{
	return res->status != 0 && res->err &&
	       (strstr(res->err, "ensure CRDs are installed first") ||
		strstr(res->err, "the server doesn't have a resource type"));
}

int kube_exec_k3s_type(const struct docker_ctr *ctr, const char *type, const char *const *args, const char *input,
		       const struct deadline *by, struct run_result *res, os_error *err)
{
	struct backoff b = { 0 };
	struct run_result last = { 0 };   /* k3s's last "not registered" answer */
	int rc, gave_up = 0;

	/* Each try within what is left before the deadline. */
	while ((rc = kube_exec(ctr, args, input, deadline_call_ms(by), res, err)) == 0 &&
	       type_unregistered(res)) {
		run_result_free(&last);
		last = *res;
		*res = (struct run_result){ 0 };
		if ((gave_up = !backoff_wait(&b, by->at_ms)))
			break;
	}
	/* Cut short once k3s had said no, that earlier answer is the news;
	 * before any answer, the runner's "timed out after 29ms" would be. */
	if (rc < 0 && deadline_cut(by, err)) {
		os_error_clear(err);
		if (!(gave_up = last.err != NULL))
			os_error_set(err, OS_EXIT_TIMEOUT, "the --timeout ran out while kubectl %s of %s ran in gateway container %s",
				     args[0], type, ctr->name);
	}
	if (gave_up) {
		run_result_free(res);
		*res = last;
		last = (struct run_result){ 0 };
		rc = run_failure(err, OS_EXIT_TIMEOUT, res,
				 "k3s in gateway container %s did not register its %s type in time (kubectl %s)", ctr->name, type,
				 args[0]);
	}
	run_result_free(&last);
	return rc;
}

int kube_readyz(const struct docker_ctr *ctr, int timeout_ms, os_error *err)
{
	static const char *const args[] = { "get", "--raw", "/readyz", NULL };
	struct run_result res = { 0 };
	int rc;

	if (kube_exec(ctr, args, NULL, timeout_ms, &res, err) < 0) {
		run_result_free(&res);
		return -1;
	}
	rc = res.status == 0 && strncmp(res.out, "ok", 2) == 0;
	run_result_free(&res);
	return rc;
}

static void get_argv(const char *resource, const char *name, const char *ns, int all_namespaces, struct strv *args)
{
	strv_push(args, "get");
	strv_push(args, resource);
	if (name)
		strv_push(args, name);
	if (ns) {
		strv_push(args, "--namespace");
		strv_push(args, ns);
	} else if (all_namespaces) {
		strv_push(args, "--all-namespaces");
	}
	strv_push(args, "--output=json");
}

/* What a get printed: 1 with *out, 0 for NotFound, -1 on failure. */
static int get_result(int rc, struct run_result *res, const char *resource, cJSON **out, char **file, os_error *err)
{
	const char *json = res->out;

	*out = NULL;
	if (file)
		json = kube_file_split(res->out, file);
	if (rc < 0)
		goto out;
	rc = -1;
	if (res->status != 0) {
		if (strstr(res->err, "(NotFound)"))
			rc = 0;
		else
			run_failure(err, OS_EXIT_FAILURE, res, "kubectl get %s failed (exit status %d)", resource,
				    res->status);
		goto out;
	}
	*out = json_parse(json, strlen(json), "kubectl output", err);
	rc = *out ? 1 : -1;
out:
	run_result_free(res);
	return rc;
}

int kube_get(const struct docker_ctr *ctr, const char *resource, const char *name, const char *ns,
	     int all_namespaces, int timeout_ms, cJSON **out, os_error *err)
{
	struct strv args = { 0 };
	struct run_result res = { 0 };
	int rc;

	get_argv(resource, name, ns, all_namespaces, &args);
	rc = kube_exec(ctr, strv_argv(&args), NULL, timeout_ms, &res, err);
	strv_free(&args);
	return get_result(rc, &res, resource, out, NULL, err);
}

struct run_child *kube_get_start(const struct docker_ctr *ctr, const char *before, const char *file,
				 const char *resource, const char *ns, int all_namespaces, int timeout_ms,
				 os_error *err)
{
	struct strv args = { 0 }, argv = { 0 };
	struct run_spec spec = { .timeout_ms = timeout_ms };
	struct run_child *c;

	get_argv(resource, NULL, ns, all_namespaces, &args);
	exec_argv_s(ctr, &(struct ahead){ .before = before, .file = file }, kube_request_s(timeout_ms), &argv);
	strv_pushv(&argv, strv_argv(&args));
	c = docker_start(ctr->on, strv_argv(&argv), &spec, err);
	strv_free(&args);
	strv_free(&argv);
	return c;
}

int kube_get_finish(struct run_child *c, const char *resource, cJSON **out, char **file, os_error *err)
{
	struct run_result res = { 0 };

	return get_result(docker_await(c, &res, err), &res, resource, out, file, err);
}

/* Did kubectl fail saying TEXT (in the message or its detail)? */
static int kubectl_said(const os_error *err, const char *text)
{
	return err->code == OS_EXIT_FAILURE &&
	       ((err->msg && strstr(err->msg, text)) || (err->detail && strstr(err->detail, text)));
}

int kube_get_type_unknown(const os_error *err, const char *plural)
{
	cleanup_free char *said = xasprintf("the server doesn't have a resource type \"%s\"", plural);

	return kubectl_said(err, said);
}

int kube_said_api_starting(const char *text)
{
	/* A get answered 503 (k3s's Status says "apiserver not ready"), or
	 * discovery answered so, after which kubectl knows no types. Not any
	 * 503: an aggregated API's (metrics.k8s.io while metrics-server
	 * starts) is only a warning of discovery's. */
	return text && (strstr(text, "Error from server (ServiceUnavailable)") ||
			strstr(text, "couldn't get current server API group list: the server is currently unable to handle the request"));
}

int kube_api_starting(const os_error *err)
{
	return err->code == OS_EXIT_FAILURE && (kube_said_api_starting(err->msg) || kube_said_api_starting(err->detail));
}

/* kubectl logs of TARGET ("--selector=S", or a pod's name), of its
 * CONTAINER (NULL: the pod's default one). */
static char *logs_once(const struct docker_ctr *ctr, const char *ns, const char *target, const char *container,
		       int lines, int previous, int timeout_ms, char **why)
{
	struct strv args = { 0 };
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *text = NULL;

	strv_push(&args, "logs");
	strv_push(&args, "--namespace");
	strv_push(&args, ns);
	strv_push(&args, target);
	if (container)
		strv_pushf(&args, "--container=%s", container);
	strv_pushf(&args, "--tail=%d", lines);
	if (previous)
		strv_push(&args, "--previous");
	if (kube_exec(ctr, strv_argv(&args), NULL, timeout_ms, &res, &err) < 0)
		*why = xstrdup(err.msg);
	else if (res.status != 0)
		*why = run_first_line(res.err);
	else if (*res.out)
		text = xstrdup(res.out);
	run_result_free(&res);
	strv_free(&args);
	os_error_clear(&err);
	return text;
}

/* The last lines of TARGET's log and, after them, its previous
 * container's (never NULL). */
static char *tail_with_previous(const struct docker_ctr *ctr, const char *ns, const char *target, const char *container,
				int lines, int timeout_ms)
{
	cleanup_free char *why = NULL, *why_previous = NULL;
	cleanup_free char *now = logs_once(ctr, ns, target, container, lines, 0, timeout_ms, &why);
	/* A container restarting between crashes has no log yet, is waiting
	 * to start, or has only begun its next run: what explains the crash
	 * is its previous run's log, so that comes too whenever there is one. */
	cleanup_free char *before = logs_once(ctr, ns, target, container, lines, 1, timeout_ms, &why_previous);

	if (before)
		return xasprintf("%s%s(the previous container's log)\n%s", now ? now : "",
				 now && now[strlen(now) - 1] != '\n' ? "\n" : "", before);
	if (now)
		return xstrdup(now);
	return why ? xasprintf("(logs unavailable: %s)", why) : xstrdup("");
}

char *kube_logs_tail(const struct docker_ctr *ctr, const char *ns, const char *selector, int lines,
		     int timeout_ms)
{
	cleanup_free char *target = xasprintf("--selector=%s", selector);

	return tail_with_previous(ctr, ns, target, NULL, lines, timeout_ms);
}

char *kube_container_logs_tail(const struct docker_ctr *ctr, const char *ns, const cJSON *known, const char *container,
			       int lines, int timeout_ms)
{
	os_error err = { 0 };
	cJSON *got = NULL;
	const cJSON *pods = known, *pod, *c;
	char *out = xstrdup("");

	if (!pods && kube_get(ctr, "pods", NULL, ns, 0, timeout_ms, &got, &err) < 0) {
		free(out);
		out = xasprintf("(logs unavailable: %s)\n", err.msg);
	}
	pods = pods ? pods : got;
	cJSON_ArrayForEach(pod, json_get(pods, "items", NULL)) {
		const char *name = json_str(json_get(pod, "metadata", NULL), "name");

		cJSON_ArrayForEach(c, json_get(pod, "spec", "containers", NULL)) {
			const char *cname = json_str(c, "name");
			if (!name || !cname || strcmp(cname, container) != 0)
				continue;
			cleanup_free char *text = tail_with_previous(ctr, ns, name, container, lines, timeout_ms);
			size_t len = strlen(text);
			char *next = xasprintf("%s(pod %s)\n%s%s", out, name, text, len && text[len - 1] != '\n' ? "\n" : "");
			free(out);
			out = next;
		}
	}
	cJSON_Delete(got);
	os_error_clear(&err);
	return out;
}
