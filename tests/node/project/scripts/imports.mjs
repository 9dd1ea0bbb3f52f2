import { execSync } from "node:child_process";
import { kind, km } from "@acme/units";
import tabulate from "tabulate";
import { strict as assert } from "node:assert";
import { setTimeout as delay } from "node:timers/promises";

console.log(typeof execSync, kind, km(2500), tabulate([["x", "y"]]));
assert.deepEqual({ a: [1] }, { a: [1] });
console.log(await delay(1, "awaited"));
