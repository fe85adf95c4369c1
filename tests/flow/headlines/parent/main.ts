// Calls its child, which runs out of memory, and fails for it.
export default async function (jig) {
  const r = await jig.call("kid");
  if (!r.ok) throw new Error(`the child failed: ${r.error}`);
  jig.write("result.json", "{}");
}
