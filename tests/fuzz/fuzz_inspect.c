/* fuzz_inspect.c - container_parse_inspect() on arbitrary `docker inspect` output.
 *
 * The daemon's JSON decides whether openshell thinks its gateway runs, is
 * healthy and asks for GPUs; a hostile or broken daemon must get an error,
 * never a crash, a leak or a half-filled struct.
 */
#include "config.h"

/* fuzz.h first: docker/container.h uses size_t without including <stddef.h> */
#include "fuzz.h"

#include "base/error.h"
#include "docker/client.h"
#include "docker/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_bytes(data, size);
	char *text = fuzz_str(data, size);
	struct gw_container c;
	os_error err = { 0 };

	if (container_parse_inspect(buf, size, &c, &err) == 0) {
		FUZZ_ASSERT(c.exists == 1 && c.status != NULL);
		FUZZ_ASSERT(c.running == 0 || c.running == 1);
		FUZZ_ASSERT(c.restarting == 0 || c.restarting == 1);
		FUZZ_ASSERT(c.gpu_request == 0 || c.gpu_request == 1);
		FUZZ_ASSERT(c.exit_code >= -1 && c.exit_code <= 255);
		FUZZ_ASSERT(c.restart_count >= 0 && c.restart_count <= 1LL << 40);
		FUZZ_ASSERT(err.msg == NULL);
		container_free(&c);
	} else {
		/* a failed parse leaves nothing allocated and says why in one line */
		FUZZ_ASSERT(err.msg != NULL && fuzz_one_line(err.msg));
		FUZZ_ASSERT(c.id == NULL && c.status == NULL && c.health == NULL && c.image == NULL &&
			    c.managed_by == NULL && c.gateway == NULL && c.state_error == NULL &&
			    c.health_line == NULL && c.health_test.n == 0);
	}
	/* docker's stderr goes through the same untrusted path */
	(void)docker_says_missing(text);
	os_error_clear(&err);
	free(text);
	free(buf);
	return 0;
}
