// The child of tests/flow/saturate: ~1 MiB log lines straight to its Run/0.
import { writeSync } from "node:fs";

export default async function (jig: any) {
  const plan = JSON.parse(jig.read("plan").toString());
  const line = JSON.stringify({ op: "log", text: "K".repeat((1 << 20) - 64) }) + "\n";
  for (let i = 0; i < plan.kid_logs; i++) writeSync(3, line);
  jig.write("result.json", "{}\n");
}
