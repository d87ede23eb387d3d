package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/idebridge/idebridge/idebridge"
)

func init() {
	register(&command{
		Name:    "ide watch",
		Usage:   "[--port N]",
		Summary: "print the IDE's notifications as JSON lines until interrupted",
		Help: "Connects to the IDE and prints every notification it sends\n" +
			"(selection_changed, at_mentioned, log_event, and any other) as one JSON\n" +
			"object a line, {\"method\":...,\"params\":...}, until interrupted (exit status\n" +
			"0) or the connection ends (1). 2 when no IDE is usable.",
		Setup: func(fs *flag.FlagSet) runFunc {
			port := fs.Int("port", 0, "the IDE's port (default: the one usable IDE)")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge ide watch"
				if len(args) != 0 || !validPort(*port) {
					fmt.Fprintf(inv.Stderr, "%s: takes no arguments; --port must be 1-65535\n", name)
					return exitUsage
				}
				// A watcher that prints slower than the IDE notifies loses
				// the oldest notifications, never stalls the connection.
				client, _, code := ideConnect(ctx, inv, name, *port, &idebridge.ClientOptions{NotificationBuffer: 4096})
				if code != exitOK {
					return code
				}
				defer client.Close()
				enc := json.NewEncoder(inv.Stdout)
				for {
					select {
					case <-ctx.Done():
						return exitOK
					case n, ok := <-client.Notifications():
						if !ok {
							if ctx.Err() != nil {
								return exitOK
							}
							fmt.Fprintf(inv.Stderr, "%s: %v\n", name, client.Err())
							return exitFailure
						}
						if err := enc.Encode(n); err != nil {
							fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
							return exitFailure
						}
					}
				}
			}
		},
	})
}
