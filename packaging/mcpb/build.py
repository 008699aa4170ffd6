#!/usr/bin/env python3
"""Builds the MCP Bundle's manifest.json from manifest.template.json.

The version comes from the workspace's Cargo.toml and the tool list from the live server
(`yazses mcp-server` with ask_human on, asked over stdio), so the bundle cannot drift
from what the installed yazses serves.

    python3 packaging/mcpb/build.py YAZSES_BINARY OUT_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def live_tools(binary):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as cfg:
        cfg.write("[mcp]\nask_human = true\n")
    p = subprocess.Popen([binary, "--config", cfg.name, "mcp-server"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def send(msg):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcpb-build", "version": "1"}}})
    json.loads(p.stdout.readline())
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = json.loads(p.stdout.readline())["result"]["tools"]
    p.stdin.close()
    p.wait(timeout=10)
    os.unlink(cfg.name)
    return [{"name": t["name"], "description": t["description"]} for t in tools]


def main():
    binary, out = sys.argv[1], sys.argv[2]
    cargo = open(os.path.join(ROOT, "Cargo.toml")).read()
    version = re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', cargo, re.M | re.S).group(1)
    template = open(os.path.join(HERE, "manifest.template.json")).read()
    manifest = template.replace("@VERSION@", version).replace("@TOOLS@", json.dumps(live_tools(binary)))
    json.loads(manifest)  # well-formed
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        f.write(manifest)
    print(os.path.join(out, "manifest.json"))


if __name__ == "__main__":
    main()
