/* base/yaml_doc.h - libyaml documents read from and written to memory.
 *
 * Every YAML openshell reads or writes (kubeconfigs, Helm values) is a
 * libyaml document: loaded here from text whose root must be a mapping,
 * looked up by key, and emitted in block style, never folded (long base64
 * stays on one line), UTF-8 as it is.
 */
#ifndef OPENSHELL_BASE_YAML_DOC_H
#define OPENSHELL_BASE_YAML_DOC_H

#include <stddef.h>

#include <yaml.h>

#include "base/error.h"

/* Emit DOC into *out (NUL-terminated, owned), consuming the document
 * (yaml_emitter_dump deletes it either way). WHAT names it in the error. */
int yaml_emit_document(yaml_document_t *doc, const char *what, char **out, size_t *out_len, os_error *err);

/* Load IN into DOC (to be deleted by the caller on success); its root
 * must be a mapping. WHAT names the text in the error. */
int yaml_doc_load(const char *in, size_t len, const char *what, yaml_document_t *doc, os_error *err);

/* The value under KEY of the mapping MAP, or NULL (MAP may be NULL). */
yaml_node_t *yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key);

#endif
