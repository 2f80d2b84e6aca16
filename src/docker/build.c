/* docker/build.c - docker build with BuildKit (see docker/build.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/build.h"
#include "docker/client.h"

#define BUILD_MAX_STEPS 512     /* BuildKit step ids remembered */
#define BUILD_SHOWN_STEP 72     /* characters of a step shown on a terminal */
#define BUILD_TAIL_LINES 15     /* output lines quoted under a failure */

/* "#12 [stage 2/5] RUN x" -> 12, with *text at "[stage ...". -1 if not a header. */
static int buildkit_header(const char *line, const char **text)
{
	char *end;
	long id;

	if (line[0] != '#')
		return -1;
	id = strtol(line + 1, &end, 10);
	if (end == line + 1 || *end != ' ' || end[1] != '[' || id < 0 || id >= BUILD_MAX_STEPS)
		return -1;
	*text = end + 1;
	return (int)id;
}

/* "#12 ERROR: cause" -> 12, with *cause at "cause". */
static int buildkit_error(const char *line, const char **cause)
{
	char *end;
	long id;

	if (line[0] != '#')
		return -1;
	id = strtol(line + 1, &end, 10);
	if (end == line + 1 || strncmp(end, " ERROR: ", 8) != 0 || id < 0 || id >= BUILD_MAX_STEPS)
		return -1;
	*cause = end + 8;
	return (int)id;
}

static int legacy_step(const char *line)
{
	int k, n, used = 0;

	return sscanf(line, "Step %d/%d :%n", &k, &n, &used) == 2 && used > 0;
}

struct reader {
	char *headers[BUILD_MAX_STEPS];
	char *last_step;
	char *cause;       /* from a step's own ERROR line */
	char *final;       /* from the build's closing error line */
	char *last_line;
};

static void replace(char **slot, const char *s, size_t n)
{
	free(*slot);
	*slot = xstrndup(s, n);
}

static void read_line(struct reader *r, const char *line, size_t n)
{
	cleanup_free char *l = xstrndup(line, n);
	const char *text;
	int id;

	if (!*l)
		return;
	replace(&r->last_line, l, strlen(l));
	if ((id = buildkit_header(l, &text)) >= 0) {
		replace(&r->headers[id], text, strlen(text));
	} else if ((id = buildkit_error(l, &text)) >= 0) {
		if (!r->cause) {
			replace(&r->cause, text, strlen(text));
			if (r->headers[id])
				replace(&r->last_step, r->headers[id], strlen(r->headers[id]));
		}
	} else if (legacy_step(l)) {
		replace(&r->last_step, l, strlen(l));
	} else if (!r->final && (strncmp(l, "ERROR: ", 7) == 0 || strncmp(l, "error: ", 7) == 0)) {
		replace(&r->final, l + 7, strlen(l + 7));
	} else if (!r->final && strncmp(l, "failed to solve", 15) == 0) {
		replace(&r->final, l, strlen(l));
	}
}

static void reader_free(struct reader *r)
{
	for (int i = 0; i < BUILD_MAX_STEPS; i++)
		free(r->headers[i]);
	free(r->last_step);
	free(r->cause);
	free(r->final);
	free(r->last_line);
}

void build_outcome_read(const char *output, struct build_outcome *o)
{
	struct reader r = { 0 };

	for (const char *p = output; *p;) {
		size_t n = strcspn(p, "\n");
		read_line(&r, p, n);
		p += n;
		if (*p)
			p++;
	}
	o->step = r.last_step;
	o->cause = r.cause ? r.cause : r.final ? r.final : r.last_line;
	r.last_step = NULL;
	if (o->cause == r.cause)
		r.cause = NULL;
	else if (o->cause == r.final)
		r.final = NULL;
	else
		r.last_line = NULL;
	reader_free(&r);
}

void build_outcome_free(struct build_outcome *o)
{
	free(o->step);
	free(o->cause);
	o->step = o->cause = NULL;
}

/* The live side: complete lines from the output as it streams in. */
struct progress {
	char seen[BUILD_MAX_STEPS];
	int legacy_steps;
};

static void show_line(struct progress *pg, const char *line)
{
	const char *text;
	int id;

	log_verbose("| %s", line);
	if ((id = buildkit_header(line, &text)) >= 0) {
		/* BuildKit repeats a header when a step resumes; show it once. */
		if (pg->seen[id] || strncmp(text, "[internal]", 10) == 0)
			return;
		pg->seen[id] = 1;
		log_step_progress("%.*s", BUILD_SHOWN_STEP, text);
	} else if (legacy_step(line)) {
		log_step_progress("%.*s", BUILD_SHOWN_STEP, line);
	}
}

static int on_line(void *ctx, const char *line)
{
	show_line(ctx, line);
	return 0;
}

/* The last lines of the output, for the error's detail. */
static char *tail_lines(const char *out, int lines)
{
	const char *p = out + strlen(out);

	while (p > out && p[-1] == '\n')
		p--;
	for (int n = 0; p > out; p--)
		if (p[-1] == '\n' && ++n == lines)
			break;
	return xstrdup(p);
}

static void build_argv(const struct build_request *rq, struct strv *argv)
{
	strv_push(argv, "build");
	strv_push(argv, "--progress=plain");
	strv_pushf(argv, "--file=%s/%s", rq->context, rq->dockerfile);
	strv_pushf(argv, "--tag=%s", rq->tag);
	for (size_t i = 0; rq->build_args && i < rq->build_args->n; i++)
		strv_pushf(argv, "--build-arg=%s", rq->build_args->v[i]);
	if (rq->pull)
		strv_push(argv, "--pull");
	if (rq->no_cache)
		strv_push(argv, "--no-cache");
	if (rq->network)
		strv_pushf(argv, "--network=%s", rq->network);
	strv_push(argv, "--");
	strv_push(argv, rq->context);
}

static int explain_failure(const struct build_request *rq, const struct run_result *res, os_error *err)
{
	struct build_outcome o = { 0 };
	cleanup_free char *tail = NULL;

	if (strstr(res->out, "buildx component is missing or broken"))
		return os_error_set(err, OS_EXIT_FAILURE,
				    "this docker CLI cannot build with BuildKit, which the cluster image needs: install the buildx plugin (Debian and Ubuntu: apt-get install docker-buildx; Docker's own packages: docker-buildx-plugin)");
	build_outcome_read(res->out, &o);
	if (o.step)
		os_error_set(err, OS_EXIT_FAILURE, "docker build of %s failed at %s: %s", rq->tag, o.step,
			     o.cause ? o.cause : "no error line");
	else
		os_error_set(err, OS_EXIT_FAILURE, "docker build of %s failed (exit status %d): %s", rq->tag,
			     res->status, o.cause ? o.cause : "no output");
	tail = tail_lines(res->out, BUILD_TAIL_LINES);
	os_error_set_detail(err, tail);
	build_outcome_free(&o);
	return -1;
}

int docker_build(const struct build_request *rq, os_error *err)
{
	static const char *const env[] = { "DOCKER_BUILDKIT=1", NULL };
	struct strv argv = { 0 };
	struct progress pg = { 0 };
	struct run_result res = { 0 };
	struct docker_stream_opts so = { .env = env, .timeout_ms = rq->timeout_ms, .on_line = on_line, .ctx = &pg };
	int rc;

	build_argv(rq, &argv);
	rc = docker_stream(rq->on, strv_argv(&argv), &so, &res, err);
	if (rc == 0 && res.status != 0)
		rc = explain_failure(rq, &res, err);
	strv_free(&argv);
	run_result_free(&res);
	return rc;
}
