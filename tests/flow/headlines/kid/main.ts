// Runs out of memory in its own scope.
export default async function (jig) {
  const held: Buffer[] = [];
  for (;;) held.push(Buffer.alloc(64 << 20, 1));
}
