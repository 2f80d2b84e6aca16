/* docker/image.c - docker image inspect, parsed; an image sent from one
 * daemon to another (see docker/image.h). */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/image.h"

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

int image_parse_inspect(const char *json, size_t len, struct docker_image *img, os_error *err)
{
	cJSON *root = json_parse(json, len, "docker image inspect output", err);
	const cJSON *obj, *labels;

	memset(img, 0, sizeof(*img));
	img->size = -1;
	if (!root)
		return -1;
	obj = cJSON_GetArrayItem(root, 0);
	if (!cJSON_IsArray(root) || !cJSON_IsObject(obj)) {
		cJSON_Delete(root);
		return os_error_set(err, OS_EXIT_FAILURE, "docker image inspect output is not an array of objects");
	}
	img->exists = 1;
	img->id = dup_or_null(json_str(obj, "Id"));
	img->created = dup_or_null(json_str(obj, "Created"));
	if (json_int(json_get(obj, "Size", NULL), 0, 1LL << 50, &img->size) < 0)
		img->size = -1;
	labels = json_get(obj, "Config", "Labels", NULL);
	img->labels = cJSON_IsObject(labels) ? cJSON_Duplicate(labels, 1) : cJSON_CreateObject();
	cJSON_Delete(root);
	return 0;
}

int image_inspect(const struct docker_target *on, const char *ref, int timeout_ms, struct docker_image *img,
		  os_error *err)
{
	const char *args[] = { "image", "inspect", "--", ref, NULL };
	struct run_result res = { 0 };
	int rc;
	cleanup_free char *what = xasprintf("docker image inspect %s", ref);

	memset(img, 0, sizeof(*img));
	rc = docker_inspect(on, args, what, timeout_ms, &res, err);
	if (rc > 0)   /* rc 0: exists = 0 */
		rc = image_parse_inspect(res.out, res.out_len, img, err);
	run_result_free(&res);
	return rc;
}

void docker_image_free(struct docker_image *img)
{
	free(img->id);
	free(img->created);
	cJSON_Delete(img->labels);
	memset(img, 0, sizeof(*img));
}

const char *image_label(const struct docker_image *img, const char *key)
{
	const char *v = json_str(img->labels, key);

	return v && *v ? v : NULL;
}

/* The daemons of a send, and what docker save and docker load do there. */
static const char *const send_daemon[] = { "the gateway's daemon", "the node's daemon" };
static const char *const send_side[] = { "saving it from the gateway's daemon", "loading it on the node's daemon" };

/* IMAGE's ID on the daemon ON names; *id NULL when that daemon
 * has no such image. */
static int image_id_on(const char *image, const struct docker_target *on, char **id, os_error *err)
{
	const char *args[] = { "image", "inspect", "--format", "{{.Id}}", "--", image, NULL };
	struct run_spec spec = { 0 };
	struct run_result res = { 0 };
	struct run_child *c = docker_start(on, args, &spec, err);
	int rc = c ? docker_await(c, &res, err) : -1;

	*id = NULL;
	if (rc == 0 && res.status == 0 && res.out_len > 0 && res.out[0] != '\n')
		*id = xstrndup(res.out, strcspn(res.out, "\n"));
	else if (rc == 0 && !docker_says_missing(res.err))
		rc = run_failure(err, OS_EXIT_FAILURE, &res, "docker image inspect %s failed", image);
	run_result_free(&res);
	return rc;
}

/* Reap side SIDE (0 docker save, 1 docker load): 0, or -1 with *e naming
 * the side; *broke when it ended for a broken pipe (its reader was gone). */
static int side_end(struct run_child **c, int side, const char *image, int *broke, os_error *e)
{
	struct run_result res = { 0 };
	int rc = docker_finish(*c, &res, e);

	*c = NULL;
	*broke = res.status == 128 + SIGPIPE || (res.err && strstr(res.err, "broken pipe"));
	if (rc < 0)
		os_error_wrap(e, "cannot send the image %s: %s failed", image, send_side[side]);
	else if (res.status != 0)
		rc = run_failure(e, OS_EXIT_FAILURE, &res, "cannot send the image %s: %s failed (exit status %d)", image,
				 send_side[side], res.status);
	run_result_free(&res);
	return rc;
}

/* Serve save and load until both have ended or one has failed, whose
 * failure is the error. A save that broke its pipe did so because load
 * ended: load's own end is the cause, and is waited for. Each side is
 * returned in the order it ended (save first when both have), so that
 * load's complaint of a short input never hides save's failure. */
static int await_sides(struct run_child *kids[2], const char *image, os_error *err)
{
	os_error e[2] = { { 0 }, { 0 } };
	int i, failed[2] = { 0, 0 }, broke = 0;

	while ((i = run_wait_any(kids, 2)) >= 0) {
		failed[i] = side_end(&kids[i], i, image, &broke, &e[i]) < 0;
		if (failed[i] && !(i == 0 && broke))
			break;
	}
	i = failed[1] ? 1 : failed[0] ? 0 : -1;
	if (i >= 0) {
		*err = e[i];
		e[i] = (os_error){ 0 };
	}
	os_error_clear(&e[0]);
	os_error_clear(&e[1]);
	return i >= 0 ? -1 : 0;
}

/* docker save on the gateway's daemon into docker load on the node's,
 * side by side through a pipe; a side still running at a failure is
 * stopped. */
static int pipe_image(const char *image, const struct docker_target *from, const struct docker_target *to,
		      int timeout_ms, os_error *err)
{
	const char *save[] = { "save", "--", image, NULL }, *load[] = { "load", NULL };
	struct run_child *kids[2] = { NULL, NULL };
	int fds[2], rc;

	if (run_pipe(fds, err) < 0)
		return os_error_wrap(err, "cannot send the image %s", image);
	struct run_spec save_spec = { .stdout_fd = fds[1], .timeout_ms = timeout_ms };
	struct run_spec load_spec = { .stdin_fd = fds[0], .timeout_ms = timeout_ms };
	kids[0] = docker_start(from, save, &save_spec, err);
	if (kids[0])
		kids[1] = docker_start(to, load, &load_spec, err);
	/* Each child holds its own end now; ours must go, or load would never
	 * see EOF when save ends, nor save a broken pipe when load does. */
	close(fds[0]);
	close(fds[1]);
	if (kids[1])
		rc = await_sides(kids, image, err);
	else
		rc = os_error_wrap(err, "cannot send the image %s", image);
	docker_drop(&kids[0]);
	docker_drop(&kids[1]);
	return rc;
}

int docker_image_send(const char *image, const struct docker_target *from, const struct docker_target *to,
		      int timeout_ms, char **id_out, os_error *err)
{
	cleanup_free char *want = NULL, *got = NULL;

	*id_out = NULL;
	if (image_id_on(image, from, &want, err) < 0)
		return os_error_wrap(err, "cannot read the image's ID on %s", send_daemon[0]);
	if (!want)
		return os_error_set(err, OS_EXIT_FAILURE, "the image %s is not on %s", image, send_daemon[0]);
	if (pipe_image(image, from, to, timeout_ms, err) < 0)
		return -1;
	if (image_id_on(image, to, &got, err) < 0)
		return os_error_wrap(err, "cannot read the image's ID on %s", send_daemon[1]);
	if (!got)
		return os_error_set(err, OS_EXIT_FAILURE, "the image %s is not on %s after docker load", image,
				    send_daemon[1]);
	if (strcmp(got, want) != 0)
		return os_error_set(err, OS_EXIT_FAILURE, "the image %s arrived as ID %s, not %s", image, got, want);
	*id_out = steal_pointer(&want);
	return 0;
}
