console.log("start");
await Promise.resolve();
Promise.reject(new TypeError("nobody handled this"));
