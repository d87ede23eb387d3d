package abispec

import "strings"

// CParam is one C parameter of an export.
type CParam struct {
	Type, Name string
}

// CParams expands f's parameters into C parameters.
func (f Func) CParams() []CParam {
	var out []CParam
	for _, p := range f.Params {
		switch p.Kind {
		case String, OptString, JSON:
			out = append(out, CParam{"const char *", p.Name})
		case Bytes:
			out = append(out, CParam{"const char *", p.Name}, CParam{"size_t ", p.Name + "_len"})
		case Handle:
			out = append(out, CParam{"uint64_t ", p.Name})
		case Int, TimeoutMS:
			out = append(out, CParam{"int64_t ", p.Name})
		case OutString:
			out = append(out, CParam{"char **", p.Name})
		case OutHandle, OutUint64:
			out = append(out, CParam{"uint64_t *", p.Name})
		case FreePtr:
			out = append(out, CParam{"void *", p.Name})
		}
	}
	return out
}

// CReturn is f's C return type, with a trailing space or star.
func (f Func) CReturn() string {
	switch f.Return {
	case ReturnVoid:
		return "void "
	case ReturnString:
		return "char *"
	}
	return "int "
}

// Prototype is f's C declaration, without the trailing semicolon.
func (f Func) Prototype() string {
	var ps []string
	for _, p := range f.CParams() {
		ps = append(ps, p.Type+p.Name)
	}
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	return f.CReturn() + f.Name + "(" + strings.Join(ps, ", ") + ")"
}
