/* fuzz_metadata.c - metadata_parse() on any metadata.json.
 *
 * The file lives in the user's config directory, where anything may have
 * written it. A parse either fails cleanly, leaving nothing allocated, or
 * yields a complete record that survives metadata_to_json() and a second
 * parse unchanged.
 */
#include "config.h"

#include "base/error.h"
#include "fuzz.h"
#include "gateway/state/metadata.h"

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_bytes(data, size);
	struct gw_metadata md, again;
	os_error err = { 0 };
	char *json;

	if (metadata_parse(buf, size, &md, &err) == 0) {
		FUZZ_ASSERT(err.msg == NULL);
		FUZZ_ASSERT(md.port >= 1 && md.port <= 65535 && (md.gpu == 0 || md.gpu == 1));
		json = metadata_to_json(&md);
		FUZZ_ASSERT(json != NULL);
		FUZZ_ASSERT(metadata_parse(json, strlen(json), &again, &err) == 0);
		FUZZ_ASSERT(same(md.name, again.name) && same(md.container, again.container) &&
			    same(md.image, again.image) && same(md.bind, again.bind) &&
			    same(md.server, again.server) && same(md.kubeconfig, again.kubeconfig) &&
			    same(md.created, again.created) && md.port == again.port &&
			    md.gpu == again.gpu);
		metadata_free(&again);
		free(json);
		metadata_free(&md);
	} else {
		FUZZ_ASSERT(err.msg != NULL && fuzz_one_line(err.msg));
		FUZZ_ASSERT(md.name == NULL && md.container == NULL && md.image == NULL &&
			    md.bind == NULL && md.server == NULL && md.kubeconfig == NULL &&
			    md.created == NULL);
	}
	os_error_clear(&err);
	free(buf);
	return 0;
}
