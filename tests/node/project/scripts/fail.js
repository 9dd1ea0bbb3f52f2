function deep() {
  throw new Error("boom at depth");
}
console.log("before");
deep();
