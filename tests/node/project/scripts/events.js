// The event loop's order and its error listeners, typed buffers and URLs.
const order = [];
Promise.resolve().then(() => order.push("microtask"));
process.nextTick(() => order.push("tick"));
order.push("sync");
setTimeout(() => console.log(order.join(" ")), 0);

process.on("uncaughtException", (error) => console.log("caught", error.message));
process.on("unhandledRejection", (reason) => console.log("unhandled", reason.message));
setTimeout(() => {
  throw new Error("late");
}, 1);
setTimeout(() => console.log("still running"), 5);
Promise.reject(new Error("nope"));

const bytes = Buffer.alloc(12);
bytes.writeUInt32BE(0xdeadbeef, 0);
bytes.writeInt16LE(-2, 4);
bytes.writeFloatBE(2.5, 6);
console.log(bytes.toString("hex"), bytes.readUInt32BE(0), bytes.readInt16LE(4), bytes.readFloatBE(6));
try {
  bytes.readUInt32LE(10);
} catch (error) {
  console.log(error.code);
}
const url = new URL("https://example.com/a?x=1");
url.searchParams.set("y", "two words");
console.log(url.href, [...url.searchParams.keys()], url.searchParams.size);
