// Test Flow for prepared npm dependencies (issue 16): imports a package
// the suite's own registry served at review (tests/flow/registry.py), and
// tries to change its installation.
import greet from "jig-fixture-greet";
import { chmodSync, writeFileSync } from "node:fs";

export default async function (jig) {
  jig.write("out.txt", greet("jig"));
  const tries = [];
  const attempt = (what, f) => { try { f(); tries.push(what + " done"); } catch (e) { tries.push(what + " " + e.code); } };
  const file = "/flow/node_modules/jig-fixture-greet/index.js";
  attempt("chmod", () => chmodSync(file, 0o644));
  attempt("write", () => writeFileSync(file, "x"));
  attempt("create", () => writeFileSync("/flow/node_modules/new.js", "x"));
  jig.write("write.txt", tries.join("\n") + "\n");
}
