package benchmarks

import (
	_ "github.com/idebridge/idebridge/lockfile"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
)
