/* base/json.c - type-checked access to parsed JSON; --json output. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/xalloc.h"

cJSON *json_parse(const char *buf, size_t len, const char *what, os_error *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);

	if (!root) {
		size_t at = end && end >= buf ? (size_t)(end - buf) : 0;
		os_error_set(err, OS_EXIT_FAILURE, "%s is not valid JSON (at byte %zu of %zu)",
			     what, at, len);
		return NULL;
	}
	return root;
}

const cJSON *json_get(const cJSON *obj, ...)
{
	va_list ap;
	const char *key;

	va_start(ap, obj);
	while (obj && (key = va_arg(ap, const char *)))
		obj = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	va_end(ap);
	return obj;
}

const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int json_bool(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

int json_int(const cJSON *item, long long min, long long max, long long *out)
{
	double d;

	if (!cJSON_IsNumber(item))
		return -1;
	d = cJSON_GetNumberValue(item);
	if (!isfinite(d) || d != floor(d) || d < (double)min || d > (double)max)
		return -1;
	*out = (long long)d;
	return 0;
}

char *json_join_strings(const cJSON *arr, const char *sep)
{
	const cJSON *v;
	char *out = xstrdup("");

	cJSON_ArrayForEach(v, arr) {
		cleanup_free char *part = cJSON_IsArray(v) ? json_join_strings(v, sep)
				       : xstrdup(cJSON_IsString(v) ? v->valuestring : "");
		char *next = *part ? xasprintf("%s%s%s", out, *out ? sep : "", part) : xstrdup(out);
		free(out);
		out = next;
	}
	return out;
}

cJSON *json_document(void)
{
	cJSON *doc = cJSON_CreateObject();

	cJSON_AddNumberToObject(doc, "schema", JSON_SCHEMA_VERSION);
	return doc;
}

void json_print_stdout(cJSON *obj)
{
	char *text = cJSON_Print(obj);

	puts(text);
	free(text);
	cJSON_Delete(obj);
}

void json_add_string_or_null(cJSON *obj, const char *key, const char *value)
{
	if (value)
		cJSON_AddStringToObject(obj, key, value);
	else
		cJSON_AddNullToObject(obj, key);
}

void json_add_count_or_null(cJSON *obj, const char *key, long long n)
{
	if (n >= 0)
		cJSON_AddNumberToObject(obj, key, (double)n);
	else
		cJSON_AddNullToObject(obj, key);
}
