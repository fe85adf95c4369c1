// A Flow without "checkpoint": jig.checkpoint is not granted (issue 18).
export default async function (jig: any) {
  await jig.checkpoint({ state: { n: 1 } });
  jig.write("result.json", "{}\n");
}
