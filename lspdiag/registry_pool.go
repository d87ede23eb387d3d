package lspdiag

import (
	"math/bits"
	"sync"
)

// Pending publishes are recycled: at a million diagnostics a second the
// garbage collector, not the registry, would otherwise dominate. A
// pendingPublish is returned to the pool of the largest power of two its
// capacity holds, and taken from the pool of the smallest power of two
// that holds the request, so any pooled value is large enough.
var pendingPools [32]sync.Pool

func getPending(n int) *pendingPublish {
	class := 0
	if n > 1 {
		class = bits.Len(uint(n - 1)) // 2^class >= n
	}
	if class < len(pendingPools) {
		if pp, ok := pendingPools[class].Get().(*pendingPublish); ok {
			return pp
		}
	} else {
		return &pendingPublish{entries: make([]entry, 0, n)}
	}
	return &pendingPublish{entries: make([]entry, 0, 1<<class)}
}

// putPending recycles pp. pp must no longer be referenced.
func putPending(pp *pendingPublish) {
	c := cap(pp.entries)
	if c == 0 {
		return
	}
	class := bits.Len(uint(c)) - 1 // 2^class <= c
	if class >= len(pendingPools) {
		return
	}
	clear(pp.entries) // drop the strings it points to
	*pp = pendingPublish{entries: pp.entries[:0]}
	pendingPools[class].Put(pp)
}
