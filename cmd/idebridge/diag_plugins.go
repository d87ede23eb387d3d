package main

import "fmt"

// diagServers loads the servers for `diag` (see serverSources) and prints
// the problems found as warnings. It fails only when the flags named
// servers and none of them loaded.
func diagServers(inv *invocation, wd string, src *serverSources, files []string) (*serverSet, int) {
	set := loadServers(inv, wd, src, files)
	set.printWarnings(inv.Stderr, "idebridge diag")
	if src.explicit() && set.fromFlags() == 0 {
		what := "what --config, --plugin-dir and --marketplace name"
		if len(src.pluginDirs) == 0 && len(src.marketplaces) == 0 {
			what = absIn(wd, src.config)
		}
		fmt.Fprintf(inv.Stderr, "idebridge diag: %s configures no usable language server\n", what)
		return nil, exitUnavailable
	}
	return set, exitOK
}
