/* kubeconfig.c - libyaml document edits of a kubeconfig. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "exitcode.h"
#include "kubeconfig.h"
#include "xalloc.h"

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(doc, pair->key);
		if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(doc, pair->value);
	}
	return NULL;
}

static int is_scalar(const yaml_node_t *n, const char *value)
{
	return n && n->type == YAML_SCALAR_NODE &&
	       (!value || strcmp((const char *)n->data.scalar.value, value) == 0);
}

/* Would a YAML 1.1 reader (kubectl's) take this plain scalar for anything
 * but a string? Only words that start with a letter or '/' and are not a
 * boolean or null are left plain; everything else is quoted. */
static int needs_quotes(const char *v)
{
	static const char *const words[] = { "y", "yes", "n", "no", "true", "false", "on", "off",
					     "null", NULL };

	if (!*v || !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/", v[0]) ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/-") != strlen(v))
		return 1;
	for (size_t i = 0; words[i]; i++)
		if (strcasecmp(v, words[i]) == 0)
			return 1;
	return 0;
}

/* libyaml frees scalar values with free(), so a strdup'ed one may replace it. */
static void set_scalar(yaml_node_t *n, const char *value)
{
	free(n->data.scalar.value);
	n->data.scalar.value = (yaml_char_t *)xstrdup(value);
	n->data.scalar.length = strlen(value);
	n->data.scalar.style = needs_quotes(value) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						   : YAML_PLAIN_SCALAR_STYLE;
}

static void rename_default(yaml_node_t *n, const char *name)
{
	if (is_scalar(n, "default"))
		set_scalar(n, name);
}

/* Call fn on each mapping item of the sequence at root[key]. */
#define EACH_ITEM(doc, root, key, item)                                                   \
	for (yaml_node_t *seq_ = map_get(doc, root, key); seq_ && seq_->type == YAML_SEQUENCE_NODE; seq_ = NULL) \
		for (yaml_node_item_t *it_ = seq_->data.sequence.items.start;                \
		     it_ < seq_->data.sequence.items.top; it_++)                             \
			for (yaml_node_t *item = yaml_document_get_node(doc, *it_); item; item = NULL)

static int load(const char *in, size_t len, yaml_document_t *doc, os_error *err)
{
	yaml_parser_t parser;
	int rc = 0;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)in, len);
	if (!yaml_parser_load(&parser, doc)) {
		rc = os_error_set(err, OS_EXIT_FAILURE, "kubeconfig is not valid YAML: %s at line %zu",
				  parser.problem ? parser.problem : "parse error",
				  parser.problem_mark.line + 1);
	} else if (!yaml_document_get_root_node(doc) ||
		   yaml_document_get_root_node(doc)->type != YAML_MAPPING_NODE) {
		yaml_document_delete(doc);
		rc = os_error_set(err, OS_EXIT_FAILURE, "kubeconfig is not a YAML mapping");
	}
	yaml_parser_delete(&parser);
	return rc;
}

struct buf {
	char *data;
	size_t len, cap;
};

static int buf_write(void *data, unsigned char *bytes, size_t size)
{
	struct buf *b = data;

	if (b->len + size + 1 > b->cap) {
		while (b->len + size + 1 > b->cap)
			b->cap = b->cap ? b->cap * 2 : 4096;
		b->data = xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, bytes, size);
	b->len += size;
	b->data[b->len] = '\0';
	return 1;
}

/* Emit and consume the document (yaml_emitter_dump deletes it either way). */
static int emit(yaml_document_t *doc, char **out, size_t *out_len, os_error *err)
{
	yaml_emitter_t emitter;
	struct buf b = { 0 };
	int ok;

	yaml_emitter_initialize(&emitter);
	yaml_emitter_set_output(&emitter, buf_write, &b);
	yaml_emitter_set_width(&emitter, -1);   /* never fold long base64 */
	yaml_emitter_set_unicode(&emitter, 1);
	ok = yaml_emitter_open(&emitter);
	if (ok)
		ok = yaml_emitter_dump(&emitter, doc);   /* consumes doc */
	else
		yaml_document_delete(doc);
	ok = ok && yaml_emitter_close(&emitter) && yaml_emitter_flush(&emitter);
	if (!ok) {
		os_error_set(err, OS_EXIT_FAILURE, "cannot write kubeconfig YAML: %s",
			     emitter.problem ? emitter.problem : "emitter error");
		free(b.data);
	} else {
		*out = b.data;
		*out_len = b.len;
	}
	yaml_emitter_delete(&emitter);
	return ok ? 0 : -1;
}

int kubeconfig_rewrite(const char *in, size_t len, const char *server, const char *name,
		       char **out, size_t *out_len, os_error *err)
{
	yaml_document_t doc;
	yaml_node_t *root;
	int servers = 0;

	if (load(in, len, &doc, err) < 0)
		return -1;
	root = yaml_document_get_root_node(&doc);
	EACH_ITEM(&doc, root, "clusters", item) {
		yaml_node_t *s = map_get(&doc, map_get(&doc, item, "cluster"), "server");
		if (is_scalar(s, NULL)) {
			set_scalar(s, server);
			servers++;
		}
		rename_default(map_get(&doc, item, "name"), name);
	}
	EACH_ITEM(&doc, root, "contexts", item) {
		yaml_node_t *ctx = map_get(&doc, item, "context");
		rename_default(map_get(&doc, item, "name"), name);
		rename_default(map_get(&doc, ctx, "cluster"), name);
		rename_default(map_get(&doc, ctx, "user"), name);
	}
	EACH_ITEM(&doc, root, "users", item)
		rename_default(map_get(&doc, item, "name"), name);
	rename_default(map_get(&doc, root, "current-context"), name);
	if (!servers) {
		yaml_document_delete(&doc);
		return os_error_set(err, OS_EXIT_FAILURE,
				    "kubeconfig from k3s has no clusters[].cluster.server to rewrite");
	}
	return emit(&doc, out, out_len, err);
}

int kubeconfig_server(const char *in, size_t len, char **server, os_error *err)
{
	yaml_document_t doc;
	yaml_node_t *root;

	*server = NULL;
	if (load(in, len, &doc, err) < 0)
		return -1;
	root = yaml_document_get_root_node(&doc);
	EACH_ITEM(&doc, root, "clusters", item) {
		yaml_node_t *s = map_get(&doc, map_get(&doc, item, "cluster"), "server");
		if (is_scalar(s, NULL) && !*server)
			*server = xstrdup((char *)s->data.scalar.value);
	}
	yaml_document_delete(&doc);
	if (!*server)
		return os_error_set(err, OS_EXIT_FAILURE, "kubeconfig has no cluster server");
	return 0;
}
