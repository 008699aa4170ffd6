// Starts yazses on Windows the way a desktop app starts the MCP bundle, and checks that it
// answers. Run by ./ci.sh windows with Node's Windows build under Wine:
//
//     node.exe mcpb_launch.mjs MANIFEST YAZSES_EXE MODEL RECORDING NODE_MODULES
//
// 1. Installs as a user would: yazses.exe where `cargo install` puts it
//    (%USERPROFILE%\.cargo\bin) and the model where `yazses model fetch` puts it.
// 2. Fills ${HOME} into the manifest's default for yazses_path (the path the app offers the
//    user), then has @anthropic-ai/mcpb's own getMcpConfigForManifest make the command.
//    That command names `yazses`, not `yazses.exe`.
// 3. Starts that command twice: with Node's child_process.spawn (libuv) for `--version`,
//    and with the MCP SDK's StdioClientTransport (cross-spawn), as MCP clients do, for the
//    tool list and one transcription.
// Which of the two a given desktop app uses is not public; both must find yazses.exe.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, sep } from "node:path";
import { pathToFileURL } from "node:url";

const [manifestPath, exe, model, recording, modules] = process.argv.slice(2);
if (!modules) {
  console.error("usage: node mcpb_launch.mjs MANIFEST YAZSES_EXE MODEL RECORDING NODE_MODULES");
  process.exit(2);
}
const need = createRequire(join(modules, "index.js"));
const load = (name) => import(pathToFileURL(need.resolve(name)).href);
const { getMcpConfigForManifest } = await load("@anthropic-ai/mcpb");
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

const installed = join(homedir(), ".cargo", "bin", "yazses.exe");
mkdirSync(dirname(installed), { recursive: true });
copyFileSync(exe, installed);
const models = execFileSync(installed, ["model", "path"], { encoding: "utf8" }).trim();
mkdirSync(models, { recursive: true });
copyFileSync(model, join(models, "ggml-tiny.en.bin"));

const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const offered = manifest.user_config.yazses_path.default.replace("${HOME}", homedir());
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dirname(manifestPath),
  systemDirs: { HOME: homedir() },
  userConfig: { yazses_path: offered },
  pathSeparator: sep,
});
if (!config) throw new Error("getMcpConfigForManifest made no command");
console.log(`the bundle's command: ${config.command} ${config.args.join(" ")}`);

const version = execFileSync(config.command, ["--version"], { encoding: "utf8" }).trim();
console.log(`child_process started it: ${version}`);

const client = new Client({ name: "mcpb-launch", version: "1" });
await client.connect(new StdioClientTransport({ command: config.command, args: config.args }));
const tools = (await client.listTools()).tools.map((t) => t.name);
console.log(`the MCP SDK started it; tools: ${tools.join(", ")}`);
if (!tools.includes("transcribe")) throw new Error("no transcribe tool");
const heard = await client.callTool({ name: "transcribe", arguments: { path: recording } });
const text = heard.content.map((c) => c.text).join(" ");
console.log(`transcribe: ${text}`);
if (heard.isError || !/hello/i.test(text)) throw new Error("the transcription failed");
await client.close();
