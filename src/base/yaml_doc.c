/* base/yaml_doc.c - libyaml documents in memory (see base/yaml_doc.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "base/yaml_doc.h"

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

int yaml_emit_document(yaml_document_t *doc, const char *what, char **out, size_t *out_len, os_error *err)
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
		os_error_set(err, OS_EXIT_FAILURE, "cannot write %s YAML: %s", what,
			     emitter.problem ? emitter.problem : "emitter error");
		free(b.data);
	} else {
		*out = b.data;
		*out_len = b.len;
	}
	yaml_emitter_delete(&emitter);
	return ok ? 0 : -1;
}

int yaml_doc_load(const char *in, size_t len, const char *what, yaml_document_t *doc, os_error *err)
{
	yaml_parser_t parser;
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return os_error_set(err, OS_EXIT_FAILURE, "cannot read %s: out of memory", what);
	yaml_parser_set_input_string(&parser, (const unsigned char *)in, len);
	if (!yaml_parser_load(&parser, doc)) {
		rc = os_error_set(err, OS_EXIT_FAILURE, "%s is not valid YAML: %s at line %zu", what,
				  parser.problem ? parser.problem : "parse error", parser.problem_mark.line + 1);
	} else if (!yaml_document_get_root_node(doc) || yaml_document_get_root_node(doc)->type != YAML_MAPPING_NODE) {
		yaml_document_delete(doc);
		rc = os_error_set(err, OS_EXIT_FAILURE, "%s is not a YAML mapping", what);
	}
	yaml_parser_delete(&parser);
	return rc;
}

yaml_node_t *yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
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
