package main

/*
#include <stddef.h>
*/
import "C"

import "github.com/idebridge/idebridge/pathconv"

// wslOptions is the JSON form of the path conversions' options.
type wslOptions struct {
	Distro    string `json:"distro"`
	MountRoot string `json:"mountRoot"`
	UNCHost   string `json:"uncHost"`
}

func convertPath(name string, path, optionsJSON *C.char, out **C.char, toIDE bool) C.int {
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	p, err := goString(path, "path")
	if err != nil {
		return fail(name, err)
	}
	var o wslOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	conv := pathconv.NewWSL(o.Distro, &pathconv.WSLOptions{MountRoot: o.MountRoot, UNCHost: o.UNCHost})
	if toIDE {
		setOut(out, conv.ToIDE(p))
	} else {
		setOut(out, conv.ToLocal(p))
	}
	return 0
}

//export idb_path_to_local
func idb_path_to_local(path *C.char, optionsJSON *C.char, out **C.char) (st C.int) {
	const name = "idb_path_to_local"
	defer recoverPanic(name, &st)
	enter(name)
	return convertPath(name, path, optionsJSON, out, false)
}

//export idb_path_to_ide
func idb_path_to_ide(path *C.char, optionsJSON *C.char, out **C.char) (st C.int) {
	const name = "idb_path_to_ide"
	defer recoverPanic(name, &st)
	enter(name)
	return convertPath(name, path, optionsJSON, out, true)
}
