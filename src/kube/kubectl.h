/* kube/kubectl.h - Kubernetes, reached only through `docker exec CTR kubectl`.
 *
 * Keeps to a small kubectl subset (get -o json, get --raw
 * /readyz, apply -f -, delete --ignore-not-found, logs), so that a real k3s
 * and a faithful stand-in answer alike. What the objects it returns say
 * is kube/objects.h's.
 */
#ifndef OPENSHELL_KUBE_KUBECTL_H
#define OPENSHELL_KUBE_KUBECTL_H

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/error.h"
#include "base/runner.h"
#include "base/strv.h"
#include "docker/target.h"


/* Run kubectl ARGS in the container; input (may be NULL) goes to its
 * stdin. timeout_ms 0: the per-call default. Contract of run_command(). */
int kube_exec(const struct docker_ctr *ctr, const char *const *args, const char *input, int timeout_ms,
	      struct run_result *res, os_error *err);

/* kube_exec as a call beside others (docker_start): SPEC's fields but
 * argv; input makes it interactive (stdin kept open). End it with
 * docker_await() or docker_finish(). */
struct run_child *kube_start(const struct docker_ctr *ctr, const char *const *args, const struct run_spec *spec,
			     os_error *err);

/* kubectl ARGS in the container, detached (docker_detached): nobody
 * waits for it or hears of it; it ends within timeout_ms. */
int kube_detached(const struct docker_ctr *ctr, const char *const *args, int timeout_ms, os_error *err);

/* kube_exec of a command on TYPE, one of k3s's own types (HelmChart,
 * HelmChartConfig). k3s registers them only once its API server is ready
 * (pkg/server/server.go: startOnAPIServerReady, registerCRDs), so a fresh
 * cluster's kubectl may first say "no matches for kind … ensure CRDs are
 * installed first" (apply) or "the server doesn't have a resource type"
 * (get, delete): that answer is waited out with a backoff until BY passes,
 * then a timeout (-1, err set, naming TYPE and kubectl's line). A try
 * that BY cuts short is that timeout too once k3s has said no, and
 * before any answer one that names the --timeout. */
int kube_exec_k3s_type(const struct docker_ctr *ctr, const char *type, const char *const *args, const char *input,
		       const struct deadline *by, struct run_result *res, os_error *err);

/* 1 when /readyz answers ok, 0 when not (yet), -1 when docker failed. */
int kube_readyz(const struct docker_ctr *ctr, int timeout_ms, os_error *err);

/* `kubectl get RESOURCE [NAME] [-n NS | -A] -o json`. ns NULL: -A for a
 * list, none for cluster-scoped objects; RESOURCE "T1,T2,..." reads
 * several types in one call, one List with each item's kind. Returns 1
 * with *out set, 0 when the object is NotFound, -1 on failure. */
int kube_get(const struct docker_ctr *ctr, const char *resource, const char *name, const char *ns,
	     int all_namespaces, int timeout_ms, cJSON **out, os_error *err);

/* Did a kube_get() of several types fail only because k3s has not yet
 * registered PLURAL, one of its own types (see kube_exec_k3s_type)? */
int kube_get_type_unknown(const os_error *err, const char *plural);

/* Did a kubectl call fail because k3s's API server was not running yet
 * (503 ServiceUnavailable, k3s's "apiserver not ready"), in its own
 * request or in the discovery before it? By kubectl's stderr TEXT, or by
 * the error a failed call made of it. */
int kube_said_api_starting(const char *text);
int kube_api_starting(const os_error *err);

/* kube_get() of a list beside other calls: started here, answered by
 * kube_get_finish() (which waits for it) as kube_get() would. With FILE,
 * that file of the container is read in the same docker exec first
 * (kube_file_split()), and kube_get_finish() gives its text in *file_text
 * (NULL when missing or empty), also when kubectl failed; without it,
 * pass file_text NULL. BEFORE (with a FILE): a fixed script of the
 * caller's, run first in a shell of its own, its output ahead of the
 * file's in *file_text (the caller marks where it ends): one docker exec
 * for a look and a get. */
struct run_child *kube_get_start(const struct docker_ctr *ctr, const char *before, const char *file,
				 const char *resource, const char *ns, int all_namespaces, int timeout_ms,
				 os_error *err);
int kube_get_finish(struct run_child *c, const char *resource, cJSON **out, char **file_text, os_error *err);

/* A call that reads FILE before kubectl prints (kube_get_start, the
 * watches of kube/watch.h) prints the file's text, then a line
 * KUBE_FILE_MARK, then kubectl's output: a file and a kubectl answer for
 * one docker exec where each would be one. Given that output, returns
 * where kubectl's begins, *file the file's text (owned; NULL when it is
 * missing or empty, as a file k3s is rewriting is for a moment). */
#define KUBE_FILE_MARK "#openshell-file-end"
const char *kube_file_split(const char *out, char **file);

/* kubectl's --request-timeout for a call of TIMEOUT_MS (0: docker's
 * default): whole seconds, one less, so that the request ends inside the
 * container too, not only the docker exec around it. */
int kube_request_s(int timeout_ms);

/* The argv of `docker exec CTR [sh -c … FILE] kubectl --request-timeout=Ss`,
 * to which a caller adds kubectl's arguments. THEN (or NULL): a fixed
 * script of the caller's run first, with the call's stdin; kubectl runs
 * only when it succeeded, after a line KUBE_THEN_MARK on stdout. Its
 * failure is the call's: its exit status and stderr, no mark. */
#define KUBE_THEN_MARK "#openshell-then"
void kube_exec_argv(const struct docker_ctr *ctr, const char *then, const char *file, int request_s, struct strv *argv);

/* The last lines of logs: `kubectl logs -n NS -l SELECTOR --tail=N`, and
 * after them the previous container's (--previous) when there is one, so
 * that a crash loop's reason comes along whenever the timeout looks.
 * Returns newly allocated text (possibly empty), never NULL. */
char *kube_logs_tail(const struct docker_ctr *ctr, const char *ns, const char *selector, int lines,
		     int timeout_ms);

/* The same for the container named CONTAINER of every pod in NS that has
 * one: a chart's pods may run sidecars before it (the device plugin's
 * config manager does), and `kubectl logs` shows a pod's first container.
 * PODS: NS's PodList when the caller has it, else NULL (it is read). */
char *kube_container_logs_tail(const struct docker_ctr *ctr, const char *ns, const cJSON *pods, const char *container,
			       int lines, int timeout_ms);

#endif
