process.on("exit", (code) => console.log("exit handler", code));
setTimeout(() => console.log("never"), 10);
try {
  process.exit(3);
} finally {
  console.log("never either");
}
