package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// Output paths, relative to the repository root.
const (
	headerPath = "cabi/include/idebridge.h"
	pythonPath = "bindings/python/idebridge/__init__.py"
	nodeJSPath = "bindings/node/index.js"
	nodeTSPath = "bindings/node/index.d.ts"
)

// source names the generator's input in every generated file's header.
const source = "cabi/abispec (table.go)"

// Generate returns every generated file, keyed by its slash-separated path
// relative to the repository root.
func Generate() (map[string][]byte, error) {
	if err := validate(abispec.Funcs, abispec.Classes); err != nil {
		return nil, err
	}
	goStartSrc, err := goStart()
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", goStartPath, err)
	}
	goStartTestSrc, err := goStartTest()
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", goStartTestPath, err)
	}
	return map[string][]byte{
		headerPath:      header(),
		pythonPath:      python(),
		pythonAioPath:   pythonAio(),
		nodeJSPath:      nodeJS(),
		nodeTSPath:      nodeTS(),
		goStartPath:     goStartSrc,
		goStartTestPath: goStartTestSrc,
	}, nil
}

// validate checks the table's internal consistency, so that a mistake in it
// fails generation instead of producing a broken binding.
func validate(funcs []abispec.Func, classes []abispec.Class) error {
	known := map[string]bool{}
	for _, c := range classes {
		known[c.Name] = true
	}
	seen := map[string]bool{}
	for _, f := range funcs {
		if !strings.HasPrefix(f.Name, "idb_") {
			return fmt.Errorf("%s: exports are named idb_*", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("%s: listed twice", f.Name)
		}
		seen[f.Name] = true
		outs, handles := 0, 0
		for i, p := range f.Params {
			switch p.Kind {
			case abispec.OutString, abispec.OutHandle, abispec.OutUint64:
				outs++
				if i != len(f.Params)-1 {
					return fmt.Errorf("%s: out parameter %s must be last", f.Name, p.Name)
				}
			case abispec.Handle:
				handles++
				if i != 0 || !known[p.Class] {
					return fmt.Errorf("%s: handle parameter %s must come first and name a class", f.Name, p.Name)
				}
			}
			if len(p.Fields) > 0 && p.Kind != abispec.JSON {
				return fmt.Errorf("%s: only JSON parameters have fields", f.Name)
			}
		}
		if outs > 1 {
			return fmt.Errorf("%s: at most one out parameter", f.Name)
		}
		if f.Return != abispec.ReturnStatus && f.Binding != abispec.Internal {
			return fmt.Errorf("%s: only internal functions return something other than a status", f.Name)
		}
		if f.Return == abispec.ReturnStatus && len(f.Statuses) == 0 {
			return fmt.Errorf("%s: list the statuses it returns", f.Name)
		}
		hasOutString := outs == 1 && f.Params[len(f.Params)-1].Kind == abispec.OutString
		if hasOutString != (f.Result != abispec.ResultNone) {
			return fmt.Errorf("%s: Result must be set exactly when there is an out string", f.Name)
		}
		switch f.Binding {
		case abispec.Function:
			if handles != 0 || f.Method == "" {
				return fmt.Errorf("%s: a function takes no handle and needs a Method name", f.Name)
			}
		case abispec.Constructor:
			if !known[f.Class] || f.Method == "" || f.Params[len(f.Params)-1].Kind != abispec.OutHandle {
				return fmt.Errorf("%s: a constructor names its class and method and ends with an out handle", f.Name)
			}
			if handles > 1 || handles == 1 && (f.Params[0].Kind != abispec.Handle || f.Params[0].Class == f.Class || !known[f.Params[0].Class]) {
				return fmt.Errorf("%s: a constructor takes at most one handle, first: the class it is a method of", f.Name)
			}
			if handles == 1 && f.Blocking != "" {
				return fmt.Errorf("%s: a constructor that is another class's method returns promptly", f.Name)
			}
		case abispec.Internal:
			if f.AsyncOf != "" && f.Class != abispec.CallClass {
				return fmt.Errorf("%s: a start function makes a %s", f.Name, abispec.CallClass)
			}
		case abispec.Method, abispec.Destructor:
			if handles != 1 || f.Params[0].Class != f.Class || f.Method == "" {
				return fmt.Errorf("%s: a method takes its class's handle first and needs a Method name", f.Name)
			}
		}
	}
	for _, c := range classes {
		if c.Internal {
			continue
		}
		var ctor, dtor int
		for _, f := range funcs {
			if f.Class == c.Name && f.Binding == abispec.Constructor {
				ctor++
			}
			if f.Class == c.Name && f.Binding == abispec.Destructor {
				dtor++
			}
		}
		if ctor != 1 || dtor != 1 {
			return fmt.Errorf("class %s needs exactly one constructor and one destructor", c.Name)
		}
	}
	return nil
}

// buf is a bytes.Buffer with printf.
type buf struct{ bytes.Buffer }

func (b *buf) p(format string, args ...any) {
	fmt.Fprintf(&b.Buffer, format, args...)
	b.WriteByte('\n')
}

// wrap breaks text into lines of at most width runes, keeping paragraphs
// (separated by blank lines) apart with an empty line.
func wrap(text string, width int) []string {
	var lines []string
	for i, para := range strings.Split(text, "\n\n") {
		if i > 0 {
			lines = append(lines, "")
		}
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case len([]rune(line))+1+len([]rune(w)) > width:
				lines = append(lines, line)
				line = w
			default:
				line += " " + w
			}
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// camel turns snake_case into camelCase.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func statusNames(codes []int) []string {
	var names []string
	for _, c := range codes {
		names = append(names, abispec.StatusByCode(c).Name)
	}
	return names
}

// isInternalClass reports whether name is a class the bindings do not
// present.
func isInternalClass(name string) bool {
	for _, c := range abispec.Classes {
		if c.Name == name {
			return c.Internal
		}
	}
	return false
}

// factoryOf returns the class whose method makes the objects of
// constructor f: a constructor whose first parameter is the handle of
// another class (LSPManager.edit_set() makes an EditSet). "" for a
// constructor of its own (a class method or the class's constructor).
func factoryOf(f abispec.Func) string {
	if f.Binding == abispec.Constructor && len(f.Params) > 0 && f.Params[0].Kind == abispec.Handle && f.Params[0].Class != f.Class {
		return f.Params[0].Class
	}
	return ""
}

// factories returns the constructors that are methods of class.
func factories(class string) []abispec.Func {
	var out []abispec.Func
	for _, f := range abispec.Funcs {
		if factoryOf(f) == class {
			out = append(out, f)
		}
	}
	return out
}

// boundClasses returns the classes the bindings present.
func boundClasses() []abispec.Class {
	var out []abispec.Class
	for _, c := range abispec.Classes {
		if !c.Internal {
			out = append(out, c)
		}
	}
	return out
}

func classByName(name string) abispec.Class {
	for _, c := range abispec.Classes {
		if c.Name == name {
			return c
		}
	}
	panic("unknown class " + name)
}

// destructorOf returns the destructor of class.
func destructorOf(class string) abispec.Func {
	for _, f := range abispec.Funcs {
		if f.Class == class && f.Binding == abispec.Destructor {
			return f
		}
	}
	panic("no destructor for " + class)
}

// outString returns f's OutString parameter, if any.
func outString(f abispec.Func) (abispec.Param, bool) {
	for _, p := range f.Params {
		if p.Kind == abispec.OutString {
			return p, true
		}
	}
	return abispec.Param{}, false
}
