package env

import (
	"os"
	"testing"
)

func TestLookup(t *testing.T) {
	e := []string{"A=1", "B=", "A=2", "C=x=y", "junk"}
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{{"A", "2", true}, {"B", "", true}, {"C", "x=y", true}, {"D", "", false}, {"junk", "", false}} {
		if v, ok := Lookup(e, tc.key); v != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
	t.Setenv("IDEBRIDGE_ENV_TEST", "here")
	if Get(nil, "IDEBRIDGE_ENV_TEST") != "here" {
		t.Error("nil environment is not the process's")
	}
	if Get([]string{}, "IDEBRIDGE_ENV_TEST") != "" {
		t.Error("an empty environment must not fall back to the process's")
	}
	if len(Resolve(nil)) != len(os.Environ()) {
		t.Error("Resolve(nil) is not os.Environ()")
	}
}

func TestTruthyFalsy(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", " yes ", "On"} {
		if !Truthy(v) || Falsy(v) {
			t.Errorf("%q: want truthy", v)
		}
	}
	for _, v := range []string{"0", "false", "No", " OFF "} {
		if Truthy(v) || !Falsy(v) {
			t.Errorf("%q: want falsy", v)
		}
	}
	for _, v := range []string{"", "2", "maybe"} {
		if Truthy(v) || Falsy(v) {
			t.Errorf("%q: want neither", v)
		}
	}
}
