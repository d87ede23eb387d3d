package pathconv

// Converter converts paths between the IDE and the agent.
//
// Implementations must be safe for concurrent use and must return a path
// they cannot convert unchanged.
type Converter interface {
	// ToLocal converts a path as the IDE wrote it to the agent's path.
	ToLocal(idePath string) string
	// ToIDE converts an agent path to the path the IDE expects.
	ToIDE(localPath string) string
}

// Identity is the Converter for an agent and IDE on the same system: both
// directions return the path unchanged. Its zero value, Identity{}, is the
// converter; all its values are equal.
type Identity struct{}

// ToLocal returns p unchanged.
func (Identity) ToLocal(p string) string { return p }

// ToIDE returns p unchanged.
func (Identity) ToIDE(p string) string { return p }
