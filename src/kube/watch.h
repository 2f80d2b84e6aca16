/* kube/watch.h - the objects of one type, kept current by a kubectl watch.
 *
 * `kubectl get TYPE --watch --output-watch-events --output=json` prints
 * the objects there are as ADDED events, then each change the moment the
 * API has it: one event a line (kubectl's JSONPrinter writes a WatchEvent
 * with json.Marshal and a newline). A watch keeps the objects as a List,
 * for kube/objects.h's readers, so that a wait sees each fact as it comes
 * with no read after it. kubectl's --request-timeout ends it inside the
 * container too (a stopped docker exec leaves its process there); it
 * ends then, or when the API breaks it off or the container stops, and is
 * started again, its list kept until the new listing brings each object
 * as it is now (one deleted in between would stay: the objects a wait
 * reads are not deleted while it waits). With a FILE, that file of the
 * container is read in the same docker exec first (kube/kubectl.h,
 * kube_file_split()); with THEN, a script of the caller's runs before
 * that, the watch following only when it succeeded.
 *
 * From a resourceVersion (kube_watch_since()) there is no listing: the
 * API replays each change after it, also of an object made and deleted
 * before the watch began, which a listing would never show. kubectl get
 * has no flag for that, so it goes by `kubectl get --raw` of the
 * collection's watch URL (the same event lines, as the API server writes
 * them); each event moves the version on, and a start again resumes
 * after the last. A version the API no longer holds (410 Expired) ends
 * the watch with that error, and the next start lists first, as
 * client-go's reflector does.
 */
#ifndef OPENSHELL_KUBE_WATCH_H
#define OPENSHELL_KUBE_WATCH_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/runner.h"
#include "docker/target.h"

/* kubectl's --request-timeout ends a long watch this much before the
 * docker call's deadline: on a loaded host an exec takes a second or
 * more to start and end, and an end of kubectl's own is no failure. A
 * short one (the end of a wait's deadline) lasts to that deadline. */
#define KUBE_WATCH_GRACE_MS 5000

struct kube_watch {
	/* Set by the caller before kube_watch_start(): */
	const char *resource;     /* "nodes", "daemonsets" */
	const char *ns;           /* a namespace, or NULL for every one */
	const char *selector;     /* a label selector, or NULL for all */
	const char *api;          /* the group's API path ("/apis/resource.k8s.io/v1"), for a watch from a version */
	const char *file;         /* a file of the container to read first, or NULL */
	/* A fixed script run first, in the same exec (kube_exec_argv()'s
	 * THEN), with INPUT as its stdin: on each start until it succeeded,
	 * the watch following only then; what it prints is kept in
	 * then_text. NULL: none. */
	const char *then;
	const char *input;
	/* Called with each object an ADDED or MODIFIED event brings, before
	 * the list has it: for a caller that must see each state an object
	 * passes through, where the list keeps only the last. NULL: none. */
	void (*seen)(void *ctx, const cJSON *obj);
	void *ctx;
	/* Kept by the watch: */
	cJSON *list;              /* {"items": [...]}: the objects as the watch last said */
	char *file_text;          /* the file (NULL: missing, empty, or not read yet) */
	int file_read;            /* this start's read of it is done */
	int changed;              /* a line changed the list or read the file; the caller clears it */
	char *then_text;          /* what THEN printed (NULL: nothing yet) */
	int then_done;            /* THEN succeeded (its mark came) */
	char *then_error;         /* its stderr, when it failed */
	char *since;              /* the resourceVersion to resume after (NULL: list first) */
	char *error;              /* an ERROR event's message, for kube_watch_end() */
	struct run_child *c;      /* while it runs (run_wait_any wakes on each change) */
};

/* Its next start is from resourceVersion RV, not a listing (API set). */
void kube_watch_since(struct kube_watch *kw, const char *rv);

/* Start it, within timeout_ms: the docker call's deadline. */
int kube_watch_start(struct kube_watch *kw, const struct docker_ctr *ctr, int timeout_ms, os_error *err);

/* It ended (run_wait_any() returned it ended): reaped. 0 when kubectl
 * ended it well (its request timeout ends a watch so); -1 with err when it
 * failed (kubectl's stderr quoted), the API ended it with an ERROR
 * event, the deadline cut it, or docker did; THEN's failure sets
 * then_error too. */
int kube_watch_end(struct kube_watch *kw, os_error *err);

/* Stop it if it runs, and free what it keeps. */
void kube_watch_free(struct kube_watch *kw);

#endif
