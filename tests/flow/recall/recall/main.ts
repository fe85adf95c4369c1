// Recovery never retries effects (R-O02, tests/flow/reliability.sh): one
// accepted save, then one HTTP request the loopback peer holds for 30 s
// (the test kills the coordinator while it is in flight), then a second
// save and the result. The "mode" input is unused.
type Jig = any;

export default async function (jig: Jig) {
  await jig.checkpoint({ state: { step: 1 } });
  const r = await jig.http("slow");
  await jig.checkpoint({ state: { step: 2, status: r.status } });
  jig.write("result.json", JSON.stringify({ status: r.status }) + "\n");
}
