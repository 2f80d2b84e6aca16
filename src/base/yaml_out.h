/* base/yaml_out.h - a libyaml document written out to memory.
 *
 * Every YAML openshell writes (kubeconfigs, Helm values) is a libyaml
 * document emitted here: block style, never folded (long base64 stays on
 * one line), UTF-8 as it is.
 */
#ifndef OPENSHELL_BASE_YAML_OUT_H
#define OPENSHELL_BASE_YAML_OUT_H

#include <stddef.h>

#include <yaml.h>

#include "base/error.h"

/* Emit DOC into *out (NUL-terminated, owned), consuming the document
 * (yaml_emitter_dump deletes it either way). WHAT names it in the error. */
int yaml_emit_document(yaml_document_t *doc, const char *what, char **out, size_t *out_len, os_error *err);

#endif
