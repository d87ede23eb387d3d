package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/idebridge/idebridge/diag"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/lspdiag"
)

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		if errors.Is(err, diag.ErrBadShape) {
			return abispec.StArgument
		}
		return 0
	})
}

// registryOptions is the JSON form of lspdiag.RegistryOptions.
type registryOptions struct {
	MaxPerFile              int         `json:"maxPerFile"`
	MaxTotal                int         `json:"maxTotal"`
	MaxPerPublish           int         `json:"maxPerPublish"`
	MaxDocuments            int         `json:"maxDocuments"`
	MaxDeliveredPerDocument int         `json:"maxDeliveredPerDocument"`
	MinSeverity             optSeverity `json:"minSeverity"`
	DropUnnecessary         bool        `json:"dropUnnecessary"`
}

// optSeverity is a severity option: what diag.Severity accepts, with an
// error that names the option rather than a diagnostic.
type optSeverity diag.Severity

func (s *optSeverity) UnmarshalJSON(b []byte) error {
	var v diag.Severity
	if err := v.UnmarshalJSON(b); err != nil {
		var se *diag.ShapeError
		if errors.As(err, &se) {
			return fmt.Errorf("minSeverity: %s", se.Problem)
		}
		return fmt.Errorf("minSeverity: %w", err)
	}
	*s = optSeverity(v)
	return nil
}

// renderOptions is the JSON form of diag.RenderOptions.
type renderOptions struct {
	ProjectDir string `json:"projectDir"`
	Tag        string `json:"tag"`
	MaxChars   int    `json:"maxChars"`
}

func registry(h C.uint64_t) (*lspdiag.Registry, error) {
	obj, err := handles.get(kindRegistry, uint64(h))
	if err != nil {
		return nil, err
	}
	return obj.(*lspdiag.Registry), nil
}

//export idb_registry_new
func idb_registry_new(optionsJSON *C.char, outHandle *C.uint64_t) (st C.int) {
	const name = "idb_registry_new"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(outHandle, "out_handle"); err != nil {
		return fail(name, err)
	}
	var o registryOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{
		MaxPerFile:              o.MaxPerFile,
		MaxTotal:                o.MaxTotal,
		MaxPerPublish:           o.MaxPerPublish,
		MaxDocuments:            o.MaxDocuments,
		MaxDeliveredPerDocument: o.MaxDeliveredPerDocument,
		MinSeverity:             diag.Severity(o.MinSeverity),
		DropUnnecessary:         o.DropUnnecessary,
	})
	if err != nil {
		return fail(name, argErr("options_json: %v", err))
	}
	*outHandle = C.uint64_t(handles.add(kindRegistry, reg))
	return 0
}

//export idb_registry_publish
func idb_registry_publish(h C.uint64_t, server *C.char, paramsJSON *C.char) (st C.int) {
	const name = "idb_registry_publish"
	defer recoverPanic(name, &st)
	enter(name)
	reg, err := registry(h)
	if err != nil {
		return fail(name, err)
	}
	srv, err := goString(server, "server")
	if err != nil {
		return fail(name, err)
	}
	if paramsJSON == nil {
		return fail(name, argErr("params_json is NULL"))
	}
	// The registry decodes and validates the params itself. They are
	// copied out of C memory first: the copy costs little next to the
	// decoding, and no reference to the caller's buffer can outlive the call.
	if err := reg.Publish(srv, json.RawMessage(copyBytes(paramsJSON))); err != nil {
		return fail(name, err)
	}
	return 0
}

//export idb_registry_set_version
func idb_registry_set_version(h C.uint64_t, uri *C.char, version C.int64_t) (st C.int) {
	const name = "idb_registry_set_version"
	defer recoverPanic(name, &st)
	enter(name)
	reg, err := registry(h)
	if err != nil {
		return fail(name, err)
	}
	u, err := goString(uri, "uri")
	if err != nil {
		return fail(name, err)
	}
	if version < 0 || int64(version) > int64(maxInt) {
		return fail(name, argErr("version %d is out of range", int64(version)))
	}
	reg.SetVersion(u, int(version))
	return 0
}

//export idb_registry_drain
func idb_registry_drain(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_registry_drain"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	reg, err := registry(h)
	if err != nil {
		return fail(name, err)
	}
	att, ok := reg.Drain()
	if !ok {
		*out = nil
		return 0
	}
	return setOutJSON(name, out, att)
}

//export idb_registry_reset
func idb_registry_reset(h C.uint64_t, uri *C.char) (st C.int) {
	const name = "idb_registry_reset"
	defer recoverPanic(name, &st)
	enter(name)
	reg, err := registry(h)
	if err != nil {
		return fail(name, err)
	}
	if u, ok := goOptString(uri); ok {
		reg.Reset(u)
	} else {
		reg.ResetAll()
	}
	return 0
}

//export idb_registry_stats
func idb_registry_stats(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_registry_stats"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	reg, err := registry(h)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, reg.Stats())
}

//export idb_registry_free
func idb_registry_free(h C.uint64_t) (st C.int) {
	const name = "idb_registry_free"
	defer recoverPanic(name, &st)
	enter(name)
	if _, err := handles.remove(kindRegistry, uint64(h)); err != nil {
		return fail(name, err)
	}
	return 0
}

//export idb_render_attachment
func idb_render_attachment(attachmentJSON *C.char, optionsJSON *C.char, out **C.char) (st C.int) {
	const name = "idb_render_attachment"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	if attachmentJSON == nil {
		return fail(name, argErr("attachment_json is NULL"))
	}
	var att diag.Attachment
	if err := json.Unmarshal(copyBytes(attachmentJSON), &att); err != nil {
		return fail(name, argErr("attachment_json: %v", err))
	}
	var o renderOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	setOut(out, att.Render(&diag.RenderOptions{ProjectDir: o.ProjectDir, Tag: o.Tag, MaxChars: o.MaxChars}))
	return 0
}
