/* base/json.h - careful reading of JSON that other programs print, and the
 * few ways openshell's --json output is written.
 *
 * docker and kubectl output is untrusted input: these helpers parse it with
 * cJSON's length-bounded parser and read fields case-sensitively with type
 * checks, so a missing or mistyped field reads as absent, never as garbage.
 * On output, an unknown value is always null, never left out, so that every
 * object of one kind has the same keys; every document openshell prints
 * starts with its "schema" version, and doc/openshell.schema.json
 * describes each.
 */
#ifndef OPENSHELL_BASE_JSON_H
#define OPENSHELL_BASE_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"

/* Parse buf (need not be NUL-terminated). `what` names the source in the
 * error ("docker inspect output"). Returns NULL with *err set on failure. */
cJSON *json_parse(const char *buf, size_t len, const char *what, os_error *err);

/* Walk nested objects by keys (NULL-terminated list). NULL when any step
 * is missing or not an object. */
const cJSON *json_get(const cJSON *obj, ...) __attribute__((sentinel));

/* The string at obj[key], or NULL if absent or not a string. */
const char *json_str(const cJSON *obj, const char *key);

/* obj[key] as a boolean: 1 true, 0 false, -1 absent or not a boolean. */
int json_bool(const cJSON *obj, const char *key);

/* A JSON number that is an integer within [min, max]; 0 or -1. */
int json_int(const cJSON *item, long long min, long long max, long long *out);

/* The strings of a JSON array, nested arrays flattened, joined with sep;
 * empty strings and other values are skipped. "" when there are none. */
char *json_join_strings(const cJSON *arr, const char *sep);

/* The version of the vocabulary that doc/openshell.schema.json describes:
 * raised when a key changes its meaning or goes away, not when one is added. */
#define JSON_SCHEMA_VERSION 1

/* A new --json document: an object holding "schema" alone. */
cJSON *json_document(void);

/* Print obj, indented, as a line on stdout, and delete it. */
void json_print_stdout(cJSON *obj);

/* obj[key] = value, or null when value is NULL. */
void json_add_string_or_null(cJSON *obj, const char *key, const char *value);

/* obj[key] = n, or null when n < 0 (a count that is not known). */
void json_add_count_or_null(cJSON *obj, const char *key, long long n);

#endif
