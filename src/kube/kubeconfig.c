/* kube/kubeconfig.c - libyaml document edits of a kubeconfig. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/xalloc.h"
#include "base/yaml_doc.h"
#include "kube/kubeconfig.h"

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
	for (yaml_node_t *seq_ = yaml_map_get(doc, root, key); seq_ && seq_->type == YAML_SEQUENCE_NODE; seq_ = NULL) \
		for (yaml_node_item_t *it_ = seq_->data.sequence.items.start;                \
		     it_ < seq_->data.sequence.items.top; it_++)                             \
			for (yaml_node_t *item = yaml_document_get_node(doc, *it_); item; item = NULL)

static int load(const char *in, size_t len, yaml_document_t *doc, os_error *err)
{
	return yaml_doc_load(in, len, "kubeconfig", doc, err);
}

/* Parse and emit: validates add and normalises its layout like a merge. */
static int kubeconfig_rewrite_identity(const char *in, size_t len, char **out, size_t *out_len,
				       os_error *err)
{
	yaml_document_t doc;

	if (load(in, len, &doc, err) < 0)
		return -1;
	return yaml_emit_document(&doc, "kubeconfig", out, out_len, err);
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
		yaml_node_t *s = yaml_map_get(&doc, yaml_map_get(&doc, item, "cluster"), "server");
		if (is_scalar(s, NULL)) {
			set_scalar(s, server);
			servers++;
		}
		rename_default(yaml_map_get(&doc, item, "name"), name);
	}
	EACH_ITEM(&doc, root, "contexts", item) {
		yaml_node_t *ctx = yaml_map_get(&doc, item, "context");
		rename_default(yaml_map_get(&doc, item, "name"), name);
		rename_default(yaml_map_get(&doc, ctx, "cluster"), name);
		rename_default(yaml_map_get(&doc, ctx, "user"), name);
	}
	EACH_ITEM(&doc, root, "users", item)
		rename_default(yaml_map_get(&doc, item, "name"), name);
	rename_default(yaml_map_get(&doc, root, "current-context"), name);
	if (!servers) {
		yaml_document_delete(&doc);
		return os_error_set(err, OS_EXIT_FAILURE,
				    "kubeconfig from k3s has no clusters[].cluster.server to rewrite");
	}
	return yaml_emit_document(&doc, "kubeconfig", out, out_len, err);
}

/* Deeper than any kubeconfig; an alias that contains itself (&a [*a])
 * loads as a cycle, and must end here rather than in a stack overflow. */
#define COPY_MAX_DEPTH 64

/* Copy node `id` of src into dst; returns its id in dst (0 on failure).
 * Ids, not pointers, are held across additions: adding a node may move
 * the document's node array. */
static int copy_node(yaml_document_t *dst, yaml_document_t *src, int id, int depth)
{
	yaml_node_t *n = yaml_document_get_node(src, id);
	int copy = 0;

	if (!n || depth > COPY_MAX_DEPTH)
		return 0;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return yaml_document_add_scalar(dst, n->tag, n->data.scalar.value,
						(int)n->data.scalar.length, n->data.scalar.style);
	case YAML_SEQUENCE_NODE: {
		int count = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
		copy = yaml_document_add_sequence(dst, n->tag, n->data.sequence.style);
		for (int i = 0; copy && i < count; i++) {
			int item = copy_node(dst, src, yaml_document_get_node(src, id)->data.sequence.items.start[i],
					     depth + 1);
			if (!item || !yaml_document_append_sequence_item(dst, copy, item))
				return 0;
		}
		return copy;
	}
	case YAML_MAPPING_NODE: {
		int count = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
		copy = yaml_document_add_mapping(dst, n->tag, n->data.mapping.style);
		for (int i = 0; copy && i < count; i++) {
			yaml_node_pair_t pair = yaml_document_get_node(src, id)->data.mapping.pairs.start[i];
			int k = copy_node(dst, src, pair.key, depth + 1);
			int v = k ? copy_node(dst, src, pair.value, depth + 1) : 0;
			if (!v || !yaml_document_append_mapping_pair(dst, copy, k, v))
				return 0;
		}
		return copy;
	}
	default:
		return 0;
	}
}

static int node_id(yaml_document_t *doc, yaml_node_t *n)
{
	return n ? (int)(n - doc->nodes.start) + 1 : 0;
}

static int is_null(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*v || !strcmp(v, "null") || !strcmp(v, "~"));
}

/* The id of root[key], adding an empty sequence there when it is missing
 * or null (kubectl writes "clusters: null" after deleting the last one). */
static int ensure_sequence(yaml_document_t *doc, const char *key)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	yaml_node_t *v = yaml_map_get(doc, root, key);
	int root_id = node_id(doc, root), v_id = node_id(doc, v), k, seq;

	if (v && !is_null(v))
		return v->type == YAML_SEQUENCE_NODE ? v_id : 0;
	seq = yaml_document_add_sequence(doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
	if (!seq)
		return 0;
	root = yaml_document_get_node(doc, root_id);   /* adding may have moved it */
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; v_id && p < root->data.mapping.pairs.top; p++)
		if (p->value == v_id) {
			p->value = seq;   /* the null stays unreachable, freed with the document */
			return seq;
		}
	k = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)key, -1, YAML_PLAIN_SCALAR_STYLE);
	if (!k || !yaml_document_append_mapping_pair(doc, root_id, k, seq))
		return 0;
	return seq;
}

static const char *item_name(yaml_document_t *doc, yaml_node_t *item)
{
	yaml_node_t *n = yaml_map_get(doc, item, "name");

	return is_scalar(n, NULL) ? (const char *)n->data.scalar.value : NULL;
}

/* Put each entry of add's root[key] into base's, replacing same names. */
static int merge_list(yaml_document_t *base, yaml_document_t *add, const char *key)
{
	int seq = ensure_sequence(base, key);

	if (!seq)
		return -1;
	EACH_ITEM(add, yaml_document_get_root_node(add), key, item) {
		const char *name = item_name(add, item);
		int copy = copy_node(base, add, node_id(add, item), 0);
		yaml_node_t *s;
		int replaced = 0;

		if (!copy || !name)
			return -1;
		s = yaml_document_get_node(base, seq);   /* after the copy: nodes may have moved */
		for (yaml_node_item_t *i = s->data.sequence.items.start; i < s->data.sequence.items.top; i++) {
			const char *other = item_name(base, yaml_document_get_node(base, *i));
			if (other && strcmp(other, name) == 0 && !replaced) {
				*i = copy;   /* the old entry stays unreachable, freed with the document */
				replaced = 1;
			}
		}
		if (!replaced && !yaml_document_append_sequence_item(base, seq, copy))
			return -1;
	}
	return 0;
}

int kubeconfig_merge(const char *base, size_t base_len, const char *add, size_t add_len,
		     char **out, size_t *out_len, os_error *err)
{
	yaml_document_t bdoc, adoc;
	yaml_node_t *cur;
	const char *ctx;
	size_t blank = 0;

	while (blank < base_len && strchr(" \t\r\n", base[blank]) && base[blank])
		blank++;
	if (blank >= base_len)   /* no config yet: the new one is the config */
		return kubeconfig_rewrite_identity(add, add_len, out, out_len, err);
	if (load(base, base_len, &bdoc, err) < 0)
		return os_error_wrap(err, "existing kubeconfig");
	if (load(add, add_len, &adoc, err) < 0) {
		yaml_document_delete(&bdoc);
		return -1;
	}
	if (merge_list(&bdoc, &adoc, "clusters") < 0 || merge_list(&bdoc, &adoc, "contexts") < 0 ||
	    merge_list(&bdoc, &adoc, "users") < 0) {
		yaml_document_delete(&bdoc);
		yaml_document_delete(&adoc);
		return os_error_set(err, OS_EXIT_FAILURE,
				    "cannot merge kubeconfigs: clusters, contexts and users must be lists of named entries");
	}
	cur = yaml_map_get(&adoc, yaml_document_get_root_node(&adoc), "current-context");
	ctx = is_scalar(cur, NULL) ? (const char *)cur->data.scalar.value : NULL;
	if (ctx) {
		yaml_node_t *bcur = yaml_map_get(&bdoc, yaml_document_get_root_node(&bdoc), "current-context");
		if (is_scalar(bcur, NULL)) {
			set_scalar(bcur, ctx);
		} else {
			int k = yaml_document_add_scalar(&bdoc, NULL, (yaml_char_t *)"current-context", -1,
							 YAML_PLAIN_SCALAR_STYLE);
			int v = yaml_document_add_scalar(&bdoc, NULL, (yaml_char_t *)ctx, -1,
							 needs_quotes(ctx) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
									   : YAML_PLAIN_SCALAR_STYLE);
			if (!k || !v ||
			    !yaml_document_append_mapping_pair(&bdoc, node_id(&bdoc, yaml_document_get_root_node(&bdoc)), k, v)) {
				yaml_document_delete(&adoc);
				yaml_document_delete(&bdoc);
				return os_error_set(err, OS_EXIT_FAILURE, "cannot set current-context in the merged kubeconfig");
			}
		}
	}
	yaml_document_delete(&adoc);
	return yaml_emit_document(&bdoc, "kubeconfig", out, out_len, err);
}

/* Drop from root[key] every entry named `name`; 1 when one was there. */
static int drop_named(yaml_document_t *doc, const char *key, const char *name)
{
	yaml_node_t *seq = yaml_map_get(doc, yaml_document_get_root_node(doc), key);
	yaml_node_item_t *keep;
	int dropped = 0;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return 0;
	keep = seq->data.sequence.items.start;
	for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
		const char *other = item_name(doc, yaml_document_get_node(doc, *i));
		if (other && strcmp(other, name) == 0)
			dropped = 1;   /* unreachable now; freed with the document */
		else
			*keep++ = *i;
	}
	seq->data.sequence.items.top = keep;
	return dropped;
}

int kubeconfig_remove(const char *base, size_t base_len, const char *name, char **out, size_t *out_len,
		      int *removed, os_error *err)
{
	yaml_document_t doc;
	yaml_node_t *cur;

	*removed = 0;
	if (load(base, base_len, &doc, err) < 0)
		return -1;
	*removed |= drop_named(&doc, "clusters", name);
	*removed |= drop_named(&doc, "contexts", name);
	*removed |= drop_named(&doc, "users", name);
	/* A current-context that was another stays; ours goes, as kubectl's
	 * delete-context leaves none. */
	cur = yaml_map_get(&doc, yaml_document_get_root_node(&doc), "current-context");
	if (is_scalar(cur, name))
		set_scalar(cur, "");
	return yaml_emit_document(&doc, "kubeconfig", out, out_len, err);
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
		yaml_node_t *s = yaml_map_get(&doc, yaml_map_get(&doc, item, "cluster"), "server");
		if (is_scalar(s, NULL) && !*server)
			*server = xstrdup((char *)s->data.scalar.value);
	}
	yaml_document_delete(&doc);
	if (!*server)
		return os_error_set(err, OS_EXIT_FAILURE, "kubeconfig has no cluster server");
	return 0;
}
