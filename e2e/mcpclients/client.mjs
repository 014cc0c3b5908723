#!/usr/bin/env node
// client.mjs drives an MCP server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in package.json) for Meridian's e2e tests.
//
// Usage:
//   node client.mjs --stdio <command> [args...] [--script FILE]
//   node client.mjs --http <url> [--token TOKEN] [--script FILE]
//
// With --stdio every argument after the command is passed to it (so --script, when
// given, comes first: `node client.mjs --script s.json --stdio meridian mcp --data-dir D`).
// The script (FILE, or stdin when no --script is given) is a JSON list of
// {"tool": name, "arguments": {...}}. The client connects, lists every tool (following
// nextCursor), calls each tool of the script in order and prints one JSON document:
//
//   {protocolVersion, serverInfo, instructions, tools: [names],
//    results: [{tool, isError, structuredContent, text, error}]}
//
// text is the first text content block; error is {code, message} when the call
// failed at the protocol level (the SDK threw: a JSON-RPC error such as -32602 for an
// unknown tool, or a result whose structuredContent does not match the tool's
// outputSchema). The exit status is non-zero only when the transport fails (cannot
// spawn or connect, initialize fails, tools/list fails).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function usage(msg) {
  if (msg) process.stderr.write(`client.mjs: ${msg}\n`);
  process.stderr.write(
    "usage: node client.mjs [--script FILE] (--stdio COMMAND [ARGS...] | --http URL [--token TOKEN])\n",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = { script: null, stdio: null, http: null, token: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--script") o.script = argv[++i];
    else if (a === "--http") o.http = argv[++i];
    else if (a === "--token") o.token = argv[++i];
    else if (a === "--stdio") {
      o.stdio = argv.slice(i + 1);
      break;
    } else usage(`unknown argument ${a}`);
  }
  if (!o.stdio === !o.http) usage("give exactly one of --stdio and --http");
  if (o.stdio && o.stdio.length === 0) usage("--stdio needs a command");
  return o;
}

function readScript(file) {
  const raw = readFileSync(file ?? 0, "utf8");
  const script = JSON.parse(raw);
  if (!Array.isArray(script)) throw new Error("the script must be a JSON list of {tool, arguments}");
  return script;
}

function makeTransport(o) {
  if (o.stdio) {
    const [command, ...args] = o.stdio;
    // The server's stderr (its logs) goes to ours, where the test collects it.
    return new StdioClientTransport({ command, args, stderr: "inherit", env: process.env });
  }
  const headers = o.token ? { Authorization: `Bearer ${o.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(o.http), { requestInit: { headers } });
}

// watchProtocolVersion records the protocolVersion of the initialize answer: the v1
// client negotiates it but keeps it only inside the HTTP transport.
function watchProtocolVersion(transport, seen) {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const onmessage = transport.onmessage;
    transport.onmessage = (msg, extra) => {
      if (!seen.protocolVersion && msg && msg.result && typeof msg.result.protocolVersion === "string") {
        seen.protocolVersion = msg.result.protocolVersion;
      }
      return onmessage?.(msg, extra);
    };
    return start();
  };
}

function firstText(res) {
  for (const c of res?.content ?? []) {
    if (c.type === "text") return c.text;
  }
  return null;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const script = readScript(o.script);
  const transport = makeTransport(o);
  const seen = { protocolVersion: null };
  watchProtocolVersion(transport, seen);
  const client = new Client({ name: "meridian-e2e-ts-sdk", version: "1.0.0" });
  await client.connect(transport);

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of page.tools) tools.push(t.name);
    cursor = page.nextCursor;
  } while (cursor);

  const results = [];
  for (const step of script) {
    const r = { tool: step.tool, isError: false, structuredContent: null, text: null, error: null };
    try {
      const res = await client.callTool({ name: step.tool, arguments: step.arguments ?? {} });
      r.isError = res.isError === true;
      r.structuredContent = res.structuredContent ?? null;
      r.text = firstText(res);
    } catch (err) {
      r.error = { code: typeof err?.code === "number" ? err.code : null, message: String(err?.message ?? err) };
    }
    results.push(r);
  }

  const out = {
    protocolVersion: seen.protocolVersion,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    tools,
    results,
  };
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stderr.write(`client.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
