/*
 * The installed libidebridge as a C user gets it: built outside the
 * checkout with `pkg-config --cflags --libs idebridge` (bindings/test/run.sh
 * does this against `make install PREFIX=...`). It checks the version, a
 * registry round trip, and an asynchronous call waited for through its
 * descriptor with poll(2).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <idebridge.h>

static int failures;

#define CHECK(cond, ...)                                      \
	do {                                                  \
		if (!(cond)) {                                \
			fprintf(stderr, "FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);         \
			fputc('\n', stderr);                  \
			failures++;                           \
		}                                             \
	} while (0)

int main(void) {
	char *out = NULL;
	CHECK(idb_version(&out) == IDB_OK && out && strcmp(out, IDEBRIDGE_TEST_VERSION) == 0, "version %s", out ? out : "(null)");
	idb_free(out);

	uint64_t reg = 0;
	CHECK(idb_registry_new(NULL, &reg) == IDB_OK, "registry_new");
	CHECK(idb_registry_publish(reg, "gopls",
				   "{\"uri\":\"file:///p/main.go\",\"diagnostics\":[{\"range\":{\"start\":{\"line\":3,\"character\":1},"
				   "\"end\":{\"line\":3,\"character\":5}},\"severity\":1,\"message\":\"undefined: x\"}]}") == IDB_OK,
	      "publish");
	char *att = NULL;
	CHECK(idb_registry_drain(reg, &att) == IDB_OK && att, "drain");
	CHECK(idb_render_attachment(att, "{\"projectDir\":\"/p\"}", &out) == IDB_OK && out && strstr(out, "main.go:") &&
		  strstr(out, "[Line 4:2] undefined: x"),
	      "render %s", out ? out : "(null)");
	idb_free(out);
	idb_free(att);
	CHECK(idb_registry_free(reg) == IDB_OK, "registry_free");

	/* An asynchronous call, waited for through its descriptor. */
	uint64_t call = 0, fd = 0;
	CHECK(idb_discover_start("{\"lockfileDirs\":[],\"env\":{}}", 0, &call) == IDB_OK, "discover_start");
	CHECK(idb_call_fd(call, &fd) == IDB_OK, "call_fd");
	struct pollfd p = {.fd = (int)fd, .events = POLLIN};
	CHECK(poll(&p, 1, 10000) == 1, "the call did not complete");
	out = NULL;
	CHECK(idb_call_result(call, &out) == IDB_OK && out && strcmp(out, "[]") == 0, "result %s", out ? out : "(null)");
	idb_free(out);
	CHECK(idb_call_free(call) == IDB_OK, "call_free");

	uint64_t live = 1;
	CHECK(idb_handle_count(&live) == IDB_OK && live == 0, "%llu handles live", (unsigned long long)live);
	printf("c_package_test: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
