/* gateway/state/roster.c - every known gateway, looked up daemon by daemon (see gateway/state/roster.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/child_output.h"
#include "base/exitcode.h"
#include "base/json.h"
#include "base/names.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/daemon.h"
#include "gateway/state/info.h"
#include "gateway/state/roster.h"

enum stage { LIST, INSPECT, DONE };

struct group {
	/* As recorded (the environment's for the current one): a copy whose
	 * strings an entry's metadata or the current daemon own. */
	struct docker_target w;
	int current;              /* the daemon the environment names: no follow */
	const char *first;        /* one of its gateways, for the messages of a follow */
	enum stage stage;         /* the current one lists its labelled containers first */
	struct run_child *child;
	os_error err;             /* why it could not be asked */
	int refused;              /* by the follow: err names the daemon and the fix */
};

struct entry {
	struct gateway gw;
	size_t group;
	int drop;                 /* not listed (a warning says why where it matters) */
};

struct gather {
	struct roster *r;
	struct entry *e;
	size_t n, cap;
	struct group *g;
	size_t ng;
	struct docker_daemon cur;
};

static void add_entry(struct gather *G, struct gateway *gw, size_t group)
{
	if (G->n == G->cap) {
		G->cap = G->cap ? 2 * G->cap : 8;
		G->e = xrealloc(G->e, G->cap * sizeof(*G->e));
	}
	G->e[G->n++] = (struct entry){ .gw = *gw, .group = group };
}

static int known(const struct gather *G, const char *name)
{
	for (size_t i = 0; i < G->n; i++)
		if (strcmp(G->e[i].gw.name, name) == 0)
			return 1;
	return 0;
}

/* The group of daemon W (NULL: the current one), made when new. */
static size_t group_of(struct gather *G, const struct docker_target *w, const char *name)
{
	for (size_t i = 0; i < G->ng; i++)
		if (w ? !G->g[i].current && docker_target_same(&G->g[i].w, w) : G->g[i].current)
			return i;
	G->g = xrealloc(G->g, (G->ng + 1) * sizeof(*G->g));
	G->g[G->ng] = (struct group){ .current = !w, .first = name, .stage = w ? INSPECT : LIST };
	if (w)
		G->g[G->ng].w = *w;
	return G->ng++;
}

/* Each gateway of the state directory, with the daemon it lives on. */
static int load_recorded(struct gather *G, int current_known, os_error *err)
{
	struct strv names = { 0 };
	const struct docker_target *now = current_known ? &G->cur.at : NULL;

	if (gateway_metadata_names(&names, err) < 0)
		return -1;
	gateway_names_sort_unique(&names);
	group_of(G, NULL, NULL);   /* group 0, the current one: asked whatever it holds */
	for (size_t i = 0; i < names.n; i++) {
		struct gateway gw;
		struct docker_target w = { 0 };
		os_error e = { 0 };

		if (gateway_load_files(names.v[i], &gw, &e) < 0) {
			os_error_clear(&e);
			gateway_free(&gw);
			continue;
		}
		/* w's strings are those the entry's copy of gw owns alike */
		if (gw.has_metadata)
			w = gw.md.docker;
		if (!docker_target_recorded(&w) || (now && docker_target_same(&w, now)))
			add_entry(G, &gw, 0);
		else if (docker_daemon_chosen_fits(&w))
			add_entry(G, &gw, group_of(G, &w, gw.name));
		else
			gateway_free(&gw);   /* --context chose another daemon */
	}
	strv_free(&names);
	return 0;
}

/* Start the group's next docker call: for a recorded daemon, one that
 * names it. */
static void launch(struct gather *G, size_t gi)
{
	struct group *g = &G->g[gi];
	struct strv args = { 0 };
	struct run_spec spec = { 0 };
	const struct docker_target *on = NULL;   /* its calls' daemon (docker/client.h's ON) */
	size_t members = 0;

	if (g->stage == LIST) {
		gateway_labelled_ps(&args);
	} else {
		strv_pushv(&args, (const char *const[]){ "inspect", "--type=container", NULL });
		for (size_t i = 0; i < G->n; i++)
			if (G->e[i].group == gi && !G->e[i].drop && ++members)
				strv_push(&args, G->e[i].gw.container);
	}
	if (g->stage == INSPECT && members == 0) {
		g->stage = DONE;
	} else if (!g->current && docker_daemon_follow(g->first, &g->w, &on, &g->err) < 0) {
		g->stage = DONE;
		g->refused = 1;
	} else if (!(g->child = docker_start(on, strv_argv(&args), &spec, &g->err))) {
		g->stage = DONE;
	}
	strv_free(&args);
}

/* Did docker answer? An inspect of several containers fails when any is
 * missing, saying so for each on a line of its own. */
static int answered(const struct group *g, const struct run_result *res)
{
	const char *s = res->err;

	if (res->status == 0)
		return 1;
	if (g->stage != INSPECT || !*s)
		return 0;
	while (*s) {
		size_t n = strcspn(s, "\n");
		cleanup_free char *line = xstrndup(s, n);

		if (*line && !docker_says_missing(line))
			return 0;
		s += n + (s[n] == '\n');
	}
	return 1;
}

static struct entry *entry_of(struct gather *G, size_t gi, const char *container)
{
	for (size_t i = 0; i < G->n; i++)
		if (G->e[i].group == gi && strcmp(G->e[i].gw.container, container) == 0)
			return &G->e[i];
	return NULL;
}

static void read_inspect(struct gather *G, size_t gi, const struct run_result *res)
{
	cJSON *root = json_parse(res->out, res->out_len, "docker inspect output", &G->g[gi].err);
	const cJSON *obj;

	cJSON_ArrayForEach(obj, root) {
		const char *name = json_str(obj, "Name");
		struct entry *e = name ? entry_of(G, gi, name + (*name == '/')) : NULL;
		os_error perr = { 0 };

		if (!e || e->gw.c.exists)
			continue;
		if (container_parse_object(obj, &e->gw.c, &perr) < 0) {
			strv_pushf(&G->r->warnings, "gateway '%s': %s", e->gw.name, perr.msg);
			e->drop = 1;
		} else if (container_owner(&e->gw.c, e->gw.name) == OWNER_FOREIGN) {
			cleanup_free char *why = labels_foreign_reason("container", e->gw.container, e->gw.name);
			strv_pushf(&G->r->warnings, "%s; openshell will not manage it", why);
			e->drop = 1;
		} else {
			gateway_read_container(&e->gw);
		}
		os_error_clear(&perr);
	}
	cJSON_Delete(root);
}

/* The current daemon's labelled containers: gateways whose metadata is gone. */
static void read_names(struct gather *G, size_t gi, const char *text)
{
	struct strv names = { 0 };

	gateway_names_add_lines(&names, text);
	for (size_t i = 0; i < names.n; i++) {
		struct gateway gw;
		os_error e = { 0 };

		if (known(G, names.v[i]))
			continue;
		if (gateway_load_files(names.v[i], &gw, &e) == 0)
			add_entry(G, &gw, gi);
		else
			gateway_free(&gw);
		os_error_clear(&e);
	}
	strv_free(&names);
}

static void finish(struct gather *G, size_t gi)
{
	struct group *g = &G->g[gi];
	struct run_result res = { 0 };
	int rc = run_finish(g->child, &res, &g->err);

	g->child = NULL;
	if (rc == 0 && !answered(g, &res)) {
		cleanup_free char *line = run_first_line(*res.err ? res.err : res.out);
		os_error_set(&g->err, OS_EXIT_DOCKER, "%s", *line ? line : "no answer");
	}
	if (rc < 0 || g->err.msg) {
		g->stage = DONE;
	} else if (g->stage == LIST) {
		read_names(G, gi, res.out);
		g->stage = INSPECT;
		launch(G, gi);
	} else {
		read_inspect(G, gi, &res);
		g->stage = DONE;
	}
	run_result_free(&res);
}

/* Every group's calls, up to RUN_MAX_CHILDREN daemons at a time. */
static void ask_daemons(struct gather *G)
{
	struct run_child *kids[RUN_MAX_CHILDREN] = { 0 };
	size_t at[RUN_MAX_CHILDREN] = { 0 }, next = 0;
	int i;

	for (;;) {
		for (size_t s = 0; s < RUN_MAX_CHILDREN; s++) {
			while (!kids[s] && next < G->ng) {
				if (G->g[next].stage != DONE)
					launch(G, next);
				kids[s] = G->g[next].child;
				at[s] = next++;
			}
		}
		if ((i = run_wait_any(kids, RUN_MAX_CHILDREN)) < 0)
			break;
		finish(G, at[i]);
		kids[i] = G->g[at[i]].child;
	}
}

static char *daemon_words(const struct group *g)
{
	if (!g->w.context)
		return xstrdup("the one the environment names");
	if (strcmp(g->w.context, "default") == 0)
		return xstrdup(g->w.endpoint);
	return xasprintf("context %s, %s", g->w.context, g->w.endpoint);
}

/* Each daemon that could not be asked: its gateways' state is unknown. */
static void report(struct gather *G)
{
	struct roster *r = G->r;

	for (size_t gi = 0; gi < G->ng; gi++) {
		struct group *g = &G->g[gi];
		struct strv members = { 0 };

		if (!g->err.msg)
			continue;
		for (size_t i = 0; i < G->n; i++)
			if (G->e[i].group == gi && !G->e[i].drop) {
				G->e[i].gw.daemon_error = xstrdup(g->err.msg);
				strv_push(&members, G->e[i].gw.name);
			}
		cleanup_free char *which = daemon_words(g);
		cleanup_free char *names = strv_join(&members, ", ");
		if (members.n == 0) {
			strv_pushf(&r->warnings,
				   "cannot ask the Docker daemon (%s) for openshell's containers: %s; a gateway there whose metadata is gone is not listed",
				   which, g->err.msg);
		} else {
			r->errors = xrealloc(r->errors, (r->n_errors + 1) * sizeof(*r->errors));
			r->errors[r->n_errors] = (os_error){ .code = g->err.code ? g->err.code : OS_EXIT_DOCKER };
			/* A follow's refusal already names the daemon and the fix. */
			r->errors[r->n_errors++].msg =
				g->refused ? xasprintf("%s (listed as unknown: %s)", g->err.msg, names)
					: xasprintf("cannot ask the Docker daemon (%s) about %s, listed as unknown: %s; check that it runs and that 'docker info' reaches it",
						    which, names, g->err.msg);
		}
		strv_free(&members);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct gateway *)a)->name, ((const struct gateway *)b)->name);
}

int roster_gather(struct roster *r, os_error *err)
{
	struct gather G = { .r = r };
	os_error cur_err = { 0 };
	int cur_ok, rc = -1;

	memset(r, 0, sizeof(*r));
	cur_ok = docker_daemon_resolve(&G.cur, &cur_err) == 0;
	if (load_recorded(&G, cur_ok, err) < 0)
		goto out;
	if (cur_ok) {
		G.g[0].w = G.cur.at;
	} else {
		G.g[0].err = cur_err;   /* its context cannot be read: moved */
		memset(&cur_err, 0, sizeof(cur_err));
		G.g[0].stage = DONE;
	}
	ask_daemons(&G);
	report(&G);
	r->gw = xcalloc(G.n + 1, sizeof(*r->gw));
	for (size_t i = 0; i < G.n; i++)
		if (G.e[i].drop)
			gateway_free(&G.e[i].gw);
		else
			r->gw[r->n++] = G.e[i].gw;
	qsort(r->gw, r->n, sizeof(*r->gw), by_name);
	rc = 0;
out:
	if (rc < 0)
		for (size_t i = 0; i < G.n; i++)
			gateway_free(&G.e[i].gw);
	for (size_t i = 0; i < G.ng; i++) {
		os_error_clear(&G.g[i].err);
	}
	os_error_clear(&cur_err);
	free(G.e);
	free(G.g);
	docker_daemon_free(&G.cur);
	return rc;
}

void roster_free(struct roster *r)
{
	for (size_t i = 0; i < r->n; i++)
		gateway_free(&r->gw[i]);
	for (size_t i = 0; i < r->n_errors; i++)
		os_error_clear(&r->errors[i]);
	free(r->gw);
	free(r->errors);
	strv_free(&r->warnings);
	memset(r, 0, sizeof(*r));
}
