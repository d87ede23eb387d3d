"""Zero configuration through the Python binding: an LSP manager gets the
language servers of the Claude Code plugins the user has installed and
enabled, from a Claude Code configuration directory built by the test."""

import json
import os
import tempfile
import time
import unittest

from tests.support import LeakCheckedTestCase, find_gopls, idebridge

BROKEN = "package main\n\nfunc main() {\n\tundefinedThing()\n}\n"


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class ClaudeCodePluginsTest(LeakCheckedTestCase):
    def setUp(self) -> None:
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="idebridge-plugins-")
        base = os.path.realpath(self._tmp.name)
        self.project = os.path.join(base, "project")
        write(os.path.join(self.project, "go.mod"), "module example.com/m\n\ngo 1.22\n")
        self.main_go = os.path.join(self.project, "main.go")
        write(self.main_go, BROKEN)
        # A marketplace whose go-tools entry is strict: false, its server
        # inline, as the official marketplace writes its LSP plugins.
        self.config = os.path.join(base, "config")
        market = os.path.join(self.config, "plugins", "marketplaces", "local")
        entry = {"name": "go-tools", "source": "./go-tools", "strict": False,
                 "lspServers": {"gopls": {"command": find_gopls(), "extensionToLanguage": {".go": "go"}}}}
        write(os.path.join(market, ".claude-plugin", "marketplace.json"), json.dumps({"name": "local", "plugins": [entry]}))
        install = os.path.join(self.config, "plugins", "cache", "local", "go-tools", "1.0.0")
        write(os.path.join(install, "README.md"), "go tools\n")
        write(os.path.join(self.config, "plugins", "installed_plugins.json"), json.dumps(
            {"version": 2, "plugins": {"go-tools@local": [{"scope": "project", "projectPath": self.project,
                                                           "installPath": install, "version": "1.0.0"}]}}))
        write(os.path.join(self.project, ".claude", "settings.json"), json.dumps({"enabledPlugins": {"go-tools@local": True}}))
        # The project's own settings and its project-scoped install count
        # because the user trusted it in Claude Code.
        write(os.path.join(self.config, ".claude.json"),
              json.dumps({"projects": {self.project: {"hasTrustDialogAccepted": True}}}))

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def test_load_claude_code(self) -> None:
        env = dict(os.environ, CLAUDE_CONFIG_DIR=self.config)
        with idebridge.LSPManager({}, self.project) as mgr:
            report = mgr.load_claude_code(env=env)
            self.assertEqual(report["configDir"], self.config)
            self.assertEqual(report["projectDir"], self.project)
            self.assertEqual([s["name"] for s in report["servers"]], ["plugin:go-tools:gopls"])
            self.assertEqual(report["servers"][0]["resolved"], find_gopls())
            self.assertEqual(report["errors"], [])
            self.assertEqual((report["trust"]["trusted"], report["trust"]["source"]), (True, "record"))
            plugin = report["plugins"][0]
            self.assertEqual((plugin["id"], plugin["enabled"], plugin["enabledScope"], plugin["installScope"]),
                             ("go-tools@local", True, "project", "project"))
            self.assertEqual([s.name for s in mgr.servers()], ["plugin:go-tools:gopls"])

            mgr.open(self.main_go)
            deadline = time.monotonic() + 30
            seen = ""
            while time.monotonic() < deadline and "undefined: undefinedThing" not in seen:
                mgr.settle(self.main_go, timeout=2)
                att = mgr.drain()
                seen += json.dumps(att.raw if att else None)
            self.assertIn("undefined: undefinedThing", seen)
            self.assertIn("plugin:go-tools:gopls", seen)

            # Disabled locally: the next load drops the server.
            write(os.path.join(self.project, ".claude", "settings.local.json"),
                  json.dumps({"enabledPlugins": {"go-tools@local": False}}))
            report = mgr.load_claude_code(env=env, timeout=10)
            self.assertEqual(report["servers"], [])
            self.assertTrue(report["plugins"][0]["reason"].startswith("disabled in local settings"))
            self.assertEqual(mgr.servers(), [])
            with self.assertRaises(idebridge.ArgumentError):
                mgr.load_claude_code(env={"CLAUDE_CONFIG_DIR": 1})


if __name__ == "__main__":
    unittest.main()
