package mcpclient

import (
	"bytes"
	"testing"
)

// FuzzFrameReader checks the WebSocket frame reader (unexported, so the
// target lives here): any byte stream read whole and
// read with a read timeout between every byte (resumed each time) yields
// the same frames and the same ending; no data message exceeds the bound;
// and it never panics. Seeds are in testdata/fuzz/FuzzFrameReader.
func FuzzFrameReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, bound uint16) {
		limit := int64(bound) + 1
		whole, errWhole := readFrames(t, bytes.NewReader(data), limit)
		resumed, errResumed := readFrames(t, &timeoutEvery{data: bytes.Clone(data)}, limit)
		if len(whole) != len(resumed) || (errWhole == nil) != (errResumed == nil) || (errWhole != nil && errWhole.Error() != errResumed.Error()) {
			t.Fatalf("whole: %d frames, %v; resumed: %d frames, %v", len(whole), errWhole, len(resumed), errResumed)
		}
		for i := range whole {
			if whole[i] != resumed[i] {
				t.Fatalf("frame %d differs", i)
			}
			if op := whole[i].op; (op == opText || op == opBinary) && int64(len(whole[i].payload)) > limit {
				t.Fatalf("message of %d bytes passed the %d-byte bound", len(whole[i].payload), limit)
			}
		}
	})
}
