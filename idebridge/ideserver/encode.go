package ideserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

var nullID = json.RawMessage("null")

// encodeResult encodes a response. The envelope is written by hand: the id
// is raw JSON already validated by jsonrpc.Decode, and the result comes
// from json.Marshal, so only the result pays for reflection.
func encodeResult(id json.RawMessage, result any) ([]byte, error) {
	res, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	return wrapResult(id, res), nil
}

// wrapResult is the response to id whose result is res, already encoded.
func wrapResult(id, res json.RawMessage) []byte {
	if len(id) == 0 {
		id = nullID
	}
	b := make([]byte, 0, len(res)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, res...)
	b = append(b, '}')
	return b
}

// encodeError encodes an error response; a nil id is sent as null (for
// messages that could not be parsed).
func encodeError(id json.RawMessage, e *mcp.Error) []byte {
	if len(id) == 0 {
		id = nullID
	}
	eb, err := json.Marshal(e)
	if err != nil {
		// Only Data can fail to encode (invalid raw JSON); drop it.
		eb, _ = json.Marshal(&mcp.Error{Code: e.Code, Message: e.Message})
	}
	// The id goes back as the bytes it came as: json.Marshal would
	// compact a raw id with HTML escaping ("&" as \u0026), an id equal in
	// value but not in bytes, which a client matching ids as text misses.
	b := make([]byte, 0, len(eb)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, eb...)
	b = append(b, '}')
	return b
}

// encodeNotification encodes a notification; params nil means none.
func encodeNotification(method string, params any) ([]byte, error) {
	if method == "" {
		return nil, fmt.Errorf("ideserver: notification without a method")
	}
	m := jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: method}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encoding %s notification: %w", method, err)
		}
		if !bytes.Equal(p, nullID) {
			m.Params = p
		}
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s notification: %w", method, err)
	}
	return b, nil
}
