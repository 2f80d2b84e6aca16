/* kube/watch.c - a kubectl watch kept as a list (see kube/watch.h). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/child_output.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "kube/kubectl.h"
#include "kube/watch.h"


static int same_object(const cJSON *a, const cJSON *b)
{
	const char *an = json_str(json_get(a, "metadata", NULL), "name");
	const char *bn = json_str(json_get(b, "metadata", NULL), "name");
	const char *as = json_str(json_get(a, "metadata", NULL), "namespace");
	const char *bs = json_str(json_get(b, "metadata", NULL), "namespace");

	return an && bn && strcmp(an, bn) == 0 && (as && bs ? strcmp(as, bs) == 0 : as == bs);
}

/* An ERROR event (a Status) ends the watch: kubectl get ends on one and
 * says it; a raw watch's stream only ends, so the message is kept. Too
 * old a version is listed anew on the next start. */
static void watch_error(struct kube_watch *kw, const cJSON *status)
{
	const char *msg = json_str(status, "message");
	long long code = 0;

	free(kw->error);
	kw->error = xstrdup(msg ? msg : "an ERROR event without a message");
	if (json_int(cJSON_GetObjectItemCaseSensitive(status, "code"), 0, 999, &code) == 0 && code == 410)
		kube_watch_since(kw, NULL);
}

/* ADDED and MODIFIED put the object in (in place of its old self),
 * DELETED takes it out; each moves a watch from a version on. BOOKMARK
 * changes nothing here. */
static int apply_event(struct kube_watch *kw, cJSON *ev)
{
	const char *type = json_str(ev, "type");
	cJSON *items = cJSON_GetObjectItemCaseSensitive(kw->list, "items"), *old;
	cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	const char *rv = json_str(json_get(obj, "metadata", NULL), "resourceVersion");
	int i = 0, put;

	if (!type || !cJSON_IsObject(obj))
		return 0;
	if (strcmp(type, "ERROR") == 0) {
		watch_error(kw, obj);
		return 0;
	}
	put = strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0;
	if ((put || strcmp(type, "DELETED") == 0) && kw->since && rv)
		kube_watch_since(kw, rv);
	if (!put && strcmp(type, "DELETED") != 0)
		return 0;
	if (put && kw->seen)
		kw->seen(kw->ctx, obj);
	cJSON_ArrayForEach(old, items) {
		if (same_object(old, obj))
			break;
		i++;
	}
	if (old)
		cJSON_DeleteItemFromArray(items, i);
	if (put)
		cJSON_AddItemToArray(items, cJSON_DetachItemFromObjectCaseSensitive(ev, "object"));
	return 1;
}

static int append_line(char **text, const char *line)
{
	char *t = xasprintf("%s%s\n", *text ? *text : "", line);

	free(*text);
	*text = t;
	return 0;
}

/* THEN's lines until its mark, the file's until its own, then one event
 * a line. */
static int watch_line(void *ctx, const char *line)
{
	struct kube_watch *kw = ctx;
	cJSON *ev;
	int changed;

	if (kw->then && !kw->then_done) {
		if (strcmp(line, KUBE_THEN_MARK) != 0)
			return append_line(&kw->then_text, line);
		kw->then_done = 1;
		kw->changed = 1;
		return RUN_WAKE;
	}
	if (!kw->file_read) {
		if (strcmp(line, KUBE_FILE_MARK) != 0)
			return append_line(&kw->file_text, line);
		kw->file_read = 1;
		/* Missing, or empty as while k3s rewrites it: not read. */
		if (kw->file_text && !kw->file_text[strspn(kw->file_text, " \t\r\n")]) {
			free(kw->file_text);
			kw->file_text = NULL;
		}
		kw->changed = 1;
		return RUN_WAKE;
	}
	if (line[0] != '{' || !(ev = cJSON_ParseWithLengthOpts(line, strlen(line), NULL, 0)))
		return 0;   /* not an event: kubectl says nothing else on stdout */
	changed = apply_event(kw, ev);
	cJSON_Delete(ev);
	kw->changed |= changed;
	return changed ? RUN_WAKE : 0;
}

void kube_watch_since(struct kube_watch *kw, const char *rv)
{
	char *was = kw->since;

	kw->since = rv ? xstrdup(rv) : NULL;
	free(was);
}

/* A query's value as RFC 3986 wants it: all but the unreserved escaped. */
static char *query_escape(const char *v)
{
	char *out = xmalloc(3 * strlen(v) + 1), *o = out;

	for (; *v; v++)
		if (isalnum((unsigned char)*v) || strchr("-._~", *v))
			*o++ = *v;
		else
			o += sprintf(o, "%%%02X", (unsigned char)*v);
	*o = '\0';
	return out;
}

/* The collection's watch URL from SINCE, whose stream the API ends a
 * second before kubectl's REQUEST_S would cut it (an error of kubectl's). */
static char *raw_watch_url(const struct kube_watch *kw, int request_s)
{
	cleanup_free char *rv = query_escape(kw->since);
	cleanup_free char *sel = kw->selector ? query_escape(kw->selector) : NULL;
	cleanup_free char *ns = kw->ns ? xasprintf("/namespaces/%s", kw->ns) : NULL;

	return xasprintf("%s%s/%.*s?watch=true&resourceVersion=%s&timeoutSeconds=%d%s%s", kw->api, ns ? ns : "",
			 (int)strcspn(kw->resource, "."), kw->resource, rv, request_s > 1 ? request_s - 1 : 1,
			 sel ? "&labelSelector=" : "", sel ? sel : "");
}

static void push_watch_args(const struct kube_watch *kw, int request_s, struct strv *argv)
{
	if (kw->since && kw->api) {
		cleanup_free char *url = raw_watch_url(kw, request_s);

		strv_pushv(argv, (const char *const[]){ "get", "--raw", url, NULL });
		return;
	}
	strv_pushv(argv, (const char *const[]){ "get", kw->resource, NULL });
	if (kw->ns)
		strv_pushv(argv, (const char *const[]){ "--namespace", kw->ns, NULL });
	else
		strv_push(argv, "--all-namespaces");
	if (kw->selector)
		strv_pushf(argv, "--selector=%s", kw->selector);
	strv_pushv(argv, (const char *const[]){ "--watch", "--output-watch-events", "--output=json", NULL });
}

int kube_watch_start(struct kube_watch *kw, const struct docker_ctr *ctr, int timeout_ms, os_error *err)
{
	struct strv argv = { 0 };
	const char *then = kw->then && !kw->then_done ? kw->then : NULL;
	int request_s = timeout_ms > 2 * KUBE_WATCH_GRACE_MS ? (timeout_ms - KUBE_WATCH_GRACE_MS) / 1000
							      : (timeout_ms + 999) / 1000;

	if (then) {   /* it says it all again */
		free(kw->then_text);
		kw->then_text = NULL;
	}
	struct run_spec spec = { .timeout_ms = timeout_ms, .on_line = watch_line, .discard_lines = 1, .ctx = kw,
				 .input = then ? kw->input : NULL, .input_len = then && kw->input ? strlen(kw->input) : 0 };

	/* Started again, the list is what the last watch said until the new
	 * one's listing brings each object as it is now. */
	if (!kw->list) {
		kw->list = cJSON_CreateObject();
		cJSON_AddArrayToObject(kw->list, "items");
	}
	kw->file_read = !kw->file;
	if (kw->file) {
		free(kw->file_text);
		kw->file_text = NULL;
	}
	free(kw->error);
	kw->error = NULL;
	kube_exec_argv(ctr, then, kw->file, request_s, &argv);
	push_watch_args(kw, request_s, &argv);
	kw->c = docker_start(ctr->on, strv_argv(&argv), &spec, err);
	strv_free(&argv);
	return kw->c ? 0 : -1;
}

int kube_watch_end(struct kube_watch *kw, os_error *err)
{
	struct run_result res = { 0 };
	int rc = docker_finish(kw->c, &res, err);

	kw->c = NULL;
	if (rc == 0 && !res.stopped && res.status != 0 && kw->then && !kw->then_done) {
		free(kw->then_error);
		kw->then_error = xstrdup(res.err && *res.err ? res.err : "(no message)");
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "the command before kubectl get %s --watch failed (exit status %d)",
				 kw->resource, res.status);
	} else if (rc == 0 && !res.stopped && res.status != 0) {
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "kubectl get %s --watch failed (exit status %d)", kw->resource,
				 res.status);
	} else if (rc == 0 && kw->error) {
		rc = os_error_set(err, OS_EXIT_FAILURE, "the API ended the watch of %s: %s", kw->resource, kw->error);
	}
	run_result_free(&res);
	return rc;
}

void kube_watch_free(struct kube_watch *kw)
{
	docker_drop(&kw->c);
	cJSON_Delete(kw->list);
	free(kw->file_text);
	free(kw->then_error);
	free(kw->then_text);
	free(kw->since);
	free(kw->error);
	kw->since = NULL;
	kw->error = NULL;
	kw->list = NULL;
	kw->file_text = NULL;
	kw->then_error = NULL;
	kw->then_text = NULL;
}
