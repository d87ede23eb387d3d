package ideserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// Both MCP eras are served on every transport. A request whose
// params._meta names a modern protocol version (2026-07-28) is served
// statelessly by what it carries; anything else is served as the legacy
// era (an initialize handshake, then requests) has it. So a legacy client
// and a modern one may share a process, an endpoint, even a stdio stream.

// modernVersions are the modern revisions served.
var modernVersions = []string{mcp.ModernProtocolVersion}

// supportedVersions lists every version served, newest first, for
// server/discover and the -32022 error.
func supportedVersions() []string {
	legacy := mcp.SupportedProtocolVersions()
	out := make([]string, 0, len(modernVersions)+len(legacy))
	out = append(out, modernVersions...)
	for i := len(legacy) - 1; i >= 0; i-- {
		out = append(out, legacy[i])
	}
	return out
}

func isModernVersion(v string) bool {
	for _, m := range modernVersions {
		if v == m {
			return true
		}
	}
	return false
}

// reqParams are the members of a request's params the server reads. Raw
// values are slices of the message, never copies: a call's arguments of
// megabytes exist once.
type reqParams struct {
	name      json.RawMessage // tools/call: the tool's name (a JSON string)
	arguments json.RawMessage // tools/call
	cursor    json.RawMessage // tools/list

	// From _meta.
	hasMeta       bool
	version       string // io.modelcontextprotocol/protocolVersion
	hasVersion    bool
	caps          json.RawMessage // io.modelcontextprotocol/clientCapabilities
	clientName    string
	clientVersion string
	progress      json.RawMessage // progressToken (both eras)
}

// modern reports whether the request is served as the modern era: its
// _meta names a protocol version that is not a legacy one. (A modern
// version the server does not serve is modern too, and refused -32022.)
func (p *reqParams) modern() bool {
	return p.hasVersion && !mcp.IsSupportedProtocolVersion(p.version)
}

var errParamsNotObject = errors.New("params must be an object")

// scanParams reads params (absent or null: none) in one pass.
func scanParams(params json.RawMessage) (*reqParams, error) {
	p := &reqParams{}
	if len(params) == 0 || string(params) == "null" {
		return p, nil
	}
	var bad error
	ok := jsonrpc.ScanObject(params, func(key, v []byte) bool {
		switch memberName(key) {
		case "name":
			p.name = v
		case "arguments":
			p.arguments = v
		case "cursor":
			p.cursor = v
		case "_meta":
			if v[0] == 'n' {
				return true
			}
			if v[0] != '{' {
				bad = errors.New("params._meta must be an object")
				return false
			}
			p.hasMeta = true
			bad = p.scanMeta(v)
			return bad == nil
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if !ok {
		return nil, errParamsNotObject
	}
	return p, nil
}

func (p *reqParams) scanMeta(meta []byte) error {
	var bad error
	jsonrpc.EachMember(meta, func(key, v []byte) bool {
		switch memberName(key) {
		case mcp.MetaProtocolVersion:
			if v[0] != '"' {
				bad = errors.New("_meta " + mcp.MetaProtocolVersion + " must be a string")
				return false
			}
			p.version, p.hasVersion = clip(jsonrpc.UnquoteValid(v), maxQuoted), true
		case mcp.MetaClientCapabilities:
			p.caps = v
		case mcp.MetaClientInfo:
			if v[0] == '{' {
				jsonrpc.EachMember(v, func(k, iv []byte) bool {
					if iv[0] != '"' {
						return true
					}
					switch memberName(k) {
					case "name":
						p.clientName = clip(jsonrpc.UnquoteValid(iv), maxQuoted)
					case "version":
						p.clientVersion = clip(jsonrpc.UnquoteValid(iv), maxQuoted)
					}
					return true
				})
			}
		case mcp.MetaProgressToken:
			switch v[0] {
			case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				if len(v) <= maxQuoted {
					p.progress = v
				}
			}
		}
		return true
	})
	return bad
}

// memberName is an object key as scanned (between its quotes) decoded;
// without escapes it is the bytes themselves.
func memberName(key []byte) string {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key)
	}
	lit := make([]byte, 0, len(key)+2)
	lit = append(append(append(lit, '"'), key...), '"')
	return jsonrpc.UnquoteValid(lit)
}

// checkModern validates a modern request's _meta: a version served, and
// the required capabilities object.
func checkModern(p *reqParams) *mcp.Error {
	if !isModernVersion(p.version) {
		data, _ := json.Marshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{supportedVersions(), p.version})
		return &mcp.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
	}
	if len(p.caps) == 0 || p.caps[0] != '{' {
		return &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params",
			Data: mustJSON("params._meta must carry " + mcp.MetaClientCapabilities + " (an object)")}
	}
	return nil
}

// modernPrefix is what every modern result starts with after its "{":
// resultType and _meta naming the server.
func (s *Server) modernPrefix() []byte {
	s.prefixOnce.Do(func() {
		info, _ := json.Marshal(mcp.Implementation{Name: s.cfg.ServerName, Version: s.cfg.ServerVersion})
		b := []byte(`"resultType":"` + mcp.ResultTypeComplete + `","_meta":{"` + mcp.MetaServerInfo + `":`)
		b = append(b, info...)
		s.prefix = append(b, '}')
	})
	return s.prefix
}

// cacheHints are a cacheable result's members (tools/list,
// server/discover).
func (s *Server) cacheHints() string {
	return `"ttlMs":` + strconv.FormatInt(s.cfg.ToolsListTTL.Milliseconds(), 10) + `,"cacheScope":"` + mcp.CacheScopePrivate + `"`
}

// modernResult returns res, a JSON object from json.Marshal of a type
// without resultType or _meta members, with the modern members spliced
// in after its "{", and extra (members, or "") after them.
func (s *Server) modernResult(res []byte, extra string) []byte {
	pre := s.modernPrefix()
	b := make([]byte, 0, len(res)+len(pre)+len(extra)+4)
	b = append(b, '{')
	b = append(b, pre...)
	if extra != "" {
		b = append(b, ',')
		b = append(b, extra...)
	}
	rest := bytes.TrimSpace(res[1:])
	if len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	return append(b, rest...)
}

// discoverResult answers server/discover.
func (s *Server) discoverResult() []byte {
	body := struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
	}{supportedVersions(), modernCapabilities, s.cfg.Instructions}
	b, _ := json.Marshal(body)
	return s.modernResult(b, s.cacheHints())
}

// modernCapabilities are the server's capabilities in the modern era:
// tools, without listChanged (its notifications need subscriptions/listen,
// which this server does not serve).
var modernCapabilities = json.RawMessage(`{"tools":{}}`)
