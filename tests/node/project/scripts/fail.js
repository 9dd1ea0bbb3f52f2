process.on("exit", (code) => console.log("exit handler", code));
function deep() {
  throw new Error("boom at depth");
}
console.log("before");
deep();
