// Command goagent is the Go newcomer's flow, written from the README
// alone (bindings/test/run.sh builds it in a module of its own, outside
// the checkout, with the README's replace directive): connect to the IDE
// of the working directory, propose an edit, print what it introduced.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge"
)

func main() {
	ctx := context.Background()
	dir, _ := os.Getwd()
	client, _, err := idebridge.AutoConnect(ctx, idebridge.NewAutoConnectOptions(dir))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	snap, err := idebridge.SnapshotDiagnostics(ctx, client, "main.go")
	if err != nil {
		log.Fatal(err)
	}
	rev := idebridge.NewReviewer(client, nil)
	res, err := rev.ProposeEdit(ctx, idebridge.EditRequest{Path: "main.go", NewText: "package main\n\nfunc main() {\n\tfromGo()\n}\n"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Written)
	news, err := snap.NewDiagnostics(ctx, client)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(news.Render(&diag.RenderOptions{ProjectDir: dir}))
}
