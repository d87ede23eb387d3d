/*
 * The C test of libidebridge: exercises every export through the generated
 * header, from one thread and from 8 threads at once, with zero, stale and
 * random handles, and frees every string the library returns.
 *
 * Build and run (make abi-test does this):
 *
 *   gcc -pthread -Icabi/include cabi/test/abi_test.c -Lbuild -lidebridge \
 *       -Wl,-rpath,$PWD/build -o build/abi_test && build/abi_test
 *
 * `abi_test bench` prints per-call overhead figures instead.
 *
 * Environment: IDEBRIDGE_TEST_IDE is the headless IDE to talk to
 * (cabi/test/ideserve, built by make abi-test); IDB_TESTDATA is the
 * directory of the shared test data (default cabi/testdata).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "idebridge.h"

static int passed, failed;
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail_at(const char *file, int line, const char *fmt, ...) {
	va_list ap;
	pthread_mutex_lock(&count_mu);
	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failed++;
	pthread_mutex_unlock(&count_mu);
}

static void pass(void) {
	pthread_mutex_lock(&count_mu);
	passed++;
	pthread_mutex_unlock(&count_mu);
}

#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (cond)                                            \
			pass();                                      \
		else                                                 \
			fail_at(__FILE__, __LINE__, __VA_ARGS__);    \
	} while (0)

/* last_error returns this thread's last error in buf (empty when none). */
static const char *last_error(char *buf, size_t n) {
	char *msg = idb_last_error();
	snprintf(buf, n, "%s", msg ? msg : "");
	idb_free(msg);
	return buf;
}

static void check_status(const char *file, int line, const char *expr, int st, int want,
			 const char *want_msg) {
	char buf[4096];
	if (st != want) {
		fail_at(file, line, "%s = %d, want %d (%s)", expr, st, want, last_error(buf, sizeof buf));
		return;
	}
	if (want != IDB_OK && want_msg != NULL && !strstr(last_error(buf, sizeof buf), want_msg)) {
		fail_at(file, line, "%s: message \"%s\" lacks \"%s\"", expr, buf, want_msg);
		return;
	}
	pass();
}

/* CHECK_STATUS checks a status and, for a failure, that this thread's last
 * error contains want_msg. */
#define CHECK_STATUS(call, want, want_msg) check_status(__FILE__, __LINE__, #call, (call), (want), (want_msg))
#define CHECK_OK(call) CHECK_STATUS(call, IDB_OK, NULL)

static uint64_t live_handles(void) {
	uint64_t n = UINT64_MAX;
	if (idb_handle_count(&n) != IDB_OK)
		return UINT64_MAX;
	return n;
}

/* ---- core ---- */

static void test_version(void) {
	char *v = NULL;
	CHECK_OK(idb_version(&v));
	CHECK(v != NULL && strlen(v) > 0, "version is empty");
	idb_free(v);
	CHECK_STATUS(idb_version(NULL), IDB_ERR_ARGUMENT, "out is NULL");
	idb_free(NULL); /* no-op */
	pass();
}

static void test_parse_lockfile(void) {
	const char *data = "{\"workspaceFolders\":[\"\\/home\\/me\\/p\"],\"pid\":42,\"ideName\":\"VS Code\",\"transport\":\"ws\"}";
	char *out = NULL;
	CHECK_OK(idb_parse_lockfile("12345.lock", data, strlen(data), &out));
	CHECK(out && strstr(out, "\"port\":12345") && strstr(out, "\"workspaceFolders\":[\"/home/me/p\"]") &&
		      strstr(out, "\"transport\":\"ws\"") && strstr(out, "\"pid\":42"),
	      "parsed lockfile %s", out ? out : "(null)");
	idb_free(out);

	/* Legacy text; data need not be NUL-terminated. */
	char legacy[] = {'/', 'a', '\n', '/', 'b', 'X'};
	out = NULL;
	CHECK_OK(idb_parse_lockfile("9.lock", legacy, 5, &out));
	CHECK(out && strstr(out, "\"workspaceFolders\":[\"/a\",\"/b\"]") && strstr(out, "\"legacy\":true"),
	      "legacy %s", out ? out : "(null)");
	idb_free(out);

	/* Binary content with a NUL byte is neither format. */
	char binary[] = {'/', 'a', 0, 1, 2};
	out = NULL;
	CHECK_STATUS(idb_parse_lockfile("9.lock", binary, sizeof binary, &out), IDB_ERROR, "binary");
	CHECK(out == NULL, "out set on failure");
	CHECK_STATUS(idb_parse_lockfile("x.lock", "{}", 2, &out), IDB_ERROR, "not a lockfile name");
	CHECK_STATUS(idb_parse_lockfile(NULL, "{}", 2, &out), IDB_ERR_ARGUMENT, "name is NULL");
	CHECK_STATUS(idb_parse_lockfile("1.lock", NULL, 2, &out), IDB_ERR_ARGUMENT, "data is NULL");
	CHECK_STATUS(idb_parse_lockfile("1.lock", "{}", 2, NULL), IDB_ERR_ARGUMENT, "out is NULL");
}

/* ---- files ---- */

static const char *testdata = "cabi/testdata";

/* read_file returns the NUL-terminated contents of testdata/name (malloc'd). */
static char *read_file(const char *name) {
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", testdata, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fail_at(__FILE__, __LINE__, "cannot open %s", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n + 1);
	if (fread(buf, 1, n, f) != (size_t)n)
		fail_at(__FILE__, __LINE__, "short read of %s", path);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* golden returns testdata/name without its final newline (malloc'd). */
static char *golden(const char *name) {
	char *s = read_file(name);
	size_t n = s ? strlen(s) : 0;
	if (n > 0 && s[n - 1] == '\n')
		s[n - 1] = 0;
	return s;
}

/* ---- registry ---- */

static void test_registry_golden(void) {
	uint64_t reg = 0;
	CHECK_OK(idb_registry_new(NULL, &reg));
	CHECK(reg != 0, "registry handle is 0");
	char *tsv = read_file("publishes.tsv");
	if (!tsv)
		return;
	for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		CHECK(tab != NULL, "bad line %s", line);
		if (!tab)
			continue;
		*tab = 0;
		CHECK_OK(idb_registry_publish(reg, line, tab + 1));
	}
	free(tsv);
	char *att = NULL, *want = golden("drain.golden.json");
	CHECK_OK(idb_registry_drain(reg, &att));
	CHECK(att && want && strcmp(att, want) == 0, "drain differs from the Go output:\n%s\n%s", att ? att : "(null)",
	      want ? want : "(null)");
	free(want);

	char *text = NULL;
	want = golden("render.golden.txt");
	CHECK_OK(idb_render_attachment(att, "{\"projectDir\":\"/p\"}", &text));
	CHECK(text && want && strcmp(text, want) == 0, "render differs from the Go output:\n%s", text ? text : "(null)");
	free(want);
	idb_free(text);
	idb_free(att);

	/* Everything was delivered: NULL, not an empty string. */
	att = (char *)"sentinel";
	CHECK_OK(idb_registry_drain(reg, &att));
	CHECK(att == NULL, "second drain returned %s", att ? att : "");

	char *stats = NULL;
	CHECK_OK(idb_registry_stats(reg, &stats));
	CHECK(stats && strstr(stats, "\"published\":5"), "stats %s", stats ? stats : "(null)");
	idb_free(stats);

	CHECK_OK(idb_registry_reset(reg, "file:///p/main.go"));
	CHECK_OK(idb_registry_reset(reg, NULL));
	CHECK_OK(idb_registry_set_version(reg, "file:///p/main.go", 3));
	CHECK_STATUS(idb_registry_set_version(reg, "file:///p/main.go", -2), IDB_ERR_ARGUMENT, "out of range");
	CHECK_STATUS(idb_registry_publish(reg, "s", "{\"uri\":"), IDB_ERR_ARGUMENT, NULL);
	CHECK_STATUS(idb_registry_publish(reg, NULL, "{}"), IDB_ERR_ARGUMENT, "server is NULL");
	CHECK_STATUS(idb_registry_drain(reg, NULL), IDB_ERR_ARGUMENT, "out is NULL");
	CHECK_OK(idb_registry_free(reg));
	CHECK_STATUS(idb_registry_free(reg), IDB_ERR_HANDLE, "already freed");

	CHECK_STATUS(idb_registry_new("{\"maxPerFiles\":1}", &reg), IDB_ERR_ARGUMENT, "unknown field");
	CHECK_STATUS(idb_render_attachment(NULL, NULL, &text), IDB_ERR_ARGUMENT, "attachment_json is NULL");
}

/* test_bad_handles passes zero, stale, random and wrong-kind handles to
 * every function that takes a handle. */
static void test_bad_handles(void) {
	uint64_t stale = 0;
	CHECK_OK(idb_registry_new(NULL, &stale));
	CHECK_OK(idb_registry_free(stale));
	uint64_t bad[] = {0, stale, 1, 42, 0xdeadbeefcafef00dULL, stale ^ (1ULL << 40), UINT64_MAX};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t h = bad[i];
		char *out = NULL;
		CHECK_STATUS(idb_registry_publish(h, "s", "{}"), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_registry_set_version(h, "u", 1), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_registry_drain(h, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_registry_reset(h, NULL), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_registry_stats(h, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_registry_free(h), IDB_ERR_HANDLE, "bad handle");
		CHECK(out == NULL, "out set on failure");
	}
}

struct reg_thread {
	int id;
	uint64_t shared;
};

static void *reg_thread_main(void *arg) {
	struct reg_thread *rt = arg;
	uint64_t own = 0;
	char server[32], params[512];
	CHECK_OK(idb_registry_new(NULL, &own));
	snprintf(server, sizeof server, "srv%d", rt->id);
	for (int i = 0; i < 200; i++) {
		snprintf(params, sizeof params,
			 "{\"uri\":\"file:///g%d/%d.go\",\"diagnostics\":[{\"range\":{\"start\":{\"line\":0,\"character\":0},"
			 "\"end\":{\"line\":0,\"character\":1}},\"message\":\"m\"}]}",
			 rt->id, i);
		CHECK_OK(idb_registry_publish(rt->shared, server, params));
		CHECK_OK(idb_registry_publish(own, server, params));
		char *att = NULL;
		CHECK_OK(idb_registry_drain(own, &att));
		char want[64];
		snprintf(want, sizeof want, "file:///g%d/%d.go", rt->id, i);
		CHECK(att && strstr(att, want), "thread %d drained %s", rt->id, att ? att : "(null)");
		idb_free(att);
		if (i % 10 == 0) {
			att = NULL;
			CHECK_OK(idb_registry_drain(rt->shared, &att));
			idb_free(att);
		}
	}
	CHECK_OK(idb_registry_free(own));
	return NULL;
}

static void test_registry_threads(void) {
	enum { N = 8 };
	uint64_t shared = 0;
	/* No total limit: every drain of the shared registry delivers all
	 * that is pending however the threads interleave. */
	CHECK_OK(idb_registry_new("{\"maxTotal\":1000000}", &shared));
	pthread_t th[N];
	struct reg_thread rt[N];
	for (int i = 0; i < N; i++) {
		rt[i] = (struct reg_thread){i, shared};
		pthread_create(&th[i], NULL, reg_thread_main, &rt[i]);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	char *att = NULL, *stats = NULL;
	CHECK_OK(idb_registry_drain(shared, &att));
	idb_free(att);
	CHECK_OK(idb_registry_stats(shared, &stats));
	CHECK(stats && strstr(stats, "\"published\":1600") && strstr(stats, "\"delivered\":1600"), "shared stats %s",
	      stats ? stats : "(null)");
	idb_free(stats);
	CHECK_OK(idb_registry_free(shared));
}

/* ---- paths ---- */

static void test_paths(void) {
	char *out = NULL;
	CHECK_OK(idb_path_to_local("C:\\Users\\me\\p", "{\"distro\":\"Ubuntu\"}", &out));
	CHECK(out && strcmp(out, "/mnt/c/Users/me/p") == 0, "to local: %s", out ? out : "(null)");
	idb_free(out);
	out = NULL;
	CHECK_OK(idb_path_to_ide("/home/me/x", "{\"distro\":\"Ubuntu\"}", &out));
	CHECK(out && strcmp(out, "\\\\wsl$\\Ubuntu\\home\\me\\x") == 0, "to IDE: %s", out ? out : "(null)");
	idb_free(out);
	out = NULL;
	CHECK_OK(idb_path_to_local("relative", NULL, &out));
	CHECK(out && strcmp(out, "relative") == 0, "unchanged: %s", out ? out : "(null)");
	idb_free(out);
	CHECK_STATUS(idb_path_to_ide(NULL, NULL, &out), IDB_ERR_ARGUMENT, "path is NULL");
	CHECK_STATUS(idb_path_to_ide("x", "{\"bad\":1}", &out), IDB_ERR_ARGUMENT, "unknown field");
}

/* ---- IDE ---- */

/* A headless IDE child process: cabi/test/ideserve. */
struct ide {
	pid_t pid;
	FILE *in, *out;
	int port;
	char workspace[128], config[128], tmp[64];
};

/* ide_start_diff starts ideserve deciding openDiff with diff (accept,
   reject or hold). */
static int ide_start_diff(struct ide *ide, const char *diff) {
	const char *bin = getenv("IDEBRIDGE_TEST_IDE");
	if (!bin || !*bin) {
		fail_at(__FILE__, __LINE__, "IDEBRIDGE_TEST_IDE is not set (make abi-test sets it)");
		return -1;
	}
	snprintf(ide->tmp, sizeof ide->tmp, "/tmp/idb-c-XXXXXX");
	if (!mkdtemp(ide->tmp)) {
		fail_at(__FILE__, __LINE__, "mkdtemp");
		return -1;
	}
	snprintf(ide->workspace, sizeof ide->workspace, "%s/ws", ide->tmp);
	snprintf(ide->config, sizeof ide->config, "%s/config", ide->tmp);
	mkdir(ide->workspace, 0700);
	char lockdir[160];
	snprintf(lockdir, sizeof lockdir, "%s/ide", ide->config);
	int to_child[2], from_child[2];
	if (pipe(to_child) || pipe(from_child))
		return -1;
	ide->pid = fork();
	if (ide->pid == 0) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		close(to_child[1]);
		close(from_child[0]);
		execl(bin, bin, "-workspace", ide->workspace, "-lockfile-dir", lockdir, "-diff", diff, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	ide->in = fdopen(to_child[1], "w");
	ide->out = fdopen(from_child[0], "r");
	char line[4096];
	if (!fgets(line, sizeof line, ide->out)) {
		fail_at(__FILE__, __LINE__, "ideserve exited before listening");
		return -1;
	}
	char *p = strstr(line, "\"port\":");
	ide->port = p ? atoi(p + 7) : 0;
	CHECK(ide->port > 0, "ideserve status line %s", line);
	return ide->port > 0 ? 0 : -1;
}

static int ide_start(struct ide *ide) { return ide_start_diff(ide, "accept"); }

/* ide_command sends one command line and returns its answer in buf. */
static const char *ide_command(struct ide *ide, const char *cmd, char *buf, size_t n) {
	fprintf(ide->in, "%s\n", cmd);
	fflush(ide->in);
	if (!fgets(buf, n, ide->out))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void ide_stop(struct ide *ide) {
	fclose(ide->in); /* ideserve shuts down at EOF */
	int status;
	waitpid(ide->pid, &status, 0);
	fclose(ide->out);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", ide->tmp);
	if (system(cmd) != 0)
		fail_at(__FILE__, __LINE__, "cannot remove %s", ide->tmp);
}

static void ide_options(struct ide *ide, char *buf, size_t n, const char *extra) {
	snprintf(buf, n, "{\"cwd\":\"%s\",\"env\":{\"CLAUDE_CONFIG_DIR\":\"%s\"}%s%s}", ide->workspace, ide->config,
		 extra ? "," : "", extra ? extra : "");
}

struct ide_thread {
	struct ide *ide;
	uint64_t shared;
};

static void *ide_thread_main(void *arg) {
	struct ide_thread *it = arg;
	char opts[2048];
	uint64_t own = 0;
	ide_options(it->ide, opts, sizeof opts, NULL);
	CHECK_OK(idb_ide_connect(opts, 10000, &own));
	for (int i = 0; i < 10; i++) {
		uint64_t hs[2] = {it->shared, own};
		for (int k = 0; k < 2; k++) {
			char *out = NULL;
			CHECK_OK(idb_ide_call(hs[k], "getWorkspaceFolders", NULL, 10000, &out));
			CHECK(out && strstr(out, "\"content\""), "call result %s", out ? out : "(null)");
			idb_free(out);
		}
	}
	CHECK_OK(idb_ide_close(own));
	return NULL;
}

static void test_ide(void) {
	struct ide ide;
	if (ide_start(&ide) != 0)
		return;
	char opts[2048], buf[4096];
	char *out = NULL;

	ide_options(&ide, opts, sizeof opts, NULL);
	CHECK_OK(idb_discover(opts, 0, &out));
	snprintf(buf, sizeof buf, "\"port\":%d", ide.port);
	CHECK(out && strstr(out, buf) && strstr(out, "\"valid\":true"), "discover %s", out ? out : "(null)");
	idb_free(out);

	uint64_t h = 0;
	char portopt[32];
	snprintf(portopt, sizeof portopt, "\"port\":%d", ide.port);
	ide_options(&ide, opts, sizeof opts, portopt);
	CHECK_OK(idb_ide_connect(opts, 10000, &h));
	CHECK(h != 0, "IDE handle is 0");

	out = NULL;
	CHECK_OK(idb_ide_info(h, &out));
	CHECK(out && strstr(out, "\"protocolVersion\":\"2024-11-05\""), "info %s", out ? out : "(null)");
	idb_free(out);
	out = NULL;
	CHECK_OK(idb_ide_tools(h, 0, &out));
	CHECK(out && strstr(out, "\"name\":\"openDiff\""), "tools %s", out ? out : "(null)");
	idb_free(out);
	out = NULL;
	CHECK_OK(idb_ide_call(h, "getWorkspaceFolders", "{}", 0, &out));
	CHECK(out && strstr(out, "\"content\":[{\"type\":\"text\""), "call %s", out ? out : "(null)");
	idb_free(out);
	CHECK_STATUS(idb_ide_call(h, "noSuchTool", NULL, 0, &out), IDB_ERR_TOOL, "noSuchTool");
	CHECK_STATUS(idb_ide_call(h, "openFile", "[1]", 0, &out), IDB_ERR_ARGUMENT, "not a JSON object");

	out = (char *)"sentinel";
	CHECK_OK(idb_ide_next_notification(h, 0, &out));
	CHECK(out == NULL, "notification out of nowhere");
	CHECK(strcmp(ide_command(&ide, "notify log_event {\"eventName\":\"x\"}", buf, sizeof buf), "ok") == 0,
	      "notify: %s", buf);
	CHECK_OK(idb_ide_next_notification(h, 10000, &out));
	CHECK(out && strcmp(out, "{\"method\":\"log_event\",\"params\":{\"eventName\":\"x\"}}") == 0, "notification %s",
	      out ? out : "(null)");
	idb_free(out);

	/* Eight threads on the shared client and their own. */
	enum { N = 8 };
	pthread_t th[N];
	struct ide_thread it[N];
	for (int i = 0; i < N; i++) {
		it[i] = (struct ide_thread){&ide, h};
		pthread_create(&th[i], NULL, ide_thread_main, &it[i]);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);

	CHECK_STATUS(idb_ide_connect("{\"port\":1,\"lockfileDirs\":[]}", 0, &h), IDB_ERR_NOT_FOUND, "no IDE lockfile for port 1");

	/* The IDE goes away: calls fail with IDB_ERR_CLOSED. */
	ide_stop(&ide);
	out = NULL;
	CHECK_STATUS(idb_ide_next_notification(h, 10000, &out), IDB_ERR_CLOSED, "connection to the IDE lost");
	CHECK_STATUS(idb_ide_call(h, "getWorkspaceFolders", NULL, 10000, &out), IDB_ERR_CLOSED, NULL);
	CHECK_OK(idb_ide_close(h));

	/* Zero, stale, random and wrong-kind handles. */
	uint64_t reg = 0;
	CHECK_OK(idb_registry_new(NULL, &reg));
	uint64_t bad[] = {0, h, 7, 0x49ab000000000001ULL, reg};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_STATUS(idb_ide_info(bad[i], &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_ide_tools(bad[i], 0, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_ide_call(bad[i], "x", NULL, 0, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_ide_next_notification(bad[i], 0, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_ide_close(bad[i]), IDB_ERR_HANDLE, "bad handle");
	}
	CHECK_STATUS(idb_registry_drain(h, &out), IDB_ERR_HANDLE, "bad handle");
	CHECK_OK(idb_registry_free(reg));
}

/* ---- asynchronous calls ---- */

/* wait_call waits for call (10 s at most), reads its outcome into *out
   and frees it; it returns the call's status. */
static int wait_call(uint64_t call, char **out) {
	CHECK_OK(idb_call_wait(call, 10000));
	int st = idb_call_result(call, out);
	CHECK_OK(idb_call_free(call));
	return st;
}

static volatile sig_atomic_t chld_seen;

static void on_chld(int sig) {
	(void)sig;
	chld_seen = 1;
}

static int sigchld_flags(struct sigaction *now) {
	return sigaction(SIGCHLD, NULL, now) == 0 ? now->sa_flags : -1;
}

/*
 * A SIGCHLD handler installed after the library loaded and without
 * SA_ONSTACK, as libuv installs Node's, gets SA_ONSTACK from the next
 * blocking call, direct or started as a call: the library's children
 * signal its own threads, where the handler must not run on a goroutine's
 * stack. The handler and its other flags stay as they were.
 */
static void test_child_signal(void) {
	struct sigaction sa, old, now;
	char opts[512];
	char *out = NULL;
	uint64_t call = 0;
	snprintf(opts, sizeof opts, "{\"env\":{\"CLAUDE_CONFIG_DIR\":\"%s/no-such-config\"}}", testdata);
	for (int started = 0; started < 2; started++) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_chld;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		CHECK(sigaction(SIGCHLD, &sa, started ? NULL : &old) == 0, "sigaction");
		CHECK((sigchld_flags(&now) & SA_ONSTACK) == 0, "SA_ONSTACK before any call");
		if (started) {
			CHECK_OK(idb_discover_start(opts, 1000, &call));
			CHECK(wait_call(call, &out) == IDB_OK, "discover call: %s", out ? out : "(null)");
		} else {
			CHECK_OK(idb_discover(opts, 1000, &out));
		}
		idb_free(out);
		out = NULL;
		int flags = sigchld_flags(&now);
		CHECK(flags != -1 && (flags & SA_ONSTACK) && (flags & SA_RESTART) && now.sa_handler == on_chld,
		      "SIGCHLD after a %s call: flags %#x, handler %s", started ? "started" : "direct", flags,
		      now.sa_handler == on_chld ? "kept" : "replaced");
	}
	chld_seen = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	CHECK(chld_seen, "the handler still runs");
	CHECK(sigaction(SIGCHLD, &old, NULL) == 0, "restore SIGCHLD");
	CHECK_OK(idb_discover(opts, 1000, &out));
	idb_free(out);
	CHECK((sigchld_flags(&now) & SA_ONSTACK) == 0 && now.sa_handler == old.sa_handler,
	      "the default disposition is left alone");
}

static void test_async(void) {
	struct ide ide;
	if (ide_start_diff(&ide, "hold") != 0)
		return;
	char opts[2048], buf[4096], args[1024];
	char *out = NULL;
	uint64_t call = 0, h = 0;

	/* Connect asynchronously: the result is the handle, in decimal. */
	ide_options(&ide, opts, sizeof opts, NULL);
	CHECK_OK(idb_ide_connect_start(opts, 10000, &call));
	CHECK(wait_call(call, &out) == IDB_OK && out, "connect: %s", out ? out : "(null)");
	h = out ? strtoull(out, NULL, 10) : 0;
	idb_free(out);

	/* A tool error is carried by the call, with its JSON-RPC code. */
	CHECK_OK(idb_ide_call_start(h, "noSuchTool", NULL, 0, &call));
	out = NULL;
	CHECK(wait_call(call, &out) == IDB_ERR_TOOL, "noSuchTool status");
	CHECK(out && strstr(out, "\"code\":-32601") && strstr(out, "noSuchTool"), "tool error %s", out ? out : "(null)");
	idb_free(out);

	/* A review the user has not decided: the descriptor stays quiet, a
	   cancel closes the tab and completes the call. */
	snprintf(args, sizeof args, "%s/c.txt", ide.workspace);
	CHECK_OK(idb_ide_propose_edit_start(h, args, "new\n", 4, "{\"tabName\":\"c-tab\"}", 0, &call));
	for (int i = 0; i < 1000 && !strstr(ide_command(&ide, "tabs", buf, sizeof buf), "\"opened\":[\"c-tab\"]"); i++)
		usleep(10000);
	CHECK(strstr(buf, "\"opened\":[\"c-tab\"]") != NULL, "tabs %s", buf);
	uint64_t fd = 0;
	CHECK_OK(idb_call_fd(call, &fd));
	struct timeval tv = {0, 50000};
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET((int)fd, &rd);
	CHECK(select((int)fd + 1, &rd, NULL, NULL, &tv) == 0, "the descriptor is readable while the review is pending");
	CHECK_STATUS(idb_call_wait(call, 0), IDB_ERR_TIMEOUT, "still running");
	CHECK_OK(idb_call_cancel(call));
	tv = (struct timeval){10, 0};
	FD_ZERO(&rd);
	FD_SET((int)fd, &rd);
	CHECK(select((int)fd + 1, &rd, NULL, NULL, &tv) == 1, "the descriptor did not become readable");
	out = NULL;
	CHECK(wait_call(call, &out) == IDB_ERR_CANCELLED, "cancelled review status");
	CHECK(out && strstr(out, "cancelled"), "cancelled review %s", out ? out : "(null)");
	idb_free(out);
	CHECK(strstr(ide_command(&ide, "tabs", buf, sizeof buf), "\"closed\":[\"c-tab\"]") != NULL, "tabs after cancel %s", buf);
	struct stat st;
	CHECK(stat(args, &st) != 0, "the cancelled review created %s", args);

	/* The client works after the cancel, from the call API and directly. */
	CHECK_OK(idb_ide_call_start(h, "getWorkspaceFolders", NULL, 5000, &call));
	out = NULL;
	CHECK(idb_call_result(call, &out) == IDB_OK && out && strstr(out, "\"content\""), "after cancel %s", out ? out : "(null)");
	idb_free(out);
	CHECK_OK(idb_call_free(call));
	CHECK_STATUS(idb_call_free(call), IDB_ERR_HANDLE, "already freed");
	CHECK_STATUS(idb_ide_tools_start(0, 0, &call), IDB_ERR_HANDLE, "never valid");
	CHECK_OK(idb_ide_close(h));
	ide_stop(&ide);
}

/* ---- LSP ---- */

static void write_file(const char *path, const char *text) {
	FILE *f = fopen(path, "w");
	if (!f) {
		fail_at(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void test_lsp(void) {
	const char *gopls = getenv("GOPLS");
	if (!gopls || !*gopls) {
		fail_at(__FILE__, __LINE__, "GOPLS is not set (make abi-test sets it)");
		return;
	}
	char dir[64] = "/tmp/idb-c-lsp-XXXXXX";
	if (!mkdtemp(dir)) {
		fail_at(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	char gomod[128], main_go[128], notes[128];
	snprintf(gomod, sizeof gomod, "%s/go.mod", dir);
	snprintf(main_go, sizeof main_go, "%s/main.go", dir);
	snprintf(notes, sizeof notes, "%s/notes.txt", dir);
	write_file(gomod, "module example.com/m\n\ngo 1.22\n");
	write_file(main_go, "package main\n\nfunc main() {\n\tundefinedThing()\n}\n");
	write_file(notes, "x");

	char config[1024];
	snprintf(config, sizeof config, "{\"gopls\":{\"command\":\"%s\",\"extensionToLanguage\":{\".go\":\"go\"}}}", gopls);
	uint64_t m = 0;
	CHECK_OK(idb_lsp_new(config, dir, NULL, &m));
	CHECK_OK(idb_lsp_open(m, main_go, 0));
	char *out = NULL;
	CHECK_OK(idb_lsp_settle(m, main_go, 30000, &out));
	CHECK(out && strstr(out, "\"server\":\"gopls\""), "settle %s", out ? out : "(null)");
	idb_free(out);

	/* gopls may publish a file's first type errors after the progress
	 * settle saw ended: settle and drain until they show (30 s at most). */
	int found = 0;
	for (int i = 0; i < 300 && !found; i++) {
		out = NULL;
		CHECK_OK(idb_lsp_settle(m, main_go, 2000, &out));
		idb_free(out);
		out = NULL;
		CHECK_OK(idb_lsp_drain(m, &out));
		found = out && strstr(out, "undefined: undefinedThing") && strstr(out, "\"servers\":[\"gopls\"]");
		idb_free(out);
		if (!found)
			usleep(100000);
	}
	CHECK(found, "no drain reported the undefined name");

	out = NULL;
	CHECK_OK(idb_lsp_servers(m, &out));
	char *p = out ? strstr(out, "\"pid\":") : NULL;
	int pid = p ? atoi(p + 6) : 0;
	CHECK(pid > 0, "servers %s", out ? out : "(null)");
	idb_free(out);

	CHECK_OK(idb_lsp_change(m, main_go, "package main\n\nfunc main() {\n}\n", 0));
	out = NULL;
	CHECK_OK(idb_lsp_settle(m, main_go, 30000, &out));
	idb_free(out);
	out = NULL;
	CHECK_OK(idb_lsp_drain(m, &out));
	CHECK(!out || !strstr(out, "undefinedThing"), "fixed file still reported: %s", out);
	idb_free(out);
	CHECK_OK(idb_lsp_save(m, main_go, 0));

	/* Navigation: a symbol on a line; one that is not there. */
	char req[512];
	snprintf(req, sizeof req, "{\"path\":\"%s\",\"line\":3,\"symbol\":\"main\"}", main_go);
	out = NULL;
	CHECK_OK(idb_lsp_definition(m, req, 30000, &out));
	CHECK(out && strstr(out, "\"line\":3,\"column\":6") && strstr(out, "\"text\":\"Definition of main (main.go:3:6)"),
	      "definition %s", out ? out : "(null)");
	idb_free(out);
	snprintf(req, sizeof req, "{\"path\":\"%s\",\"line\":3,\"symbol\":\"nowhere\"}", main_go);
	CHECK_STATUS(idb_lsp_references(m, req, 0, &out), IDB_ERR_ARGUMENT, "is not on line 3");
	CHECK_OK(idb_lsp_close_file(m, main_go, 0));
	CHECK_STATUS(idb_lsp_settle(m, main_go, 1000, &out), IDB_ERR_NOT_FOUND, "not open");
	CHECK_STATUS(idb_lsp_open(m, notes, 0), IDB_ERR_NOT_FOUND, "no language server");
	CHECK_STATUS(idb_lsp_change(m, main_go, NULL, 0), IDB_ERR_ARGUMENT, "text is NULL");
	CHECK_OK(idb_lsp_shutdown(m, 10000));
	CHECK(pid > 0 && kill(pid, 0) != 0, "gopls (pid %d) still running after shutdown", pid);

	uint64_t bad[] = {0, m, 5, m ^ 1};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_STATUS(idb_lsp_open(bad[i], main_go, 0), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_change(bad[i], main_go, "", 0), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_save(bad[i], main_go, 0), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_close_file(bad[i], main_go, 0), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_settle(bad[i], main_go, 0, &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_drain(bad[i], &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_servers(bad[i], &out), IDB_ERR_HANDLE, "bad handle");
		CHECK_STATUS(idb_lsp_shutdown(bad[i], 0), IDB_ERR_HANDLE, "bad handle");
	}
	CHECK_STATUS(idb_lsp_new("{\"x\":{}}", dir, NULL, &m), IDB_ERR_ARGUMENT, "config_json");

	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fail_at(__FILE__, __LINE__, "cannot remove %s", dir);
}

/* ---- last error per thread ---- */

struct err_thread {
	int id;
	pthread_barrier_t *barrier;
};

static void *err_thread_main(void *arg) {
	struct err_thread *et = arg;
	char name[64], want[64], buf[4096];
	/* A fresh thread has no error yet. */
	char *none = idb_last_error();
	CHECK(none == NULL, "thread %d starts with error %s", et->id, none ? none : "");
	idb_free(none);
	for (int round = 0; round < 100; round++) {
		snprintf(name, sizeof name, "thread-%d-%d.lock", et->id, round);
		char *out = NULL;
		int st = idb_parse_lockfile(name, "{}", 2, &out);
		CHECK(st == IDB_ERROR, "thread %d: status %d", et->id, st);
		if (round == 0)
			pthread_barrier_wait(et->barrier); /* all threads have failed once */
		/* A successful call in between leaves the error alone. */
		char *v = NULL;
		CHECK_OK(idb_version(&v));
		idb_free(v);
		snprintf(want, sizeof want, "thread-%d-%d.lock", et->id, round);
		last_error(buf, sizeof buf);
		CHECK(strstr(buf, want) != NULL, "thread %d reads \"%s\", want its own %s", et->id, buf, want);
	}
	return NULL;
}

static void test_last_error_threads(void) {
	enum { N = 8 };
	pthread_t th[N];
	struct err_thread et[N];
	pthread_barrier_t barrier;
	pthread_barrier_init(&barrier, NULL, N);
	for (int i = 0; i < N; i++) {
		et[i] = (struct err_thread){i, &barrier};
		pthread_create(&th[i], NULL, err_thread_main, &et[i]);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
}

/* ---- benchmarks ---- */

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* bench runs fn iters times per sample and prints the median ns/call over
 * 9 samples. */
static void bench(const char *name, void (*fn)(void), int iters) {
	enum { SAMPLES = 9 };
	double s[SAMPLES];
	for (int i = 0; i < iters / 10; i++)
		fn(); /* warm up */
	for (int k = 0; k < SAMPLES; k++) {
		double t0 = now_ns();
		for (int i = 0; i < iters; i++)
			fn();
		s[k] = (now_ns() - t0) / iters;
	}
	qsort(s, SAMPLES, sizeof s[0], cmp_double);
	printf("%-40s %10.1f ns/call (median of %d x %d)\n", name, s[SAMPLES / 2], SAMPLES, iters);
}

static void bench_handle_count(void) {
	uint64_t n;
	idb_handle_count(&n);
}

static void bench_version(void) {
	char *v;
	idb_version(&v);
	idb_free(v);
}

static uint64_t bench_reg;
static char *bench_params;

static void bench_publish10(void) {
	if (idb_registry_publish(bench_reg, "plugin:go:gopls", bench_params) != IDB_OK)
		abort();
}

static void bench_publish_drain10(void) {
	char *att = NULL;
	if (idb_registry_publish(bench_reg, "plugin:go:gopls", bench_params) != IDB_OK ||
	    idb_registry_drain(bench_reg, &att) != IDB_OK || att == NULL)
		abort();
	idb_free(att);
	idb_registry_reset(bench_reg, NULL);
}

/* A trivial blocking export (no lockfile directory to read), directly and
   as an asynchronous call: waited for, and waited for through its
   descriptor as an event loop does. */
static const char *bench_discover_opts = "{\"lockfileDirs\":[],\"env\":{}}";

static void bench_discover_direct(void) {
	char *out = NULL;
	if (idb_discover(bench_discover_opts, 0, &out) != IDB_OK)
		abort();
	idb_free(out);
}

static void bench_discover_call(void) {
	uint64_t call;
	char *out = NULL;
	if (idb_discover_start(bench_discover_opts, 0, &call) != IDB_OK || idb_call_wait(call, -1) != IDB_OK ||
	    idb_call_result(call, &out) != IDB_OK)
		abort();
	idb_free(out);
	idb_call_free(call);
}

static void bench_discover_call_fd(void) {
	uint64_t call, fd;
	char *out = NULL;
	if (idb_discover_start(bench_discover_opts, 0, &call) != IDB_OK || idb_call_fd(call, &fd) != IDB_OK)
		abort();
	struct pollfd p = {.fd = (int)fd, .events = POLLIN};
	if (poll(&p, 1, -1) != 1 || idb_call_result(call, &out) != IDB_OK)
		abort();
	idb_free(out);
	idb_call_free(call);
}

int main(int argc, char **argv) {
	if (getenv("IDB_TESTDATA"))
		testdata = getenv("IDB_TESTDATA");
	if (argc > 1 && strcmp(argv[1], "bench") == 0) {
		bench("idb_handle_count (trivial)", bench_handle_count, 1000000);
		bench("idb_version + idb_free", bench_version, 1000000);
		bench_params = golden("publish10.json");
		if (!bench_params || idb_registry_new(NULL, &bench_reg) != IDB_OK)
			return 1;
		bench("registry publish (10 diagnostics)", bench_publish10, 20000);
		bench("registry publish+drain+free+reset (10)", bench_publish_drain10, 20000);
		idb_registry_free(bench_reg);
		free(bench_params);
		bench("discover, trivial (blocking, direct)", bench_discover_direct, 20000);
		bench("discover as a call: start+wait+result+free", bench_discover_call, 20000);
		bench("discover as a call, waited with poll(fd)", bench_discover_call_fd, 20000);
		return 0;
	}
	test_version();
	test_parse_lockfile();
	test_last_error_threads();
	test_paths();
	test_registry_golden();
	test_bad_handles();
	test_registry_threads();
	test_ide();
	test_async();
	test_child_signal();
	test_lsp();

	CHECK(live_handles() == 0, "%" PRIu64 " handles live at exit: a leak", live_handles());
	printf("abi_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
