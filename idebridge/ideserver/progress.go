package ideserver

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

type progressKey struct{}

// progressReporter sends notifications/progress about one tools/call whose
// request carried a progress token in params._meta.
type progressReporter struct {
	ss       *session
	out      replyTo
	token    json.RawMessage
	interval time.Duration

	mu      sync.Mutex
	done    bool
	sent    bool
	last    time.Time
	lastVal float64
}

func progressFrom(ctx context.Context) *progressReporter {
	p, _ := ctx.Value(progressKey{}).(*progressReporter)
	return p
}

// stop ends reporting: nothing is sent about a call once it is answered.
func (p *progressReporter) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// ReportProgress tells the client how far the tool call running under ctx
// has got: progress so far, out of total (0 when unknown), with a short
// message for a person (may be empty). It sends MCP's
// notifications/progress when the call's request asked for it (a
// progressToken in params._meta) and is a no-op otherwise, so a handler
// may call it freely.
//
// Reports are rate-limited (Options.ProgressInterval) and kept
// increasing, as MCP requires: a report sooner than the interval after
// the last one sent, or whose progress does not exceed it, is dropped;
// so is any report once the call was answered or cancelled. It never
// blocks longer than the transport's write timeout.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	p := progressFrom(ctx)
	if p == nil || ctx.Err() != nil || math.IsNaN(progress) || math.IsInf(progress, 0) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock() // held while sending: reports stay in order, none after stop
	now := time.Now()
	if p.done || (p.sent && (progress <= p.lastVal || now.Sub(p.last) < p.interval)) {
		return
	}
	p.sent, p.last, p.lastVal = true, now, progress
	b := make([]byte, 0, 128+len(message))
	b = append(b, `{"jsonrpc":"2.0","method":"`+mcp.MethodProgress+`","params":{"progressToken":`...)
	b = append(b, p.token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 && !math.IsInf(total, 0) {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" {
		m, _ := json.Marshal(clip(message, 1000))
		b = append(b, `,"message":`...)
		b = append(b, m...)
	}
	b = append(b, "}}"...)
	p.ss.sendTo(p.out, b, 0, false)
}
