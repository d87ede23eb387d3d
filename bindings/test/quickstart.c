#include <stdio.h>
#include <string.h>

#include <idebridge.h>

int main(void) {
	const char *text = "package main\n\nfunc main() {\n\tfromC()\n}\n";
	uint64_t ide, call;
	char *before = NULL, *out = NULL;
	/* The IDE whose workspace holds this directory. */
	if (idb_ide_connect(NULL, 10000, &ide) != IDB_OK) {
		char *err = idb_last_error();
		fprintf(stderr, "%s\n", err);
		idb_free(err);
		return 1;
	}
	idb_ide_snapshot_diagnostics(ide, "main.go", 0, &before);
	/* The user decides in the IDE's diff view: start the review, and wait
	   (or cancel it with idb_call_cancel, or poll idb_call_fd). */
	idb_ide_propose_edit_start(ide, "main.go", text, strlen(text), NULL, -1, &call);
	idb_call_wait(call, -1);
	if (idb_call_result(call, &out) == IDB_OK)
		printf("%s\n", out); /* {"path":...,"status":"accepted","written":true,...} */
	idb_free(out);
	idb_call_free(call);
	if (idb_ide_new_diagnostics(ide, before, NULL, 0, &out) == IDB_OK)
		printf("%s\n", out); /* {..."rendered":"<new-diagnostics>...undefined: fromC..."} */
	idb_free(out);
	idb_free(before);
	idb_ide_close(ide);
	return 0;
}
