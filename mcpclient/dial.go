package mcpclient

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// defaultDialTimeout bounds opening one TCP connection when the options
// name no dialer of their own.
const defaultDialTimeout = 10 * time.Second

// DialFunc opens a network connection, as net.Dialer.DialContext does. The
// transports use one to reach the server directly: never through a proxy
// named by http_proxy, https_proxy or all_proxy, since an IDE is on this
// machine (or, under WSL, on its Windows host).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (d DialFunc) orDefault() DialFunc {
	if d != nil {
		return d
	}
	return (&net.Dialer{Timeout: defaultDialTimeout}).DialContext
}

// tlsClient runs the TLS handshake over c, for host, with cfg (nil: the
// system's roots). Only HTTP/1.1 is offered, the one protocol the
// transports speak.
func tlsClient(ctx context.Context, c net.Conn, host string, cfg *tls.Config) (*tls.Conn, error) {
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// activity records when bytes last arrived from the server, as a
// keep-alive's sign of life.
type activity struct {
	last atomic.Int64 // nanoseconds since epoch (monotonic)
}

func (a *activity) touch()                     { a.last.Store(int64(time.Since(epoch))) }
func (a *activity) at() time.Duration          { return time.Duration(a.last.Load()) }
func now() time.Duration                       { return time.Since(epoch) }
func (a *activity) since(t time.Duration) bool { return a.at() > t }
