// Runs out of memory in its own scope.
export default async function (jig) {
  const held = [];
  for (;;) held.push(Buffer.alloc(1 << 20, 1));
}
