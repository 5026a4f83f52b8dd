// What the reference TypeScript SDK does per trace without an embedder: JSON.parse, then the
// seed's evaluateValue formula (novelty 0.5), no schema validation. Used by bench_stream.py as
// the side-by-side baseline:  node bench/reference/evaluate_value.mjs TRACES.jsonl
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";

const PROFILES = {
  default: [0.25, 0.35, 0.15, 0.25],
  finance: [0.2, 0.25, 0.1, 0.45],
  code: [0.2, 0.3, 0.3, 0.2],
  medical: [0.15, 0.2, 0.1, 0.55],
  customer_service: [0.2, 0.3, 0.2, 0.3],
};

function evaluateValue(trace) {
  const { steps, outcome, metadata } = trace;
  const uniqueTypes = new Set(steps.map((s) => s.type)).size;
  const errorRecovery = steps.filter((s) => s.type === "error_recovery").length;
  const C = Math.min(1, (uniqueTypes / 4) * 0.5 + (errorRecovery > 0 ? 0.3 : 0) + (steps.length / 20) * 0.2);
  const N = 0.5;
  const uniqueTools = new Set(steps.filter((s) => s.tool).map((s) => s.tool.name)).size;
  const D = Math.min(1, (uniqueTools / Math.max(1, steps.length)) * 3);
  const O = outcome.confidence * (metadata.success ? 1.0 : 0.3);
  const [wC, wN, wD, wO] = PROFILES[metadata.task_domain] ?? PROFILES.default;
  let score = C * wC + N * wN + D * wD + O * wO;
  if (steps.length === 1 && steps[0].type === "thought") score = 0.1;
  if (errorRecovery > 2 && metadata.success) score = Math.min(1.0, score + 0.1);
  if (uniqueTools <= 1 && steps.some((s) => s.tool)) score = Math.max(0.0, score - 0.1);
  return Math.max(0, Math.min(1, score));
}

const lines = createInterface({ input: createReadStream(process.argv[2]), crlfDelay: Infinity });
const out = [];
for await (const line of lines) {
  if (!line.trim()) continue;
  const trace = JSON.parse(line);
  out.push(JSON.stringify({ id: trace.id, score: evaluateValue(trace) }));
}
process.stdout.write(out.join("\n") + "\n");
