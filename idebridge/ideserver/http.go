package ideserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/idebridge/idebridge/lockfile"
)

// serveHTTP is the server's only HTTP handler: it refuses requests that a
// web page could have made (DNS rebinding: a Host that is not loopback; a
// cross-site request: an Origin that is not loopback), then routes by
// transport.
//
// Every answer closes its connection (Connection: close) unless the request
// authenticated (see connGuard): a refused connection never lingers.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	if !isLoopbackHostHeader(r.Host) {
		s.log.Warn("refused request with a non-loopback Host", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, "forbidden: Host is not a loopback address", http.StatusForbidden)
		return
	}
	if origin, ok := r.Header["Origin"]; ok && (len(origin) != 1 || !isLoopbackOrigin(origin[0])) {
		s.log.Warn("refused request with a non-loopback Origin", "origin", origin, "remote", r.RemoteAddr)
		http.Error(w, "forbidden: Origin is not a loopback address", http.StatusForbidden)
		return
	}
	if s.cfg.Transport == lockfile.TransportSSE {
		switch r.URL.Path {
		case ssePath:
			s.serveSSE(w, r)
			return
		case messagesPath:
			s.serveSSEPost(w, r)
			return
		}
	} else if r.URL.Path == "/" {
		s.serveWS(w, r)
		return
	}
	http.NotFound(w, r)
}

// isLoopbackHostHeader reports whether a Host header names this machine:
// localhost or a loopback IP, with or without a port.
func isLoopbackHostHeader(h string) bool {
	if h == "" {
		return false
	}
	host := h
	if hp, _, err := net.SplitHostPort(h); err == nil {
		host = hp
	} else if strings.Count(h, ":") == 1 {
		return false // "host:" or a bad port
	}
	return isLoopbackName(host)
}

func isLoopbackName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopbackOrigin reports whether an Origin header value is an http(s) or
// ws(s) origin on a loopback host. "null" and other schemes are refused.
func isLoopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return false
	}
	return isLoopbackName(u.Hostname())
}

// subtleEqual compares a presented token with the expected one in constant
// time (for equal lengths; the length itself is not secret).
func subtleEqual(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
