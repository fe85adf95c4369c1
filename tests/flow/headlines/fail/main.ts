// Test Flow for the failure headlines (tests/flow/headlines.sh, issue 46):
// one way to end badly per outcome, chosen by its "mode" input.
import { writeFileSync } from "node:fs";

export default async function (jig) {
  const [mode, arg] = jig.read("mode").toString().trim().split(" ");
  switch (mode) {
    case "hog": { const held = []; for (;;) held.push(Buffer.alloc(1 << 20, 1)); }
    // "live" in the logs, then it sleeps: the test signals it only after the marker
    case "sleep": jig.log("live"); await new Promise((r) => setTimeout(r, Number(arg))); jig.write("result.json", "{}"); return;
    case "segv": process.kill(process.pid, "SIGSEGV"); await new Promise((r) => setTimeout(r, 5000)); return;
    case "undeclared": jig.log("wrote extra.md"); jig.write("result.json", "{}"); writeFileSync("/output/extra.md", "x"); return;
    case "http": await jig.http("nope"); return;
    case "trace": throw new Error("first line\n    at second line\n    at \x1b[31mthird\x1b[0m line");
    case "readsecret": jig.read("secret"); return;
  }
  throw new Error(`unknown mode ${mode}`);
}
