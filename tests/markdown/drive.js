// Drives jig's Markdown interpreter (runtime/markdown.js) outside a Run:
// the real package reader and output writer on a scenario's directories,
// a scripted model in place of jig.agent. Plain lane (tests/markdown/cases.sh).
//   bun drive.js DIR
// DIR/package: flow.json, the recipe, its resources; DIR/inputs.json
// ({name: text}); DIR/answers.json: the model's answer per turn (a string
// as it is, anything else as JSON), or DIR/obey: the model follows every
// "DO: {json}" line of its prompt. Prints one JSON object: ok, error, logs,
// requests (each {bytes, instructions, skills, input}), outputs (path: text).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { interpret, outputWriter, packageReader } from "../../runtime/markdown.js";

const dir = process.argv[2];
const flow = JSON.parse(readFileSync(`${dir}/package/flow.json`, "utf8"));
const answers = existsSync(`${dir}/answers.json`) ? JSON.parse(readFileSync(`${dir}/answers.json`, "utf8")) : null;
const logs = [], requests = [];
mkdirSync(`${dir}/output`, { recursive: true });
const result = { ok: true };
try {
  await interpret({
    entry: flow.entry,
    recipe: readFileSync(`${dir}/package/${flow.entry}`, "utf8"),
    flow,
    inputs: existsSync(`${dir}/inputs.json`) ? JSON.parse(readFileSync(`${dir}/inputs.json`, "utf8")) : {},
    readPackage: packageReader(`${dir}/package`),
    writeOutput: outputWriter(`${dir}/output`),
    async agent(req) {
      const bytes = [req.instructions, ...req.skills, req.input].reduce((n, s) => n + Buffer.byteLength(s), 0);
      requests.push({ bytes, ...req });
      const turn = Number(/jig-markdown turn (\d+)/.exec(req.instructions)[1]);
      if (answers) {
        const a = answers[turn - 1] ?? { actions: [{ action: "done" }] };
        return typeof a === "string" ? a : JSON.stringify(a);
      }
      const text = [req.instructions, ...req.skills, req.input].join("\n");
      const acts = [...text.matchAll(/^DO: (.*)$/gm)].map((m) => { try { return JSON.parse(m[1]); } catch { return null; } }).filter(Boolean);
      return JSON.stringify({ actions: [...acts, { action: "done" }] });
    },
    log(line) { logs.push(line); },
  });
} catch (err) {
  result.ok = false;
  result.error = String(err.message);
}
const outputs = {};
const walk = (d, pre) => {
  for (const n of readdirSync(d)) {
    const p = `${d}/${n}`;
    if (statSync(p).isDirectory()) walk(p, `${pre}${n}/`);
    else outputs[pre + n] = readFileSync(p, "utf8");
  }
};
walk(`${dir}/output`, "");
console.log(JSON.stringify({ ...result, logs, requests, outputs }));
