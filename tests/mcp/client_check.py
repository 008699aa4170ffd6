#!/usr/bin/env python3
"""A real MCP client (the official Python SDK) against `yazses mcp-server` over stdio.

Run by tests/tests/mcp_clients.rs, once per protocol mode and config:

    python client_check.py --yazses BIN --config CONFIG --mode legacy|auto|2026-07-28 \\
        --scenario off|on|silence|cpal|serial|shared --jfk JFK_WAV --said SAID_FILE [--infile RAW]

`shared` starts two servers with the same config and runtime directory (ask_human_per_hour
= 2) and asks both at once: each hears the whole answer, and a third
question to either is over the budget they share.

Prints one line per check; exits non-zero on the first failure.
"""
import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation

CLIENT = "yazses-test-client"
# The display name a client gives beside its short name: the one a person hears.
TITLE = "Yazses Test Client"
INFO = Implementation(name=CLIENT, title=TITLE, version="1.0")


def check(ok, what, detail=""):
    if not ok:
        print(f"FAIL {what}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


def open_files_of_server(config, path):
    """The server's open descriptors that point at `path` (Linux /proc)."""
    import os
    held = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            if config.encode() not in cmdline or b"mcp-server" not in cmdline:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target == path:
                    held.append((pid, fd))
        except OSError:
            continue
    return held


def text_of(result):
    return " ".join(getattr(c, "text", "") for c in result.content)


def server_params(args):
    import os
    # The SDK starts servers with a minimal environment; pass on what the test set up.
    passed = {k: os.environ[k] for k in ("ALSA_CONFIG_PATH", "YAZSES_LOG", "YAZSES_MODEL_DIR", "YAZSES_RUNTIME_DIR") if k in os.environ}
    return StdioServerParameters(command=args.yazses, args=["--config", args.config, "mcp-server"], env=passed)


async def run_shared(args):
    """Two servers, two clients, one microphone and one hourly budget."""
    async with Client(server_params(args), mode=args.mode, client_info=INFO) as a, \
            Client(server_params(args), mode=args.mode, client_info=INFO) as b:
        results = await asyncio.gather(
            a.call_tool("ask_human", {"question": "Which model should I ship?", "timeout_s": 40}),
            b.call_tool("ask_human", {"question": "Which model should I ship?", "timeout_s": 40}))
        for name, r in zip("ab", results):
            sc = r.structured_content or {}
            words = sc.get("answer", "").lower()
            check(not r.is_error and sc.get("heard") is True and "smaller model" in words and "friday" in words,
                  f"server {name} hears the whole answer while the other server also asks", text_of(r))
        said = [line for line in open(args.said).read().splitlines() if "asks:" in line]
        check(len(said) == 2, "each server's question was spoken once", said)
        for name, client in (("a", a), ("b", b)):
            r = await client.call_tool("ask_human", {"question": "And the bigger one?"})
            check(r.is_error and "past hour" in text_of(r),
                  f"a third question, to server {name}, is over the budget both servers share", text_of(r))


async def run(args):
    if args.scenario == "shared":
        return await run_shared(args)
    params = server_params(args)
    async with Client(params, mode=args.mode, client_info=INFO) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        if args.scenario == "off":
            check(set(tools) == {"transcribe"}, "ask_human is absent while off", sorted(tools))
            try:
                r = await client.call_tool("ask_human", {"question": "Are you there?"})
                refused, detail = r.is_error, text_of(r)
            except MCPError as e:
                refused, detail = True, str(e)
            check(refused, "calling the absent ask_human is refused", detail)
            return
        check(set(tools) == {"transcribe", "ask_human"}, "both tools listed when on", sorted(tools))
        t, a = tools["transcribe"], tools["ask_human"]
        check(t.annotations.read_only_hint is True and t.annotations.idempotent_hint is True
              and t.annotations.destructive_hint is False and t.annotations.open_world_hint is False,
              "transcribe is annotated read-only, idempotent, closed world", t.annotations)
        check(a.annotations.read_only_hint is False and a.annotations.idempotent_hint is False,
              "ask_human is annotated not read-only, not idempotent", a.annotations)
        check(t.input_schema["required"] == ["path"] and t.input_schema.get("additionalProperties") is False,
              "transcribe's schema requires path and nothing undeclared", t.input_schema)
        ts = a.input_schema["properties"]["timeout_s"]
        check(ts.get("minimum") == 1 and ts.get("maximum") == 120, "timeout_s is bounded 1..120", ts)
        q = a.input_schema["properties"]["question"]
        check(q.get("maxLength") == 500 and a.input_schema["required"] == ["question"],
              "question is required and bounded", a.input_schema)
        check(t.output_schema is not None and "heard" in t.output_schema["properties"],
              "transcribe declares its output schema", t.output_schema)

        if args.scenario == "on":
            r = await client.call_tool("transcribe", {"path": args.jfk})
            sc = r.structured_content or {}
            check(not r.is_error and "ask not what your country" in sc.get("text", "").lower(),
                  "transcribe returns jfk.wav's words as structured content", text_of(r))
            check(sc.get("heard") is True and sc.get("audio_ms") == 11000 and sc.get("segments"),
                  "transcribe reports heard, audio_ms and segments", sc)
            seen = []

            async def on_progress(progress, total, message):
                seen.append(progress)

            r = await client.call_tool("transcribe", {"path": args.sentences}, progress_callback=on_progress)
            check(not r.is_error and seen and seen == sorted(seen) and max(seen) <= 100,
                  "a long transcription reports rising progress to a client that asked", seen)
            r = await client.call_tool("transcribe", {"path": "/nonexistent/x.wav"})
            check(r.is_error and "cannot read" in text_of(r), "a missing file is an error result", text_of(r))
            r = await client.call_tool("transcribe", {"path": args.jfk, "speed": "fast"})
            check(r.is_error, "an undeclared argument is refused", text_of(r))

            for i in range(2):
                steps = []

                async def on_step(progress, total, message):
                    steps.append((progress, message))
                r = await client.call_tool("ask_human", {"question": "Which model should I ship?", "timeout_s": 20},
                                           progress_callback=on_step)
                sc = r.structured_content or {}
                messages = [m for _, m in steps]
                check(messages[:1] == ["saying the question"] and "listening for the answer" in messages,
                      f"ask_human {i + 1}: progress says each step, the first once", messages)
                check(all(a[0] < b[0] for a, b in zip(steps, steps[1:])),
                      f"ask_human {i + 1}: progress rises with every notification", steps)
                check(sc.get("asked_as") == TITLE, f"ask_human {i + 1} says whose question it was", sc)
                check(not r.is_error and sc.get("heard") is True, f"ask_human {i + 1} hears an answer", text_of(r))
                words = sc.get("answer", "").lower()
                check("smaller model" in words and "friday" in words,
                      f"ask_human {i + 1}: the pause did not cut the answer", words)
                check(sc.get("stopped_because") == "end_of_speech", "it stopped at the end of speech", sc)
                check(6000 <= sc.get("listen_ms", 0) <= 8000, "it listened about as long as the answer", sc)
            said = open(args.said).read()
            check(f"{TITLE} asks: Which model should I ship?" in said,
                  "the caller is named in what was spoken, by its title", said)
            r = await client.call_tool("ask_human", {"question": "And the bigger one?"})
            check(r.is_error and "past hour" in text_of(r), "the third answer in an hour is over budget", text_of(r))
            r = await client.call_tool("ask_human", {"question": "x", "timeout_s": 500})
            check(r.is_error, "timeout_s out of bounds is refused", text_of(r))

        if args.scenario in ("cpal", "serial"):
            # A real capture source: cpal reading an ALSA file PCM (--infile is its input
            # file), or a yazses dongle (the simulator) on a pty (--infile is the port),
            # which decides the end of speech on its own chip.
            import os
            through, held_what = {
                "cpal": ("cpal", "the microphone (the ALSA file PCM's input)"),
                "serial": ("the serial dongle", "the dongle's port"),
            }[args.scenario]
            r = await client.call_tool("ask_human", {"question": "Which model should I ship?"})
            sc = r.structured_content or {}
            words = sc.get("answer", "").lower()
            check(not r.is_error and sc.get("heard") is True and "smaller model" in words and "friday" in words,
                  f"ask_human hears the answer through {through}", text_of(r))
            check(sc.get("stopped_because") == "end_of_speech", "it stopped at the end of speech", sc)
            held = open_files_of_server(args.config, os.path.realpath(args.infile))
            check(held == [], f"{held_what} is released after the call", held)

        if args.scenario == "silence":
            for i in range(2):
                r = await client.call_tool("ask_human", {"question": "Anyone there?"})
                sc = r.structured_content or {}
                check(not r.is_error and sc.get("heard") is False and sc.get("answer") == "",
                      f"silence {i + 1}: heard is false and the answer empty", text_of(r))
                check(sc.get("stopped_because") == "no_speech" and sc.get("listen_ms") == 8000,
                      f"silence {i + 1}: stopped for no speech after 8 s", sc)
            # per_hour is 1 in this config: unheard answers were not charged.
            r = await client.call_tool("ask_human", {"question": "Still nobody?"})
            check(not r.is_error, "unheard answers are not charged to the budget", text_of(r))


def main():
    ap = argparse.ArgumentParser()
    for a in ["--yazses", "--config", "--mode", "--scenario", "--jfk", "--said", "--infile", "--sentences"]:
        ap.add_argument(a, required=a in ("--yazses", "--config", "--mode", "--scenario"))
    args = ap.parse_args()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
