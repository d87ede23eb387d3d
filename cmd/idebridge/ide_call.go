package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/mcp"
)

func init() {
	register(&command{
		Name:    "ide call",
		Usage:   "TOOL [ARGS_JSON|-] [--port N] [--timeout D]",
		Summary: "call one IDE tool and print its result JSON",
		Help: "Calls TOOL with ARGS_JSON, a JSON object ({} when omitted; - reads it from\n" +
			"standard input, for large payloads such as an openDiff), and prints the\n" +
			"tools/call result (content blocks) as JSON. The command ends after --timeout\n" +
			"(default 30 s), connecting included, except that without --timeout openDiff\n" +
			"waits for the user once connected.\n" +
			"\n" +
			"Exit status: 0 result printed; 1 the tool failed (the IDE's message on\n" +
			"standard error), the call timed out or the connection was lost; 2 no usable\n" +
			"IDE; 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			port := fs.Int("port", 0, "the IDE's port (default: the one usable IDE)")
			timeout := fs.Duration("timeout", 0, "give up after this long (default: 30s, none for openDiff)")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge ide call"
				if len(args) < 1 || len(args) > 2 || args[0] == "" || !validPort(*port) || *timeout < 0 {
					fmt.Fprintf(inv.Stderr, "%s: want TOOL and optional ARGS_JSON; --port 1-65535, --timeout not negative\n", name)
					return exitUsage
				}
				argText := []byte("{}")
				if len(args) == 2 {
					argText = []byte(args[1])
					if args[1] == "-" {
						var err error
						if argText, err = io.ReadAll(inv.Stdin); err != nil {
							fmt.Fprintf(inv.Stderr, "%s: reading arguments: %v\n", name, err)
							return exitUsage
						}
					}
				}
				argText = bytes.TrimSpace(argText)
				if !json.Valid(argText) || len(argText) == 0 || argText[0] != '{' {
					fmt.Fprintf(inv.Stderr, "%s: the arguments must be a JSON object\n", name)
					return exitUsage
				}
				return ideCall(ctx, inv, *port, *timeout, args[0], argText)
			}
		},
	})
}

func ideCall(ctx context.Context, inv *invocation, port int, timeout time.Duration, tool string, args []byte) int {
	const name = "idebridge ide call"
	var opts *idebridge.ClientOptions
	if timeout > 0 {
		// The flag bounds every tool, openDiff included.
		opts = &idebridge.ClientOptions{CallTimeout: timeout}
	} else if tool != "openDiff" {
		timeout = idebridge.DefaultCallTimeout
	}
	if timeout > 0 {
		// One deadline for the whole command: finding the IDE, the
		// handshake (whose tools/list would otherwise wait on its own)
		// and the call.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	client, _, code := ideConnect(ctx, inv, name, port, opts)
	if code != exitOK {
		return code
	}
	defer client.Close()
	res, err := client.CallTool(ctx, tool, json.RawMessage(args))
	if err != nil {
		var te *mcp.ToolError
		if errors.As(err, &te) {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", name, te.Error())
		} else {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		}
		return exitFailure
	}
	var out bytes.Buffer
	if err := json.Indent(&out, res.Raw, "", "  "); err != nil {
		out.Reset()
		out.Write(res.Raw)
	}
	out.WriteByte('\n')
	if _, err := inv.Stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	return exitOK
}
