/* base/yaml_out.c - emitting a libyaml document (see base/yaml_out.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "base/yaml_out.h"

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
