package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/idebridge/idebridge/lsp"
)

// claudeCodeOptions is the JSON form of idb_lsp_load_claude_code's
// options.
type claudeCodeOptions struct {
	ProjectDir string            `json:"projectDir"`
	ConfigDir  string            `json:"configDir"`
	Env        map[string]string `json:"env"`
	UserConfig map[string]string `json:"userConfig"`
	// TrustProject is lsp.ClaudeCodeOptions.TrustProject.
	TrustProject bool `json:"trustProject"`
}

// claudeCodeServer is one loaded server, as the export reports it.
type claudeCodeServer struct {
	Name        string            `json:"name"`
	Plugin      string            `json:"plugin"`
	Marketplace string            `json:"marketplace"`
	File        string            `json:"file"`
	Root        string            `json:"root"`
	Extensions  map[string]string `json:"extensions"`
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	// Resolved is where the command was found; CommandError says why it
	// was not.
	Resolved     string `json:"resolved,omitempty"`
	CommandError string `json:"commandError,omitempty"`
	InstallHint  string `json:"installHint,omitempty"`
}

// claudeCodeReport is the export's result.
type claudeCodeReport struct {
	ConfigDir  string             `json:"configDir"`
	ProjectDir string             `json:"projectDir"`
	Servers    []claudeCodeServer `json:"servers"`
	Plugins    []lsp.PluginStatus `json:"plugins"`
	Trust      lsp.ProjectTrust   `json:"trust"`
	Unlisted   int                `json:"unlisted"`
	Errors     []string           `json:"errors"`
}

//export idb_lsp_load_claude_code
func idb_lsp_load_claude_code(h C.uint64_t, optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_load_claude_code"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	lh, err := lspHandleOf(h)
	if err != nil {
		return fail(name, err)
	}
	m := lh.m
	var o claudeCodeOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	if o.ProjectDir == "" {
		o.ProjectDir = lh.projectDir
	}
	if o.ProjectDir != "" {
		if o.ProjectDir, err = filepath.Abs(o.ProjectDir); err != nil {
			return fail(name, argErr("projectDir: %v", err))
		}
	}
	environ := (&discoverOptions{Env: o.Env}).goOptions().Env
	cfg := lsp.LoadClaudeCode(&lsp.ClaudeCodeOptions{ProjectDir: o.ProjectDir, ConfigDir: o.ConfigDir, Env: environ, UserConfig: o.UserConfig, TrustProject: o.TrustProject})

	ctx, cancel := timeoutContext(timeoutMs, 0)
	defer cancel()
	problems := m.Reload(ctx, cfg.Servers)
	if errors.Is(errors.Join(problems...), lsp.ErrManagerClosed) {
		return fail(name, lsp.ErrManagerClosed)
	}
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		return fail(name, err)
	}
	rep := claudeCodeReport{ConfigDir: cfg.ConfigDir, ProjectDir: cfg.ProjectDir, Servers: []claudeCodeServer{},
		Plugins: emptyIfNil(cfg.Plugins), Trust: cfg.Trust, Unlisted: cfg.Unlisted, Errors: []string{}}
	for i := range cfg.Servers {
		c := &cfg.Servers[i]
		s := claudeCodeServer{Name: c.Name, Plugin: c.Plugin, Marketplace: c.Marketplace, File: c.File, Root: c.Root,
			Extensions: c.ExtensionToLanguage, Command: c.Command, Args: emptyIfNil(c.Args)}
		if p, err := c.ResolveCommand(environ); err != nil {
			s.CommandError, s.InstallHint = err.Error(), lsp.InstallHint(c.Command)
		} else {
			s.Resolved = p
		}
		rep.Servers = append(rep.Servers, s)
	}
	for _, err := range append(cfg.Errors, problems...) {
		rep.Errors = append(rep.Errors, err.Error())
	}
	return setOutJSON(name, out, rep)
}
